import type { input } from 'zod';
import type { Caller, FrontMatter, NoteLinks } from '../memory';
import type { KeyedWrite } from '../shared/idempotency/store';
import { ToolError } from '../shared/mcp/tool-error';
import { against, defineTool, isMissingMemory, type McpTool, type ToolContext } from './define-tool';
import { listFolder } from './list';
import {
  deleteInput,
  deleteOutput,
  editInput,
  editOutput,
  listInput,
  listOutput,
  readInput,
  readOutput,
  searchInput,
  searchOutput,
  writeInput,
  writeOutput,
  type ListEntryOut,
  type ListFolderEntry,
} from './schemas';
import { DEFAULT_MEMORY, defaultTarget, display, parseFolder, parseNotePath, vaultTarget, type FolderTarget, type NoteTarget, type Target } from './vault';

export type { McpTool, ToolContext } from './define-tool';

// ------------------------------------------------------------------------------------------------
// The six tools

const search = defineTool({
  name: 'memory__search',
  title: 'Search memory',
  description:
    'Find notes containing a keyword. The query is ONE literal, case-insensitive substring (e.g. "postgres" or "acme-api"), not a phrase or a question: ' +
    'search for the most distinctive single word, and search again with another word if needed. Matches titles, bodies and tags; ranked by number of occurrences. ' +
    'Returns paths with a snippet around the first match, never full bodies: call memory__read on a path to get the note. ' +
    'Omit folder to search the default memory; "@<vault>" searches a named vault. Pass nextCursor back as cursor for more results.',
  scope: 'memory:read',
  annotations: { readOnlyHint: true, openWorldHint: false },
  input: searchInput,
  output: searchOutput,
  async run(args, ctx) {
    const target = args.folder === undefined ? { ...defaultTarget(), folder: '' } : parseFolder(args.folder);
    const page = await against(target, () =>
      orEmpty(
        target,
        ctx.service.searchNotes(ctx.caller, target.memory, { q: args.query, folder: target.folder, tags: args.tags, limit: args.limit, cursor: args.cursor }),
        {
          results: [],
          rev: null,
        },
      ),
    );
    return {
      results: page.results.map((r) => ({
        path: display(target, r.path),
        title: r.title,
        snippet: r.snippet,
        score: r.score,
        updated: r.updated,
        ...(r.section !== undefined && { section: r.section }),
      })),
      ...(page.nextCursor !== undefined && { nextCursor: page.nextCursor }),
    };
  },
});

const read = defineTool({
  name: 'memory__read',
  title: 'Read a note',
  description:
    'Read one note by its exact path (not a title or a query; use memory__search or memory__list to find paths). ' +
    'Returns the markdown body, the front matter as an object, tags and the last update time. ' +
    'A note that was deleted is still returned, with its last content and deleted: true. "@<vault>/<path>" reads from a named vault. ' +
    'To read less of a long note: section (a heading, e.g. the section of a memory__search result), lines ("10-40") or frontmatterOnly; the result says which part it is and its rev. ' +
    'includeLinks adds the links both ways (outgoing with the note each leads to, incoming from other notes), to follow them with memory__read. ' +
    'Earlier versions: pass history (e.g. 10) to list the versions of the note with their revs, then rev to read one of them; to restore it, memory__write its body and frontmatter back.',
  scope: 'memory:read',
  annotations: { readOnlyHint: true, openWorldHint: false },
  input: readInput,
  output: readOutput,
  async run(args, ctx) {
    const t = parseNotePath(args.path);
    const { path: _path, history: _history, ...opts } = args;
    const note = await against(t, () => ctx.service.readNote(ctx.caller, t.memory, t.path, { includeDeleted: true, ...opts }));
    const history = args.history === undefined ? undefined : await against(t, () => versionsOf(ctx, t, args.history as number));
    return {
      path: t.display,
      title: note.title,
      frontmatter: note.frontmatter,
      body: note.body,
      tags: note.tags,
      updated: note.updated,
      deleted: note.deleted,
      rev: note.rev,
      ...(history !== undefined && { history }),
      ...(note.part !== undefined && { part: note.part }),
      ...(note.links !== undefined && { links: linksAs(t, note.links) }),
    };
  },
});

const list = defineTool({
  name: 'memory__list',
  title: 'List notes and folders',
  description:
    "Browse the memory as a tree: the folder's files (path, title, updated) and subfolders (with their recursive file count and, at depth 2, their children). " +
    'Without folder: the default memory\'s root plus one "@<vault>/" folder per named vault. At most 100 entries per folder are shown; ' +
    'a folder flagged truncated has more and is not expanded, so list that folder on its own (or use memory__search). tags filters to notes carrying all of them. ' +
    "With changedSince (a rev): only the notes changed since then, flat, each with change (added, modified, renamed, deleted); the result's rev is the next changedSince.",
  scope: 'memory:read',
  annotations: { readOnlyHint: true, openWorldHint: false },
  input: listInput,
  output: listOutput,
  async run(args, ctx) {
    const depth = args.depth as 1 | 2;
    const max = ctx.config.listMaxEntries;
    if (args.changedSince !== undefined)
      return listChanges(ctx, args.folder === undefined ? { ...defaultTarget(), folder: '' } : parseFolder(args.folder), args.changedSince, args.tags);
    if (args.folder === undefined) return listEverything(ctx, depth, args.tags);
    const t = parseFolder(args.folder);
    const listing = await against(t, () =>
      orEmpty(t, listFolder(ctx.service, ctx.caller, t, t.folder, depth, args.tags, max), { entries: [], truncated: false, files: 0 }),
    );
    return { folder: display(t, normaliseFolder(t.folder)), ...listing };
  },
});

const write = defineTool({
  name: 'memory__write',
  title: 'Write a note',
  description:
    'Create a note, or replace an existing one completely (body and front matter), at a path ending in .md, e.g. "projects/acme/decisions.md". ' +
    'Folders are implied by the path. Send the whole note: to change part of an existing note use memory__edit instead. ' +
    'body is plain markdown without a --- front-matter block; pass front matter as the frontmatter object. Content that looks like a credential (API keys, passwords, private keys) is refused. ' +
    '"@<vault>/<path>" writes into a named vault (created if it does not exist yet).',
  scope: 'memory:write',
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  input: writeInput,
  output: writeOutput,
  async run(args, ctx) {
    const t = parseNotePath(args.path);
    // The core validates front matter as JSON data (validateFrontMatter); the cast only names its type.
    const input = args.frontmatter === undefined ? { body: args.body } : { body: args.body, frontmatter: args.frontmatter as FrontMatter };
    const out = await against(t, () =>
      ctx.service.writeNote(ctx.caller, t.memory, t.path, input, { createMemory: true, ...expected(args.expectedRev), ...keyed(ctx) }),
    );
    return { path: t.display, updated: out.updated, rev: out.rev };
  },
});

const edit = defineTool({
  name: 'memory__edit',
  title: 'Edit a note',
  description:
    'Change an existing note without resending it. mode "replace" (default): body replaces the body; "append": body is added at the end on a new line (e.g. a log entry); ' +
    '"str_replace": old_str, copied exactly (whitespace included) from the current body and occurring exactly once, is replaced by new_str (omit new_str to delete it). ' +
    'frontmatter, in any mode (str_replace included), merges keys into the front matter. Fails with not_found if the note does not exist: create it with memory__write.',
  scope: 'memory:write',
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  input: editInput,
  output: editOutput,
  async run(args, ctx) {
    const t = parseNotePath(args.path);
    const { path: _path, frontmatter, expectedRev, idempotencyKey: _key, ...rest } = args;
    const edit = frontmatter === undefined ? rest : { ...rest, frontmatter: frontmatter as FrontMatter };
    const out = await against(t, () => ctx.service.editNote(ctx.caller, t.memory, t.path, edit, { ...expected(expectedRev), ...keyed(ctx) }));
    return { path: t.display, updated: out.updated, rev: out.rev };
  },
});

const remove = defineTool({
  name: 'memory__delete',
  title: 'Delete a note',
  description:
    'Delete one note by exact path. The deletion is soft: the note leaves listings and searches but stays in the history, and memory__read still shows its last content with deleted: true. ' +
    'Fails with not_found if no note exists at the path.',
  scope: 'memory:write',
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  input: deleteInput,
  output: deleteOutput,
  async run(args, ctx) {
    const t = parseNotePath(args.path);
    const out = await against(t, () => ctx.service.deleteNote(ctx.caller, t.memory, t.path, { ...expected(args.expectedRev), ...keyed(ctx) }));
    return { path: t.display, deleted: true as const, rev: out.rev };
  },
});

export const TOOLS: readonly McpTool[] = [search, read, list, write, edit, remove];

// ------------------------------------------------------------------------------------------------
// Helpers

/** A note's links with paths as the caller addresses them (`@work/…` through a vault). */
function linksAs(t: Target, links: NoteLinks): NoteLinks {
  return {
    outgoing: links.outgoing.map((l) => ({ ...l, path: l.path === null ? null : display(t, l.path) })),
    incoming: links.incoming.map((l) => ({ ...l, path: display(t, l.path) })),
  };
}

/** `expectedRev` as the core's write option (a stale one is CONFLICT: the tool error `conflict`). */
const expected = (rev: string | undefined): { expectedRev?: string } => (rev === undefined ? {} : { expectedRev: rev });

/** The call's claimed `idempotencyKey`, recorded by the core with the commit (`onceByKey` in define-tool.ts). */
const keyed = (ctx: ToolContext): { once?: KeyedWrite } => (ctx.once ? { once: ctx.once } : {});

/**
 * The last `n` versions of a note: its history (following renames), each entry with the change to
 * the note itself, paths as the caller addresses them.
 */
async function versionsOf(ctx: ToolContext, t: NoteTarget, n: number) {
  const page = await ctx.service.historyPage(ctx.caller, t.memory, { path: t.path, limit: n });
  let current = t.path;
  return page.commits.map((c) => {
    const ch = c.changes.find((x) => x.path === current) ?? c.changes.find((x) => x.from === current) ?? { path: current, change: 'modified' as const };
    const out = {
      rev: c.rev,
      time: c.time,
      author: c.author.name,
      message: c.message,
      change: ch.change,
      ...(ch.from !== undefined && { from: display(t, ch.from) }),
    };
    if (ch.change === 'renamed' && ch.from !== undefined) current = ch.from;
    return out;
  });
}

/** memory__list with changedSince: the notes changed since that rev in one memory, flat. */
async function listChanges(ctx: ToolContext, t: FolderTarget, since: string, tags: readonly string[] | undefined): Promise<input<typeof listOutput>> {
  const out = await against(t, () => ctx.service.changesSince(ctx.caller, t.memory, since, { folder: t.folder, tags }));
  const max = ctx.service.limits.listMaxLimit;
  return {
    folder: display(t, normaliseFolder(t.folder)),
    entries: out.changes.slice(0, max).map((c) => ({
      type: 'file' as const,
      path: display(t, c.path),
      title: c.title,
      updated: c.updated,
      change: c.change,
      ...(c.from !== undefined && { from: display(t, c.from) }),
    })),
    truncated: out.changes.length > max,
    files: out.changes.length,
    rev: out.rev,
  };
}

function normaliseFolder(folder: string): string {
  const f = folder.trim();
  return f === '/' ? '' : f.replace(/\/$/, '');
}

/** The default memory is created on first write; until then it reads as empty, not as missing. */
async function orEmpty<T>(target: Target, work: Promise<T>, empty: T): Promise<T> {
  try {
    return await work;
  } catch (err) {
    if (target.prefix === '' && isMissingMemory(err)) return empty;
    throw err;
  }
}

function granted(caller: Caller, name: string): boolean {
  return caller.grants === undefined || caller.grants.includes(name);
}

/**
 * memory__list without a folder (DECISIONS): one `@<vault>/` folder per other vault the token may
 * see (existing ones, and those its grant names, which the first write creates), then the default
 * memory's root. Vault folders come first so that a crowded root never hides them.
 */
async function listEverything(ctx: ToolContext, depth: 1 | 2, tags: readonly string[] | undefined): Promise<input<typeof listOutput>> {
  const max = ctx.config.listMaxEntries;
  const memories = await against({ label: 'the memories of this account' }, () => ctx.service.listMemories(ctx.caller));
  const names = new Set(memories.map((m) => m.name));
  for (const g of ctx.caller.grants ?? []) names.add(g);
  names.delete(DEFAULT_MEMORY);
  const existing = new Set(memories.map((m) => m.name));
  const vaults = [...names].sort();

  const vaultFolders = await Promise.all(
    vaults.map(async (name): Promise<ListFolderEntry> => {
      const t = vaultTarget(name);
      const folder: ListFolderEntry = { type: 'folder', path: t.prefix, files: 0, entries: [] };
      if (!existing.has(name)) return folder;
      // Its entries are shown only at depth 2 (as the vault folder's children); at depth 1 only counts are.
      const inner = await against(t, () => listFolder(ctx.service, ctx.caller, t, '', 1, tags, max, depth === 2)).catch((err: unknown) => {
        if (err instanceof ToolError && err.code === 'not_found') return undefined; // retired meanwhile
        throw err;
      });
      if (!inner) return folder;
      folder.files = inner.files;
      if (depth === 2) {
        if (inner.truncated) folder.truncated = true;
        else folder.entries = inner.entries;
      }
      return folder;
    }),
  );

  let root = { entries: [] as ListEntryOut[], truncated: false, files: 0 };
  if (granted(ctx.caller, DEFAULT_MEMORY) && existing.has(DEFAULT_MEMORY)) {
    const t = defaultTarget();
    root = await against(t, () => listFolder(ctx.service, ctx.caller, t, '', depth, tags, max)).catch((err: unknown) => {
      if (err instanceof ToolError && err.code === 'not_found') return root;
      throw err;
    });
  }
  const room = Math.max(0, max - vaultFolders.length);
  return {
    folder: '',
    entries: [...vaultFolders, ...root.entries.slice(0, room)],
    truncated: root.truncated || root.entries.length > room,
    files: root.files + vaultFolders.reduce((n, f) => n + f.files, 0),
  };
}
