import { randomUUID } from 'node:crypto';
import type { MemoryLimits } from './config';
import { checkExpectedRev } from './content';
import { MemoryError, staleRev } from './errors';
import type { GitOverlay } from './git-overlay';
import { isoSeconds, type IndexStore } from './index-store';
import { childLineage, type Lineages } from './lineage';
import type { NoteMeta } from './markdown';
import { memoryNotFound, type Memories } from './memories';
import { fileEntry, indexStats, rebuildTrees, type FileEntry, type NoteIndex } from './note-index';
import { checkTwins } from './paths';
import type { BlobStore, MemoryRecord, MoveOutcome, RevLock } from './ports';
import type { Caller, WriteResult } from './types';
import { EVENT_METRICS } from '../shared/observability/metric-names';
import { countMetric } from '../shared/observability/metrics';

/**
 * The write loop, the one path by which a memory's head moves: read the rev item, let the caller
 * plan its change against the head's index, build the blob, trees, commit and index, store them in
 * one parallel PUT wave, then move the head with the rev lock's conditional write. A lost race
 * rebases (the plan runs again on the new head) unless the caller expected a rev.
 */

export interface Put {
  path: string;
  blob: string;
  meta: NoteMeta;
}

/**
 * A write's change as planned against one head; `noop` makes no commit. `movedAway` (a move) takes
 * paths out of the tree without leaving a tombstone: the note lives on under another path.
 */
export type Plan =
  | { kind: 'noop'; updated: string }
  | { kind: 'put'; puts: Put[]; movedAway?: string[]; message: string }
  | { kind: 'remove'; path: string; message: string };

/** What a plan is made against: the rev item, its head's index (null before the first write), the objects. */
export interface Base {
  rec: MemoryRecord;
  index: NoteIndex | null;
  git: GitOverlay;
}

export interface CommitOptions {
  /** The head the caller expects; a different head is CONFLICT instead of a rebase. */
  expectedRev?: string;
  /** Create the memory first when it does not exist (the ceiling applies). */
  createMemory?: boolean;
}

export interface CommitDeps {
  lock: RevLock;
  blobs: BlobStore;
  indexes: IndexStore;
  lineages: Lineages;
  memories: Memories;
  limits: MemoryLimits;
  clock: () => Date;
  /** Waits before a rebased retry of a write that lost the race to another writer. */
  backoff: (attempt: number) => Promise<void>;
  git: (rec: MemoryRecord) => GitOverlay;
}

/**
 * Did this writer's conditional move land? The single place that decides it. A failed answer whose
 * current head carries our writer token means the move landed and only its answer was lost (an SDK
 * retry of a request that succeeded). The sha alone is not proof: another instance making the same
 * change in the same second builds the very same commit, and taking its move for ours would
 * acknowledge a write that was never applied.
 */
export function landed(moved: MoveOutcome, commit: string, writer: string): boolean {
  return moved.ok || (moved.current?.head === commit && moved.current.writer === writer);
}

export class CommitLoop {
  private readonly queues = new Map<string, Promise<void>>();

  constructor(private readonly deps: CommitDeps) {}

  /** Runs `plan` against the memory's head until its commit lands (or the plan says there is nothing to do). */
  run(caller: Caller, name: string, path: string, opts: CommitOptions, plan: (base: Base) => Promise<Plan>): Promise<WriteResult> {
    // Writes to one memory from one process queue up: racing ourselves would only waste whole
    // PUT waves on lost compare-and-sets. Across processes the rev lock arbitrates.
    const key = `${caller.account}\u0000${name}`;
    const run = (this.queues.get(key) ?? Promise.resolve()).then(() => this.commitNow(caller, name, path, opts, refuseTwins(plan)));
    const tail = run.then(
      () => undefined,
      () => undefined,
    );
    this.queues.set(key, tail);
    void tail.then(() => {
      if (this.queues.get(key) === tail) this.queues.delete(key);
    });
    return run;
  }

  private async commitNow(caller: Caller, name: string, path: string, opts: CommitOptions, plan: (base: Base) => Promise<Plan>): Promise<WriteResult> {
    const { lock, memories, limits } = this.deps;
    const expected = checkExpectedRev(opts.expectedRev);
    let rec = await lock.get(caller.account, name);
    // A write that would create the memory meets a retired one as creation does (DECISIONS: 409 naming the restore).
    if (rec?.state === 'retired' && opts.createMemory) throw memories.retired(rec.name);
    if (!rec && opts.createMemory) {
      const created = await memories.create(caller, name);
      rec = await lock.get(caller.account, created.memory.name);
    }
    if (rec?.state !== 'active') throw memoryNotFound(name);
    if (expected !== undefined && rec.head !== expected) throw staleRev(rec.name, rec);
    for (let attempt = 1; ; attempt++) {
      const git = this.deps.git(rec);
      const head = rec.head;
      // The parent's index and lineage in parallel: one round trip when cold.
      const [index, parent] = await Promise.all([
        head ? this.deps.indexes.load(rec, head) : null,
        head ? this.deps.lineages.ensure(rec, git, head) : undefined,
      ]);
      if (head && !parent) throw new Error(`the head ${head} of memory ${rec.name} is not a commit in storage`);
      const step = await plan({ rec, index, git });
      if (step.kind === 'noop') return { path, rev: rec.head as string, updated: step.updated, changed: false };

      const { sha, time, built } = await this.build(caller, rec, index, git, step);
      const lineages = [...(parent?.created ?? []), childLineage(sha, parent ? [parent.lineage] : [])];
      // One wave: every new object, the index and the lineage, in parallel; only then may the head move.
      await this.deps.blobs.putMany(rec.id, [...git.pending(), ...this.deps.indexes.items(built), ...this.deps.lineages.items(lineages)]);
      git.persisted();
      this.deps.indexes.remember(rec, built);
      this.deps.lineages.remember(rec, lineages);

      const writer = randomUUID();
      const moved = await lock.moveHead(rec.account, rec.name, rec.head, { head: sha, updated: time, writer, ...indexStats(built) });
      if (landed(moved, sha, writer)) return { path, rev: sha, updated: time, changed: true };
      const current = moved.ok ? undefined : moved.current;
      if (current?.state !== 'active') throw memoryNotFound(name);
      if (expected !== undefined) throw staleRev(name, current);
      if (attempt >= limits.maxWriteAttempts) {
        throw new MemoryError('UPSTREAM_UNAVAILABLE', 'contention', 'too many concurrent writes to this memory; retry', { retryAfterSeconds: 1 });
      }
      // Lost the race: what we wrote is unreachable garbage. Rebase onto the new head and retry.
      countMetric(EVENT_METRICS.rebaseRetries);
      rec = current;
      await this.deps.backoff(attempt);
    }
  }

  /** The new trees, commit and index for `step` on top of `index`, written into the overlay. */
  private async build(
    caller: Caller,
    rec: MemoryRecord,
    index: NoteIndex | null,
    git: GitOverlay,
    step: Exclude<Plan, { kind: 'noop' }>,
  ): Promise<{ sha: string; time: string; built: NoteIndex }> {
    const seconds = Math.floor(this.deps.clock().getTime() / 1000);
    const time = isoSeconds(seconds);
    const next = this.nextIndex(index, step, time);
    const changed = step.kind === 'put' ? [...step.puts.map((p) => p.path), ...(step.movedAway ?? [])] : [step.path];
    const { trees, root } = await rebuildTrees(git, next.files, index?.trees ?? new Map(), changed);
    const who = author(caller, seconds);
    const sha = await git.writeCommit({ message: `${step.message}\n`, tree: root, parent: rec.head ? [rec.head] : [], author: who, committer: who });
    const built = await this.deps.indexes.withPack(
      git,
      index,
      { commit: sha, parent: rec.head, time, files: next.files, trees, tombstones: next.tombstones },
      changed,
    );
    return { sha, time, built };
  }

  private nextIndex(index: NoteIndex | null, step: Exclude<Plan, { kind: 'noop' }>, time: string): Pick<NoteIndex, 'files' | 'tombstones'> {
    const files = new Map(index?.files ?? []);
    const tombstones = new Map(index?.tombstones ?? []);
    if (step.kind === 'put') {
      for (const p of step.movedAway ?? []) files.delete(p);
      for (const p of step.puts) {
        files.set(p.path, fileEntry(p.blob, p.meta, time));
        tombstones.delete(p.path);
      }
    } else {
      const old = files.get(step.path) as FileEntry;
      files.delete(step.path);
      tombstones.delete(step.path);
      tombstones.set(step.path, { ...old, deleted: time });
      for (const key of tombstones.keys()) {
        if (tombstones.size <= this.deps.limits.maxTombstones) break;
        tombstones.delete(key);
      }
    }
    return { files, tombstones };
  }
}

/** Every way a write names a note goes through here: no new path may twin another (`paths.ts`). */
function refuseTwins(plan: (base: Base) => Promise<Plan>): (base: Base) => Promise<Plan> {
  return async (base) => {
    const step = await plan(base);
    if (step.kind === 'put')
      checkTwins(
        base.index?.files ?? new Map(),
        step.puts.map((p) => p.path),
        step.movedAway,
      );
    return step;
  };
}

function author(caller: Caller, seconds: number): { name: string; email: string; timestamp: number; timezoneOffset: number } {
  // Angle brackets and line breaks would corrupt the commit header.
  const clean = (s: string | undefined): string => (s ?? '').replace(/[<>\r\n\0]/g, '').trim();
  const name = clean(caller.author?.name) || clean(caller.account) || 'unknown';
  const email = clean(caller.author?.email) || `${clean(caller.account).replace(/[^A-Za-z0-9._-]/g, '_') || 'unknown'}@users.memory.invalid`;
  return { name, email, timestamp: seconds, timezoneOffset: 0 };
}
