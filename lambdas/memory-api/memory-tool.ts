import { type Caller, MemoryError, type MemoryService } from '../memory';
import { jitteredBackoffMs, sleep } from '../shared/concurrency';
import { forbidden } from './errors';
import {
  CommandError,
  fileView,
  insertAt,
  listing,
  type MemoryCommand,
  parseCommand,
  type Place,
  placeOf,
  replaceOnce,
  ROOT,
  toolPath,
} from './memory-tool-command';

/**
 * Claude's memory tool over one memory: each command of the tool, as it emits it, runs against the
 * notes (`/memories/<path>` is the note `<path>`), and the answer is the string the tool's
 * documentation says a handler returns, as `{ content, is_error }` (the fields of a `tool_result`
 * block). What the model got wrong (an unknown path, an ambiguous `old_str`, a refused note) is a
 * tool result with `is_error`; what the application got wrong (its token, its If-Match) is an HTTP
 * error. The rules that make answers differ from the documentation are listed in the README.
 */
export interface ToolAnswer {
  content: string;
  is_error: boolean;
  /** The memory's rev after the command (null while it is empty or does not exist). */
  rev: string | null;
}

export interface ToolContext {
  service: MemoryService;
  caller: Caller;
  memory: string;
  /** If-Match: the rev the first write must find (a stale one is 409, nothing written). */
  expectedRev?: string;
  /** The token holds memory:write (every command but view needs it). */
  canWrite: boolean;
}

/** The most entries a directory listing shows. */
export const MAX_LISTING = 1000;
/** Read-modify-write rounds (str_replace, insert, create) before giving up on a busy memory. */
const MAX_ROUNDS = 8;

const WRITES: ReadonlySet<MemoryCommand['command']> = new Set(['create', 'str_replace', 'insert', 'delete', 'rename']);

export async function runMemoryTool(input: unknown, ctx: ToolContext): Promise<ToolAnswer> {
  let command: MemoryCommand;
  try {
    command = parseCommand(input);
  } catch (err) {
    if (err instanceof CommandError) return { content: err.message, is_error: true, rev: await currentRev(ctx) };
    throw err;
  }
  if (WRITES.has(command.command) && !ctx.canWrite) throw forbidden(`The memory tool's ${command.command} command needs the memory:write scope`);
  try {
    return await run(command, ctx);
  } catch (err) {
    if (err instanceof CommandError) return { content: err.message, is_error: true, rev: await currentRev(ctx) };
    throw err;
  }
}

async function run(c: MemoryCommand, ctx: ToolContext): Promise<ToolAnswer> {
  switch (c.command) {
    case 'view':
      return view(c.path, placeOf(c.path), c.view_range, ctx);
    case 'create':
      return create(c.path, c.file_text, ctx);
    case 'str_replace':
      return edit(c.path, ctx, 'Error: The path %s does not exist. Please provide a valid path.', (text) => replaceOnce(c.path, text, c.old_str, c.new_str));
    case 'insert':
      return edit(c.path, ctx, 'Error: The path %s does not exist', (text) => insertAt(c.path, text, c.insert_line, c.insert_text));
    case 'delete':
      return remove(c.path, ctx);
    case 'rename':
      return rename(c.old_path, c.new_path, ctx);
  }
}

const ok = (content: string, rev: string | null): ToolAnswer => ({ content, is_error: false, rev });

async function currentRev(ctx: ToolContext): Promise<string | null> {
  try {
    return (await ctx.service.getMemory(ctx.caller, ctx.memory)).rev;
  } catch (err) {
    if (isMissing(err)) return null;
    throw err;
  }
}

const isMissing = (err: unknown): boolean => err instanceof MemoryError && (err.reason === 'memory_not_found' || err.reason === 'note_not_found');

/** A refusal by the note rules (path, size, front matter, credentials): the model can fix it, so it is the tool's error. */
function refusal(err: unknown, what: string): CommandError | undefined {
  if (!(err instanceof MemoryError) || err.code !== 'BAD_REQUEST' || err.reason === 'invalid_name' || err.reason === 'reserved_name') return undefined;
  return new CommandError(`Error: ${what}: ${err.message}`);
}

/** Every note under a folder (`''`: all of them) with its size, in pages of the core's listing. */
async function notesUnder(folder: string, ctx: ToolContext): Promise<{ notes: Array<{ path: string; size: number }>; rev: string | null }> {
  const notes: Array<{ path: string; size: number }> = [];
  let cursor: string | undefined;
  let rev: string | null = null;
  try {
    do {
      const page = await ctx.service.listNotes(ctx.caller, ctx.memory, {
        folder,
        depth: 'all',
        type: 'file',
        limit: ctx.service.limits.listMaxLimit,
        ...(cursor !== undefined && { cursor }),
      });
      for (const e of page.entries) if (e.type === 'file') notes.push({ path: e.path, size: e.sizeBytes ?? 0 });
      cursor = page.nextCursor;
      rev = page.rev;
    } while (cursor !== undefined);
  } catch (err) {
    if (isMissing(err)) return { notes: [], rev: null };
    const refused = refusal(err, `The path ${toolPath(folder)} is not valid`);
    if (refused) throw refused;
    throw err;
  }
  return { notes, rev };
}

const hidden = (segment: string): boolean => segment.startsWith('.') || segment === 'node_modules';

/** Depth-first order: segment by segment, a folder before what follows it. */
function bySegments(a: string, b: string): number {
  const x = a.split('/');
  const y = b.split('/');
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i] < y[i] ? -1 : 1;
  return x.length - y.length;
}

async function view(raw: string, place: Place, range: [number, number] | undefined, ctx: ToolContext): Promise<ToolAnswer> {
  const missing = new CommandError(`The path ${raw} does not exist. Please provide a valid path.`);
  if (place.kind === 'note') {
    try {
      const note = await ctx.service.readNote(ctx.caller, ctx.memory, place.path);
      return ok(fileView(raw, note.markdown, range), note.rev);
    } catch (err) {
      if (isMissing(err) || refusal(err, '')) throw missing;
      throw err;
    }
  }
  const folder = place.kind === 'root' ? '' : place.folder;
  const { notes, rev } = await notesUnder(folder, ctx);
  if (place.kind === 'folder' && notes.length === 0) throw missing;
  const entries = new Map<string, { size: number; folder: boolean }>();
  let total = 0;
  for (const n of notes) {
    total += n.size;
    const segs = (folder === '' ? n.path : n.path.slice(folder.length + 1)).split('/');
    if (segs.some(hidden)) continue;
    for (let depth = 1; depth <= Math.min(2, segs.length); depth++) {
      const path = segs.slice(0, depth).join('/');
      const e = entries.get(path) ?? { size: 0, folder: depth < segs.length };
      e.size += n.size;
      entries.set(path, e);
    }
  }
  const base = toolPath(folder);
  const sorted = [...entries].sort(([a], [b]) => bySegments(a, b));
  const shown = sorted.slice(0, MAX_LISTING).map(([p, e]) => ({ path: `${base}/${p}`, ...e }));
  return ok(listing(base, total, shown, sorted.length - shown.length), rev);
}

/** A note's tool path must end in `.md`: the tool's own error, naming the markdown name to use instead. */
function notePlace(raw: string, what: string): string {
  const place = placeOf(raw);
  if (place.kind === 'note') return place.path;
  const suggestion = place.kind === 'root' ? `${ROOT}/notes.md` : `${raw.replace(/\/$/, '').replace(/\.[A-Za-z0-9]{1,10}$/, '')}.md`;
  throw new CommandError(`Error: ${what} ${raw}: this memory stores markdown notes only, whose names end in .md (e.g. ${suggestion})`);
}

/**
 * A read-modify-write: the change is computed against the note as read, and written only if the
 * memory is still at that rev; if another writer got in between, it is computed again (without
 * If-Match) or answered 409 (with it). So a command never overwrites a change it did not see.
 */
async function rounds<T>(ctx: ToolContext, attempt: () => Promise<T>): Promise<T> {
  for (let round = 1; ; round++) {
    try {
      return await attempt();
    } catch (err) {
      const lost = err instanceof MemoryError && err.reason === 'stale_rev' && ctx.expectedRev === undefined;
      if (!lost) throw err;
      // The rev it expected was its own reading, not the client's If-Match: a busy memory, not a conflict of the client's.
      if (round >= MAX_ROUNDS)
        throw new MemoryError('UPSTREAM_UNAVAILABLE', 'contention', 'too many concurrent writes to this memory; retry', { retryAfterSeconds: 1 });
      await sleep(jitteredBackoffMs(round, 20, 500));
    }
  }
}

/** The rev a read-modify-write expects: the client's If-Match when given (checked first), else the rev it read. */
function expecting(ctx: ToolContext, read: string | null): string | undefined {
  if (ctx.expectedRev !== undefined) return ctx.expectedRev;
  return read ?? undefined;
}

async function create(raw: string, text: string, ctx: ToolContext): Promise<ToolAnswer> {
  const path = notePlace(raw, 'Cannot create');
  return rounds(ctx, async () => {
    const rev = await currentRev(ctx);
    if (rev !== null) {
      const exists = await ctx.service.readNote(ctx.caller, ctx.memory, path, { rev }).then(
        () => true,
        (err: unknown) => {
          if (isMissing(err)) return false;
          const refused = refusal(err, `File ${raw} was not created`);
          if (refused) throw refused;
          throw err;
        },
      );
      if (exists) throw new CommandError(`Error: File ${raw} already exists`);
    }
    const expectedRev = expecting(ctx, rev);
    try {
      const out = await ctx.service.writeNote(
        ctx.caller,
        ctx.memory,
        path,
        { markdown: text },
        { createMemory: true, ...(expectedRev !== undefined && { expectedRev }) },
      );
      return ok(`File created successfully at: ${raw}`, out.rev);
    } catch (err) {
      throw refusal(err, `File ${raw} was not created`) ?? err;
    }
  });
}

async function edit(raw: string, ctx: ToolContext, missingText: string, change: (text: string) => { text: string; result: string }): Promise<ToolAnswer> {
  const missing = new CommandError(missingText.replace('%s', raw));
  const place = placeOf(raw);
  if (place.kind !== 'note') throw missing;
  return rounds(ctx, async () => {
    const note = await ctx.service.readNote(ctx.caller, ctx.memory, place.path).catch((err: unknown) => {
      if (isMissing(err) || refusal(err, '')) throw missing;
      throw err;
    });
    const next = change(note.markdown);
    try {
      const out = await ctx.service.writeNote(ctx.caller, ctx.memory, place.path, { markdown: next.text }, { expectedRev: expecting(ctx, note.rev) });
      return ok(next.result, out.rev);
    } catch (err) {
      throw refusal(err, `The file ${raw} was not edited`) ?? err;
    }
  });
}

/**
 * Several notes at once (a directory's delete or rename): one commit per note, in path order, each
 * expecting the rev the one before left (with If-Match), so that no other write slips in unseen.
 */
async function eachNote(
  ctx: ToolContext,
  paths: readonly string[],
  step: (path: string, expectedRev: string | undefined) => Promise<string>,
): Promise<string | null> {
  let expected = ctx.expectedRev;
  let rev: string | null = null;
  for (const p of paths) {
    rev = await step(p, expected);
    if (expected !== undefined) expected = rev;
  }
  return rev;
}

async function remove(raw: string, ctx: ToolContext): Promise<ToolAnswer> {
  const place = placeOf(raw);
  const missing = new CommandError(`Error: The path ${raw} does not exist`);
  if (place.kind === 'root') throw new CommandError(`Error: Cannot delete the ${ROOT} directory itself`);
  if (place.kind === 'note') {
    try {
      const out = await ctx.service.deleteNote(ctx.caller, ctx.memory, place.path, ctx.expectedRev === undefined ? {} : { expectedRev: ctx.expectedRev });
      return ok(`Successfully deleted ${raw}`, out.rev);
    } catch (err) {
      if (isMissing(err) || refusal(err, '')) throw missing;
      throw err;
    }
  }
  const { notes } = await notesUnder(place.folder, ctx);
  if (notes.length === 0) throw missing;
  const rev = await eachNote(
    ctx,
    notes.map((n) => n.path),
    async (p, expectedRev) => {
      try {
        return (await ctx.service.deleteNote(ctx.caller, ctx.memory, p, expectedRev === undefined ? {} : { expectedRev })).rev;
      } catch (err) {
        // Deleted meanwhile by another writer: the directory is going either way.
        if (isMissing(err) && expectedRev === undefined) return (await currentRev(ctx)) ?? '';
        throw err;
      }
    },
  );
  return ok(`Successfully deleted ${raw}`, rev);
}

async function rename(rawOld: string, rawNew: string, ctx: ToolContext): Promise<ToolAnswer> {
  const from = placeOf(rawOld);
  const missing = new CommandError(`Error: The path ${rawOld} does not exist`);
  const taken = new CommandError(`Error: The destination ${rawNew} already exists`);
  if (from.kind === 'root') throw new CommandError(`Error: Cannot rename the ${ROOT} directory itself`);
  const move = async (a: string, b: string, expectedRev: string | undefined): Promise<string> => {
    try {
      return (await ctx.service.moveNote(ctx.caller, ctx.memory, { from: a, to: b }, expectedRev === undefined ? {} : { expectedRev })).rev;
    } catch (err) {
      if (err instanceof MemoryError && (err.reason === 'note_exists' || (err.reason === 'invalid_argument' && a === b))) throw taken;
      if (isMissing(err)) throw missing;
      throw refusal(err, `Cannot rename ${rawOld} to ${rawNew}`) ?? err;
    }
  };
  if (from.kind === 'note') {
    const to = notePlace(rawNew, `Cannot rename ${rawOld} to`);
    return ok(`Successfully renamed ${rawOld} to ${rawNew}`, await move(from.path, to, ctx.expectedRev));
  }
  const to = placeOf(rawNew);
  if (to.kind !== 'folder') throw new CommandError(`Error: Cannot rename the directory ${rawOld} to ${rawNew}: a directory's name may not end in .md`);
  if (to.folder === from.folder || to.folder.startsWith(`${from.folder}/`)) throw new CommandError(`Error: Cannot rename ${rawOld} into itself (${rawNew})`);
  const { notes } = await notesUnder(from.folder, ctx);
  if (notes.length === 0) throw missing;
  if ((await notesUnder(to.folder, ctx)).notes.length > 0) throw taken;
  const rev = await eachNote(
    ctx,
    notes.map((n) => n.path),
    (p, expectedRev) => move(p, `${to.folder}${p.slice(from.folder.length)}`, expectedRev),
  );
  return ok(`Successfully renamed ${rawOld} to ${rawNew}`, rev);
}
