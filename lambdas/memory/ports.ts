import type { Receipt } from '../shared/idempotency/store';

/**
 * The two storage ports of the memory core. `BlobStore` holds immutable bytes (git objects and the
 * derived per-commit indexes) addressed by memory and sha; `RevLock` holds one small record per memory
 * whose `head` only a conditional write may move. Adapters: S3 and DynamoDB for AWS and the local
 * stack, in-memory for unit tests.
 */

/**
 * What a stored item is: a git loose object (deflated, as in `.git/objects`), a commit's index, or
 * a commit's lineage (its parents, depths and first-parent ancestors: what history walks batch on),
 * or a segment of packed note texts for search (`segments.ts`, named by the sha-256 of its content),
 * or a git pack of a push's objects and its index (`packed-objects.ts`, named by the pack's checksum).
 */
export type BlobKind = 'object' | 'index' | 'lineage' | 'segment' | 'pack' | 'pack-index';

export interface BlobItem {
  kind: BlobKind;
  /** The git object id, or for an index or a lineage the commit it describes. */
  sha: string;
  body: Uint8Array;
}

export interface StoredItem {
  kind: BlobKind;
  sha: string;
  /** Epoch milliseconds. */
  modifiedMs: number;
  /** The version listed (a versioned bucket): a delete removes that version only. */
  versionId?: string;
}

export interface BlobStore {
  /** The bytes, or undefined when absent. Throws `StorageError` when storage fails. */
  get(memoryId: string, kind: BlobKind, sha: string): Promise<Uint8Array | undefined>;
  /** Writes every item, in parallel (one wave). Rejects if any write failed; items are immutable. */
  putMany(memoryId: string, items: readonly BlobItem[]): Promise<void>;
  /** The names (shas) of every stored item of `kind` (used for packs: a handful per memory). */
  list(memoryId: string, kind: 'pack-index'): Promise<string[]>;
  /** Every stored item of the memory with its last-modified time (the sweep). */
  listStored?(memoryId: string): AsyncIterable<StoredItem>;
  /** Deletes items (the sweep only; the functions that serve memories may not delete). */
  deleteMany?(memoryId: string, items: readonly StoredItem[]): Promise<void>;
}

export type MemoryState = 'active' | 'retired';

/** Figures kept beside the head so that listing memories needs no object reads. */
export interface MemoryStats {
  files: number;
  folders: number;
  sizeBytes: number;
}

export interface MemoryRecord extends MemoryStats {
  account: string;
  name: string;
  /** Storage prefix of the memory's objects (stable across retire and restore). */
  id: string;
  /** HEAD commit sha; null before the first write. */
  head: string | null;
  state: MemoryState;
  /** ISO 8601. */
  created: string;
  /** ISO 8601 time of the head commit; null before the first write. */
  updated: string | null;
  retired?: string;
  /**
   * The token of the write that last moved the head, stored by the same conditional update. A writer
   * whose answer was lost recognises its own move by it: two writers can build byte-identical
   * commits (same parent, tree, author and second), so the head's sha cannot tell them apart.
   */
  writer?: string;
  /**
   * Changed by every sweep of unreachable objects (`sweep.ts`): a head move made from a record read
   * before a sweep fails, so nothing a writer stored before the sweep is relied on after it. 0 until
   * the first sweep.
   */
  epoch?: number;
  /**
   * The write ticket, when one was held at the time of the read (an expired one is left out): the
   * writer whose turn it is (a writer that lost a race, or a sweep). Writers that respect tickets
   * (`MoveOptions.fair`) cannot move the head past another's ticket until it is dropped or expires.
   */
  ticket?: WriteTicket;
}

export interface WriteTicket {
  holder: string;
  /** Epoch milliseconds after which the ticket no longer holds (a holder that died). */
  untilMs: number;
}

/** A sweep's ticket: it also changes the epoch when taken and when dropped (`RevLock.takeTicket`). */
export const SWEEP_TICKET_PREFIX = 'sweep:';

export const isSweepTicket = (t: WriteTicket | undefined): boolean => t?.holder.startsWith(SWEEP_TICKET_PREFIX) === true;

/** How a head move is made, beyond its expected head. */
export interface MoveOptions {
  /**
   * The record the mover read (the head it builds on). Its epoch must still be the item's, and a
   * mover that read it while a sweep held the ticket may not move at all. Without it the epoch is
   * not checked (callers that never meet a sweep: tests of other concerns).
   */
  from?: MemoryRecord;
  /** Respect every ticket (a fair writer of the commit loop); otherwise only a sweep's. */
  fair?: boolean;
  /** The ticket this mover holds (`WriteTicket.holder`), if any: its move drops it. */
  holder?: string;
  /** Keyed writes whose results are recorded by the same conditional write (one transaction). */
  receipts?: readonly Receipt[];
}

export interface HeadMove extends MemoryStats {
  head: string;
  updated: string;
  /** Unique per attempt to move the head (see `MemoryRecord.writer`). */
  writer: string;
}

export type CreateOutcome = { kind: 'created'; record: MemoryRecord } | { kind: 'exists'; record: MemoryRecord } | { kind: 'ceiling' };

/**
 * `current` is the record as it was when the condition failed (undefined when it is gone).
 * `lostReceipt`: the head's condition held but the receipt of this index was no longer the
 * mover's to record (its idempotency claim was taken over): nothing was written.
 */
export type MoveOutcome = { ok: true } | { ok: false; current?: MemoryRecord; lostReceipt?: number };

export type TicketOutcome = { taken: true; current: MemoryRecord } | { taken: false; current?: MemoryRecord };

export type RestoreOutcome = { kind: 'restored'; record: MemoryRecord } | { kind: 'missing' } | { kind: 'active' } | { kind: 'ceiling' };

export interface RevLock {
  /** Strongly consistent read of one memory (active or retired). */
  get(account: string, name: string): Promise<MemoryRecord | undefined>;
  /** Every memory of the account, active and retired, in name order. */
  list(account: string): Promise<MemoryRecord[]>;
  /** Creates an active memory unless the name exists or the account holds `ceiling` active memories. */
  create(record: MemoryRecord, ceiling: number): Promise<CreateOutcome>;
  /** Moves head from `expected` (null: no head yet) if the memory is active and still at `expected`. */
  moveHead(account: string, name: string, expected: string | null, next: HeadMove, opts?: MoveOptions): Promise<MoveOutcome>;
  /**
   * Takes the write ticket of an active memory unless another holder's is still valid; returns the
   * record as it is then (its head is what the holder builds on). A sweep's ticket changes the epoch.
   */
  takeTicket(account: string, name: string, ticket: WriteTicket, nowMs: number): Promise<TicketOutcome>;
  /** Gives the ticket up if `holder` still holds it (a sweep's changes the epoch again). Best effort. */
  dropTicket(account: string, name: string, holder: string): Promise<void>;
  /**
   * Retires an active memory. `expected`: undefined retires whatever the head; a value (or null for
   * a memory without history) must equal the head.
   */
  retire(account: string, name: string, expected: string | null | undefined, at: string): Promise<MoveOutcome>;
  /** Makes a retired memory active again, within the ceiling. */
  restore(account: string, name: string, ceiling: number): Promise<RestoreOutcome>;
}
