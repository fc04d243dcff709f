import type { ApiTable, RouteDef } from '../shared/http/route-table';

/**
 * The memory REST API (spec 2), served under `/v1` by the function `memory`: the single source of
 * truth for the local server (dispatch) and the CDK stack (API Gateway routes). Order matters
 * locally only where two templates match one path: `GET /v1/memories/export` comes before
 * `GET /v1/memories/{memory}` (API Gateway prefers the literal path on its own), so `export` is
 * never taken for a memory name on GET (it is reserved anyway).
 *
 * `/v1/vaults/*` is the deprecated alias of `/v1/memories/*` (same handlers, same bodies, plus the
 * Deprecation, Sunset and Link headers): its routes are derived here, never written twice.
 */
export const MEMORY_FN = 'memory';
export const MEMORIES_PREFIX = '/v1/memories';
export const VAULTS_PREFIX = '/v1/vaults';
/** operationId suffix of the alias routes (`listMemories` → `listMemoriesViaVaults`). */
const ALIAS_SUFFIX = 'ViaVaults';

/** Which scope an operation needs: reads `memory:read`, everything else `memory:write`. */
export type OperationScope = 'memory:read' | 'memory:write';

const route = (method: RouteDef['method'], tail: string, operationId: string): RouteDef => ({
  method,
  path: `${MEMORIES_PREFIX}${tail}`,
  fn: MEMORY_FN,
  operationId,
});

/**
 * The twelve endpoints of spec 2, the documented recovery route and the additions (versions, links,
 * the memory tool, the git remote), under `/v1/memories`. A note's links,
 * `GET …/notes/{path}/links`, are served by `readNote`: API Gateway allows a greedy `{path+}` only
 * as the last segment, and no note path can end in `.md/links` (a folder may not end in `.md`).
 */
export const MEMORY_ROUTES: readonly RouteDef[] = [
  route('GET', '', 'listMemories'),
  route('POST', '', 'createMemory'),
  route('GET', '/export', 'exportAll'),
  route('GET', '/{memory}', 'getMemory'),
  route('DELETE', '/{memory}', 'retireMemory'),
  route('POST', '/{memory}/restore', 'restore'),
  route('GET', '/{memory}/notes', 'listNotes'),
  route('GET', '/{memory}/notes/{path+}', 'readNote'),
  route('PUT', '/{memory}/notes/{path+}', 'writeNote'),
  route('PATCH', '/{memory}/notes/{path+}', 'editNote'),
  route('DELETE', '/{memory}/notes/{path+}', 'deleteNote'),
  route('GET', '/{memory}/search', 'searchNotes'),
  route('GET', '/{memory}/export', 'exportMemory'),
  route('GET', '/{memory}/history', 'history'),
  route('GET', '/{memory}/diff', 'diff'),
  route('POST', '/{memory}/move', 'move'),
  route('GET', '/{memory}/links', 'links'),
  // Claude's memory tool: one command per request; `view` reads, the others write (checked per command).
  route('POST', '/{memory}/memory-tool', 'memoryTool'),
  // The git remote (`/v1/memories/<name>.git`, smart HTTP): `{memory}` is the name with or without `.git`.
  route('GET', '/{memory}/info/refs', 'gitInfoRefs'),
  route('POST', '/{memory}/git-upload-pack', 'gitUploadPack'),
  route('POST', '/{memory}/git-receive-pack', 'gitReceivePack'),
];

/**
 * Personal access tokens of the signed-in user (`/v1/tokens`): not memory operations, so neither
 * aliased under `/v1/vaults` nor checked for a memory scope by the route (the rules of who may
 * manage them are `identity/personal-token-service.ts`'s).
 */
export const TOKEN_ROUTES: readonly RouteDef[] = [
  { method: 'GET', path: '/v1/tokens', fn: MEMORY_FN, operationId: 'listTokens' },
  { method: 'POST', path: '/v1/tokens', fn: MEMORY_FN, operationId: 'createToken' },
  { method: 'DELETE', path: '/v1/tokens/{id}', fn: MEMORY_FN, operationId: 'revokeToken' },
];

const TOKEN_OPERATIONS: ReadonlySet<string> = new Set(TOKEN_ROUTES.map((r) => r.operationId));

/** Whether an operation manages personal access tokens (no memory scope by route, no Idempotency-Key: a replay would store the secret). */
export const isTokenOperation = (operationId: string | undefined): boolean => operationId !== undefined && TOKEN_OPERATIONS.has(operationId);

/** The operations of git's smart HTTP protocol: text errors, HTTP Basic accepted, no Idempotency-Key. */
export const GIT_OPERATIONS: ReadonlySet<string> = new Set(['gitInfoRefs', 'gitUploadPack', 'gitReceivePack']);

/** Whether an operation (of either prefix) is a git one. */
export const isGitOperation = (operationId: string | undefined): boolean =>
  operationId !== undefined && GIT_OPERATIONS.has(operationId.endsWith(ALIAS_SUFFIX) ? operationId.slice(0, -ALIAS_SUFFIX.length) : operationId);

/** The same routes under the deprecated `/v1/vaults` prefix. */
export const VAULT_ALIAS_ROUTES: readonly RouteDef[] = MEMORY_ROUTES.map((r) => ({
  ...r,
  path: VAULTS_PREFIX + r.path.slice(MEMORIES_PREFIX.length),
  operationId: `${r.operationId}${ALIAS_SUFFIX}`,
}));

export const MEMORY_API: ApiTable = {
  catchAllFn: MEMORY_FN,
  prefix: '/v1',
  routes: [...MEMORY_ROUTES, ...TOKEN_ROUTES, ...VAULT_ALIAS_ROUTES],
};

/** The operation a route serves (the alias routes serve their `/v1/memories` twin's). */
export function baseOperation(r: RouteDef): string {
  return r.operationId.endsWith(ALIAS_SUFFIX) ? r.operationId.slice(0, -ALIAS_SUFFIX.length) : r.operationId;
}

/**
 * Reads need `memory:read`, writes `memory:write`. git's requests are read or write by service, not
 * by verb: a clone POSTs to git-upload-pack (a read), and `info/refs` advertises for a push
 * (`?service=git-receive-pack`, which needs write: a read-only token learns at once it cannot push).
 * The memory tool's route needs `memory:read` (its `view` reads); its writing commands check
 * `memory:write` themselves.
 */
export function scopeOf(r: RouteDef, query?: Map<string, string[]>): OperationScope | undefined {
  const op = baseOperation(r);
  if (isTokenOperation(op)) return undefined;
  if (op === 'gitUploadPack' || op === 'memoryTool') return 'memory:read';
  if (op === 'gitInfoRefs') return query?.get('service')?.[0] === 'git-receive-pack' ? 'memory:write' : 'memory:read';
  return r.method === 'GET' ? 'memory:read' : 'memory:write';
}

/** Whether a raw request path is on the deprecated alias (every response there carries its headers). */
export function isAliasPath(rawPath: string): boolean {
  return rawPath === VAULTS_PREFIX || rawPath.startsWith(`${VAULTS_PREFIX}/`);
}

/** RFC 8594 / RFC 9745 headers of the alias, on every response under `/v1/vaults`. */
export const ALIAS_HEADERS: Readonly<Record<string, string>> = {
  deprecation: 'true',
  sunset: 'Sun, 08 Feb 2027 00:00:00 GMT',
  link: '</v1/memories>; rel="successor-version"',
};
