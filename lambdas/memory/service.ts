import { randomBytes } from 'node:crypto';
import { jitteredBackoffMs, sleep } from '../shared/concurrency';
import type { CursorCodec } from '../shared/cursor';
import { ImmutableCache } from './cache';
import { CommitLoop } from './commit';
import { DEFAULT_LIMITS, type MemoryLimits } from './config';
import { PageCursors } from './cursors';
import { MemoryDiffs } from './diffs';
import { MemoryHistory } from './history';
import { StorageError, unavailable } from './errors';
import { Exports } from './exports';
import { Fetches, type FetchPack } from './fetch';
import { PackedObjects } from './packed-objects';
import { GitOverlay } from './git-overlay';
import { StoredIndexes, type IndexStore } from './index-store';
import { Lineages } from './lineage';
import { LinkGraphs } from './link-graph';
import { Memories } from './memories';
import { Pushes, type PushCommand, type PushOutcome } from './push';
import { NoteReads } from './reads';
import { PackedTexts } from './packed-texts';
import { scopeDiff, scopeFolder, scopeGit, scopeHistoryPage, scopeMoveLinks, scopeNoteHistory, scopePath, scopeWholeMemory } from './path-scope';
import { PackedSearch, type NoteSearch } from './search';
import { DEFAULT_SEGMENT_POLICY, type SegmentPolicy } from './segments';
import { NoteTexts } from './texts';
import type { BlobStore, MemoryRecord, RevLock } from './ports';
import type {
  BundleExport,
  BundleStream,
  ExportStream,
  Caller,
  ChangesSince,
  DeleteResult,
  DiffQuery,
  DiffResult,
  HistoryPage,
  HistoryQuery,
  MoveInput,
  MoveResult,
  ListNotesQuery,
  Memory,
  MemoryLinks,
  Note,
  NoteLinksResult,
  NoteEdit,
  NoteInput,
  NoteListing,
  ReadOptions,
  SearchPage,
  SearchQuery,
  WriteOptions,
  WriteResult,
  ZipExport,
  ZipStream,
} from './types';
import { NoteWrites } from './writes';

export interface MemoryServiceDeps {
  blobs: BlobStore;
  lock: RevLock;
  cursors: CursorCodec;
  /** Shared by every service of the process; defaults to 128 MB. */
  cache?: ImmutableCache;
  limits?: Partial<MemoryLimits>;
  /** Commit timestamps (seconds precision, as git records them). */
  clock?: () => Date;
  /** Storage id of a new memory. */
  newId?: () => string;
  /** Waits before a rebased retry of a write that lost the race to another writer. */
  backoff?: (attempt: number) => Promise<void>;
  /**
   * How a caller restores a retired memory (or, with `path`, a soft-deleted note) in its transport's
   * terms (e.g. the /v1 route); quoted in the CONFLICT of a create with a retired name and the 404 of
   * a read of a deleted note. Default: "restore it", which names no transport.
   */
  restoreHint?: (name: string, path?: string) => string;
  /** Where per-commit indexes are loaded and stored (default: an index object per commit, cached). */
  indexes?: IndexStore;
  /** How a commit's notes are searched (default: packed texts, `PackedSearch`). */
  search?: NoteSearch;
  /** Sizes of the packed search texts (`segments.ts`); the defaults suit Lambda. */
  segments?: Partial<SegmentPolicy>;
}

/** Full jitter between 0 and 20 ms · 2^attempt, capped at one second. */
const defaultBackoff = (attempt: number): Promise<void> => sleep(jitteredBackoffMs(attempt, 20, 1000));

/**
 * The memory core: every operation of spec 2 (and the MCP tools of spec 3) as transport-free
 * methods, over the parts that do the work (see README.md, "Layout"). Errors are `MemoryError`s;
 * storage outages become UPSTREAM_UNAVAILABLE. A caller limited to a folder is held to it here,
 * before each operation runs (`path-scope.ts`).
 *
 * Storage budget per operation (counted by `test/integration/memory-budget.test.ts`):
 *   write/edit/delete: one rev read, one parallel wave of PUTs (blob, changed trees, commit, index),
 *   one conditional write; cold, an edit adds the index and the old blob, a write the index.
 *   read: one rev read and, cold, two GETs (index, blob). stats and list of memories: one call.
 *   list/search: one rev read; cold, the index (and for search the segments of packed texts it
 *   names, fetched together; notes one by one only for a layout older than segments).
 */
export class MemoryService {
  readonly limits: MemoryLimits;
  private readonly memories: Memories;
  private readonly reads: NoteReads;
  private readonly writes: NoteWrites;
  private readonly exports: Exports;
  private readonly history: MemoryHistory;
  private readonly diffs: MemoryDiffs;
  private readonly pushes: Pushes;
  private readonly fetches: Fetches;
  private readonly packed: PackedTexts;

  constructor(deps: MemoryServiceDeps) {
    const limits: MemoryLimits = { ...DEFAULT_LIMITS, ...deps.limits };
    const cache = deps.cache ?? new ImmutableCache(128 * 1024 * 1024);
    const clock = deps.clock ?? (() => new Date());
    const packs = new PackedObjects(deps.blobs, cache);
    const git = (rec: MemoryRecord, fresh?: ReadonlyMap<string, Uint8Array>): GitOverlay => new GitOverlay(rec.id, deps.blobs, cache, packs, fresh);
    const texts = new NoteTexts(cache, limits);
    const policy: SegmentPolicy = { ...DEFAULT_SEGMENT_POLICY, ...deps.segments };
    const indexes = deps.indexes ?? new StoredIndexes(deps.blobs, cache, limits, git, policy);
    const packed = new PackedTexts({ blobs: deps.blobs, cache, indexes, texts, limits, policy, git });
    this.packed = packed;
    const restoreHint = deps.restoreHint ?? (() => 'restore it');
    const memories = new Memories({
      lock: deps.lock,
      limits,
      clock,
      newId: deps.newId ?? (() => randomBytes(12).toString('hex')),
      restoreHint,
    });
    const lineages = new Lineages(deps.blobs, cache);
    const commits = new CommitLoop({
      lock: deps.lock,
      blobs: deps.blobs,
      indexes,
      lineages,
      memories,
      limits,
      clock,
      backoff: deps.backoff ?? defaultBackoff,
      git,
    });
    this.limits = limits;
    this.memories = memories;
    this.reads = new NoteReads({
      memories,
      restoreHint,
      indexes,
      texts,
      search: deps.search ?? new PackedSearch(packed, texts, git, policy),
      cursors: new PageCursors(deps.cursors),
      lineages,
      limits,
      git,
      links: new LinkGraphs({ cache, packed, texts, policy, git }),
    });
    this.writes = new NoteWrites({ memories, commits, texts, indexes, lineages, limits, clock });
    this.history = new MemoryHistory({ memories, lineages, texts, cursors: deps.cursors, limits, git });
    this.diffs = new MemoryDiffs({ memories, lineages, indexes, texts, limits, git });
    this.pushes = new Pushes({ lock: deps.lock, blobs: deps.blobs, indexes, lineages, memories, packed, limits, git });
    this.fetches = new Fetches({ memories, lineages, indexes, packed, git });
    this.exports = new Exports({ memories, indexes, packed, lineages, maxNoteBytes: limits.maxNoteBytes, git });
  }

  /** Resolves once this service's background work (compaction of search texts) is done. */
  idle(): Promise<void> {
    return this.packed.idle();
  }

  // Memories

  listMemories(caller: Caller): Promise<Memory[]> {
    return guard(() => this.memories.list(caller));
  }

  createMemory(caller: Caller, rawName: string, opts: { expectedRev?: string } = {}): Promise<{ created: boolean; memory: Memory }> {
    return guard(() => this.memories.create(caller, rawName, opts));
  }

  getMemory(caller: Caller, rawName: string): Promise<Memory> {
    return guard(() => this.memories.get(caller, rawName));
  }

  retireMemory(caller: Caller, rawName: string, opts: { expectedRev?: string } = {}): Promise<{ name: string; deleted: true }> {
    return guard(() => {
      scopeWholeMemory(caller, 'retire a memory');
      return this.memories.retire(caller, rawName, opts);
    });
  }

  /** Brings a retired memory back with all its history. Idempotent on an active memory; the ceiling applies. */
  restoreMemory(caller: Caller, rawName: string): Promise<Memory> {
    return guard(() => {
      scopeWholeMemory(caller, 'restore a memory');
      return this.memories.restore(caller, rawName);
    });
  }

  // Notes: reads

  /**
   * A note at the head, or with `rev` as it was at that rev (a commit of this memory's history); with
   * `includeDeleted`, a soft-deleted note's last content (`deleted: true`); with `section`, `lines`
   * or `frontmatterOnly` only that part; with `includeLinks`, its links both ways.
   */
  readNote(caller: Caller, rawName: string, rawPath: string, opts: ReadOptions = {}): Promise<Note> {
    return guard(() => {
      scopePath(caller, rawPath);
      return this.reads.readNote(caller, rawName, rawPath, opts);
    });
  }

  /** A note's links both ways (outgoing, resolved or dangling; incoming), read from the commit's index and packed texts. */
  noteLinks(caller: Caller, rawName: string, rawPath: string, opts: { rev?: string } = {}): Promise<NoteLinksResult> {
    return guard(() => this.reads.noteLinks(caller, rawName, rawPath, opts));
  }

  /** Orphans and dangling links of a memory. */
  memoryLinks(caller: Caller, rawName: string, opts: { orphans?: boolean; dangling?: boolean; rev?: string } = {}): Promise<MemoryLinks> {
    return guard(() => this.reads.memoryLinks(caller, rawName, opts));
  }

  // History and versions

  /** Commits newest first (first-parent line), each with its changes; with `path`, those that touched it. */
  historyPage(caller: Caller, rawName: string, query: HistoryQuery = {}): Promise<HistoryPage> {
    return guard(async () => {
      scopeNoteHistory(caller, query.path, 'history');
      return scopeHistoryPage(caller, await this.history.page(caller, rawName, query));
    });
  }

  /** Line hunks between two revs (default: the head and its parent). */
  diff(caller: Caller, rawName: string, query: DiffQuery = {}): Promise<DiffResult> {
    return guard(async () => {
      scopeNoteHistory(caller, query.path, 'diff');
      return scopeDiff(caller, await this.diffs.diff(caller, rawName, query));
    });
  }

  /** The notes changed between `since` and the head (so a client catches up with what others wrote). */
  changesSince(caller: Caller, rawName: string, since: string, filter: { folder?: string; tags?: readonly string[] } = {}): Promise<ChangesSince> {
    return guard(() => this.diffs.changesSince(caller, rawName, since, { ...filter, folder: scopeFolder(caller, filter.folder) }));
  }

  listNotes(caller: Caller, rawName: string, query: ListNotesQuery = {}): Promise<NoteListing> {
    return guard(() => this.reads.listNotes(caller, rawName, { ...query, folder: scopeFolder(caller, query.folder) }));
  }

  searchNotes(caller: Caller, rawName: string, query: SearchQuery): Promise<SearchPage> {
    return guard(() => this.reads.searchNotes(caller, rawName, { ...query, folder: scopeFolder(caller, query.folder) }));
  }

  // Git (the smart HTTP remote of memory-api)

  /** The head a git client is shown (null: an empty memory). */
  gitHead(caller: Caller, rawName: string): Promise<{ name: string; head: string | null }> {
    return guard(() => {
      scopeGit(caller);
      return this.pushes.head(caller, rawName);
    });
  }

  /** The client's `have`s this memory shares (negotiation of a fetch). */
  gitCommon(caller: Caller, rawName: string, haves: readonly string[]): Promise<string[]> {
    return guard(() => {
      scopeGit(caller);
      return this.fetches.common(caller, rawName, haves);
    });
  }

  /** The pack a fetch or clone receives. */
  gitPack(caller: Caller, rawName: string, wants: readonly string[], haves: readonly string[]): Promise<FetchPack> {
    return guard(() => {
      scopeGit(caller);
      return this.fetches.pack(caller, rawName, wants, haves);
    });
  }

  /** A push: checked as writes are, landed through the rev lock, or refused with git's reasons. */
  gitPush(caller: Caller, rawName: string, command: PushCommand, pack: Uint8Array | undefined): Promise<PushOutcome> {
    return guard(() => {
      scopeGit(caller);
      return this.pushes.receive(caller, rawName, command, pack);
    });
  }

  // Notes: writes

  writeNote(caller: Caller, rawName: string, rawPath: string, input: NoteInput, opts: WriteOptions = {}): Promise<WriteResult> {
    return guard(() => {
      scopePath(caller, rawPath);
      return this.writes.writeNote(caller, rawName, rawPath, input, opts);
    });
  }

  editNote(caller: Caller, rawName: string, rawPath: string, edit: NoteEdit, opts: WriteOptions = {}): Promise<WriteResult> {
    return guard(() => {
      scopePath(caller, rawPath);
      return this.writes.editNote(caller, rawName, rawPath, edit, opts);
    });
  }

  deleteNote(caller: Caller, rawName: string, rawPath: string, opts: WriteOptions = {}): Promise<DeleteResult> {
    return guard(() => {
      scopePath(caller, rawPath);
      return this.writes.deleteNote(caller, rawName, rawPath, opts);
    });
  }

  /**
   * A soft-deleted note back with its last content, as a new commit (CONFLICT when a note lives there
   * again); with `rev`, the note as it was at that rev, whatever it is now.
   */
  restoreNote(caller: Caller, rawName: string, rawPath: string, opts: WriteOptions & { rev?: string } = {}): Promise<WriteResult> {
    return guard(() => {
      scopePath(caller, rawPath);
      return this.writes.restoreNote(caller, rawName, rawPath, opts);
    });
  }

  /** A note to another path in one commit (a rename to git); with `updateLinks`, the links to it too. */
  moveNote(caller: Caller, rawName: string, input: MoveInput, opts: WriteOptions = {}): Promise<MoveResult> {
    return guard(() => {
      scopePath(caller, input.from);
      scopePath(caller, input.to);
      scopeMoveLinks(caller, input.updateLinks);
      return this.writes.moveNote(caller, rawName, input, opts);
    });
  }

  /** Many notes (raw markdown each) as one commit; `path` of the result is the empty string. */
  importNotes(
    caller: Caller,
    rawName: string,
    notes: ReadonlyArray<{ path: string; markdown: string }>,
    opts: WriteOptions = {},
  ): Promise<WriteResult & { count: number }> {
    return guard(() => {
      for (const n of notes) scopePath(caller, n.path);
      return this.writes.importNotes(caller, rawName, notes, opts);
    });
  }

  // Exports

  /** The memory's history as a git bundle, made as `body` is read (see `ExportStream`). */
  streamBundle(caller: Caller, rawName: string): Promise<BundleStream> {
    return guard(async () => {
      scopeWholeMemory(caller, 'export a memory');
      return guardedBody(await this.exports.bundle(caller, rawName));
    });
  }

  /** Every visible memory's notes as a zip, made as `body` is read. */
  streamZip(caller: Caller): Promise<ZipStream> {
    return guard(async () => {
      scopeWholeMemory(caller, 'export memories');
      return guardedBody(await this.exports.zip(caller));
    });
  }

  /** `streamBundle`, read whole. */
  async exportBundle(caller: Caller, rawName: string): Promise<BundleExport> {
    const { name, rev, filename, contentType, body } = await this.streamBundle(caller, rawName);
    return { name, rev, filename, contentType, bytes: await readAll(body) };
  }

  /** `streamZip`, read whole. */
  async exportZip(caller: Caller): Promise<ZipExport> {
    const { filename, contentType, memories, body } = await this.streamZip(caller);
    return { filename, contentType, memories, bytes: await readAll(body) };
  }
}

/** An export whose later failures are mapped as `guard` maps them (a storage failure mid-stream is UPSTREAM_UNAVAILABLE). */
function guardedBody<T extends ExportStream>(out: T): T {
  const source = out.body;
  async function* body(): AsyncGenerator<Uint8Array> {
    try {
      yield* source;
    } catch (err) {
      throw typed(err);
    }
  }
  return { ...out, body: body(), tighten: () => guard(() => out.tighten()) };
}

async function readAll(body: AsyncIterable<Uint8Array>): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of body) chunks.push(chunk);
  return Buffer.concat(chunks);
}

/** Typed errors pass; a storage failure becomes UPSTREAM_UNAVAILABLE; anything else is a bug and stays one. */
async function guard<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw typed(err);
  }
}

function typed(err: unknown): unknown {
  return err instanceof StorageError ? unavailable(err) : err;
}
