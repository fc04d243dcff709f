import { hasScope } from '../identity/principal';
import type { FrontMatter, ListSort, ListType, Memory, Note, NoteInput } from '../memory';
import { validateQuery } from '../shared/http/query';
import { header, json } from '../shared/http/types';
import { bodyBytes, isJson, isMarkdown, jsonBody, mediaType, parseJson, utf8Text, validate } from './body';
import { writeOptions, type MemoryCtx, type MemoryRouteHandler } from './context';
import { badRequest } from './errors';
import { deliverExport } from './exports';
import { ifMatchOption } from './if-match';
import { gitInfoRefs, gitReceivePack, gitUploadPack } from './git';
import { runMemoryTool } from './memory-tool';
import { CreateMemoryBody, LinksQuery, ListNotesQuery, NoteLinksQuery, PatchNoteBody, PutNoteBody, ReadNoteQuery, RestoreBody, SearchQuery } from './schemas';
import type { MemoryOut } from './response-schemas';
import { createToken, listTokens, revokeToken } from './tokens';
import { diff, history, move } from './versions';

export type { MemoryCtx, MemoryRouteHandler } from './context';

// Handlers are thin: parse, call the core, shape the response. Validation rules live in the core.

const memoryOut = (m: Memory): MemoryOut => ({
  name: m.name,
  files: m.files,
  folders: m.folders,
  sizeBytes: m.sizeBytes,
  updated: m.updated,
  empty: m.empty,
  rev: m.rev,
});

const etag = (rev: string | null): Record<string, string> => (rev ? { etag: `"${rev}"` } : {});

/** If-Match as the core's expected rev (`if-match.ts`: 400 when malformed, 409 for a weak tag). */
const ifMatch = (ctx: MemoryCtx): { expectedRev?: string } => ifMatchOption(ctx.event);

const p = (ctx: MemoryCtx, name: 'memory' | 'path'): string => ctx.params[name] ?? '';

export const listMemories: MemoryRouteHandler = async (ctx, deps) => {
  const memories = await deps.service.listMemories(ctx.caller);
  return json({ memories: memories.map(memoryOut) });
};

export const createMemory: MemoryRouteHandler = async (ctx, deps) => {
  const { name } = jsonBody(ctx.event, CreateMemoryBody, deps.config.maxRequestBytes, { required: true });
  const { created, memory } = await deps.service.createMemory(ctx.caller, name, ifMatch(ctx));
  const headers = { ...etag(memory.rev), ...(created && { location: `/v1/memories/${memory.name}` }) };
  return json(memoryOut(memory), headers, created ? 201 : 200);
};

export const getMemory: MemoryRouteHandler = async (ctx, deps) => {
  const memory = await deps.service.getMemory(ctx.caller, p(ctx, 'memory'));
  return json(memoryOut(memory), etag(memory.rev));
};

export const retireMemory: MemoryRouteHandler = async (ctx, deps) => {
  const out = await deps.service.retireMemory(ctx.caller, p(ctx, 'memory'), ifMatch(ctx));
  return json({ name: out.name, deleted: true });
};

/**
 * POST /v1/memories/{memory}/restore: the documented recovery. Without a body, brings a retired
 * memory back with its history; with `{ "path": "a.md" }`, brings a soft-deleted note back with its
 * last content (If-Match applies, like any note write). A note route of its own is not possible:
 * API Gateway allows a greedy `{path+}` only as the last segment.
 */
export const restore: MemoryRouteHandler = async (ctx, deps) => {
  const body = jsonBody(ctx.event, RestoreBody, deps.config.maxRequestBytes, { required: false });
  if (body.path !== undefined) {
    const out = await deps.service.restoreNote(ctx.caller, p(ctx, 'memory'), body.path, {
      ...writeOptions(ctx),
      ...(body.rev !== undefined && { rev: body.rev }),
    });
    return json({ path: out.path, rev: out.rev, updated: out.updated });
  }
  if (body.rev !== undefined) throw badRequest('rev restores a note: give path too');
  // Retiring and restoring never move the head, so there is nothing If-Match could protect; a
  // malformed value is still refused like on every write.
  ifMatch(ctx);
  const memory = await deps.service.restoreMemory(ctx.caller, p(ctx, 'memory'));
  return json(memoryOut(memory), etag(memory.rev));
};

export const listNotes: MemoryRouteHandler = async (ctx, deps) => {
  const q = validateQuery(ListNotesQuery, { multi: ['tags'] }, ctx.query);
  const out = await deps.service.listNotes(ctx.caller, p(ctx, 'memory'), {
    folder: q.folder,
    depth: q.depth,
    // Values are the core's to judge (400 on anything else); the casts only pass them through.
    type: q.type as ListType | undefined,
    fields: q.fields as 'path' | 'full' | undefined,
    tags: q.tags?.filter((t) => t !== ''),
    sort: q.sort as ListSort | undefined,
    limit: q.limit,
    cursor: q.cursor,
  });
  return json({
    folder: out.folder,
    entries: out.entries,
    files: out.files,
    truncated: out.truncated,
    ...(out.nextCursor !== undefined && { nextCursor: out.nextCursor }),
  });
};

export const searchNotes: MemoryRouteHandler = async (ctx, deps) => {
  const q = validateQuery(SearchQuery, { multi: ['tags'] }, ctx.query);
  const out = await deps.service.searchNotes(ctx.caller, p(ctx, 'memory'), {
    q: q.q ?? '',
    folder: q.folder,
    tags: q.tags?.filter((t) => t !== ''),
    limit: q.limit,
    cursor: q.cursor,
  });
  return json({ results: out.results, ...(out.nextCursor !== undefined && { nextCursor: out.nextCursor }) });
};

/** Does the client prefer the stored markdown (`Accept: text/markdown`) over JSON? */
export function wantsMarkdown(accept: string | undefined): boolean {
  if (!accept) return false;
  let markdown = 0;
  let jsonQ = 0;
  for (const range of accept.split(',')) {
    const [type, ...params] = range.split(';').map((s) => s.trim().toLowerCase());
    const qParam = params.find((x) => x.startsWith('q='));
    const q = qParam === undefined ? 1 : Number(qParam.slice(2));
    if (!Number.isFinite(q)) continue;
    if (type === 'text/markdown') markdown = Math.max(markdown, q);
    if (type === 'application/json') jsonQ = Math.max(jsonQ, q);
  }
  return markdown > 0 && markdown > jsonQ;
}

const noteOut = (n: Note) => ({
  path: n.path,
  title: n.title,
  frontmatter: n.frontmatter,
  body: n.body,
  tags: n.tags,
  sizeBytes: n.sizeBytes,
  updated: n.updated,
  rev: n.rev,
  ...(n.part !== undefined && { part: n.part }),
  ...(n.links !== undefined && { links: n.links }),
});

/** `…/notes/{path}/links` arrives here as the note path `<note>.md/links` (no note can have that path). */
const LINKS_SUFFIX = /\.md\/links$/;

/** A note at a given rev never changes: a private cache may keep it. */
const caching = (rev: string | undefined): string => (rev === undefined ? 'no-store' : 'private, max-age=31536000, immutable');

export const readNote: MemoryRouteHandler = async (ctx, deps) => {
  if (LINKS_SUFFIX.test(p(ctx, 'path'))) return noteLinks(ctx, deps);
  const q = validateQuery(ReadNoteQuery, { multi: [] }, ctx.query);
  const note = await deps.service.readNote(ctx.caller, p(ctx, 'memory'), p(ctx, 'path'), {
    ...(q.rev !== undefined && { rev: q.rev }),
    ...(q.section !== undefined && { section: q.section }),
    ...(q.lines !== undefined && { lines: q.lines }),
    ...(q.frontmatterOnly !== undefined && { frontmatterOnly: q.frontmatterOnly }),
    ...(q.includeLinks !== undefined && { includeLinks: q.includeLinks }),
  });
  const headers = { ...etag(note.rev), vary: 'Accept', 'cache-control': caching(q.rev) };
  if (wantsMarkdown(header(ctx.event, 'accept'))) return { kind: 'text', body: note.markdown, contentType: 'text/markdown; charset=utf-8', headers };
  return json(noteOut(note), headers);
};

/** GET …/notes/{path}/links: the note's outgoing links (resolved or dangling) and the notes linking to it. */
const noteLinks: MemoryRouteHandler = async (ctx, deps) => {
  const { rev } = validateQuery(NoteLinksQuery, { multi: [] }, ctx.query);
  const path = p(ctx, 'path').replace(/\/links$/, '');
  const out = await deps.service.noteLinks(ctx.caller, p(ctx, 'memory'), path, rev === undefined ? {} : { rev });
  return json({ path: out.path, rev: out.rev, outgoing: out.outgoing, incoming: out.incoming }, { ...etag(out.rev), 'cache-control': caching(rev) });
};

/** GET …/links?orphans=true&dangling=true: notes nothing links to, and links that lead nowhere. */
export const links: MemoryRouteHandler = async (ctx, deps) => {
  const q = validateQuery(LinksQuery, { multi: [] }, ctx.query);
  const out = await deps.service.memoryLinks(ctx.caller, p(ctx, 'memory'), {
    ...(q.orphans !== undefined && { orphans: q.orphans }),
    ...(q.dangling !== undefined && { dangling: q.dangling }),
    ...(q.rev !== undefined && { rev: q.rev }),
  });
  return json(out, { ...etag(out.rev), 'cache-control': caching(q.rev) });
};

/**
 * POST …/memory-tool: one command of Claude's memory tool, exactly as the tool emits it (the
 * `input` of its `tool_use` block), answered `{ content, is_error }`: the two fields a handler
 * puts in its `tool_result` (`memory-tool.ts`). `ETag` is the memory's rev after the command;
 * `If-Match` makes the first write expect a rev, as on every write.
 */
export const memoryTool: MemoryRouteHandler = async (ctx, deps) => {
  const media = mediaType(ctx.event);
  const bytes = bodyBytes(ctx.event, deps.config.maxRequestBytes);
  if (bytes.length === 0) throw badRequest('A JSON body is required: one memory tool command, e.g. {"command": "view", "path": "/memories"}');
  if (!isJson(media)) throw badRequest(`Content-Type must be application/json, got ${media?.type}`);
  const input = parseJson(utf8Text(bytes, media));
  const answer = await runMemoryTool(input, {
    service: deps.service,
    caller: ctx.caller,
    memory: p(ctx, 'memory'),
    ...ifMatch(ctx),
    canWrite: hasScope(ctx.principal, 'memory:write'),
  });
  return json({ content: answer.content, is_error: answer.is_error }, etag(answer.rev));
};

/**
 * PUT: JSON `{ body, frontmatter? }`, or the raw file with `Content-Type: text/markdown` (a leading
 * `---` block is the front matter, stored exactly as sent: what `Accept: text/markdown` returns).
 */
export const writeNote: MemoryRouteHandler = async (ctx, deps) => {
  const media = mediaType(ctx.event);
  const bytes = bodyBytes(ctx.event, deps.config.maxRequestBytes);
  let input: NoteInput;
  // An empty request is a missing body (spec 2: 400). An empty note is still possible: JSON `{"body": ""}`.
  if (bytes.length === 0) throw badRequest('A body is required: JSON { "body": … } or text/markdown');
  if (isMarkdown(media)) {
    input = { markdown: utf8Text(bytes, media) };
  } else if (isJson(media)) {
    const body = validate(PutNoteBody, parseJson(utf8Text(bytes, media)));
    // The core checks front matter is plain JSON data (finite numbers, depth, size) before use.
    input = body.frontmatter === undefined ? { body: body.body } : { body: body.body, frontmatter: body.frontmatter as FrontMatter };
  } else {
    throw badRequest(`Content-Type must be application/json or text/markdown, got ${media?.type}`);
  }
  const out = await deps.service.writeNote(ctx.caller, p(ctx, 'memory'), p(ctx, 'path'), input, writeOptions(ctx));
  return json({ path: out.path, rev: out.rev, updated: out.updated });
};

export const editNote: MemoryRouteHandler = async (ctx, deps) => {
  const edit = jsonBody(ctx.event, PatchNoteBody, deps.config.maxRequestBytes, { required: true });
  const out = await deps.service.editNote(
    ctx.caller,
    p(ctx, 'memory'),
    p(ctx, 'path'),
    { ...edit, frontmatter: edit.frontmatter as FrontMatter | undefined },
    writeOptions(ctx),
  );
  return json({ path: out.path, rev: out.rev, updated: out.updated });
};

export const deleteNote: MemoryRouteHandler = async (ctx, deps) => {
  const out = await deps.service.deleteNote(ctx.caller, p(ctx, 'memory'), p(ctx, 'path'), writeOptions(ctx));
  return json({ path: out.path, deleted: true, rev: out.rev });
};

export const exportMemory: MemoryRouteHandler = async (ctx, deps) =>
  deliverExport(await deps.service.streamBundle(ctx.caller, p(ctx, 'memory')), deps.exports, deps.config);

export const exportAll: MemoryRouteHandler = async (ctx, deps) => deliverExport(await deps.service.streamZip(ctx.caller), deps.exports, deps.config);

/** operationId (see `routes.ts`; alias routes map to their twin) → handler. */
export const MEMORY_HANDLERS: Record<string, MemoryRouteHandler> = {
  listMemories,
  createMemory,
  exportAll,
  getMemory,
  retireMemory,
  restore,
  listNotes,
  readNote,
  writeNote,
  editNote,
  deleteNote,
  searchNotes,
  exportMemory,
  history,
  diff,
  move,
  links,
  memoryTool,
  gitInfoRefs,
  gitUploadPack,
  gitReceivePack,
  listTokens,
  createToken,
  revokeToken,
};
