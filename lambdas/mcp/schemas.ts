import { z } from 'zod';
import { TOOL_ERROR_CODES } from './errors';

/**
 * The six tools' argument and result schemas (spec 3), written once: they validate the arguments,
 * type the handlers, and become the JSON Schemas of `tools/list` (frozen: fields are only added;
 * `test/fixtures/contracts/mcp-tools.json`). Descriptions are written for the agent that reads them.
 */

// Arguments -------------------------------------------------------------------------------------

const notePath = z
  .string()
  .min(1, 'path is required')
  .describe(
    'POSIX path of the note, ending in .md, case-sensitive, no leading slash, e.g. "projects/acme/decisions.md". ' +
      'Prefix "@<vault>/" to address a note in a named vault, e.g. "@work/todo.md"; a bare path is the default memory.',
  );

const folderArg = z
  .string()
  .describe('POSIX folder without a leading slash, e.g. "projects/acme"; "" or omitted is the root. "@<vault>" alone means that whole vault, "@<vault>/<folder>" a folder in it.');

const tagsArg = z
  .array(z.string())
  .max(50, 'at most 50 tags')
  .describe('Bare tag names without "#", case-sensitive; a note must carry all of them (AND). At most 50.');

const frontmatterArg = z
  .record(z.string(), z.unknown())
  .describe('YAML front matter as a JSON object (e.g. {"tags": ["idea"], "status": "draft"}).');

export const searchInput = z.strictObject({
  query: z
    .string()
    .min(1, 'query is required')
    .describe('One keyword or literal fragment, matched case-insensitively as a single substring across titles, bodies and tags (not split into words, not semantic).'),
  folder: folderArg.optional().describe('Limit the search to this folder and its subfolders; "@<vault>" searches a whole vault. Omit to search the default memory.'),
  tags: tagsArg.optional(),
  limit: z.number().int('limit must be an integer').min(1, 'limit must be from 1 to 50').max(50, 'limit must be from 1 to 50').default(20).describe('Results per page, 1-50.'),
  cursor: z.string().min(1, 'cursor may not be empty').optional().describe('The nextCursor of the previous page, verbatim, to get the next page of the same search.'),
});

export const readInput = z.strictObject({ path: notePath });

export const listInput = z.strictObject({
  folder: folderArg.optional().describe('Folder to list; "@<vault>" lists a vault\'s root. Omit to list the default memory\'s root plus one "@<vault>/" folder per other vault.'),
  depth: z
    .number()
    .int('depth must be 1 or 2')
    .min(1, 'depth must be 1 or 2')
    .max(2, 'depth must be 1 or 2')
    .default(2)
    .describe('1 = direct children only; 2 = also the children of each subfolder.'),
  tags: tagsArg.optional(),
});

export const writeInput = z.strictObject({
  path: notePath,
  body: z.string().describe('The complete markdown body, without a front-matter (---) block; replaces the whole note.'),
  frontmatter: frontmatterArg.optional().describe('Front matter as a JSON object; replaces the whole map (omit for none).'),
});

export const EDIT_MODES = ['replace', 'append', 'str_replace'] as const;

export const editInput = z.strictObject({
  path: notePath.describe('Path of an existing note (see memory__write to create one). "@<vault>/<path>" for a vault.'),
  mode: z
    .enum(EDIT_MODES, { error: 'mode must be replace, append or str_replace' })
    .default('replace')
    .describe('replace: body becomes the new body; append: body is added at the end (on a new line); str_replace: old_str is replaced by new_str.'),
  body: z.string().optional().describe('replace: the new body; append: the text to add. Omit to change only the front matter. Not used by str_replace.'),
  frontmatter: frontmatterArg.optional().describe('Merged into the front matter key by key (nested values replaced wholesale); a key cannot be removed.'),
  old_str: z.string().min(1, 'old_str may not be empty').optional().describe('str_replace only: exact text of the body, whitespace included, that occurs exactly once.'),
  new_str: z.string().optional().describe('str_replace only: the replacement; omit to delete old_str.'),
});

export const deleteInput = z.strictObject({ path: notePath.describe('Path of the note to delete (soft delete: it stays in the history and memory__read still shows it with deleted: true).') });

// Results ---------------------------------------------------------------------------------------

const timestamp = z.string().describe('ISO 8601 timestamp of the last change');

const searchResult = z.object({
  path: z.string(),
  title: z.string(),
  snippet: z.string().describe('Text around the first match'),
  score: z.number().int().min(0).describe('Number of occurrences of the query'),
  updated: timestamp,
});

export const searchOutput = z.object({
  results: z.array(searchResult),
  nextCursor: z.string().optional().describe('Pass as cursor for the next page; absent on the last page'),
});

export const readOutput = z.object({
  path: z.string(),
  title: z.string(),
  frontmatter: z.record(z.string(), z.unknown()),
  body: z.string(),
  tags: z.array(z.string()),
  updated: timestamp,
  deleted: z.boolean().describe('True for a soft-deleted note: its last content is shown'),
});

export const listFileEntry = z
  .object({ type: z.literal('file'), path: z.string(), title: z.string(), updated: timestamp })
  .meta({ id: 'ListFileEntry' });

export type ListFileEntry = z.infer<typeof listFileEntry>;
export interface ListFolderEntry {
  type: 'folder';
  path: string;
  files: number;
  entries: Array<ListFileEntry | ListFolderEntry>;
  truncated?: boolean;
}
export type ListEntryOut = ListFileEntry | ListFolderEntry;

export const listFolderEntry: z.ZodType<ListFolderEntry> = z
  .object({
    type: z.literal('folder'),
    path: z.string(),
    files: z.number().int().min(0).describe('Notes inside the folder at any depth'),
    get entries() {
      return z.array(z.union([listFileEntry, listFolderEntry])).describe('Children; empty when not expanded (beyond depth, or truncated)');
    },
    truncated: z.boolean().optional().describe('True when the folder has more entries than the per-folder limit; it is not expanded: list it on its own'),
  })
  .meta({ id: 'ListFolderEntry' });

export const listOutput = z.object({
  folder: z.string().describe('The folder listed, as addressed ("" for the root)'),
  entries: z.array(z.union([listFileEntry, listFolderEntry])),
  truncated: z.boolean().describe('True when the folder has more entries than the per-folder limit (the first ones are shown)'),
  files: z.number().int().min(0).describe('Notes inside the folder at any depth'),
});

export const writeOutput = z.object({ path: z.string(), updated: timestamp });
export const editOutput = writeOutput;
export const deleteOutput = z.object({ path: z.string(), deleted: z.literal(true) });

/** The structured content of a failed call; every output schema admits it (see `toolJsonSchemas`). */
export const errorOutput = z.object({
  error: z.object({ code: z.enum(TOOL_ERROR_CODES), message: z.string() }),
});
