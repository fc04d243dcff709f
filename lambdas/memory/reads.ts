import type { MemoryLimits } from './config';
import { pageSize, tagArgs } from './content';
import { cursorPurpose, type PageCursors } from './cursors';
import { badRequest, notFound } from './errors';
import type { GitOverlay } from './git-overlay';
import { resolveRev } from './history';
import type { IndexStore } from './index-store';
import type { Lineages } from './lineage';
import { summarize, type LinkGraphs } from './link-graph';
import { listEntries, pageOfHits, type ListSort, type ListType } from './listing';
import { parseNoteLenient, trySplit } from './markdown';
import type { Memories } from './memories';
import type { FileEntry, NoteIndex, Tombstone } from './note-index';
import { validateFolder, validateNotePath } from './paths';
import type { MemoryRecord } from './ports';
import type { NoteSearch } from './search';
import { checkPartQuery, selectPart } from './sections';
import type { NoteTexts } from './texts';
import type { Caller, ListNotesQuery, MemoryLinks, Note, NoteLinksResult, NoteListing, ReadOptions, SearchPage, SearchQuery } from './types';

/** The longest list of orphans or dangling links a memory-wide link view returns. */
export const MAX_LINK_LIST = 10000;

export interface ReadsDeps {
  memories: Memories;
  indexes: IndexStore;
  texts: NoteTexts;
  search: NoteSearch;
  cursors: PageCursors;
  lineages: Lineages;
  limits: MemoryLimits;
  git: (rec: MemoryRecord) => GitOverlay;
  links: LinkGraphs;
  /** How the caller's transport restores a note (`path` given) or a memory. */
  restoreHint: (name: string, path?: string) => string;
}

/**
 * Reads, listings and searches. Each reads one commit (the head, or the commit a cursor pinned) and
 * only through that commit's index, so a read at any other rev is the same code with another commit.
 */
export class NoteReads {
  constructor(private readonly deps: ReadsDeps) {}

  /**
   * A note (see `ReadOptions`): with `section`, `lines` or `frontmatterOnly` only that part of it
   * (`body` and `markdown` are the part, `part` says which); with `includeLinks` its links both ways.
   */
  async readNote(caller: Caller, rawName: string, rawPath: string, opts: ReadOptions = {}): Promise<Note> {
    const name = this.deps.memories.access(caller, rawName);
    const path = validateNotePath(rawPath, this.deps.limits);
    checkPartQuery(opts);
    const rec = await this.deps.memories.active(caller, name);
    const commit = await this.commitOf(rec, path, opts.rev);
    const note = await this.readAt(rec, commit, path, opts.includeDeleted === true);
    const selected = selectPart(note.body, opts, path);
    const links = opts.includeLinks ? await this.deps.links.forNote(rec, await this.deps.indexes.load(rec, commit), path, note.body) : undefined;
    if (!selected && !links) return note;
    return {
      ...note,
      ...(selected && {
        body: selected.text,
        markdown: selected.part.frontmatterOnly ? (trySplit(note.markdown)?.head ?? '') : selected.text,
        part: selected.part,
      }),
      ...(links && { links }),
    };
  }

  /** A note's links both ways, at the head or at `rev`: outgoing (resolved or dangling) and incoming. */
  async noteLinks(caller: Caller, rawName: string, rawPath: string, opts: { rev?: string } = {}): Promise<NoteLinksResult> {
    const name = this.deps.memories.access(caller, rawName);
    const path = validateNotePath(rawPath, this.deps.limits);
    const rec = await this.deps.memories.active(caller, name);
    const commit = await this.commitOf(rec, path, opts.rev);
    const index = await this.deps.indexes.load(rec, commit);
    this.entryAt(rec, index, path, false);
    const graph = await this.deps.links.graph(rec, index);
    return { path, rev: commit, outgoing: graph.outgoing.get(path) ?? [], incoming: graph.incoming.get(path) ?? [] };
  }

  /** The memory's orphans (notes nothing links to) and dangling links, as asked (both when neither is). */
  async memoryLinks(caller: Caller, rawName: string, opts: { orphans?: boolean; dangling?: boolean; rev?: string } = {}): Promise<MemoryLinks> {
    const name = this.deps.memories.access(caller, rawName);
    const rec = await this.deps.memories.active(caller, name);
    const both = !opts.orphans && !opts.dangling;
    const want = { orphans: both || opts.orphans === true, dangling: both || opts.dangling === true };
    const commit = opts.rev === undefined ? rec.head : await resolveRev(this.deps.lineages, rec, this.deps.git(rec), opts.rev);
    if (!commit) return { rev: null, notes: 0, links: 0, ...(want.orphans && { orphans: [] }), ...(want.dangling && { dangling: [] }) };
    const index = await this.deps.indexes.load(rec, commit);
    return { rev: commit, ...summarize(await this.deps.links.graph(rec, index), want, MAX_LINK_LIST) };
  }

  /** The commit a read of `path` is at: `rev` (a commit of the history) or the head. */
  private async commitOf(rec: MemoryRecord, path: string, rev: string | undefined): Promise<string> {
    if (rev !== undefined) return resolveRev(this.deps.lineages, rec, this.deps.git(rec), rev);
    if (!rec.head) throw notFound('note_not_found', `note "${path}" does not exist`);
    return rec.head;
  }

  /** The note at `path` as of `commit` (a soft-deleted one only with `includeDeleted`). */
  async readAt(rec: MemoryRecord, commit: string, path: string, includeDeleted: boolean): Promise<Note> {
    const index = await this.deps.indexes.load(rec, commit);
    const { entry, deleted } = this.entryAt(rec, index, path, includeDeleted);
    const markdown = await this.deps.texts.text(rec, this.deps.git(rec), entry.blob);
    const { frontmatter, body } = parseNoteLenient(markdown, this.deps.limits);
    return { path, title: entry.title, frontmatter, body, tags: entry.tags, sizeBytes: entry.size, updated: entry.updated, deleted, markdown, rev: commit };
  }

  /** The index entry of `path` (a tombstone only with `includeDeleted`), or NOT_FOUND saying whether it was deleted. */
  private entryAt(rec: MemoryRecord, index: NoteIndex, path: string, includeDeleted: boolean): { entry: FileEntry | Tombstone; deleted: boolean } {
    const live = index.files.get(path);
    if (live) return { entry: live, deleted: false };
    const tomb = index.tombstones.get(path);
    if (tomb && includeDeleted) return { entry: tomb, deleted: true };
    if (tomb) throw notFound('note_not_found', `note "${path}" was deleted at ${tomb.deleted}; ${this.deps.restoreHint(rec.name, path)}`);
    throw notFound('note_not_found', `note "${path}" does not exist`);
  }

  async listNotes(caller: Caller, rawName: string, query: ListNotesQuery = {}): Promise<NoteListing> {
    const { limits } = this.deps;
    const name = this.deps.memories.access(caller, rawName);
    const folder = validateFolder(query.folder, limits);
    const depth = query.depth === undefined ? 2 : query.depth;
    if (depth !== 'all' && !(Number.isInteger(depth) && depth >= 1))
      throw badRequest('invalid_argument', 'depth must be an integer of at least 1, or all', 'depth');
    const type: ListType = query.type ?? 'all';
    if (!['all', 'file', 'folder'].includes(type)) throw badRequest('invalid_argument', 'type must be all, file or folder', 'type');
    const fields = query.fields ?? 'full';
    if (fields !== 'path' && fields !== 'full') throw badRequest('invalid_argument', 'fields must be path or full', 'fields');
    const sort: ListSort = query.sort ?? 'name';
    if (sort !== 'name' && sort !== 'updated') throw badRequest('invalid_argument', 'sort must be name or updated', 'sort');
    const limit = pageSize(query.limit, limits.listDefaultLimit, limits.listMaxLimit);
    const tags = tagArgs(query.tags, limits);
    const rec = await this.deps.memories.active(caller, name);
    const purpose = cursorPurpose('notes', rec, folder, depth, type, fields, tags, sort);
    const { commit, offset } = await this.deps.cursors.decode(purpose, query.cursor, rec.head);
    const index = commit ? await this.deps.indexes.load(rec, commit) : null;
    const { entries, files } = listEntries(index, { folder, depth: depth === 'all' ? Infinity : depth, type, pathsOnly: fields === 'path', tags, sort });
    const page = entries.slice(offset, offset + limit);
    const truncated = offset + limit < entries.length;
    return {
      folder,
      entries: page,
      files,
      truncated,
      ...(truncated && commit ? { nextCursor: this.deps.cursors.encode(purpose, commit, offset + limit) } : {}),
      rev: commit,
    };
  }

  async searchNotes(caller: Caller, rawName: string, query: SearchQuery): Promise<SearchPage> {
    const { limits } = this.deps;
    const name = this.deps.memories.access(caller, rawName);
    // The query is one literal, spaces included; only a query of nothing but spaces counts as missing.
    const q = typeof query.q === 'string' ? query.q : '';
    if (q.trim() === '') throw badRequest('invalid_argument', 'q is required', 'q');
    if (q.length > limits.maxQueryChars) throw badRequest('invalid_argument', `q is longer than ${limits.maxQueryChars} characters`, 'q');
    const folder = validateFolder(query.folder, limits);
    const tags = tagArgs(query.tags, limits);
    const limit = pageSize(query.limit, limits.searchDefaultLimit, limits.searchMaxLimit);
    const rec = await this.deps.memories.active(caller, name);
    const purpose = cursorPurpose('search', rec, q, folder, tags);
    const { commit, offset } = await this.deps.cursors.decode(purpose, query.cursor, rec.head);
    if (!commit) return { results: [], rev: null };
    // With no folder or tags every note is a candidate, so the segments will be read: their fetch
    // starts while the index is parsed. A filtered search may need none of them (and reads none).
    const search = this.deps.search;
    const ahead = folder === '' && tags.length === 0 && search.prefetch ? (ids: string[]) => search.prefetch?.(rec, ids) : undefined;
    const index = await this.deps.indexes.load(rec, commit, ahead && { ahead });
    const { page, more } = pageOfHits(await this.deps.search.hits(rec, index, { q, folder, tags }), offset, limit);
    return {
      results: page,
      ...(more ? { nextCursor: this.deps.cursors.encode(purpose, commit, offset + limit) } : {}),
      rev: commit,
    };
  }
}
