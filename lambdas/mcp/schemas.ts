// Named imports, not the `z` namespace: using the namespace as a value keeps every zod locale in
// the bundle (about 170 KB of the function's 1 MB budget).
import { array, boolean, custom, enum as zEnum, literal, number, object, strictObject, string, union, type infer as Infer, type ZodType } from 'zod';
import { errorOutput as errorOutputOf, TOOL_ERROR_CODES } from '../shared/mcp/tool-error';

/**
 * The six tools' argument and result schemas (spec 3), written once: they validate the arguments,
 * type the handlers, and become the JSON Schemas of `tools/list` (frozen: fields are only added;
 * `test/fixtures/contracts/mcp-tools.json`). Descriptions are written for the agent that reads them.
 */

// Arguments -------------------------------------------------------------------------------------

const notePath = string()
  .min(1, 'path is required')
  .describe(
    'POSIX path of the note, ending in .md, case-sensitive, no leading slash, e.g. "projects/acme/decisions.md". ' +
      'Prefix "@<vault>/" to address a note in a named vault, e.g. "@work/todo.md"; a bare path is the default memory.',
  );

const folderArg = string().describe(
  'POSIX folder without a leading slash, e.g. "projects/acme"; "" or omitted is the root. "@<vault>" alone means that whole vault, "@<vault>/<folder>" a folder in it.',
);

const tagsArg = array(string())
  .max(50, 'at most 50 tags')
  .describe('Bare tag names without "#", case-sensitive; a note must carry all of them (AND). At most 50.');

/**
 * A JSON object taken as it is. zod's `record()` copies key by key, which drops a `__proto__` key
 * and refuses an object with a `constructor` key; front matter is checked by the core, the same
 * way for YAML, /v1 and MCP. In tools/list it is `{"type": "object"}` (no `additionalProperties: {}`,
 * which strict MCP clients warn about).
 */
const jsonObject = () =>
  custom<Record<string, unknown>>((v) => typeof v === 'object' && v !== null && !Array.isArray(v), { error: 'must be an object' }).meta({
    type: 'object',
  } as Record<string, unknown>);

const frontmatterArg = jsonObject().describe('YAML front matter as a JSON object (e.g. {"tags": ["idea"], "status": "draft"}).');

export const searchInput = strictObject({
  query: string()
    .min(1, 'query is required')
    .describe(
      'One keyword or literal fragment, matched case-insensitively as a single substring across titles, bodies and tags (not split into words, not semantic). At most 256 characters.',
    ),
  folder: folderArg
    .optional()
    .describe('Limit the search to this folder and its subfolders; "@<vault>" searches a whole vault. Omit to search the default memory.'),
  tags: tagsArg.optional(),
  limit: number()
    .int('limit must be an integer')
    .min(1, 'limit must be from 1 to 50')
    .max(50, 'limit must be from 1 to 50')
    .default(20)
    .describe('Results per page, 1-50.'),
  cursor: string()
    .min(1, 'cursor may not be empty')
    .optional()
    .describe('The nextCursor of the previous page, verbatim, to get the next page of the same search.'),
});

const revArg = string().regex(/^[0-9a-fA-F]{40}$/, 'must be a rev: a full commit sha of 40 hex characters');

export const readInput = strictObject({
  path: notePath,
  rev: revArg
    .optional()
    .describe(
      'Optional. Read the note as it was at this rev (the `rev` a write returned, or one from `history`), not as it is now. not_found when it did not exist there.',
    ),
  history: number()
    .int('history must be an integer from 1 to 50')
    .min(1, 'history must be an integer from 1 to 50')
    .max(50, 'history must be an integer from 1 to 50')
    .optional()
    .describe(
      'Optional. Also list the last N versions of this note (1-50), newest first, each with its rev: pass a rev back as `rev` to read that version; write it back with memory__write to restore it.',
    ),
  section: string()
    .min(1, 'section may not be empty')
    .optional()
    .describe(
      'Optional. Read only this section: a heading\'s text ("June"), with its level ("### June") or a path from an enclosing heading ("Plans > June"); case-insensitive. ' +
        'A repeated heading is the first one unless the section ends in #N ("June#2"). The `section` of a memory__search result is such an address. The section runs to the next heading of its level.',
    ),
  lines: string().optional().describe('Optional. Read only these body lines: "10-40", "10" or "10-" (to the end); numbered from 1, front matter excluded.'),
  frontmatterOnly: boolean().optional().describe('Optional. Read only the front matter (body is empty).'),
  includeLinks: boolean()
    .optional()
    .describe(
      "Optional. Also return the note's links: outgoing (each with the note it leads to, or null when dangling) and incoming (the notes that link to it).",
    ),
});

export const listInput = strictObject({
  changedSince: revArg
    .optional()
    .describe(
      "Optional. A rev (e.g. the `rev` of an earlier list or write): list only the notes added, changed, renamed or deleted since then, flat, each with `change`, to catch up with what other clients wrote. The result's `rev` is the next changedSince.",
    ),
  folder: folderArg
    .optional()
    .describe('Folder to list; "@<vault>" lists a vault\'s root. Omit to list the default memory\'s root plus one "@<vault>/" folder per other vault.'),
  depth: number()
    .int('depth must be 1 or 2')
    .min(1, 'depth must be 1 or 2')
    .max(2, 'depth must be 1 or 2')
    .default(2)
    .describe('1 = direct children only; 2 = also the children of each subfolder.'),
  tags: tagsArg.optional(),
});

const idempotencyKeyArg = string()
  .regex(/^[\x21-\x7e]{1,255}$/, 'idempotencyKey must be 1-255 printable ASCII characters')
  .optional()
  .describe(
    'Optional. A unique value (e.g. a UUID) for this change: a retry with the same key and arguments returns the first result and changes nothing again. Remembered for a day.',
  );

const expectedRevArg = revArg
  .optional()
  .describe(
    "Optional. The rev this change was based on (from memory__read with history, a write result or memory__list): if the memory has changed since, nothing is written and the call fails with conflict, so another client's write is never overwritten unseen.",
  );

export const writeInput = strictObject({
  path: notePath,
  body: string().describe('The complete markdown body, without a front-matter (---) block; replaces the whole note.'),
  frontmatter: frontmatterArg.optional().describe('Front matter as a JSON object; replaces the whole map (omit for none).'),
  idempotencyKey: idempotencyKeyArg,
  expectedRev: expectedRevArg,
});

export const EDIT_MODES = ['replace', 'append', 'str_replace'] as const;

export const editInput = strictObject({
  path: notePath.describe('Path of an existing note (see memory__write to create one). "@<vault>/<path>" for a vault.'),
  mode: zEnum(EDIT_MODES, { error: 'mode must be replace, append or str_replace' })
    .default('replace')
    .describe('replace: body becomes the new body; append: body is added at the end (on a new line); str_replace: old_str is replaced by new_str.'),
  body: string().optional().describe('replace: the new body; append: the text to add. Omit to change only the front matter. Not used by str_replace.'),
  frontmatter: frontmatterArg.optional().describe('Merged into the front matter key by key (nested values replaced wholesale); a key cannot be removed.'),
  old_str: string()
    .min(1, 'old_str may not be empty')
    .optional()
    .describe('str_replace only: exact text of the body, whitespace included, that occurs exactly once.'),
  new_str: string().optional().describe('str_replace only: the replacement; omit to delete old_str.'),
  idempotencyKey: idempotencyKeyArg,
  expectedRev: expectedRevArg,
});

export const deleteInput = strictObject({
  path: notePath.describe('Path of the note to delete (soft delete: it stays in the history and memory__read still shows it with deleted: true).'),
  idempotencyKey: idempotencyKeyArg,
  expectedRev: expectedRevArg,
});

// Results ---------------------------------------------------------------------------------------

const timestamp = string().describe('ISO 8601 timestamp of the last change');

const searchResult = object({
  path: string(),
  title: string(),
  snippet: string().describe('Text around the first match'),
  score: number().int().min(0).describe('Number of occurrences of the query'),
  updated: timestamp,
  section: string().optional().describe('The section of the first match: pass it as `section` to memory__read to read just that part'),
});

export const searchOutput = object({
  results: array(searchResult),
  nextCursor: string().optional().describe('Pass as cursor for the next page; absent on the last page'),
});

const revOut = string().describe('A rev: the commit sha of a version of the memory');

const version = object({
  rev: revOut,
  time: timestamp,
  author: string().describe('Who made the change'),
  message: string(),
  change: zEnum(['added', 'modified', 'deleted', 'renamed']),
  from: string().optional().describe('The path before a rename'),
});

const linkKind = zEnum(['wikilink', 'markdown']);

const noteLinks = object({
  outgoing: array(
    object({
      target: string().describe('As written in the note'),
      kind: linkKind,
      line: number().int().describe('Body line of its first occurrence'),
      path: union([string(), literal(null)]).describe('The note it leads to (readable with memory__read); null when no note is there'),
    }),
  ).describe('Links in this note, one per destination'),
  incoming: array(
    object({
      path: string().describe('A note that links here'),
      target: string(),
      kind: linkKind,
      line: number().int(),
      dangling: literal(true).optional().describe('It names this path, but no note is here'),
    }),
  ).describe('Notes linking to this one, one entry per note'),
});

const part = object({
  section: string().optional().describe('The section read (its address)'),
  lines: array(number().int()).optional().describe('[from, to]: the body lines returned, 1-based, inclusive'),
  frontmatterOnly: literal(true).optional(),
  of: number().int().describe('Lines of the whole body'),
});

export const readOutput = object({
  path: string(),
  title: string(),
  frontmatter: jsonObject(),
  body: string(),
  tags: array(string()),
  updated: timestamp,
  deleted: boolean().describe('True for a soft-deleted note: its last content is shown'),
  rev: revOut.optional().describe('The rev this read is consistent with (the current one, or the `rev` asked for): the expectedRev of a write based on it'),
  history: array(version).optional().describe('With the history argument: the versions of this note, newest first'),
  part: part.optional().describe('With section, lines or frontmatterOnly: which part `body` is'),
  links: noteLinks.optional().describe('With includeLinks: the links both ways'),
});

export const listFileEntry = object({
  type: literal('file'),
  path: string(),
  title: string(),
  updated: timestamp,
  change: zEnum(['added', 'modified', 'deleted', 'renamed']).optional().describe('With changedSince: how the note changed since that rev'),
  from: string().optional().describe('With changedSince, for a rename: the path before'),
}).meta({ id: 'ListFileEntry' });

export type ListFileEntry = Infer<typeof listFileEntry>;
export interface ListFolderEntry {
  type: 'folder';
  path: string;
  files: number;
  entries: Array<ListFileEntry | ListFolderEntry>;
  truncated?: boolean;
}
export type ListEntryOut = ListFileEntry | ListFolderEntry;

export const listFolderEntry: ZodType<ListFolderEntry> = object({
  type: literal('folder'),
  path: string(),
  files: number().int().min(0).describe('Notes inside the folder at any depth'),
  get entries() {
    return array(union([listFileEntry, listFolderEntry])).describe('Children; empty when not expanded (beyond depth, or truncated)');
  },
  truncated: boolean().optional().describe('True when the folder has more entries than the per-folder limit; it is not expanded: list it on its own'),
}).meta({ id: 'ListFolderEntry' });

export const listOutput = object({
  folder: string().describe('The folder listed, as addressed ("" for the root)'),
  entries: array(union([listFileEntry, listFolderEntry])),
  truncated: boolean().describe('True when the folder has more entries than the per-folder limit (the first ones are shown)'),
  files: number().int().min(0).describe('Notes inside the folder at any depth'),
  rev: revOut.optional().describe("With changedSince: the memory's rev now, the changedSince of the next catch-up"),
});

export const writeOutput = object({
  path: string(),
  updated: timestamp,
  rev: revOut.optional().describe('The rev after this change: the expectedRev of the next one'),
});
export const editOutput = writeOutput;
export const deleteOutput = object({ path: string(), deleted: literal(true), rev: revOut.optional().describe('The rev of the deleting commit') });

/** The structured content of a failed call, with every code of the shared vocabulary; every output schema admits it. */
export const errorOutput = errorOutputOf(TOOL_ERROR_CODES);
