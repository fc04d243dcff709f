import * as z from 'zod';
import '../shared/zod-openapi';
import { DEFAULT_LIMITS } from '../memory';

/**
 * The `/v1` requests (spec 2), written once: these schemas validate and type the handlers' input
 * and, with the responses of `response-schemas.ts`, generate the frozen contract snapshot
 * (`test/fixtures/contracts/v1-openapi.json`).
 *
 * Requests are checked here for shape only (a string where a string belongs, an integer where an
 * integer belongs); the rules with configurable bounds (page sizes, names, paths, modes) are the
 * core's, so there is one place that knows them.
 */
export { CreateTokenBody, TokenParams } from './token-schemas';

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
export const NAME_DOC = { minLength: 1, maxLength: 64, pattern: '^[a-z0-9_-]+$' };
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
