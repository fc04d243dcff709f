import { extendZodWithOpenApi } from '@asteasolutions/zod-to-openapi';
import * as z from 'zod';
import { DEFAULT_LIMITS } from '../memory';
import { V1_ERROR_CODES } from './errors';

/**
 * The `/v1` contract (spec 2), written once: request schemas validate and type the handlers'
 * input; response schemas type their output, generate the frozen contract snapshot
 * (`test/fixtures/contracts/v1-openapi.json`) and check every response in the tests.
 *
 * Requests are checked here for shape only (a string where a string belongs, an integer where an
 * integer belongs); the rules with configurable bounds (page sizes, names, paths, modes) are the
 * core's, so there is one place that knows them.
 */
extendZodWithOpenApi(z);

export { CreatedTokenSchema, CreateTokenBody, TokenListSchema, TokenParams, TokenRevokedSchema, TokenSchema } from './token-schemas';

// ---------- requests ----------

const INT = /^[+-]?\d+$/;

/** A query integer (digits only: no `1.5`, `1e3`, ` 5`); the range is the core's (configurable). */
function intParam(min: number, max: number, def: number, description: string) {
  return z
    .preprocess((v) => (typeof v === 'string' && INT.test(v) ? Number(v) : v), z.number({ error: 'must be an integer' }).int({ error: 'must be an integer' }))
    .optional()
    .openapi({ type: 'integer', minimum: min, maximum: max, default: def, description });
}

const TAGS_NOTE = 'Repeat the parameter (`?tags=a&tags=b`) or comma-separate (`?tags=a,b`); AND-matched, case-sensitive, bare (no leading `#`), at most 50.';

const tags = z
  .array(z.string())
  .optional()
  .openapi({ type: 'array', items: { type: 'string' }, description: TAGS_NOTE, param: { style: 'form', explode: true } });

// What the core accepts, for the document (validation is the core's): a memory name, and a
// listing depth (digits of at least 1, leading `+` and zeros tolerated, or `all`).
const NAME_DOC = { minLength: 1, maxLength: 64, pattern: '^[a-z0-9_-]+$' };
const DEPTH_PATTERN = '^(all|\\+?0*[1-9][0-9]*)$';

export const MemoryParams = z.object({
  memory: z.string().openapi({ description: 'Memory name: 1-64 characters of a-z 0-9 _ -; `export` is reserved.', example: 'work' }),
});

export const NoteParams = MemoryParams.extend({
  path: z.string().openapi({
    description: 'POSIX path of the note inside the memory, ending in `.md`, URL-encoded: `/` may be sent literally or as `%2F` (decoded exactly once).',
    example: 'projects/alpha.md',
  }),
});

export const ListNotesQuery = z.object({
  folder: z.string().optional().openapi({ description: 'Folder to list; default the root. A trailing `/` is tolerated.' }),
  depth: z
    .string()
    .transform((v, ctx) => {
      if (v === 'all') return 'all' as const;
      if (INT.test(v)) return Number(v);
      ctx.addIssue({ code: 'custom', message: 'must be an integer of at least 1, or all' });
      return z.NEVER;
    })
    .optional()
    .openapi({
      description: 'Levels below the folder: an integer of at least 1, or `all`; default 2.',
      example: '2',
      type: 'string',
      pattern: DEPTH_PATTERN,
      default: '2',
    }),
  type: z
    .string()
    .optional()
    .openapi({ enum: ['all', 'file', 'folder'], default: 'all', description: 'Entries to return.' }),
  fields: z
    .string()
    .optional()
    .openapi({ enum: ['path', 'full'], default: 'full', description: '`path` trims file entries to `type` and `path`.' }),
  tags,
  sort: z
    .string()
    .optional()
    .openapi({ enum: ['name', 'updated'], default: 'name', description: '`name` (code-point order) or `updated` (newest first).' }),
  limit: intParam(1, DEFAULT_LIMITS.listMaxLimit, DEFAULT_LIMITS.listDefaultLimit, 'Page size.'),
  cursor: z.string().optional().openapi({ description: 'Opaque cursor from `nextCursor`; bound to the query that produced it.' }),
});

export const SearchQuery = z.object({
  // Required (a missing q is 400): the handler reports it with its own message, so the schema keeps it optional.
  q: z
    .string()
    .optional()
    .openapi({ description: 'Required. One literal, case-insensitive substring (never split into words), at most 256 characters.', param: { required: true } }),
  folder: z.string().optional().openapi({ description: 'Scope the search to this folder, subfolders included.' }),
  tags,
  limit: intParam(1, DEFAULT_LIMITS.searchMaxLimit, DEFAULT_LIMITS.searchDefaultLimit, 'Page size.'),
  cursor: z.string().optional().openapi({ description: 'Opaque cursor from `nextCursor`; bound to the query that produced it.' }),
});

/** Front matter as JSON: a plain object (no array, no null). */
// Taken as it is (not `z.record`, which drops a `__proto__` key and refuses a `constructor` key): the
// core checks front matter the same way for YAML, /v1 and MCP.
const FrontMatterInput = z
  .custom<Record<string, unknown>>((v) => typeof v === 'object' && v !== null && !Array.isArray(v), { error: 'must be an object' })
  .openapi({ type: 'object', description: 'Front matter (YAML mapping) as JSON.' });

export const CreateMemoryBody = z
  .object({ name: z.string({ error: 'is required and must be a string' }).openapi({ example: 'work', ...NAME_DOC }) })
  .openapi('CreateMemoryRequest');

export const PutNoteBody = z
  .object({
    body: z
      .string({ error: 'is required and must be a string' })
      .openapi({ description: 'Markdown without front matter (a body starting with a `---` fence is 400).' }),
    frontmatter: FrontMatterInput.optional(),
  })
  .openapi('PutNoteRequest');

export const PatchNoteBody = z
  .object({
    mode: z
      .string({ error: 'must be a string' })
      .optional()
      .openapi({ enum: ['replace', 'append', 'str_replace'], default: 'replace' }),
    body: z
      .string({ error: 'must be a string' })
      .optional()
      .openapi({ description: 'New content (replace) or appended text (append, joined with a newline).' }),
    frontmatter: FrontMatterInput.optional().openapi({ description: "Shallow-merged into the note's front matter; a key cannot be removed." }),
    old_str: z.string({ error: 'must be a string' }).optional().openapi({ description: 'str_replace: text that must occur exactly once in the body.' }),
    new_str: z.string({ error: 'must be a string' }).optional().openapi({ description: 'str_replace: replacement; omitted deletes old_str.' }),
  })
  .openapi('PatchNoteRequest');

const revParam = (description: string) =>
  z
    .string()
    .optional()
    .openapi({ description: `${description} A full commit sha (40 hex characters) of this memory's history.`, example: 'a'.repeat(40) });

export const RestoreBody = z
  .object({
    path: z
      .string({ error: 'must be a string' })
      .optional()
      .openapi({ description: 'A soft-deleted note to bring back; without it the retired memory itself is restored.' }),
    rev: z.string({ error: 'must be a string' }).optional().openapi({
      description:
        'With `path`: bring the note back as it was at this rev (a commit of the history), as one new commit, whatever it is now (404 when it did not exist there).',
    }),
  })
  .openapi('RestoreRequest');

/** A query flag: `true` or `false` (`1`, `0` and a bare `?flag` too); anything else is 400. */
const flag = (description: string) =>
  z
    .string()
    .transform((v, ctx) => {
      if (v === 'true' || v === '1' || v === '') return true;
      if (v === 'false' || v === '0') return false;
      ctx.addIssue({ code: 'custom', message: 'must be true or false' });
      return z.NEVER;
    })
    .optional()
    .openapi({ type: 'boolean', description });

export const ReadNoteQuery = z.object({
  rev: revParam('Read the note as it was at this rev (404 when it did not exist there).'),
  section: z.string().optional().openapi({
    description:
      "Only this section: a heading's text (`June`, case-insensitive, markup ignored), with its level (`### June`) or a path from an enclosing heading (`Plans > June`). A repeated heading is the first one unless the address ends in `#N` (`June#2`). The section runs to the next heading of its level. 404 naming the note's headings when there is none.",
    example: 'Plans > June',
  }),
  lines: z
    .string()
    .optional()
    .openapi({ description: 'Only these body lines: `10-40`, `10` or `10-` (1-based, inclusive; cut at the last line).', example: '10-40' }),
  frontmatterOnly: flag('Only the front matter: `body` is empty (`Accept: text/markdown`: the front-matter block as stored).'),
  includeLinks: flag("Add `links`: the note's outgoing links (resolved or dangling) and the notes linking to it."),
});

export const LinksQuery = z.object({
  orphans: flag('List the notes no other note links to.'),
  dangling: flag('List the links that lead to no note. Without either flag, both lists.'),
  rev: revParam('The links as they were at this rev.'),
});

export const NoteLinksQuery = z.object({ rev: revParam('The links as they were at this rev.') });

export const HistoryQuery = z.object({
  path: z.string().optional().openapi({ description: 'Only the commits that touched this note, following it through renames and moves.' }),
  limit: intParam(1, DEFAULT_LIMITS.historyMaxLimit, DEFAULT_LIMITS.historyDefaultLimit, 'Commits per page.'),
  cursor: z.string().optional().openapi({ description: 'Opaque cursor from `nextCursor`; bound to the memory and the path.' }),
});

export const DiffQuery = z.object({
  from: revParam('The older side; default the first parent of `to` (the changes of that one commit).'),
  to: revParam('The newer side; default the current rev.'),
  path: z.string().optional().openapi({ description: 'Only this note (under either of its names, for a rename).' }),
});

export const MoveBody = z
  .object({
    from: z.string({ error: 'is required and must be a string' }).openapi({ example: 'inbox/idea.md' }),
    to: z.string({ error: 'is required and must be a string' }).openapi({ example: 'projects/alpha/idea.md' }),
    updateLinks: z.boolean({ error: 'must be a boolean' }).optional().openapi({
      description:
        'Rewrite `[[wikilinks]]` (by path, unique file name or title) and relative markdown links to the note in every note, in the same commit. Default false.',
    }),
  })
  .openapi('MoveRequest');

// ---------- responses ----------

const iso = z.string().openapi({ format: 'date-time', description: 'ISO 8601' });
const sha = z
  .string()
  .regex(/^[0-9a-f]{40}$/)
  .openapi({ description: 'A commit sha (40 hex characters)' });

export const MemorySchema = z
  .strictObject({
    name: z.string().openapi(NAME_DOC),
    files: z.number().int(),
    folders: z.number().int(),
    sizeBytes: z.number().int(),
    updated: iso.nullable(),
    empty: z.boolean(),
    rev: sha.nullable().openapi({ description: 'HEAD sha; null before the first write. The If-Match value.' }),
  })
  .openapi('Memory');

export const MemoryListSchema = z.strictObject({ memories: z.array(MemorySchema) }).openapi('MemoryList');

export const RetiredSchema = z.strictObject({ name: z.string(), deleted: z.literal(true) }).openapi('MemoryRetired');

export const FolderEntrySchema = z.strictObject({ type: z.literal('folder'), path: z.string(), files: z.number().int() }).openapi('FolderEntry');

export const FileEntrySchema = z
  .strictObject({
    type: z.literal('file'),
    path: z.string(),
    title: z.string().optional(),
    tags: z.array(z.string()).optional(),
    excerpt: z.string().optional(),
    sizeBytes: z.number().int().optional(),
    updated: iso.nullable().optional(),
  })
  .openapi('FileEntry', { description: 'With `fields=path`, only `type` and `path`.' });

export const NoteListingSchema = z
  .strictObject({
    folder: z.string(),
    entries: z.array(z.discriminatedUnion('type', [FileEntrySchema, FolderEntrySchema])),
    files: z.number().int(),
    truncated: z.boolean(),
    nextCursor: z.string().optional(),
  })
  .openapi('NoteListing');

const linkKind = z.enum(['wikilink', 'markdown']).openapi({ description: '`[[wikilink]]` (or `![[embed]]`), or a markdown link or reference' });

export const OutgoingLinkSchema = z
  .strictObject({
    target: z.string().openapi({ description: "As written: a wikilink's target, or a markdown link's destination." }),
    kind: linkKind,
    line: z.number().int().openapi({ description: 'The body line of its first occurrence (1-based).' }),
    path: z.string().nullable().openapi({ description: 'The note it leads to; null when no note is there (a dangling link).' }),
  })
  .openapi('OutgoingLink');

export const IncomingLinkSchema = z
  .strictObject({
    path: z.string().openapi({ description: 'The linking note.' }),
    target: z.string(),
    kind: linkKind,
    line: z.number().int(),
    dangling: z.literal(true).optional().openapi({ description: 'The link names this path but no note is there.' }),
  })
  .openapi('IncomingLink');

export const LinksSchema = z
  .strictObject({
    outgoing: z.array(OutgoingLinkSchema).openapi({ description: 'One per destination, in the order written.' }),
    incoming: z.array(IncomingLinkSchema).openapi({ description: 'One per linking note, in path order.' }),
  })
  .openapi('Links');

export const NotePartSchema = z
  .strictObject({
    section: z.string().optional().openapi({ description: "The section's address (what `section` takes back)." }),
    lines: z.tuple([z.number().int(), z.number().int()]).optional().openapi({ description: 'The body lines returned, 1-based and inclusive.' }),
    frontmatterOnly: z.literal(true).optional(),
    of: z.number().int().openapi({ description: 'Lines of the whole body.' }),
  })
  .openapi('NotePart', { description: 'A partial read: which part `body` is.' });

export const NoteSchema = z
  .strictObject({
    path: z.string(),
    title: z.string(),
    frontmatter: z.record(z.string(), z.unknown()),
    body: z.string(),
    tags: z.array(z.string()),
    sizeBytes: z.number().int(),
    updated: iso,
    rev: sha.optional().openapi({ description: 'The rev this read is consistent with (the ETag): the If-Match of an edit based on it.' }),
    part: NotePartSchema.optional(),
    links: LinksSchema.optional(),
  })
  .openapi('Note');

export const NoteLinksSchema = z
  .strictObject({ path: z.string(), rev: sha, outgoing: z.array(OutgoingLinkSchema), incoming: z.array(IncomingLinkSchema) })
  .openapi('NoteLinks');

export const MemoryLinksSchema = z
  .strictObject({
    rev: sha.nullable(),
    notes: z.number().int(),
    links: z.number().int().openapi({ description: 'Links between notes (one per linking note and destination).' }),
    orphans: z.array(z.string()).optional().openapi({ description: 'Notes no other note links to, in path order.' }),
    dangling: z
      .array(z.strictObject({ path: z.string(), target: z.string(), kind: linkKind, line: z.number().int() }))
      .optional()
      .openapi({ description: 'Links that lead to no note, by linking note.' }),
    truncated: z.literal(true).optional().openapi({ description: 'A list was cut at 10,000 entries.' }),
  })
  .openapi('MemoryLinks');

export const WriteResultSchema = z.strictObject({ path: z.string(), rev: sha, updated: iso }).openapi('WriteResult');

export const NoteDeletedSchema = z
  .strictObject({ path: z.string(), deleted: z.literal(true), rev: sha.openapi({ description: 'The rev of the deleting commit.' }) })
  .openapi('NoteDeleted');

export const SearchHitSchema = z
  .strictObject({
    path: z.string(),
    title: z.string(),
    snippet: z.string(),
    score: z.number().int(),
    updated: iso,
    section: z
      .string()
      .optional()
      .openapi({ description: "The section of the first match: its heading's address, as a read's `section` takes it. Absent before the first heading." }),
  })
  .openapi('SearchHit');

export const SearchPageSchema = z.strictObject({ results: z.array(SearchHitSchema), nextCursor: z.string().optional() }).openapi('SearchPage');

export const ExportRedirectSchema = z
  .strictObject({ url: z.string().openapi({ format: 'uri' }), expiresAt: iso })
  .openapi('ExportRedirect', { description: 'Body of the 302 of a large export; `Location` carries the same URL.' });

const change = z.enum(['added', 'modified', 'deleted', 'renamed']);

export const HistoryEntrySchema = z
  .strictObject({
    rev: sha,
    parents: z.array(sha),
    time: iso.openapi({ description: "The commit's committer time (a write's own time)." }),
    author: z
      .strictObject({ name: z.string(), sub: z.string().openapi({ description: 'The account whose token landed the commit.' }) })
      .openapi({ description: 'The git author name (`sub (client)` for writes through the API; as committed for pushed commits).' }),
    message: z.string(),
    changes: z.array(z.strictObject({ path: z.string(), change, from: z.string().optional().openapi({ description: 'The path before a rename.' }) })),
    moreChanges: z.number().int().optional().openapi({ description: 'Changes beyond the per-commit cap (1,000), counted but not listed.' }),
  })
  .openapi('HistoryEntry');

export const HistorySchema = z
  .strictObject({ commits: z.array(HistoryEntrySchema), nextCursor: z.string().optional() })
  .openapi('History', { description: 'Newest first, along first parents (`git log --first-parent`).' });

export const DiffHunkSchema = z
  .strictObject({
    oldStart: z.number().int(),
    oldLines: z.number().int(),
    newStart: z.number().int(),
    newLines: z.number().int(),
    lines: z.array(z.string()).openapi({ description: "Unified-diff lines: ' ' context, '-' removed, '+' added, '\\' no newline at end of file." }),
  })
  .openapi('DiffHunk');

export const FileDiffSchema = z
  .strictObject({
    path: z.string(),
    change,
    from: z.string().optional(),
    oldBlob: sha.optional(),
    newBlob: sha.optional(),
    similarity: z.number().int().optional().openapi({ description: 'Renames: percent alike (100: same content).' }),
    hunks: z.array(DiffHunkSchema),
  })
  .openapi('FileDiff');

export const DiffSchema = z
  .strictObject({ from: sha.nullable().openapi({ description: 'Null when `to` is the first commit.' }), to: sha, files: z.array(FileDiffSchema) })
  .openapi('Diff');

export const MoveResultSchema = z
  .strictObject({
    from: z.string(),
    to: z.string(),
    rev: sha,
    updated: iso,
    linksUpdated: z.array(z.string()).openapi({ description: 'Notes whose links were rewritten in the same commit.' }),
  })
  .openapi('MoveResult');

const toolPath = (description: string) => z.string().openapi({ description, example: '/memories/notes.md' });

/** Claude's memory tool commands, for the contract (the handler parses them itself, `memory-tool-command.ts`). */
export const MemoryToolCommandSchema = z
  .union([
    z.object({
      command: z.literal('view'),
      path: toolPath('`/memories`, a directory under it, or a note (`.md`).'),
      view_range: z.tuple([z.number().int(), z.number().int()]).optional().openapi({ description: '1-based lines; `-1` ends at the last line.' }),
    }),
    z.object({ command: z.literal('create'), path: toolPath('A new note: the name must end in `.md`.'), file_text: z.string() }),
    z.object({ command: z.literal('str_replace'), path: toolPath('A note.'), old_str: z.string(), new_str: z.string().optional() }),
    z.object({ command: z.literal('insert'), path: toolPath('A note.'), insert_line: z.number().int(), insert_text: z.string() }),
    z.object({ command: z.literal('delete'), path: toolPath('A note or a directory (every note in it).') }),
    z.object({ command: z.literal('rename'), old_path: toolPath('A note or a directory.'), new_path: toolPath('Where it goes (a note keeps `.md`).') }),
  ])
  .openapi('MemoryToolCommand', { description: "One command of Claude's memory tool (`memory_20250818`), exactly the `input` of its `tool_use` block." });

export const MemoryToolResultSchema = z
  .strictObject({
    content: z.string().openapi({
      description: "The tool result's text, as the memory tool's documentation words it (a listing, a numbered view, a confirmation or an error).",
    }),
    is_error: z.boolean().openapi({ description: 'True when `content` is an error for the model (an unknown path, an ambiguous `old_str`, a refused note).' }),
  })
  .openapi('MemoryToolResult', { description: 'The two fields of the `tool_result` block to send back: `{ type: "tool_result", tool_use_id, ...result }`.' });

export const ErrorSchema = z
  .strictObject({ error: z.strictObject({ code: z.enum(V1_ERROR_CODES as [string, ...string[]]), message: z.string() }) })
  .openapi('Error');

export type MemoryOut = z.infer<typeof MemorySchema>;
