import { randomBytes } from 'node:crypto';
import { zipSync, type Zippable } from 'fflate';
import { CursorError, type CursorCodec } from '../shared/cursor';
import { ImmutableCache } from './cache';
import { DEFAULT_LIMITS, type MemoryLimits } from './config';
import { CREDENTIAL_LABELS, findCredential } from './credentials';
import {
  badRequest,
  conflict,
  forbidden,
  MemoryError,
  notFound,
  StorageError,
  unavailable,
} from './errors';
import { GitOverlay } from './git-overlay';
import { comparePaths, compareHits, hasAllTags, listEntries, literalMatcher, scoreNote, type ListSort, type ListType, type SearchHit } from './listing';
import {
  composeNote,
  extractTags,
  extractTitle,
  makeExcerpt,
  parseNoteLenient,
  parseNoteStrict,
  startsWithFence,
  trySplit,
  validateFrontMatter,
  type FrontMatter,
  type NoteMeta,
} from './markdown';
import { fileEntry, indexBytes, indexStats, parseIndex, rebuildTrees, serializeIndex, type FileEntry, type NoteIndex, type Tombstone } from './note-index';
import { baseName, isInside, validateFolder, validateMemoryName, validateNotePath } from './paths';
import type { BlobStore, MemoryRecord, RevLock } from './ports';
import type {
  BundleExport,
  Caller,
  DeleteResult,
  ListNotesQuery,
  Memory,
  Note,
  NoteEdit,
  NoteInput,
  NoteListing,
  SearchPage,
  SearchQuery,
  WriteOptions,
  WriteResult,
  ZipExport,
} from './types';

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
  /** How a caller restores a retired memory; quoted in the CONFLICT of a create with a retired name. */
  restoreHint?: (name: string) => string;
}

/** Parallel object reads per request (search and export load many immutable objects). */
const READ_CONCURRENCY = 32;

interface Put {
  path: string;
  blob: string;
  meta: NoteMeta;
}

type Plan = { kind: 'noop'; updated: string } | { kind: 'put'; puts: Put[]; message: string } | { kind: 'remove'; path: string; message: string };

interface Base {
  rec: MemoryRecord;
  index: NoteIndex | null;
  git: GitOverlay;
}

function defaultBackoff(attempt: number): Promise<void> {
  // Full jitter, capped: losers of one race spread out instead of colliding again at once.
  const ms = Math.random() * Math.min(1000, 20 * 2 ** Math.min(attempt, 6));
  return new Promise((resolve) => setTimeout(resolve, ms));
}

const isoSeconds = (seconds: number): string => new Date(seconds * 1000).toISOString();

/**
 * If-Match values: `sha`, `"sha"` or `*` (any current rev, i.e. no precondition). A weak tag
 * (`W/"…"`) is well formed but never matches (RFC 9110 §13.1.1 compares strongly): 409, as a stale rev.
 */
export function normalizeRev(value: string | undefined, field = 'If-Match'): string | undefined {
  if (value === undefined) return undefined;
  let v = String(value).trim();
  if (v === '*') return undefined;
  if (/^W\/"[^"]*"$/.test(v)) throw conflict('stale_rev', `${field} is a weak entity tag, which never matches a rev; send the rev itself`);
  if (v.length >= 2 && v.startsWith('"') && v.endsWith('"')) v = v.slice(1, -1);
  if (!/^[0-9a-fA-F]{40}$/.test(v)) throw badRequest('invalid_rev', `${field} must be a rev (40 hex characters), optionally quoted`, field);
  return v.toLowerCase();
}

async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

/**
 * The memory core: every operation of spec 2 (and the MCP tools of spec 3) as transport-free
 * methods. Errors are `MemoryError`s; storage outages become UPSTREAM_UNAVAILABLE.
 *
 * Storage budget per operation (counted by `test/integration/memory-budget.test.ts`):
 *   write/edit/delete: one rev read, one parallel wave of PUTs (blob, changed trees, commit, index),
 *   one conditional write; cold, an edit adds the index and the old blob, a write the index.
 *   read: one rev read and, cold, two GETs (index, blob). stats and list of memories: one call.
 *   list/search: one rev read; cold, the index (and for search each note once, ever).
 */
export class MemoryService {
  readonly limits: MemoryLimits;
  private readonly cache: ImmutableCache;
  private readonly clock: () => Date;
  private readonly newId: () => string;
  private readonly backoff: (attempt: number) => Promise<void>;
  private readonly restoreHint: (name: string) => string;
  private readonly queues = new Map<string, Promise<void>>();

  constructor(private readonly deps: MemoryServiceDeps) {
    this.limits = { ...DEFAULT_LIMITS, ...deps.limits };
    this.cache = deps.cache ?? new ImmutableCache(128 * 1024 * 1024);
    this.clock = deps.clock ?? (() => new Date());
    this.newId = deps.newId ?? (() => randomBytes(12).toString('hex'));
    this.backoff = deps.backoff ?? defaultBackoff;
    this.restoreHint = deps.restoreHint ?? ((name) => `restore it with POST /v1/memories/${name}/restore`);
  }

  // ---------------------------------------------------------------------------------------------
  // Memories

  listMemories(caller: Caller): Promise<Memory[]> {
    return this.guard(async () => {
      const account = this.account(caller);
      const records = await this.deps.lock.list(account);
      return records
        .filter((r) => r.state === 'active' && this.granted(caller, r.name))
        .sort((a, b) => comparePaths(a.name, b.name))
        .map(toMemory);
    });
  }

  createMemory(caller: Caller, rawName: string, opts: { expectedRev?: string } = {}): Promise<{ created: boolean; memory: Memory }> {
    return this.guard(async () => {
      const name = this.access(caller, rawName);
      const expected = normalizeRev(opts.expectedRev);
      if (expected !== undefined) {
        // A precondition on a memory that does not exist can never hold: no create behind its back.
        const rec = await this.deps.lock.get(caller.account, name);
        if (!rec) throw conflict('stale_rev', `memory "${name}" does not exist, so If-Match cannot match`);
        return { created: false, memory: this.existing(rec, expected) };
      }
      const now = this.clock().toISOString();
      const out = await this.deps.lock.create(
        { account: caller.account, name, id: this.newId(), head: null, state: 'active', created: now, updated: null, files: 0, folders: 0, sizeBytes: 0 },
        this.limits.maxMemoriesPerAccount,
      );
      if (out.kind === 'created') return { created: true, memory: toMemory(out.record) };
      if (out.kind === 'exists') return { created: false, memory: this.existing(out.record, undefined) };
      throw conflict('ceiling', `the account already has ${this.limits.maxMemoriesPerAccount} memories, the most it may have; retire one first`);
    });
  }

  private existing(rec: MemoryRecord, expected: string | undefined): Memory {
    if (rec.state === 'retired') {
      throw conflict('retired_name', `memory "${rec.name}" was retired; ${this.restoreHint(rec.name)} instead of creating it again`);
    }
    if (expected !== undefined && rec.head !== expected) throw this.stale(rec);
    return toMemory(rec);
  }

  getMemory(caller: Caller, rawName: string): Promise<Memory> {
    return this.guard(async () => toMemory(await this.active(caller, this.access(caller, rawName))));
  }

  retireMemory(caller: Caller, rawName: string, opts: { expectedRev?: string } = {}): Promise<{ name: string; deleted: true }> {
    return this.guard(async () => {
      const name = this.access(caller, rawName);
      const expected = normalizeRev(opts.expectedRev);
      const out = await this.deps.lock.retire(caller.account, name, expected, this.clock().toISOString());
      if (out.ok) return { name, deleted: true as const };
      if (!out.current || out.current.state !== 'active') throw notFound('memory_not_found', `memory "${name}" does not exist`);
      throw this.stale(out.current);
    });
  }

  /**
   * Brings a retired memory back with all its history (its objects were never deleted). Idempotent
   * on an active memory; the per-account ceiling applies.
   */
  restoreMemory(caller: Caller, rawName: string): Promise<Memory> {
    return this.guard(async () => {
      const name = this.access(caller, rawName);
      const out = await this.deps.lock.restore(caller.account, name, this.limits.maxMemoriesPerAccount);
      if (out.kind === 'restored') return toMemory(out.record);
      if (out.kind === 'active') return toMemory(await this.active(caller, name));
      if (out.kind === 'missing') throw notFound('memory_not_found', `memory "${name}" does not exist`);
      throw conflict('ceiling', `the account already has ${this.limits.maxMemoriesPerAccount} memories, the most it may have; retire one first`);
    });
  }

  // ---------------------------------------------------------------------------------------------
  // Notes: reads

  readNote(caller: Caller, rawName: string, rawPath: string, opts: { includeDeleted?: boolean } = {}): Promise<Note> {
    return this.guard(async () => {
      const name = this.access(caller, rawName);
      const path = validateNotePath(rawPath, this.limits);
      const rec = await this.active(caller, name);
      if (!rec.head) throw notFound('note_not_found', `note "${path}" does not exist`);
      const index = await this.index(rec, rec.head);
      const git = this.git(rec);
      let entry: FileEntry | Tombstone | undefined = index.files.get(path);
      let deleted = false;
      if (!entry && opts.includeDeleted) {
        entry = index.tombstones.get(path);
        deleted = entry !== undefined;
      }
      if (!entry) throw notFound('note_not_found', `note "${path}" does not exist`);
      const markdown = await this.text(rec, git, entry.blob);
      const { frontmatter, body } = parseNoteLenient(markdown, this.limits);
      return { path, title: entry.title, frontmatter, body, tags: entry.tags, sizeBytes: entry.size, updated: entry.updated, deleted, markdown, rev: rec.head };
    });
  }

  listNotes(caller: Caller, rawName: string, query: ListNotesQuery = {}): Promise<NoteListing> {
    return this.guard(async () => {
      const name = this.access(caller, rawName);
      const folder = validateFolder(query.folder, this.limits);
      const depth = query.depth === undefined ? 2 : query.depth;
      if (depth !== 'all' && !(Number.isInteger(depth) && depth >= 1)) throw badRequest('invalid_argument', 'depth must be an integer of at least 1, or all', 'depth');
      const type: ListType = query.type ?? 'all';
      if (!['all', 'file', 'folder'].includes(type)) throw badRequest('invalid_argument', 'type must be all, file or folder', 'type');
      const fields = query.fields ?? 'full';
      if (fields !== 'path' && fields !== 'full') throw badRequest('invalid_argument', 'fields must be path or full', 'fields');
      const sort: ListSort = query.sort ?? 'name';
      if (sort !== 'name' && sort !== 'updated') throw badRequest('invalid_argument', 'sort must be name or updated', 'sort');
      const limit = this.pageSize(query.limit, this.limits.listDefaultLimit, this.limits.listMaxLimit);
      const tags = this.tagArgs(query.tags);
      const rec = await this.active(caller, name);
      const purpose = JSON.stringify(['notes', rec.account, rec.name, rec.id, folder, depth, type, fields, tags, sort]);
      const { commit, offset } = this.fromCursor(purpose, query.cursor, rec);
      const index = commit ? await this.index(rec, commit) : null;
      const { entries, files } = listEntries(index, { folder, depth: depth === 'all' ? Infinity : depth, type, pathsOnly: fields === 'path', tags, sort });
      const page = entries.slice(offset, offset + limit);
      const truncated = offset + limit < entries.length;
      return {
        folder,
        entries: page,
        files,
        truncated,
        ...(truncated && commit ? { nextCursor: this.toCursor(purpose, commit, offset + limit) } : {}),
        rev: commit,
      };
    });
  }

  searchNotes(caller: Caller, rawName: string, query: SearchQuery): Promise<SearchPage> {
    return this.guard(async () => {
      const name = this.access(caller, rawName);
      // The query is one literal, spaces included; only a query of nothing but spaces counts as missing.
      const q = typeof query.q === 'string' ? query.q : '';
      if (q.trim() === '') throw badRequest('invalid_argument', 'q is required', 'q');
      if (q.length > this.limits.maxQueryChars) throw badRequest('invalid_argument', `q is longer than ${this.limits.maxQueryChars} characters`, 'q');
      const folder = validateFolder(query.folder, this.limits);
      const tags = this.tagArgs(query.tags);
      const limit = this.pageSize(query.limit, this.limits.searchDefaultLimit, this.limits.searchMaxLimit);
      const rec = await this.active(caller, name);
      const purpose = JSON.stringify(['search', rec.account, rec.name, rec.id, q, folder, tags]);
      const { commit, offset } = this.fromCursor(purpose, query.cursor, rec);
      if (!commit) return { results: [], rev: null };
      const index = await this.index(rec, commit);
      const candidates = [...index.files].filter(([path, e]) => isInside(path, folder) && hasAllTags(e, tags));
      const git = this.git(rec);
      const re = literalMatcher(q);
      const hits = await mapLimit(candidates, READ_CONCURRENCY, async ([path, e]): Promise<SearchHit | null> => {
        const body = await this.body(rec, git, e.blob);
        const { score, snippet } = scoreNote(re, e.title, body, e.tags, baseName(path).slice(0, -3));
        return score > 0 ? { path, title: e.title, snippet: snippet ?? e.excerpt, score, updated: e.updated } : null;
      });
      const sorted = hits.filter((h): h is SearchHit => h !== null).sort(compareHits);
      const more = offset + limit < sorted.length;
      return {
        results: sorted.slice(offset, offset + limit),
        ...(more ? { nextCursor: this.toCursor(purpose, commit, offset + limit) } : {}),
        rev: commit,
      };
    });
  }

  // ---------------------------------------------------------------------------------------------
  // Notes: writes

  writeNote(caller: Caller, rawName: string, rawPath: string, input: NoteInput, opts: WriteOptions = {}): Promise<WriteResult> {
    return this.guard(async () => {
      const name = this.access(caller, rawName);
      const path = validateNotePath(rawPath, this.limits);
      const text = this.composeInput(input);
      const meta = this.checkStored(text, path);
      return this.commit(caller, name, path, opts, async ({ index, git }) => {
        const blob = await git.writeBlob(text);
        const current = index?.files.get(path);
        if (current && current.blob === blob) return { kind: 'noop', updated: current.updated };
        return { kind: 'put', puts: [{ path, blob, meta }], message: `${current ? 'Update' : 'Create'} ${path}` };
      });
    });
  }

  editNote(caller: Caller, rawName: string, rawPath: string, edit: NoteEdit, opts: WriteOptions = {}): Promise<WriteResult> {
    return this.guard(async () => {
      const name = this.access(caller, rawName);
      const path = validateNotePath(rawPath, this.limits);
      const mode = this.checkEdit(edit);
      const frontmatter = edit.frontmatter === undefined ? undefined : validateFrontMatter(edit.frontmatter, this.limits);
      return this.commit(caller, name, path, opts, async ({ rec, index, git }) => {
        // Runs again on every rebase: the edit applies to the note as it is at the new head.
        const current = index?.files.get(path);
        if (!current) throw notFound('note_not_found', `note "${path}" does not exist`);
        const old = await this.text(rec, git, current.blob);
        const text = this.applyEdit(old, mode, edit, frontmatter);
        if (text === old) return { kind: 'noop', updated: current.updated };
        const meta = this.checkStored(text, path);
        const blob = await git.writeBlob(text);
        return { kind: 'put', puts: [{ path, blob, meta }], message: `Edit ${path} (${mode})` };
      });
    });
  }

  deleteNote(caller: Caller, rawName: string, rawPath: string, opts: WriteOptions = {}): Promise<DeleteResult> {
    return this.guard(async () => {
      const name = this.access(caller, rawName);
      const path = validateNotePath(rawPath, this.limits);
      const out = await this.commit(caller, name, path, { expectedRev: opts.expectedRev }, async ({ index }) => {
        if (!index?.files.has(path)) throw notFound('note_not_found', `note "${path}" does not exist`);
        return { kind: 'remove', path, message: `Delete ${path}` };
      });
      return { path, deleted: true as const, rev: out.rev, updated: out.updated };
    });
  }

  /**
   * Brings a soft-deleted note back with its last content, as a new commit. CONFLICT when a note
   * lives at the path again (restoring would overwrite it); NOT_FOUND when no deletion is recorded.
   */
  restoreNote(caller: Caller, rawName: string, rawPath: string, opts: WriteOptions = {}): Promise<WriteResult> {
    return this.guard(async () => {
      const name = this.access(caller, rawName);
      const path = validateNotePath(rawPath, this.limits);
      return this.commit(caller, name, path, { expectedRev: opts.expectedRev }, async ({ index }) => {
        if (index?.files.has(path)) throw conflict('note_exists', `note "${path}" exists; nothing to restore`);
        const tomb = index?.tombstones.get(path);
        if (!tomb) throw notFound('note_not_found', `no deleted note "${path}" to restore`);
        const meta = { title: tomb.title, tags: tomb.tags, excerpt: tomb.excerpt, size: tomb.size };
        return { kind: 'put', puts: [{ path, blob: tomb.blob, meta }], message: `Restore ${path}` };
      });
    });
  }

  /**
   * Writes many notes (raw markdown each) as one commit: imports, migrations and seeding. Every note
   * passes the same checks as a single write; unchanged notes are skipped, and when nothing changes
   * no commit is made. `path` of the result is the empty string.
   */
  importNotes(caller: Caller, rawName: string, notes: ReadonlyArray<{ path: string; markdown: string }>, opts: WriteOptions = {}): Promise<WriteResult & { count: number }> {
    return this.guard(async () => {
      const name = this.access(caller, rawName);
      if (!Array.isArray(notes) || notes.length === 0) throw badRequest('invalid_argument', 'notes are required', 'notes');
      if (notes.length > this.limits.maxImportNotes) throw badRequest('invalid_argument', `at most ${this.limits.maxImportNotes} notes per import`, 'notes');
      const checked = new Map<string, { text: string; meta: NoteMeta }>();
      for (const n of notes) {
        const path = validateNotePath(n?.path, this.limits);
        const text = this.composeInput({ markdown: n.markdown });
        checked.set(path, { text, meta: this.checkStored(text, path) });
      }
      let count = 0;
      const out = await this.commit(caller, name, '', opts, async ({ index, git }) => {
        const puts: Put[] = [];
        for (const [path, { text, meta }] of checked) {
          const blob = await git.writeBlob(text);
          if (index?.files.get(path)?.blob !== blob) puts.push({ path, blob, meta });
        }
        count = puts.length;
        if (puts.length === 0) return { kind: 'noop', updated: index?.time ?? this.clock().toISOString() };
        return { kind: 'put', puts, message: `Import ${puts.length} note${puts.length === 1 ? '' : 's'}` };
      });
      return { ...out, count };
    });
  }

  // ---------------------------------------------------------------------------------------------
  // Exports

  /** The memory's full history as a git bundle (v2) that `git clone` and `git bundle verify` accept. */
  exportBundle(caller: Caller, rawName: string): Promise<BundleExport> {
    return this.guard(async () => {
      const name = this.access(caller, rawName);
      const rec = await this.active(caller, name);
      if (!rec.head) throw notFound('no_history', `memory "${name}" has no history to export`);
      const git = this.git(rec);
      const oids = await this.reachable(git, rec.head);
      const pack = await git.pack(oids);
      const header = Buffer.from(`# v2 git bundle\n${rec.head} HEAD\n${rec.head} refs/heads/main\n\n`, 'utf8');
      const bytes = new Uint8Array(header.length + pack.length);
      bytes.set(header, 0);
      bytes.set(pack, header.length);
      return { name, rev: rec.head, filename: `${name}.bundle`, contentType: 'application/x-git-bundle' as const, bytes };
    });
  }

  /** Every visible memory's current notes as `<memory>/<path>`, front matter included. */
  exportZip(caller: Caller): Promise<ZipExport> {
    return this.guard(async () => {
      const account = this.account(caller);
      const records = (await this.deps.lock.list(account)).filter((r) => r.state === 'active' && this.granted(caller, r.name));
      const files: Zippable = {};
      const names: string[] = [];
      for (const rec of records.sort((a, b) => comparePaths(a.name, b.name))) {
        names.push(rec.name);
        if (!rec.head) continue;
        const index = await this.index(rec, rec.head);
        const git = this.git(rec);
        const entries = [...index.files].sort((a, b) => comparePaths(a[0], b[0]));
        const texts = await mapLimit(entries, READ_CONCURRENCY, ([, e]) => this.text(rec, git, e.blob));
        entries.forEach(([path, e], i) => {
          files[`${rec.name}/${path}`] = [Buffer.from(texts[i], 'utf8'), { mtime: new Date(e.updated) }];
        });
      }
      const bytes = zipSync(files, { level: 6 });
      return { filename: 'memories.zip', contentType: 'application/zip' as const, bytes, memories: names };
    });
  }

  // ---------------------------------------------------------------------------------------------
  // The write loop

  private commit(caller: Caller, name: string, path: string, opts: WriteOptions, plan: (base: Base) => Promise<Plan>): Promise<WriteResult> {
    // Writes to one memory from one process queue up: racing ourselves would only waste whole
    // PUT waves on lost compare-and-sets. Across processes the rev lock arbitrates.
    const key = `${caller.account}\u0000${name}`;
    const run = (this.queues.get(key) ?? Promise.resolve()).then(() => this.commitNow(caller, name, path, opts, plan));
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

  private async commitNow(caller: Caller, name: string, path: string, opts: WriteOptions, plan: (base: Base) => Promise<Plan>): Promise<WriteResult> {
    const expected = normalizeRev(opts.expectedRev);
    let rec = await this.deps.lock.get(caller.account, name);
    // A write that would create the memory meets a retired one as creation does (DECISIONS: 409 naming the restore).
    if (rec?.state === 'retired' && opts.createMemory) {
      throw conflict('retired_name', `memory "${rec.name}" was retired; ${this.restoreHint(rec.name)} instead of creating it again`);
    }
    if (!rec && opts.createMemory) {
      const created = await this.createMemory(caller, name);
      rec = await this.deps.lock.get(caller.account, created.memory.name);
    }
    if (!rec || rec.state !== 'active') throw notFound('memory_not_found', `memory "${name}" does not exist`);
    if (expected !== undefined && rec.head !== expected) throw this.stale(rec);
    for (let attempt = 1; ; attempt++) {
      const index = rec.head ? await this.index(rec, rec.head) : null;
      const git = this.git(rec);
      const step = await plan({ rec, index, git });
      if (step.kind === 'noop') return { path, rev: rec.head as string, updated: step.updated, changed: false };

      const seconds = Math.floor(this.clock().getTime() / 1000);
      const time = isoSeconds(seconds);
      const next = this.nextIndex(index, step, time);
      const changed = step.kind === 'put' ? step.puts.map((p) => p.path) : [step.path];
      const { trees, root } = await rebuildTrees(git, next.files, index?.trees ?? new Map(), changed);
      const who = this.author(caller, seconds);
      const sha = await git.writeCommit({ message: `${step.message}\n`, tree: root, parent: rec.head ? [rec.head] : [], author: who, committer: who });
      const built: NoteIndex = { commit: sha, parent: rec.head, time, files: next.files, trees, tombstones: next.tombstones };

      // One wave: every new object and the index, in parallel; only then may the head move.
      await this.deps.blobs.putMany(rec.id, [...git.pending(), { kind: 'index', sha, body: serializeIndex(built) }]);
      git.persisted();
      this.cache.set(`i:${rec.id}:${sha}`, built, indexBytes(built));

      const stats = indexStats(built);
      const moved = await this.deps.lock.moveHead(rec.account, rec.name, rec.head, { head: sha, updated: time, ...stats });
      // A head already at our commit means our move landed and only its answer was lost.
      if (moved.ok || moved.current?.head === sha) return { path, rev: sha, updated: time, changed: true };
      const current = moved.current;
      if (!current || current.state !== 'active') throw notFound('memory_not_found', `memory "${name}" does not exist`);
      if (expected !== undefined) throw this.stale(current);
      if (attempt >= this.limits.maxWriteAttempts) {
        throw new MemoryError('UPSTREAM_UNAVAILABLE', 'contention', 'too many concurrent writes to this memory; retry', { retryAfterSeconds: 1 });
      }
      // Lost the race: what we wrote is unreachable garbage. Rebase onto the new head and retry.
      rec = current;
      await this.backoff(attempt);
    }
  }

  private nextIndex(index: NoteIndex | null, step: Exclude<Plan, { kind: 'noop' }>, time: string): Pick<NoteIndex, 'files' | 'tombstones'> {
    const files = new Map(index?.files ?? []);
    const tombstones = new Map(index?.tombstones ?? []);
    if (step.kind === 'put') {
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
        if (tombstones.size <= this.limits.maxTombstones) break;
        tombstones.delete(key);
      }
    }
    return { files, tombstones };
  }

  private author(caller: Caller, seconds: number): { name: string; email: string; timestamp: number; timezoneOffset: number } {
    // Angle brackets and line breaks would corrupt the commit header.
    const clean = (s: string | undefined): string => (s ?? '').replace(/[<>\r\n\0]/g, '').trim();
    const name = clean(caller.author?.name) || clean(caller.account) || 'unknown';
    const email = clean(caller.author?.email) || `${clean(caller.account).replace(/[^A-Za-z0-9._-]/g, '_') || 'unknown'}@users.memory.invalid`;
    return { name, email, timestamp: seconds, timezoneOffset: 0 };
  }

  // ---------------------------------------------------------------------------------------------
  // Content rules

  private composeInput(input: NoteInput): string {
    if (input === null || typeof input !== 'object') throw badRequest('invalid_argument', 'body is required', 'body');
    if ('markdown' in input) {
      if (typeof input.markdown !== 'string') throw badRequest('invalid_argument', 'body is required', 'body');
      return input.markdown;
    }
    if (typeof input.body !== 'string') throw badRequest('invalid_argument', 'body is required and must be a string', 'body');
    if (startsWithFence(input.body)) {
      throw badRequest('invalid_argument', 'body may not start with a front-matter fence (---); pass frontmatter as an object, or send raw text/markdown', 'body');
    }
    const fm = input.frontmatter === undefined ? {} : validateFrontMatter(input.frontmatter, this.limits);
    return composeNote(fm, input.body);
  }

  /** Size, front matter and credential checks of a note's full stored text; returns its metadata. */
  private checkStored(text: string, path: string): NoteMeta {
    const size = Buffer.byteLength(text, 'utf8');
    if (size > this.limits.maxNoteBytes) {
      throw new MemoryError('BAD_REQUEST', 'too_large', `note is ${size} bytes; the maximum is ${this.limits.maxNoteBytes} bytes`, { field: 'body' });
    }
    const { frontmatter, split } = parseNoteStrict(text, this.limits);
    const found = findCredential(text);
    if (found) {
      throw new MemoryError('BAD_REQUEST', 'refused_content', `content refused: line ${found.line} looks like ${CREDENTIAL_LABELS[found.kind]} (${found.kind}); remove the credential`, {
        field: 'body',
        credentialKind: found.kind,
      });
    }
    return { title: extractTitle(split.body, path), tags: extractTags(frontmatter, split.body), excerpt: makeExcerpt(split.body), size };
  }

  private checkEdit(edit: NoteEdit): 'replace' | 'append' | 'str_replace' {
    if (edit === null || typeof edit !== 'object') throw badRequest('invalid_argument', 'edit arguments are required', 'mode');
    const mode = edit.mode ?? 'replace';
    if (mode !== 'replace' && mode !== 'append' && mode !== 'str_replace') throw badRequest('invalid_argument', 'mode must be replace, append or str_replace', 'mode');
    if (edit.body !== undefined && typeof edit.body !== 'string') throw badRequest('invalid_argument', 'body must be a string', 'body');
    if (edit.old_str !== undefined && typeof edit.old_str !== 'string') throw badRequest('invalid_argument', 'old_str must be a string', 'old_str');
    if (edit.new_str !== undefined && typeof edit.new_str !== 'string') throw badRequest('invalid_argument', 'new_str must be a string', 'new_str');
    if (mode === 'str_replace') {
      if (edit.body !== undefined) throw badRequest('invalid_argument', 'body is not an argument of str_replace', 'body');
      if (edit.old_str === undefined || edit.old_str === '') throw badRequest('invalid_argument', 'old_str is required for str_replace', 'old_str');
    } else {
      for (const f of ['old_str', 'new_str'] as const) {
        if (edit[f] !== undefined) throw badRequest('invalid_argument', `${f} is an argument of str_replace only, not of ${mode}`, f);
      }
      if (edit.body === undefined && edit.frontmatter === undefined) throw badRequest('invalid_argument', `${mode} needs body or frontmatter`, 'body');
      if (mode === 'replace' && edit.body !== undefined && startsWithFence(edit.body)) {
        throw badRequest('invalid_argument', 'body may not start with a front-matter fence (---); pass frontmatter as an object', 'body');
      }
    }
    return mode;
  }

  private applyEdit(old: string, mode: 'replace' | 'append' | 'str_replace', edit: NoteEdit, frontmatter: FrontMatter | undefined): string {
    const split = trySplit(old) ?? { yaml: null, head: '', body: old };
    let body = split.body;
    if (mode === 'replace' && edit.body !== undefined) body = edit.body;
    else if (mode === 'append' && edit.body !== undefined) body = body === '' || body.endsWith('\n') ? body + edit.body : `${body}\n${edit.body}`;
    else if (mode === 'str_replace') {
      const needle = edit.old_str as string;
      const first = body.indexOf(needle);
      if (first < 0) throw badRequest('no_unique_match', 'old_str does not occur in the body', 'old_str');
      // Overlapping occurrences count too: either one could be the one meant.
      if (body.indexOf(needle, first + 1) >= 0) throw badRequest('no_unique_match', 'old_str occurs more than once in the body; include more context', 'old_str');
      body = body.slice(0, first) + (edit.new_str ?? '') + body.slice(first + needle.length);
    }
    let head = split.head;
    if (frontmatter !== undefined) {
      const current = split.yaml === null ? {} : parseNoteStrict(old, this.limits).frontmatter;
      const merged = { ...current, ...frontmatter };
      head = Object.keys(merged).length === 0 ? '' : composeNote(merged, '');
    }
    if (head === '' && startsWithFence(body)) {
      throw badRequest('invalid_argument', 'the edited body would start with a front-matter fence (---)', 'body');
    }
    return head + body;
  }

  private tagArgs(tags: readonly string[] | undefined): string[] {
    if (tags === undefined) return [];
    if (!Array.isArray(tags)) throw badRequest('invalid_argument', 'tags must be a list of strings', 'tags');
    if (tags.length > this.limits.maxTagArgs) throw badRequest('invalid_argument', `at most ${this.limits.maxTagArgs} tags`, 'tags');
    const out: string[] = [];
    for (const raw of tags) {
      const t = typeof raw === 'string' ? raw.trim() : '';
      if (t === '') throw badRequest('invalid_argument', 'tags may not be empty', 'tags');
      if (t.startsWith('#')) throw badRequest('invalid_argument', 'tags are bare names, without a leading #', 'tags');
      if (t.length > 100) throw badRequest('invalid_argument', 'a tag is at most 100 characters', 'tags');
      if (!out.includes(t)) out.push(t);
    }
    return out.sort();
  }

  private pageSize(value: number | undefined, fallback: number, max: number): number {
    if (value === undefined) return fallback;
    if (!Number.isInteger(value) || value < 1 || value > max) throw badRequest('invalid_argument', `limit must be an integer from 1 to ${max}`, 'limit');
    return value;
  }

  // ---------------------------------------------------------------------------------------------
  // Cursors: the commit of the first page (later pages read the same snapshot) and an offset.

  private toCursor(purpose: string, commit: string, offset: number): string {
    const payload = Buffer.alloc(24);
    Buffer.from(commit, 'hex').copy(payload, 0);
    payload.writeUInt32BE(offset, 20);
    return this.deps.cursors.encode(purpose, payload);
  }

  private fromCursor(purpose: string, cursor: string | undefined, rec: MemoryRecord): { commit: string | null; offset: number } {
    if (cursor === undefined) return { commit: rec.head, offset: 0 };
    try {
      const payload = this.deps.cursors.decode(purpose, cursor);
      if (payload.length !== 24) throw new CursorError('bad payload');
      return { commit: payload.subarray(0, 20).toString('hex'), offset: payload.readUInt32BE(20) };
    } catch (err) {
      if (err instanceof CursorError) throw badRequest('invalid_cursor', 'cursor is not a valid cursor of this listing', 'cursor');
      throw err;
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Access and storage helpers

  private account(caller: Caller): string {
    if (!caller || typeof caller.account !== 'string' || caller.account === '') throw new Error('caller without an account');
    return caller.account;
  }

  private granted(caller: Caller, name: string): boolean {
    return caller.grants === undefined || caller.grants.includes(name);
  }

  /** Validates the name and the grant: a memory not granted is FORBIDDEN whether it exists or not. */
  private access(caller: Caller, rawName: string): string {
    this.account(caller);
    const name = validateMemoryName(rawName);
    if (!this.granted(caller, name)) throw forbidden(`memory "${name}" is not granted to this token`);
    return name;
  }

  private async active(caller: Caller, name: string): Promise<MemoryRecord> {
    const rec = await this.deps.lock.get(caller.account, name);
    if (!rec || rec.state !== 'active') throw notFound('memory_not_found', `memory "${name}" does not exist`);
    return rec;
  }

  private stale(rec: MemoryRecord): MemoryError {
    return conflict('stale_rev', `If-Match does not match the current rev ${rec.head ?? '(none: the memory is empty)'}`);
  }

  private git(rec: MemoryRecord): GitOverlay {
    return new GitOverlay(rec.id, this.deps.blobs, this.cache);
  }

  private async index(rec: MemoryRecord, commit: string): Promise<NoteIndex> {
    const idx = await this.cache.getOrLoad(
      `i:${rec.id}:${commit}`,
      async () => {
        const bytes = await this.deps.blobs.get(rec.id, 'index', commit);
        return bytes ? parseIndex(bytes) : this.rebuildIndex(rec, commit);
      },
      indexBytes,
    );
    return idx as NoteIndex;
  }

  /**
   * Builds a commit's index from its tree when the index object is missing (a commit brought in
   * through the git recovery procedure). Slow (reads every note) but only ever once per commit.
   */
  private async rebuildIndex(rec: MemoryRecord, commit: string): Promise<NoteIndex> {
    const git = this.git(rec);
    const c = await git.readCommit(commit);
    const time = isoSeconds(c.committer.timestamp);
    const trees = new Map<string, string>();
    const files = new Map<string, FileEntry>();
    const walk = async (folder: string, oid: string): Promise<void> => {
      trees.set(folder, oid);
      for (const e of await git.readTree(oid)) {
        const path = folder === '' ? e.path : `${folder}/${e.path}`;
        if (e.type === 'tree') await walk(path, e.oid);
        else if (e.type === 'blob' && path.endsWith('.md')) {
          const text = await git.readText(e.oid);
          const { frontmatter, body } = parseNoteLenient(text, this.limits);
          files.set(path, fileEntry(e.oid, { title: extractTitle(body, path), tags: extractTags(frontmatter, body), excerpt: makeExcerpt(body), size: Buffer.byteLength(text, 'utf8') }, time));
        }
      }
    };
    await walk('', c.tree);
    const built: NoteIndex = { commit, parent: c.parent[0] ?? null, time, files, trees, tombstones: new Map() };
    await this.deps.blobs.putMany(rec.id, [{ kind: 'index', sha: commit, body: serializeIndex(built) }]);
    return built;
  }

  /** A note's stored text, cached by blob sha. */
  private async text(rec: MemoryRecord, git: GitOverlay, blob: string): Promise<string> {
    const t = await this.cache.getOrLoad(`t:${rec.id}:${blob}`, () => git.readText(blob), (s) => s.length * 2 + 64);
    return t as string;
  }

  /** A note's body (after front matter), cached by blob sha: what search scans. */
  private async body(rec: MemoryRecord, git: GitOverlay, blob: string): Promise<string> {
    const b = await this.cache.getOrLoad(
      `b:${rec.id}:${blob}`,
      async () => parseNoteLenient(await this.text(rec, git, blob), this.limits).body,
      (s) => s.length * 2 + 64,
    );
    return b as string;
  }

  /** Every object reachable from `head`, commits first; loaded in parallel waves, each once. */
  private async reachable(git: GitOverlay, head: string): Promise<string[]> {
    const seen = new Set<string>();
    const order: string[] = [];
    const roots: string[] = [];
    let commits = [head];
    while (commits.length > 0) {
      const fresh = commits.filter((c) => !seen.has(c));
      fresh.forEach((c) => seen.add(c));
      const read = await mapLimit(fresh, READ_CONCURRENCY, (c) => git.readCommit(c));
      order.push(...fresh);
      commits = [];
      for (const c of read) {
        roots.push(c.tree);
        commits.push(...c.parent);
      }
    }
    let level = [...new Set(roots)].filter((t) => !seen.has(t));
    while (level.length > 0) {
      level.forEach((t) => seen.add(t));
      order.push(...level);
      const trees = await mapLimit(level, READ_CONCURRENCY, (t) => git.readTree(t));
      const next = new Set<string>();
      const blobs: string[] = [];
      for (const entries of trees) {
        for (const e of entries) {
          if (seen.has(e.oid)) continue;
          if (e.type === 'tree') next.add(e.oid);
          else if (e.type === 'blob') {
            seen.add(e.oid);
            blobs.push(e.oid);
          }
        }
      }
      await mapLimit(blobs, READ_CONCURRENCY, async (b) => {
        if (!(await git.prefetch(b))) throw new Error(`object ${b} is missing from storage`);
      });
      order.push(...blobs);
      level = [...next];
    }
    return order;
  }

  private async guard<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      if (err instanceof MemoryError) throw err;
      if (err instanceof StorageError) throw unavailable(err);
      throw err;
    }
  }
}

function toMemory(rec: MemoryRecord): Memory {
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
