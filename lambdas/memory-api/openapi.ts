import { OpenAPIRegistry, OpenApiGeneratorV31, type RouteConfig } from '@asteasolutions/zod-to-openapi';
import * as z from 'zod';
import type { RouteDef } from '../shared/http/route-table';
import { MEMORY_ROUTES, TOKEN_ROUTES } from './routes';
import * as ResponseSchemas from './response-schemas';
import * as RequestSchemas from './schemas';

// Requests and responses are two modules so that the functions load only the requests.
const S = { ...RequestSchemas, ...ResponseSchemas };

/**
 * The `/v1` contract as an OpenAPI 3.1 document, generated from the route table and the zod
 * schemas (no hand-kept copy). Its snapshot in `test/fixtures/contracts/v1-openapi.json` is frozen:
 * a change other than an addition fails CI (DECISIONS: contract guards).
 */
interface Op {
  summary: string;
  description?: string;
  params?: z.ZodObject;
  query?: z.ZodObject;
  body?: { schema: z.ZodType; required: boolean; markdown?: boolean };
  ok: { status: number; description: string; schema?: z.ZodType; content?: string; etag?: boolean; alsoCreated?: boolean };
  errors: number[];
  redirect?: boolean;
  /** A write that takes the optional `If-Match: <rev>` (spec 2, Limits: every write). */
  ifMatch?: boolean;
}

const read = [400, 401, 403, 404];
const write = [400, 401, 403, 404, 409];

const OPS: Record<string, Op> = {
  listMemories: {
    summary: 'Memories visible to the token',
    ok: { status: 200, description: "The memories the token's grant covers", schema: S.MemoryListSchema },
    errors: [401, 403],
  },
  createMemory: {
    summary: 'Create a memory (idempotent)',
    description:
      '201 when created (with `Location`), 200 with the memory when it exists. `export` is reserved. A retired name is 409 naming the restore route. If-Match on an existing memory is compared like every write.',
    body: { schema: S.CreateMemoryBody, required: true },
    ok: { status: 200, description: 'The memory existed', schema: S.MemorySchema, etag: true, alsoCreated: true },
    ifMatch: true,
    errors: [400, 401, 403, 409],
  },
  exportAll: {
    summary: 'Zip of every visible memory',
    description: 'One `<memory>/<path>` markdown file per note, front matter included. Larger than the inline limit: 302 to a presigned URL.',
    ok: { status: 200, description: 'The zip', content: 'application/zip' },
    errors: [401, 403],
    redirect: true,
  },
  getMemory: {
    summary: "One memory's stats",
    params: S.MemoryParams,
    ok: { status: 200, description: 'The memory', schema: S.MemorySchema, etag: true },
    errors: read,
  },
  retireMemory: {
    summary: 'Retire a memory (recoverable)',
    description: 'Tombstones the memory; POST /v1/memories/{memory}/restore brings it back with its history.',
    params: S.MemoryParams,
    ok: { status: 200, description: 'Retired', schema: S.RetiredSchema },
    ifMatch: true,
    errors: write,
  },
  restore: {
    summary: 'Restore a retired memory, or a soft-deleted note',
    description:
      'Without a body: the retired memory comes back with its full history (the per-account ceiling applies). With `{ "path" }`: the deleted note comes back with its last content as a new commit (409 when a note lives at the path again). With `{ "path", "rev" }`: the note as it was at that rev, as one new commit, whatever it is now (404 when it did not exist there; 404 for a rev outside the history).',
    params: S.MemoryParams,
    body: { schema: S.RestoreBody, required: false },
    ok: { status: 200, description: 'The restored memory, or the note write', schema: S.MemorySchema.or(S.WriteResultSchema) },
    ifMatch: true,
    errors: write,
  },
  listNotes: {
    summary: 'List notes and folders (flat, full paths)',
    params: S.MemoryParams,
    query: S.ListNotesQuery,
    ok: { status: 200, description: 'A page of entries', schema: S.NoteListingSchema },
    errors: read,
  },
  readNote: {
    summary: 'Read a note',
    description:
      "JSON by default; `Accept: text/markdown` returns the file exactly as stored. `ETag` is the memory's rev. With `?rev=`, the note as it was at that rev (`ETag` is that rev; 404 when it did not exist there or the rev is not in this memory's history). One of `section`, `lines` or `frontmatterOnly` returns only that part (`part` says which; raw: the part as stored); `includeLinks` adds the note's links both ways.",
    params: S.NoteParams,
    query: S.ReadNoteQuery,
    ok: { status: 200, description: 'The note', schema: S.NoteSchema, etag: true, content: 'text/markdown' },
    errors: read,
  },
  writeNote: {
    summary: 'Create or replace a note',
    description:
      'JSON `{ body, frontmatter? }`, or the raw file with `Content-Type: text/markdown` (a leading `---` YAML block is the front matter, stored exactly). Any other content type is 400.',
    params: S.NoteParams,
    body: { schema: S.PutNoteBody, required: true, markdown: true },
    ok: { status: 200, description: 'The write', schema: S.WriteResultSchema },
    ifMatch: true,
    errors: write,
  },
  editNote: {
    summary: 'Edit a note',
    params: S.NoteParams,
    body: { schema: S.PatchNoteBody, required: true },
    ok: { status: 200, description: 'The write', schema: S.WriteResultSchema },
    ifMatch: true,
    errors: write,
  },
  deleteNote: {
    summary: 'Soft-delete a note',
    params: S.NoteParams,
    ok: { status: 200, description: 'Deleted', schema: S.NoteDeletedSchema },
    errors: write,
    ifMatch: true,
  },
  searchNotes: {
    summary: 'Literal search',
    params: S.MemoryParams,
    query: S.SearchQuery,
    ok: { status: 200, description: 'Ranked by match count', schema: S.SearchPageSchema },
    errors: read,
  },
  exportMemory: {
    summary: 'Git bundle of one memory (full history)',
    description: '`git clone memory.bundle`. Larger than the inline limit: 302 to a presigned URL.',
    params: S.MemoryParams,
    ok: { status: 200, description: 'The bundle', content: 'application/x-git-bundle' },
    errors: read,
    redirect: true,
  },
  history: {
    summary: 'History: commits newest first, each with the notes it changed',
    description:
      'Along first parents (`git log --first-parent`: one entry per write or pushed commit; a pushed merge is one entry). With `path`, only the commits that touched that note, following renames and moves (`git log --follow`); such a page examines at most 1,000 commits and may end short with a `nextCursor` that continues the scan. 404 for a path that never existed in the whole history.',
    params: S.MemoryParams,
    query: S.HistoryQuery,
    ok: { status: 200, description: 'A page of commits', schema: S.HistorySchema, etag: true },
    errors: read,
  },
  diff: {
    summary: 'Diff between two revs',
    description:
      'A unified diff (`text/x-diff`, what `git diff` writes and `git apply` takes) by default; with `Accept: application/json`, per-note hunks. `to` defaults to the current rev, `from` to the first parent of `to`. Larger than 4 MiB of diff: 400 (narrow it with `path` or closer revs).',
    params: S.MemoryParams,
    query: S.DiffQuery,
    ok: { status: 200, description: 'The diff', schema: S.DiffSchema, content: 'text/x-diff' },
    errors: read,
  },
  move: {
    summary: 'Move (rename) a note',
    description:
      'One commit that git sees as a rename (`git log --follow` works). With `updateLinks: true`, `[[wikilinks]]` and relative markdown links to the note are rewritten in every note in the same commit, listed in `linksUpdated`. 404 when `from` is not a note, 409 when `to` is one (or If-Match is stale).',
    params: S.MemoryParams,
    body: { schema: S.MoveBody, required: true },
    ok: { status: 200, description: 'The move', schema: S.MoveResultSchema },
    errors: write,
  },
  links: {
    summary: 'Orphans and dangling links',
    description:
      'The link graph of the memory (`[[wikilinks]]`, `![[embeds]]` and relative markdown links to notes): `orphans` lists the notes no other note links to, `dangling` the links that lead to no note. Without either flag, both. Each list is at most 10,000 long (`truncated`). Read from the index and the packed texts, as a search is.',
    params: S.MemoryParams,
    query: S.LinksQuery,
    ok: { status: 200, description: 'The lists asked for', schema: S.MemoryLinksSchema, etag: true },
    errors: read,
  },
  noteLinks: {
    summary: "A note's links both ways",
    description:
      "`outgoing`: the note's links, one per destination, each with the note it leads to (`path`, null when dangling); `incoming`: the notes that link to it, one entry per note. Wikilinks resolve by path, then by file name or partial path, then by title (the note in the linking note's folder, else the shortest path, when several fit); markdown links as relative (or `/`-rooted) paths. Served by the note route (`…/notes/{path}` with a path ending in `.md/links`).",
    params: S.NoteParams,
    query: S.NoteLinksQuery,
    ok: { status: 200, description: 'The links', schema: S.NoteLinksSchema, etag: true },
    errors: read,
  },
  memoryTool: {
    summary: "Claude's memory tool, backed by this memory",
    description:
      "One command of the client-side memory tool (`memory_20250818`: `view`, `create`, `str_replace`, `insert`, `delete`, `rename` on paths under `/memories`), exactly as the model emits it. `/memories/<path>` is the note `<path>`; only `.md` names can be created. The answer's `content` is the string the tool's documentation says a handler returns; a mistake of the model's is `is_error: true` (still 200). `view` needs memory:read, the other commands memory:write. Each write is one commit (a directory's delete or rename, one per note); If-Match makes the first expect a rev. The memory is created by the first write.",
    params: S.MemoryParams,
    body: { schema: S.MemoryToolCommandSchema, required: true },
    ok: { status: 200, description: 'The tool result', schema: S.MemoryToolResultSchema, etag: true },
    ifMatch: true,
    errors: write,
  },
  gitInfoRefs: {
    summary: 'git smart HTTP: ref advertisement',
    description:
      'The git remote `/v1/memories/{memory}.git` (the `.git` is optional): `git clone`, `git pull`, `git push`. `?service=git-upload-pack` (needs memory:read) or `?service=git-receive-pack` (memory:write). The token goes to git as the HTTP Basic password (any user name) or with `http.extraHeader`; a 401 challenges for Basic. Errors of the git routes are one line of `text/plain` (`CODE: message`), which git shows its user.',
    params: S.MemoryParams,
    ok: { status: 200, description: 'pkt-line advertisement', content: 'application/x-git-upload-pack-advertisement' },
    errors: read,
  },
  gitUploadPack: {
    summary: 'git smart HTTP: fetch and clone (negotiation and pack)',
    description: 'Needs memory:read. Stateless RPC, multi_ack_detailed, side-band-64k; only what the client lacks travels.',
    params: S.MemoryParams,
    ok: { status: 200, description: 'ACK/NAK and the pack', content: 'application/x-git-upload-pack-result' },
    errors: read,
  },
  gitReceivePack: {
    summary: 'git smart HTTP: push',
    description:
      'Needs memory:write. Fast-forward onto the current rev of `main` only, through the rev lock; every pushed note passes the rules of a REST write. Refusals are git report-status lines with their reasons on the side band. Push bodies up to 4 MiB.',
    params: S.MemoryParams,
    ok: { status: 200, description: 'report-status', content: 'application/x-git-receive-pack-result' },
    errors: write,
  },
  listTokens: {
    summary: 'Your personal access tokens',
    description:
      'The active tokens of the signed-in user, newest first, without their secrets. Needs a sign-in (an OAuth or identity-provider token with a memory scope); a personal access token is 403.',
    ok: { status: 200, description: 'The tokens', schema: S.TokenListSchema },
    errors: [401, 403],
  },
  createToken: {
    summary: 'Create a personal access token',
    description:
      'For git and scripts: a bearer token on `/v1` and `/mcp`, and the git password (any user name). The secret (`mcpm_pat_…`) is in this answer only; only its hash is kept. Read-only or read-write, at most what the sign-in holds, optionally limited to some memories and to one folder. Needs a sign-in, never another personal access token (403). 409 past the ceiling of active tokens per user (50).',
    body: { schema: S.CreateTokenBody, required: true },
    ok: { status: 201, description: 'Created; the secret is shown this once', schema: S.CreatedTokenSchema },
    errors: [400, 401, 403, 409],
  },
  revokeToken: {
    summary: 'Revoke a personal access token',
    description:
      'Refused from the next request on by the instance that answers this, and by every other within AUTH_TOKEN_CACHE_SECONDS (30). 404 for a token that is not one of your active ones. Needs a sign-in.',
    params: S.TokenParams,
    ok: { status: 200, description: 'Revoked', schema: S.TokenRevokedSchema },
    errors: [401, 403, 404],
  },
};

const ERROR_TEXT: Record<number, string> = {
  400: 'BAD_REQUEST: invalid parameter, cursor, name, path, mode, body or content type; missing body or q; refused content; over the size cap.',
  401: 'UNAUTHENTICATED: missing, invalid or expired token, or one for another audience. Carries `WWW-Authenticate`.',
  403: "FORBIDDEN: missing scope, memory not granted to the token, a note outside a personal access token's folder, or tokens managed with a personal access token.",
  404: 'NOT_FOUND: no such memory, note or personal access token.',
  405: 'METHOD_NOT_ALLOWED: carries `Allow`.',
  409: 'CONFLICT: If-Match differs from the current rev; memory or personal-token ceiling reached; retired name.',
  429: 'RATE_LIMITED: carries `Retry-After`.',
  500: 'INTERNAL_ERROR.',
  503: 'UPSTREAM_UNAVAILABLE: storage or the sign-in service unavailable; carries `Retry-After`.',
};

const int = { type: 'integer' as const };
const str = { type: 'string' as const };
const RATE = {
  RateLimit: { description: 'IETF draft-7: `limit=60, remaining=N, reset=S` (seconds until the bucket is full).', schema: str },
  'RateLimit-Policy': { description: '`60;w=60`', schema: str },
};

type Responses = NonNullable<RouteConfig['responses']>;

const IfMatchHeader = z.object({
  'If-Match': z
    .string()
    .optional()
    .openapi({ description: 'The rev the write expects (`sha` or `"sha"`); when the memory has moved on, 409 CONFLICT and nothing is written.' }),
});

/**
 * Operations served under another route's template: `GET …/notes/{path}/links` is the note route
 * with a path ending in `.md/links` (API Gateway allows a greedy variable only as the last segment).
 */
const SERVED_BY_NOTE_ROUTE: readonly RouteDef[] = [
  { method: 'GET', path: '/v1/memories/{memory}/notes/{path+}/links', fn: 'memory', operationId: 'noteLinks' },
];

export function buildMemoryOpenApiDocument(): Record<string, unknown> {
  const registry = new OpenAPIRegistry();
  registry.registerComponent('securitySchemes', 'bearerAuth', {
    type: 'http',
    scheme: 'bearer',
    description:
      'OAuth 2.1 access token (the one an MCP client receives), or a personal access token (`mcpm_pat_…`, from POST /v1/tokens); scopes memory:read (GET) and memory:write (writes).',
  });
  const error = registry.register('Error', S.ErrorSchema);
  for (const route of [...MEMORY_ROUTES, ...SERVED_BY_NOTE_ROUTE, ...TOKEN_ROUTES]) {
    const op = OPS[route.operationId];
    if (!op) throw new Error(`no OpenAPI description for ${route.operationId}`);
    const okHeaders = {
      ...RATE,
      ...(op.ok.etag && { ETag: { description: '`"<rev>"`', schema: str } }),
      ...(op.redirect && { 'Content-Disposition': { description: '`attachment; filename="…"`', schema: str } }),
    };
    const okContent: Record<string, { schema: z.ZodType | { type: 'string'; format: 'binary' } }> = {};
    if (op.ok.schema) okContent['application/json'] = { schema: op.ok.schema };
    if (op.ok.content) okContent[op.ok.content] = { schema: { type: 'string', format: 'binary' } };
    const responses: Responses = { [op.ok.status]: { description: op.ok.description, headers: okHeaders, content: okContent } };
    if (op.ok.alsoCreated) responses[201] = { description: 'Created', headers: { ...okHeaders, Location: { schema: str } }, content: okContent };
    if (op.redirect) {
      responses[302] = {
        description: 'Too large to send inline: stored under exports/ (expires after a day); `Location` is a presigned GET URL valid for a few minutes.',
        headers: { ...RATE, Location: { schema: str } },
        content: { 'application/json': { schema: S.ExportRedirectSchema } },
      };
    }
    for (const code of [...new Set([...op.errors, 401, 405, 429, 500, 503])].sort((a, b) => a - b)) {
      const extra: Record<string, { description?: string; schema: typeof str | typeof int }> = {};
      if (code === 401) extra['WWW-Authenticate'] = { schema: str };
      if (code === 405) extra.Allow = { schema: str };
      if (code === 429 || code === 503) extra['Retry-After'] = { description: 'Seconds to wait.', schema: int };
      responses[code] = { description: ERROR_TEXT[code], headers: { ...RATE, ...extra }, content: { 'application/json': { schema: error } } };
    }
    const content: Record<string, { schema: z.ZodType | { type: 'string' } }> = {};
    if (op.body) {
      content['application/json'] = { schema: op.body.schema };
      if (op.body.markdown) content['text/markdown'] = { schema: { type: 'string' } };
    }
    registry.registerPath({
      method: route.method.toLowerCase() as RouteConfig['method'],
      path: route.path.replace(/\{(\w+)\+?\}/g, '{$1}'),
      operationId: route.operationId,
      summary: op.summary,
      description: op.description,
      security: [{ bearerAuth: [] }],
      request: {
        ...(op.params && { params: op.params }),
        ...(op.query && { query: op.query }),
        ...(op.ifMatch && { headers: IfMatchHeader }),
        ...(op.body && { body: { required: op.body.required, content } }),
      },
      responses,
    });
  }
  const doc = new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'Memory REST API',
      version: '1.0.0',
      description:
        'Markdown memories with git history (spec 2). Bearer token required everywhere. Every error is `{ error: { code, message } }`. Writes accept `If-Match: <rev>` (`sha` or `"sha"`); a stale rev is 409. 60 requests per minute per client IP (IETF draft-7 `RateLimit` headers). `/v1/vaults/*` is a deprecated alias of `/v1/memories/*` (Deprecation, Sunset: Sun, 08 Feb 2027 00:00:00 GMT, Link to the successor).',
    },
    servers: [{ url: '/' }],
  });
  return doc as unknown as Record<string, unknown>;
}
