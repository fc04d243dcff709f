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

export interface BlobStore {
  /** The bytes, or undefined when absent. Throws `StorageError` when storage fails. */
  get(memoryId: string, kind: BlobKind, sha: string): Promise<Uint8Array | undefined>;
  /** Writes every item, in parallel (one wave). Rejects if any write failed; items are immutable. */
  putMany(memoryId: string, items: readonly BlobItem[]): Promise<void>;
  /** The names (shas) of every stored item of `kind` (used for packs: a handful per memory). */
  list(memoryId: string, kind: 'pack-index'): Promise<string[]>;
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
}

export interface HeadMove extends MemoryStats {
  head: string;
  updated: string;
  /** Unique per attempt to move the head (see `MemoryRecord.writer`). */
  writer: string;
}

export type CreateOutcome = { kind: 'created'; record: MemoryRecord } | { kind: 'exists'; record: MemoryRecord } | { kind: 'ceiling' };

/** `current` is the record as it was when the condition failed (undefined when it is gone). */
export type MoveOutcome = { ok: true } | { ok: false; current?: MemoryRecord };

export type RestoreOutcome = { kind: 'restored'; record: MemoryRecord } | { kind: 'missing' } | { kind: 'active' } | { kind: 'ceiling' };

export interface RevLock {
  /** Strongly consistent read of one memory (active or retired). */
  get(account: string, name: string): Promise<MemoryRecord | undefined>;
  /** Every memory of the account, active and retired, in name order. */
  list(account: string): Promise<MemoryRecord[]>;
  /** Creates an active memory unless the name exists or the account holds `ceiling` active memories. */
  create(record: MemoryRecord, ceiling: number): Promise<CreateOutcome>;
  /** Moves head from `expected` (null: no head yet) if the memory is active and still at `expected`. */
  moveHead(account: string, name: string, expected: string | null, next: HeadMove): Promise<MoveOutcome>;
  /**
   * Retires an active memory. `expected`: undefined retires whatever the head; a value (or null for
   * a memory without history) must equal the head.
   */
  retire(account: string, name: string, expected: string | null | undefined, at: string): Promise<MoveOutcome>;
  /** Makes a retired memory active again, within the ceiling. */
  restore(account: string, name: string, ceiling: number): Promise<RestoreOutcome>;
}
