import type { KeyedWrite, Receipt } from '../shared/idempotency/store';
import type { MemoryLimits } from './config';
import type { GitOverlay } from './git-overlay';
import { isoSeconds, type IndexStore } from './index-store';
import { childLineage, type Lineage, type Lineages } from './lineage';
import type { NoteMeta } from './markdown';
import { fileEntry, rebuildTrees, type FileEntry, type NoteIndex } from './note-index';
import type { BlobStore, MemoryRecord } from './ports';
import type { Caller, WriteResult } from './types';

/**
 * One attempt of the commit loop (`commit.ts`) for a batch of writes to one memory: every write's
 * plan runs against the head as the writes before it in the batch left it, each change becomes a
 * commit on top of the one before (one commit per write, a linear history), and the objects,
 * indexes and lineages of all of them go to S3 in one parallel wave. Only the loop moves the head.
 */

export interface Put {
  path: string;
  blob: string;
  meta: NoteMeta;
}

/**
 * A write's change as planned against one head; `noop` makes no commit. `movedAway` (a move) takes
 * paths out of the tree without leaving a tombstone: the note lives on under another path. `detail`
 * is what the write reports beyond its commit (stored with a keyed write's receipt, so that a
 * retry of a write that landed answers exactly as the write did).
 */
export type Plan<D = unknown> =
  | { kind: 'noop'; updated: string; detail?: D }
  | { kind: 'put'; puts: Put[]; movedAway?: string[]; message: string; detail?: D }
  | { kind: 'remove'; path: string; message: string; detail?: D };

/** What a plan is made against: the rev item, the head's index (null before the first write), the objects. */
export interface Base {
  rec: MemoryRecord;
  index: NoteIndex | null;
  git: GitOverlay;
}

/** A write's result, with what its plan reported (`Plan.detail`). */
export type Committed<D = unknown> = WriteResult & { detail?: D };

/** One write of a batch, as the attempt sees it. */
export interface ChainWrite {
  caller: Caller;
  path: string;
  plan: (base: Base) => Promise<Plan>;
  /** The claim of a keyed write: its receipt is recorded with the head move. */
  once?: KeyedWrite;
}

export type Outcome = { ok: true; value: Committed } | { ok: false; error: unknown };

export interface Chain {
  git: GitOverlay;
  /** The new commits, oldest first (none when every write was a no-op or failed). */
  commits: Array<{ sha: string; index: NoteIndex; lineage: Lineage }>;
  /** Lineages of history computed on the way (stored by the wave too). */
  created: Lineage[];
  /** Each write's outcome, final once the head moved to the last commit. */
  outcomes: Map<ChainWrite, Outcome>;
  /** The keyed writes that made a commit, in the order of `receipts`. */
  keyed: ChainWrite[];
  receipts: Receipt[];
}

export interface ChainDeps {
  blobs: BlobStore;
  indexes: IndexStore;
  lineages: Lineages;
  limits: MemoryLimits;
  clock: () => Date;
}

/** Plans, builds and stores the commits of `writes` on top of `rec`'s head; the head is not moved. */
export async function buildChain(deps: ChainDeps, rec: MemoryRecord, git: GitOverlay, writes: readonly ChainWrite[]): Promise<Chain> {
  const head = rec.head;
  // The parent's index and lineage in parallel: one round trip when cold.
  const [index, parent] = await Promise.all([head ? deps.indexes.load(rec, head) : null, head ? deps.lineages.ensure(rec, git, head) : undefined]);
  if (head && !parent) throw new Error(`the head ${head} of memory ${rec.name} is not a commit in storage`);
  const chain: Chain = { git, commits: [], created: parent?.created ?? [], outcomes: new Map(), keyed: [], receipts: [] };
  let running = { index, head, lineage: parent?.lineage };
  for (const w of writes) {
    let step: Plan;
    try {
      step = await w.plan({ rec, index: running.index, git });
    } catch (error) {
      // This write's own failure (NOT_FOUND, a bad edit…): the others go on without it.
      chain.outcomes.set(w, { ok: false, error });
      continue;
    }
    const detail = step.detail === undefined ? {} : { detail: step.detail };
    if (step.kind === 'noop') {
      chain.outcomes.set(w, { ok: true, value: { path: w.path, rev: running.head as string, updated: step.updated, changed: false, ...detail } });
      continue;
    }
    const { sha, time, built } = await buildCommit(deps, w.caller, running.head, running.index, git, step);
    const lineage = childLineage(sha, running.lineage ? [running.lineage] : []);
    chain.commits.push({ sha, index: built, lineage });
    running = { index: built, head: sha, lineage };
    const value: Committed = { path: w.path, rev: sha, updated: time, changed: true, ...detail };
    chain.outcomes.set(w, { ok: true, value });
    if (w.once) {
      chain.keyed.push(w);
      chain.receipts.push({ key: w.once.key, token: w.once.token, fingerprint: w.once.fingerprint, result: value });
    }
  }
  if (chain.commits.length > 0) {
    // One wave: every new object, index and lineage, in parallel; only then may the head move.
    await deps.blobs.putMany(rec.id, [
      ...git.pending(),
      ...chain.commits.flatMap((c) => deps.indexes.items(c.index)),
      ...deps.lineages.items([...chain.created, ...chain.commits.map((c) => c.lineage)]),
    ]);
  }
  return chain;
}

/** The new trees, commit and index for `step` on top of `parent`, written into the overlay. */
async function buildCommit(
  deps: ChainDeps,
  caller: Caller,
  parent: string | null,
  index: NoteIndex | null,
  git: GitOverlay,
  step: Exclude<Plan, { kind: 'noop' }>,
): Promise<{ sha: string; time: string; built: NoteIndex }> {
  const seconds = Math.floor(deps.clock().getTime() / 1000);
  const time = isoSeconds(seconds);
  const next = nextIndex(deps.limits, index, step, time);
  const changed = step.kind === 'put' ? [...step.puts.map((p) => p.path), ...(step.movedAway ?? [])] : [step.path];
  const { trees, root } = await rebuildTrees(git, next.files, index?.trees ?? new Map(), changed);
  const who = author(caller, seconds);
  const sha = await git.writeCommit({ message: `${step.message}\n`, tree: root, parent: parent ? [parent] : [], author: who, committer: who });
  const built = await deps.indexes.withPack(git, index, { commit: sha, parent, time, files: next.files, trees, tombstones: next.tombstones }, changed);
  return { sha, time, built };
}

function nextIndex(
  limits: MemoryLimits,
  index: NoteIndex | null,
  step: Exclude<Plan, { kind: 'noop' }>,
  time: string,
): Pick<NoteIndex, 'files' | 'tombstones'> {
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
      if (tombstones.size <= limits.maxTombstones) break;
      tombstones.delete(key);
    }
  }
  return { files, tombstones };
}

function author(caller: Caller, seconds: number): { name: string; email: string; timestamp: number; timezoneOffset: number } {
  // Angle brackets and line breaks would corrupt the commit header.
  const clean = (s: string | undefined): string => (s ?? '').replace(/[<>\r\n\0]/g, '').trim();
  const name = clean(caller.author?.name) || clean(caller.account) || 'unknown';
  const email = clean(caller.author?.email) || `${clean(caller.account).replace(/[^A-Za-z0-9._-]/g, '_') || 'unknown'}@users.memory.invalid`;
  return { name, email, timestamp: seconds, timezoneOffset: 0 };
}
