import * as z from 'zod';
import '../shared/zod-openapi';
import { V1_ERROR_CODES } from './errors';
import { NAME_DOC } from './schemas';

/**
 * The `/v1` responses (spec 2): they type the handlers' output (as types only), generate the
 * frozen contract snapshot (`openapi.ts`, `test/fixtures/contracts/v1-openapi.json`) and check
 * every response in the tests. No handler validates its own output, so the functions never load
 * this module: building these schemas was a third of what the /v1 and git remote functions' own
 * code did at module init, for nothing a request uses.
 */

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

// ---------- /v1/tokens ----------

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
