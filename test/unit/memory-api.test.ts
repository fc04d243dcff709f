import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { AuthError } from '../../lambdas/identity/principal';
import { MemoryError, StorageError } from '../../lambdas/memory/errors';
import { ValidationError } from '../../lambdas/shared/http/query';
import { RouteMatcher, routeKey } from '../../lambdas/shared/http/route-table';
import { MEMORY_POLICY, rateLimitHeaders, memoryRatePolicy } from '../../lambdas/memory-api/api';
import { bodyBytes, utf8Text, mediaType } from '../../lambdas/memory-api/body';
import { loadMemoryApiConfig } from '../../lambdas/memory-api/config';
import type { HttpEvent } from '../../lambdas/shared/http/types';
import { ApiError, errorResult, toApiError, V1_ERROR_STATUS } from '../../lambdas/memory-api/errors';
import { MEMORY_HANDLERS, wantsMarkdown } from '../../lambdas/memory-api/endpoints';
import { parseIfMatch } from '../../lambdas/memory-api/if-match';
import { v1RestoreHint } from '../../lambdas/memory-api/wiring';
import { buildMemoryOpenApiDocument } from '../../lambdas/memory-api/openapi';
import {
  baseOperation,
  isAliasPath,
  isGitOperation,
  MEMORY_API,
  MEMORY_ROUTES,
  scopeOf,
  TOKEN_ROUTES,
  VAULT_ALIAS_ROUTES,
} from '../../lambdas/memory-api/routes';
import { checkContract } from '../support/contract-snapshot';
import { expectMemoryError } from '../support/memory-harness';

describe('the /v1 route table', () => {
  it('has the twelve endpoints of spec 2, restore, history, diff, move, links, the memory tool and the git remote, each with a handler, and an alias twin of each, and the token routes', () => {
    expect(MEMORY_ROUTES).toHaveLength(21);
    expect(VAULT_ALIAS_ROUTES).toHaveLength(21);
    expect(TOKEN_ROUTES).toHaveLength(3);
    for (const r of MEMORY_API.routes) expect(MEMORY_HANDLERS[baseOperation(r)]).toBeDefined();
    expect(new Set(MEMORY_API.routes.map(routeKey)).size).toBe(45);
    expect(new Set(MEMORY_API.routes.map((r) => r.operationId)).size).toBe(45);
  });

  it('needs memory:read on GET and memory:write elsewhere, except git, whose scope follows the service, and the memory tool, whose commands check their own', () => {
    for (const r of MEMORY_API.routes) {
      if (isGitOperation(r.operationId) || baseOperation(r) === 'memoryTool') continue;
      // Token management is checked by its own rules (a sign-in with a memory scope), not by the route.
      expect(scopeOf(r)).toBe(TOKEN_ROUTES.includes(r) ? undefined : r.method === 'GET' ? 'memory:read' : 'memory:write');
    }
    expect(scopeOf(MEMORY_ROUTES.find((r) => r.operationId === 'memoryTool') as (typeof MEMORY_ROUTES)[number])).toBe('memory:read');
    const git = (op: string) => MEMORY_ROUTES.find((r) => r.operationId === op) as (typeof MEMORY_ROUTES)[number];
    expect(scopeOf(git('gitUploadPack'))).toBe('memory:read');
    expect(scopeOf(git('gitReceivePack'))).toBe('memory:write');
    expect(scopeOf(git('gitInfoRefs'), new Map([['service', ['git-upload-pack']]]))).toBe('memory:read');
    expect(scopeOf(git('gitInfoRefs'), new Map([['service', ['git-receive-pack']]]))).toBe('memory:write');
    expect(scopeOf(git('gitInfoRefs'))).toBe('memory:read');
  });

  it('resolves /memories/export to the zip, never to a memory named export, and keeps {path+} greedy', () => {
    const m = new RouteMatcher(MEMORY_API.routes);
    expect(m.match('GET', '/v1/memories/export').match?.route.operationId).toBe('exportAll');
    expect(m.match('GET', '/v1/vaults/export').match?.route.operationId).toBe('exportAllViaVaults');
    expect(m.match('GET', '/v1/memories/work/export').match?.route.operationId).toBe('exportMemory');
    const note = m.match('GET', '/v1/memories/work/notes/a/b%2Fc.md').match;
    expect(note?.route.operationId).toBe('readNote');
    expect(note?.pathParameters).toEqual({ memory: 'work', path: 'a/b/c.md' });
    expect(m.match('GET', '/v1/memories/work/notes/x%252F.md').match?.pathParameters.path).toBe('x%2F.md');
    // A note's links are the note route's, with the path ending in `.md/links`.
    const links = m.match('GET', '/v1/memories/work/notes/a/b.md/links').match;
    expect(links?.route.operationId).toBe('readNote');
    expect(links?.pathParameters.path).toBe('a/b.md/links');
  });

  it('knows the alias paths', () => {
    expect(isAliasPath('/v1/vaults')).toBe(true);
    expect(isAliasPath('/v1/vaults/x/notes/a.md')).toBe(true);
    expect(isAliasPath('/v1/vaultsx')).toBe(false);
    expect(isAliasPath('/v1/memories')).toBe(false);
  });
});

describe('If-Match values', () => {
  const sha = 'a'.repeat(40);
  test.each([
    [undefined, undefined],
    ['*', undefined],
    [sha, sha],
    [`"${sha}"`, sha],
    [` "${sha.toUpperCase()}" `, sha],
  ])('%p → %p', (input, out) => {
    expect(parseIfMatch(input)).toBe(out);
  });

  test.each(['', 'abc', `"${sha}`, 'g'.repeat(40)])('%p is BAD_REQUEST', async (input) => {
    await expectMemoryError(
      Promise.resolve().then(() => parseIfMatch(input)),
      'BAD_REQUEST',
      'invalid_rev',
    );
  });

  test('a weak tag is well formed but never matches (RFC 9110 compares If-Match strongly): CONFLICT', async () => {
    await expectMemoryError(
      Promise.resolve().then(() => parseIfMatch(`W/"${sha}"`)),
      'CONFLICT',
      'stale_rev',
    );
  });

  test("the core's stale rev is answered in If-Match's terms", () => {
    const stale = (memory: string, exists: boolean, currentRev: string | null) =>
      toApiError(new MemoryError('CONFLICT', 'stale_rev', 'the expected rev does not match', { stale: { memory, exists, currentRev } })).message;
    expect(stale('m', true, sha)).toBe(`If-Match does not match the current rev ${sha}`);
    expect(stale('m', true, null)).toBe('If-Match does not match the current rev (none: the memory is empty)');
    expect(stale('nope', false, null)).toBe('memory "nope" does not exist, so If-Match cannot match');
  });
});

describe('the restore hint /v1 gives the core', () => {
  test('a retired name points at the /v1 restore route', () => {
    expect(v1RestoreHint('work')).toBe('restore it with POST /v1/memories/work/restore');
  });
});

describe('errors in one place', () => {
  const envelope = (e: ApiError) => JSON.parse(errorResult(e).body as string) as unknown;

  it('maps the core, the verifier and the shared pipeline to the /v1 codes', () => {
    expect(toApiError(new MemoryError('CONFLICT', 'stale_rev', 'stale')).status).toBe(409);
    const storage = toApiError(new MemoryError('UPSTREAM_UNAVAILABLE', 'storage', 'down', { retryAfterSeconds: 1 }));
    expect([storage.status, storage.headers['retry-after']]).toEqual([503, '1']);
    // The transport's own storage calls (an export written to S3) fail as the core's do.
    const store = toApiError(new StorageError('s3.UploadPart', new Error('refused')));
    expect([store.code, store.status, store.headers['retry-after']]).toEqual(['UPSTREAM_UNAVAILABLE', 503, '1']);
    const missing = toApiError(new AuthError('missing', 'none'));
    expect([missing.code, missing.status, missing.headers['www-authenticate']]).toEqual(['UNAUTHENTICATED', 401, 'Bearer']);
    expect(toApiError(new AuthError('expired', 'old')).headers['www-authenticate']).toBe('Bearer error="invalid_token"');
    const down = toApiError(new AuthError('jwks-unavailable', 'down'));
    expect([down.code, down.status, down.headers['retry-after']]).toEqual(['UPSTREAM_UNAVAILABLE', 503, '5']);
    const query = toApiError(new ValidationError([{ field: 'limit', message: 'must be an integer' }], 'bad'));
    expect([query.code, query.message]).toEqual(['BAD_REQUEST', 'Invalid query: limit: must be an integer']);
    const verb = MEMORY_POLICY.problem({ kind: 'method_not_allowed', method: 'PUT', allowed: ['GET'] }, {} as HttpEvent);
    expect([verb.statusCode, verb.headers.allow]).toEqual([405, 'GET']);
  });

  it('answers anything unexpected 500 INTERNAL_ERROR without leaking its message', () => {
    const seen: unknown[] = [];
    const e = toApiError(new Error('secret detail /var/task'), (err) => seen.push(err));
    expect(seen).toHaveLength(1);
    expect(envelope(e)).toEqual({ error: { code: 'INTERNAL_ERROR', message: 'An internal error occurred; please retry later' } });
    expect(envelope(toApiError(new MemoryError('INTERNAL_ERROR', 'internal', 'stack trace here')))).toEqual({
      error: { code: 'INTERNAL_ERROR', message: 'An internal error occurred; please retry later' },
    });
    expect(errorResult(e).headers['cache-control']).toBe('no-store');
  });

  it('has one status per code', () => {
    expect(V1_ERROR_STATUS).toMatchObject({
      BAD_REQUEST: 400,
      UNAUTHENTICATED: 401,
      FORBIDDEN: 403,
      NOT_FOUND: 404,
      CONFLICT: 409,
      RATE_LIMITED: 429,
      INTERNAL_ERROR: 500,
      UPSTREAM_UNAVAILABLE: 503,
    });
  });
});

describe('content negotiation and headers', () => {
  it.each<[string | undefined, boolean]>([
    [undefined, false],
    ['*/*', false],
    ['application/json', false],
    ['text/markdown', true],
    ['text/markdown; charset=utf-8', true],
    ['application/json, text/markdown', false],
    ['text/markdown, application/json;q=0.9', true],
    ['text/markdown;q=0', false],
    ['text/html', false],
  ])('Accept %s → markdown %s', (accept, markdown) => {
    expect(wantsMarkdown(accept)).toBe(markdown);
  });

  it('writes the IETF draft-7 rate-limit headers from the configured policy', () => {
    const config = loadMemoryApiConfig({});
    expect([config.rateLimit, config.rateWindowSeconds]).toEqual([60, 60]);
    const policy = memoryRatePolicy({ config });
    expect(policy).toEqual({ name: 'memory-ip', ratePerSecond: 1, burst: 60 });
    expect(rateLimitHeaders({ allowed: true, limit: 60, remaining: 41, resetSeconds: 19, retryAfterSeconds: 0 }, policy, 60)).toEqual({
      ratelimit: 'limit=60, remaining=41, reset=19',
      'ratelimit-policy': '60;w=60',
    });
  });

  it('keeps inline exports under the Lambda response limit after base64', () => {
    const config = loadMemoryApiConfig({});
    expect(Math.ceil(config.exportInlineBytes / 3) * 4).toBeLessThan(6 * 1024 * 1024 - 64 * 1024);
    expect(config.maxRequestBytes).toBeGreaterThan(config.memory.limits.maxNoteBytes);
  });
});

describe('request bodies', () => {
  const event = (body: string, isBase64Encoded: boolean, contentType = 'text/markdown'): HttpEvent =>
    ({ body, isBase64Encoded, headers: { 'content-type': contentType } }) as unknown as HttpEvent;

  it('refuses invalid UTF-8 and foreign charsets, and bodies over the cap before decoding them', () => {
    const bad = event(Buffer.from([0x61, 0xff, 0x62]).toString('base64'), true);
    expect(() => utf8Text(bodyBytes(bad, 100), mediaType(bad))).toThrow(ApiError);
    const latin = event('x', false, 'text/markdown; charset=ISO-8859-1');
    expect(() => utf8Text(bodyBytes(latin, 100), mediaType(latin))).toThrow(/charset iso-8859-1/);
    expect(() => bodyBytes(event(Buffer.alloc(200).toString('base64'), true), 100)).toThrow(/larger than 100 bytes/);
    expect(() => bodyBytes(event('y'.repeat(101), false), 100)).toThrow(/larger than 100 bytes/);
    const ok = event(Buffer.from('ünï', 'utf8').toString('base64'), true, 'text/markdown; charset="UTF-8"');
    expect(utf8Text(bodyBytes(ok, 100), mediaType(ok))).toBe('ünï');
  });
});

describe('the frozen /v1 contract', () => {
  const doc = buildMemoryOpenApiDocument();

  it('describes every /v1/memories route', () => {
    const paths = doc.paths as Record<string, Record<string, unknown>>;
    for (const r of MEMORY_ROUTES) expect(paths[r.path.replace('{path+}', '{path}')]?.[r.method.toLowerCase()]).toBeDefined();
  });

  it('is a valid OpenAPI 3.1 document', () => {
    const out = execFileSync(process.execPath, [join(__dirname, '..', 'support', 'validate-openapi.mjs')], { input: JSON.stringify(doc), encoding: 'utf8' });
    expect(JSON.parse(out)).toMatchObject({ valid: true });
  });

  it('changes only by additions (v1-openapi.json; UPDATE_CONTRACTS=1 records an addition)', () => {
    const { problems } = checkContract('v1-openapi', doc);
    expect(problems).toEqual([]);
  });
});
