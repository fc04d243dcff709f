import type { MemoryLimits } from './config';
import { checkExpectedRev } from './content';
import { conflict, forbidden, type MemoryError, notFound, staleRev } from './errors';
import { comparePaths } from './listing';
import { validateMemoryName } from './paths';
import type { MemoryRecord, RevLock } from './ports';
import type { Caller, Memory } from './types';

/**
 * Memories as a whole: who may address which (the grant rules every operation starts with) and the
 * lifecycle of the rev item (create, stats, retire, restore). None of it reads an object: the
 * stats live in the rev item beside the head.
 */
export interface MemoriesDeps {
  lock: RevLock;
  limits: MemoryLimits;
  clock: () => Date;
  newId: () => string;
  /** How a caller restores a retired memory, in the words of the caller's transport. */
  restoreHint: (name: string, path?: string) => string;
}

export function callerAccount(caller: Caller): string {
  if (!caller || typeof caller.account !== 'string' || caller.account === '') throw new Error('caller without an account');
  return caller.account;
}

export function isGranted(caller: Caller, name: string): boolean {
  return caller.grants === undefined || caller.grants.includes(name);
}

export function toMemory(rec: MemoryRecord): Memory {
  return {
    name: rec.name,
    files: rec.files,
    folders: rec.folders,
    sizeBytes: rec.sizeBytes,
    updated: rec.files > 0 ? rec.updated : null,
    empty: rec.files === 0,
    rev: rec.head,
  };
}

export function memoryNotFound(name: string): MemoryError {
  return notFound('memory_not_found', `memory "${name}" does not exist`);
}

export class Memories {
  constructor(private readonly deps: MemoriesDeps) {}

  /** Validates the name and the grant: a memory not granted is FORBIDDEN whether it exists or not. */
  access(caller: Caller, rawName: string): string {
    callerAccount(caller);
    const name = validateMemoryName(rawName);
    if (!isGranted(caller, name)) throw forbidden(`memory "${name}" is not granted to this token`);
    return name;
  }

  /** The rev item of an active memory (one strongly consistent read), else NOT_FOUND. */
  async active(caller: Caller, name: string): Promise<MemoryRecord> {
    const rec = await this.deps.lock.get(caller.account, name);
    if (rec?.state !== 'active') throw memoryNotFound(name);
    return rec;
  }

  /** The active memories the caller may see, in name order (one query). */
  async visible(caller: Caller): Promise<MemoryRecord[]> {
    const records = await this.deps.lock.list(callerAccount(caller));
    return records.filter((r) => r.state === 'active' && isGranted(caller, r.name)).sort((a, b) => comparePaths(a.name, b.name));
  }

  /** Creating a retired name (directly or by a first write) is CONFLICT naming the restore. */
  retired(name: string): MemoryError {
    return conflict('retired_name', `memory "${name}" was retired; ${this.deps.restoreHint(name)} instead of creating it again`);
  }

  async list(caller: Caller): Promise<Memory[]> {
    return (await this.visible(caller)).map(toMemory);
  }

  async create(caller: Caller, rawName: string, opts: { expectedRev?: string } = {}): Promise<{ created: boolean; memory: Memory }> {
    const name = this.access(caller, rawName);
    const expected = checkExpectedRev(opts.expectedRev);
    if (expected !== undefined) {
      // A precondition on a memory that does not exist can never hold: no create behind its back.
      const rec = await this.deps.lock.get(caller.account, name);
      if (!rec) throw staleRev(name, undefined);
      return { created: false, memory: this.existing(rec, expected) };
    }
    const now = this.deps.clock().toISOString();
    const out = await this.deps.lock.create(
      { account: caller.account, name, id: this.deps.newId(), head: null, state: 'active', created: now, updated: null, files: 0, folders: 0, sizeBytes: 0 },
      this.deps.limits.maxMemoriesPerAccount,
    );
    if (out.kind === 'created') return { created: true, memory: toMemory(out.record) };
    if (out.kind === 'exists') return { created: false, memory: this.existing(out.record, undefined) };
    throw this.ceiling();
  }

  async get(caller: Caller, rawName: string): Promise<Memory> {
    return toMemory(await this.active(caller, this.access(caller, rawName)));
  }

  async retire(caller: Caller, rawName: string, opts: { expectedRev?: string } = {}): Promise<{ name: string; deleted: true }> {
    const name = this.access(caller, rawName);
    const expected = checkExpectedRev(opts.expectedRev);
    const out = await this.deps.lock.retire(caller.account, name, expected, this.deps.clock().toISOString());
    if (out.ok) return { name, deleted: true as const };
    if (out.current?.state !== 'active') throw memoryNotFound(name);
    throw staleRev(name, out.current);
  }

  /** Brings a retired memory back with its history (its objects were never deleted), within the ceiling. */
  async restore(caller: Caller, rawName: string): Promise<Memory> {
    const name = this.access(caller, rawName);
    const out = await this.deps.lock.restore(caller.account, name, this.deps.limits.maxMemoriesPerAccount);
    if (out.kind === 'restored') return toMemory(out.record);
    if (out.kind === 'active') return toMemory(await this.active(caller, name));
    if (out.kind === 'missing') throw memoryNotFound(name);
    throw this.ceiling();
  }

  private existing(rec: MemoryRecord, expected: string | undefined): Memory {
    if (rec.state === 'retired') throw this.retired(rec.name);
    if (expected !== undefined && rec.head !== expected) throw staleRev(rec.name, rec);
    return toMemory(rec);
  }

  private ceiling(): MemoryError {
    const max = this.deps.limits.maxMemoriesPerAccount;
    return conflict('ceiling', `the account already has ${max} memories, the most it may have; retire one first`);
  }
}
