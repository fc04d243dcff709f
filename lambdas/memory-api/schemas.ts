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

export const ReadNoteQuery = z.object({
  rev: revParam('Read the note as it was at this rev (404 when it did not exist there).'),
});

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

export const CreateTokenBody = z
  .object({
    name: z.string({ error: 'is required and must be a string' }).openapi({ description: 'What the token is for: 1-100 characters.', example: 'laptop git' }),
    scopes: z.array(z.string({ error: 'must be strings' }), { error: 'is required and must be an array' }).openapi({
      description: '`["memory:read"]` (read-only) or `["memory:read", "memory:write"]` (read-write); at most what the signed-in token holds.',
      example: ['memory:read', 'memory:write'],
    }),
    memories: z
      .array(z.string({ error: 'must be strings' }), { error: 'must be an array' })
      .optional()
      .openapi({
        description:
          "Memory names the token reaches (1-100), among the sign-in's; omitted: the sign-in's grant (every memory of the account, unless it is limited).",
      }),
    pathPrefix: z.string({ error: 'must be a string' }).optional().openapi({
      description:
        'A folder (e.g. `projects/alpha`): the token reaches only the notes inside it (subfolders included) in each memory; it may then not export, use git, retire or restore memories, nor move with updateLinks, and reads history and diffs of one note at a time.',
      example: 'projects/alpha',
    }),
    expiresInDays: z
      .number({ error: 'must be a number' })
      .int({ error: 'must be an integer' })
      .optional()
      .openapi({ minimum: 1, maximum: 366, default: 90, description: 'Lifetime in days (AUTH_PAT_DEFAULT_DAYS, at most AUTH_PAT_MAX_DAYS).' }),
  })
  .openapi('CreateTokenRequest');

export const TokenParams = z.object({ id: z.string().openapi({ description: 'The token id (12 letters and digits), as listed.', example: 'k3J9aQ2mZx0B' }) });

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

export const NoteSchema = z
  .strictObject({
    path: z.string(),
    title: z.string(),
    frontmatter: z.record(z.string(), z.unknown()),
    body: z.string(),
    tags: z.array(z.string()),
    sizeBytes: z.number().int(),
    updated: iso,
  })
  .openapi('Note');

export const WriteResultSchema = z.strictObject({ path: z.string(), rev: sha, updated: iso }).openapi('WriteResult');

export const NoteDeletedSchema = z
  .strictObject({ path: z.string(), deleted: z.literal(true), rev: sha.openapi({ description: 'The rev of the deleting commit.' }) })
  .openapi('NoteDeleted');

export const SearchHitSchema = z
  .strictObject({ path: z.string(), title: z.string(), snippet: z.string(), score: z.number().int(), updated: iso })
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

const scope = z.enum(['memory:read', 'memory:write']);

export const TokenSchema = z
  .strictObject({
    id: z.string().openapi({ description: 'Also the part of the token after `mcpm_pat_`: a leaked token names its entry.' }),
    name: z.string(),
    scopes: z.array(scope),
    memories: z.array(z.string()).optional().openapi({ description: 'Omitted: every memory of the account.' }),
    pathPrefix: z.string().optional().openapi({ description: 'Omitted: whole memories.' }),
    created: iso,
    expires: iso,
    lastUsed: iso.optional().openapi({ description: 'Omitted until first used; recorded at most once an hour.' }),
  })
  .openapi('PersonalToken', { description: 'A personal access token as listed: never its secret.' });

export const CreatedTokenSchema = TokenSchema.extend({
  token: z
    .string()
    .regex(/^mcpm_pat_[0-9A-Za-z]{12}_[0-9A-Za-z]{38}$/)
    .openapi({ description: 'The secret, shown this once (only its hash is kept): a bearer token, or the git password with any user name.' }),
}).openapi('CreatedPersonalToken');

export const TokenListSchema = z
  .strictObject({ tokens: z.array(TokenSchema).openapi({ description: 'Active tokens, newest first.' }) })
  .openapi('PersonalTokenList');

export const TokenRevokedSchema = z.strictObject({ id: z.string(), deleted: z.literal(true) }).openapi('PersonalTokenRevoked');

export const ErrorSchema = z
  .strictObject({ error: z.strictObject({ code: z.enum(V1_ERROR_CODES as [string, ...string[]]), message: z.string() }) })
  .openapi('Error');

export type MemoryOut = z.infer<typeof MemorySchema>;
