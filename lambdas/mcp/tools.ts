import type { CallToolResult, Tool, ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import { toJSONSchema, type core, type input, type output, type ZodType } from 'zod';
import { hasScope, type MemoryScope, type Principal } from '../identity/principal';
import { MemoryError, type Caller, type FrontMatter, type MemoryService } from '../memory';
import { logger } from '../shared/logger';
import type { McpConfig } from './config';
import { isUnexpected, toToolError, ToolError, type ErrorContext } from './errors';
import { listFolder } from './list';
import {
  deleteInput,
  deleteOutput,
  editInput,
  editOutput,
  errorOutput,
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
import { DEFAULT_MEMORY, defaultTarget, display, parseFolder, parseNotePath, vaultTarget, type Target } from './vault';
import { fingerprintOf, runOnce, scopedKey, type IdempotencyStore } from '../shared/idempotency/store';

/** What a tool call runs with: the verified principal as the core's caller, and the core. */
export interface ToolContext {
  service: MemoryService;
  principal: Principal;
  caller: Caller;
  config: McpConfig;
  requestId: string;
  /** Remembers the results of write calls that carry an `idempotencyKey`. */
  idempotency?: IdempotencyStore;
}

interface ToolSpec<I extends ZodType, O extends ZodType> {
  name: string;
  title: string;
  description: string;
  scope: MemoryScope;
  annotations: ToolAnnotations;
  input: I;
  output: O;
  run(args: output<I>, ctx: ToolContext): Promise<input<O>>;
}

export interface McpTool {
  name: string;
  scope: MemoryScope;
  /** The `tools/list` entry. */
  definition: Tool;
  call(rawArgs: unknown, ctx: ToolContext): Promise<CallToolResult>;
}

// ------------------------------------------------------------------------------------------------
// Results

function ok(structured: Record<string, unknown>): CallToolResult {
  // The same JSON as text, for clients that read only `content` (protocol versions before 2025-06-18).
  return { content: [{ type: 'text', text: JSON.stringify(structured) }], structuredContent: structured };
}

export function toolErrorResult(err: ToolError): CallToolResult {
  const structured = { error: { code: err.code, message: err.message } };
  return { content: [{ type: 'text', text: JSON.stringify(structured) }], structuredContent: structured, isError: true };
}

/** Runs `fn` against one addressed memory, turning core errors into tool errors in its terms. */
async function against<T>(ctx: ErrorContext, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (isUnexpected(err)) throw err;
    throw toToolError(err, ctx);
  }
}

const isMissingMemory = (err: unknown): boolean => err instanceof MemoryError && err.reason === 'memory_not_found';

// ------------------------------------------------------------------------------------------------
// Argument validation: the SDK's own would answer a plain-text error without a code, so the tools
// validate here and answer `invalid_argument` with a message naming the argument.

/** How a value's JSON type reads in a message: `null`, `a string`, `an array`, … */
function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  const t = typeof value;
  return t === 'object' || t === 'undefined' ? `an ${t}` : `a ${t}`;
}

/** zod's `expected` of an `invalid_type` issue, as a noun phrase (`int` is what `.int()` reports). */
const EXPECTED: Record<string, string> = {
  int: 'an integer',
  number: 'a number',
  string: 'a string',
  boolean: 'a boolean',
  array: 'an array',
  object: 'an object',
  record: 'an object',
};

function describeIssues(tool: string, input: ZodType, issues: readonly core.$ZodIssue[], rawArgs: unknown): string {
  const known = Object.keys((input as unknown as { shape?: Record<string, unknown> }).shape ?? {});
  const parts = issues.slice(0, 5).map((issue) => {
    const field = issue.path.map(String).join('.');
    if (issue.code === 'unrecognized_keys') {
      return `unknown argument${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => `"${k}"`).join(', ')}; ${tool} takes ${known.join(', ')}`;
    }
    if (issue.code === 'invalid_type' && field === '') {
      // The arguments as a whole: `null`, a string, an array… instead of an object of named arguments.
      return `arguments must be an object of named arguments (${known.join(', ')}), not ${kindOf(rawArgs)}`;
    }
    if (issue.code === 'invalid_type' && /received undefined/.test(issue.message)) return `${field} is required (${issue.expected})`;
    // A message written in schemas.ts names its argument already (e.g. "limit must be an integer").
    if (issue.code === 'invalid_type' && issue.message.startsWith(`${field.split('.')[0]} `)) return issue.message;
    if (issue.code === 'invalid_type') return `${field} must be ${EXPECTED[issue.expected] ?? `of type ${issue.expected}`}`;
    // A check of schemas.ts that says what the value must be (`custom`: the JSON-object arguments).
    if (issue.code === 'custom' && field !== '' && issue.message.startsWith('must ')) return `${field} ${issue.message}`;
    if (field !== '' && issue.message.startsWith(field.split('.')[0])) return issue.message;
    return field === '' ? issue.message : `${field}: ${issue.message}`;
  });
  return parts.join('; ');
}

/**
 * A write tool's `idempotencyKey` (the MCP twin of /v1's Idempotency-Key, same store and rules): the
 * first call with a key runs and its result is remembered for a day, per user; a retry with the
 * same key and arguments gets that result again and changes nothing; other arguments under the same
 * key are `invalid_argument`, a retry while the first still runs `conflict`. A failed call
 * remembers nothing. Calls without a key run as they are.
 */
async function onceByKey(tool: string, args: unknown, ctx: ToolContext, run: () => Promise<Record<string, unknown>>): Promise<Record<string, unknown>> {
  const { idempotencyKey, ...rest } = (args ?? {}) as { idempotencyKey?: unknown };
  if (typeof idempotencyKey !== 'string' || !ctx.idempotency) return run();
  const once = await runOnce(
    ctx.idempotency,
    scopedKey('mcp', ctx.principal.sub, idempotencyKey),
    fingerprintOf([tool, JSON.stringify(rest)]),
    run,
    (result) => ({
      status: 200,
      body: JSON.stringify(result),
      headers: {},
    }),
  );
  switch (once.kind) {
    case 'ran':
      return once.value;
    case 'replay':
      return JSON.parse(once.answer.body) as Record<string, unknown>;
    case 'mismatch':
      throw new ToolError('invalid_argument', 'idempotencyKey was already used with other arguments; use a new key for a new change');
    case 'in_progress':
      throw new ToolError('conflict', 'a call with this idempotencyKey is still running; retry in a second');
  }
}

function defineTool<I extends ZodType, O extends ZodType>(spec: ToolSpec<I, O>): McpTool {
  let definition: Tool | undefined;
  return {
    name: spec.name,
    scope: spec.scope,
    // Built on the first tools/list, not at module load: a cold start that only calls tools skips it.
    get definition(): Tool {
      definition ??= {
        name: spec.name,
        title: spec.title,
        description: spec.description,
        inputSchema: inputJsonSchema(spec.input),
        outputSchema: outputJsonSchema(spec.output),
        annotations: spec.annotations,
      };
      return definition;
    },
    async call(rawArgs, ctx) {
      try {
        if (!hasScope(ctx.principal, spec.scope)) {
          const held = ctx.principal.scopes.length ? ctx.principal.scopes.join(' ') : 'no memory scope';
          throw new ToolError('forbidden', `${spec.name} needs the ${spec.scope} scope; this token has ${held}`);
        }
        // A missing `arguments` is no arguments; anything else that is not an object fails validation.
        const parsed = spec.input.safeParse(rawArgs === undefined ? {} : rawArgs);
        if (!parsed.success) throw new ToolError('invalid_argument', describeIssues(spec.name, spec.input, parsed.error.issues, rawArgs));
        return ok(await onceByKey(spec.name, parsed.data, ctx, async () => (await spec.run(parsed.data, ctx)) as Record<string, unknown>));
      } catch (err) {
        if (isUnexpected(err)) {
          logger.error('tool failed unexpectedly', {
            requestId: ctx.requestId,
            tool: spec.name,
            err: err instanceof Error ? { name: err.name, message: err.message, stack: err.stack } : String(err),
          });
        }
        return toolErrorResult(toToolError(err, { label: 'the memory' }));
      }
    },
  };
}

type JsonObject = { [key: string]: unknown };

function jsonSchema(schema: ZodType): JsonObject {
  // `unrepresentable: 'any'`: the JSON-object schema is a zod `custom` that declares its own `type` in meta.
  const js = toJSONSchema(schema, { target: 'draft-2020-12', io: 'input', unrepresentable: 'any' }) as JsonObject;
  // MCP's default dialect is 2020-12 already; a `$schema` URI only trips validators that lack it.
  delete js.$schema;
  // zod keeps a definition's `id` (its name under $defs) as a keyword, which draft-07 validators
  // (Ajv in the TypeScript SDK's client) refuse; the name under $defs is all a $ref needs.
  for (const def of Object.values((js.$defs ?? {}) as Record<string, JsonObject>)) delete def.id;
  return js;
}

function inputJsonSchema(schema: ZodType): Tool['inputSchema'] {
  return jsonSchema(schema) as Tool['inputSchema'];
}

/**
 * The result schema admits both outcomes: the tool's result, or the `{ error }` of a failed call.
 * Clients (the TypeScript SDK's among them) validate a failed call's structured content against the
 * output schema too, so an error shape outside it would turn every tool error into a client error.
 */
function outputJsonSchema(schema: ZodType): NonNullable<Tool['outputSchema']> {
  const js = jsonSchema(schema);
  const error = (jsonSchema(errorOutput).properties as JsonObject).error;
  const { required, properties, ...rest } = js;
  return {
    ...rest,
    type: 'object',
    properties: { ...(properties as JsonObject), error },
    anyOf: [{ required }, { required: ['error'] }],
  } as NonNullable<Tool['outputSchema']>;
}

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
      results: page.results.map((r) => ({ path: display(target, r.path), title: r.title, snippet: r.snippet, score: r.score, updated: r.updated })),
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
    'A note that was deleted is still returned, with its last content and deleted: true. "@<vault>/<path>" reads from a named vault.',
  scope: 'memory:read',
  annotations: { readOnlyHint: true, openWorldHint: false },
  input: readInput,
  output: readOutput,
  async run(args, ctx) {
    const t = parseNotePath(args.path);
    const note = await against(t, () => ctx.service.readNote(ctx.caller, t.memory, t.path, { includeDeleted: true }));
    return {
      path: t.display,
      title: note.title,
      frontmatter: note.frontmatter,
      body: note.body,
      tags: note.tags,
      updated: note.updated,
      deleted: note.deleted,
    };
  },
});

const list = defineTool({
  name: 'memory__list',
  title: 'List notes and folders',
  description:
    "Browse the memory as a tree: the folder's files (path, title, updated) and subfolders (with their recursive file count and, at depth 2, their children). " +
    'Without folder: the default memory\'s root plus one "@<vault>/" folder per named vault. At most 100 entries per folder are shown; ' +
    'a folder flagged truncated has more and is not expanded, so list that folder on its own (or use memory__search). tags filters to notes carrying all of them.',
  scope: 'memory:read',
  annotations: { readOnlyHint: true, openWorldHint: false },
  input: listInput,
  output: listOutput,
  async run(args, ctx) {
    const depth = args.depth as 1 | 2;
    const max = ctx.config.listMaxEntries;
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
    const out = await against(t, () => ctx.service.writeNote(ctx.caller, t.memory, t.path, input, { createMemory: true }));
    return { path: t.display, updated: out.updated };
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
    const { path: _path, frontmatter, ...rest } = args;
    const edit = frontmatter === undefined ? rest : { ...rest, frontmatter: frontmatter as FrontMatter };
    const out = await against(t, () => ctx.service.editNote(ctx.caller, t.memory, t.path, edit));
    return { path: t.display, updated: out.updated };
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
    await against(t, () => ctx.service.deleteNote(ctx.caller, t.memory, t.path));
    return { path: t.display, deleted: true as const };
  },
});

export const TOOLS: readonly McpTool[] = [search, read, list, write, edit, remove];
export const TOOLS_BY_NAME: ReadonlyMap<string, McpTool> = new Map(TOOLS.map((t) => [t.name, t]));

// ------------------------------------------------------------------------------------------------
// Helpers

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
