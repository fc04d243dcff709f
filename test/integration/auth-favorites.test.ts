import { handleFavoritesRequest } from '../../lambdas/catalog/favorites/api';
import { handleCatalogRequest } from '../../lambdas/catalog/api';
import type { FavoritesDeps } from '../../lambdas/catalog/favorites/deps';
import { addFavorite, listFavorites } from '../../lambdas/catalog/favorites/endpoints';
import { DynamoTokenStore } from '../../lambdas/identity/token-store';
import { createTokenVerifier } from '../../lambdas/identity/verifier';
import { documentClient, dynamoClient } from '../../lambdas/shared/aws/clients';
import { CatalogError } from '../../lambdas/catalog/errors';
import { parseRawQuery } from '../../lambdas/shared/http/query';
import { claims, deadUrl, forgeNone, forgeRs256, nowSeconds } from '../support/auth-jwks';
import { apiEvent, AUDIENCE, ISSUER, startFavoritesStack, type FavoritesStack } from '../support/auth-harness';
import { makeRecord } from '../support/records';

let s: FavoritesStack;

beforeAll(async () => {
  s = await startFavoritesStack({ slugs: ['alpha', 'beta', 'gamma', 'delta', 'epsilon'] });
});
afterAll(() => s?.close());

function post(body: string | undefined, auth: string | undefined, contentType = 'application/json'): Promise<Response> {
  return s.fetch('/api/favorites', {
    method: 'POST',
    headers: { ...(auth && { authorization: auth }), 'content-type': contentType },
    ...(body !== undefined && { body }),
  });
}

const get = (auth: string | undefined, query = '') => s.fetch(`/api/favorites${query}`, { headers: auth ? { authorization: auth } : {} });
const del = (slug: string, auth: string | undefined) =>
  s.fetch(`/api/favorites/${encodeURIComponent(slug)}`, { method: 'DELETE', headers: auth ? { authorization: auth } : {} });

async function slugsOf(res: Response): Promise<string[]> {
  const body = (await res.json()) as { data: Array<{ slug: string }> };
  return body.data.map((d) => d.slug);
}

describe('authentication', () => {
  it('answers 401 UNAUTHORIZED without a token, in the catalog envelope, with CORS and the anonymous tier', async () => {
    for (const res of [await get(undefined), await post('{"slug":"alpha"}', undefined), await del('alpha', undefined)]) {
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe('Bearer');
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
      expect(res.headers.get('x-ratelimit-limit')).toBe('60');
      expect(await res.json()).toEqual({ success: false, error: { code: 'UNAUTHORIZED', message: expect.any(String) } });
    }
  });

  it.each<[string, () => Promise<string>]>([
    ['garbage', async () => 'Bearer garbage'],
    ['a non-bearer scheme', async () => 'Basic YWxpY2U6cHc='],
    ['expired', async () => `Bearer ${forgeRs256(s.issuer, claims({ issuer: ISSUER, audience: AUDIENCE }, { exp: nowSeconds() - 5 }))}`],
    ['for another audience', async () => `Bearer ${forgeRs256(s.issuer, claims({ issuer: ISSUER, audience: 'http://localhost:3000/elsewhere' }))}`],
    ['alg none', async () => `Bearer ${forgeNone(s.issuer, claims({ issuer: ISSUER, audience: AUDIENCE }))}x`],
    [
      'a revoked opaque token',
      async () => {
        const { accessToken } = await s.tokens.issueTokens({ sub: 'alice', clientId: 'c', scopes: [], resource: AUDIENCE }, { accessTtlSeconds: 600 });
        await s.tokens.revoke(accessToken);
        return `Bearer ${accessToken}`;
      },
    ],
  ])('answers 401 to a token that is %s, on every verb', async (_what, make) => {
    const auth = await make();
    for (const res of [await get(auth), await post('{"slug":"alpha"}', auth), await del('alpha', auth)]) {
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('UNAUTHORIZED');
    }
  });

  it('accepts an opaque token of this deployment, whatever its scopes', async () => {
    const { accessToken } = await s.tokens.issueTokens({ sub: 'olivia', clientId: 'c', scopes: [], resource: AUDIENCE }, { accessTtlSeconds: 600 });
    const res = await post('{"slug":"beta"}', `Bearer ${accessToken}`);
    expect(res.status).toBe(200);
    expect(await slugsOf(await get(`Bearer ${accessToken}`))).toEqual(['beta']);
  });
});

describe('pin, list, unpin', () => {
  it('pins idempotently, lists newest first per user, and unpins idempotently', async () => {
    const alice = s.bearer('alice');
    const first = await post('{"slug":"alpha"}', alice);
    expect(first.status).toBe(200);
    expect(first.headers.get('x-ratelimit-limit')).toBe('200');
    expect(first.headers.get('access-control-allow-origin')).toBe('*');
    expect(await first.json()).toEqual({ success: true, data: { slug: 'alpha' } });
    expect((await post('{"slug":"beta"}', alice)).status).toBe(200);
    expect((await post('{"slug":"gamma"}', alice)).status).toBe(200);
    const again = await post('{"slug":"alpha"}', alice);
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual({ success: true, data: { slug: 'alpha' } });

    const list = await get(alice);
    expect(list.status).toBe(200);
    const body = (await list.json()) as { success: boolean; data: Array<Record<string, unknown>> };
    expect(body.success).toBe(true);
    // A repeated pin keeps its place: it is the same pin.
    expect(body.data.map((d) => d.slug)).toEqual(['gamma', 'beta', 'alpha']);
    expect(body.data[0]).toMatchObject({ slug: 'gamma', name: 'io.example/gamma', description: 'The gamma server', isOfficial: true });
    expect(body.data[0].grades).toBeUndefined();
    const full = (await (await get(alice, '?view=full')).json()) as { data: Array<Record<string, unknown>> };
    expect(full.data[0].grades).toEqual({ license: 'A', maintenance: 'A', quality: 'untested' });
    expect((await get(alice, '?view=huge')).status).toBe(400);

    expect(await slugsOf(await get(s.bearer('bob')))).toEqual([]);

    const removed = await del('beta', alice);
    expect(removed.status).toBe(200);
    expect(await removed.json()).toEqual({ success: true, data: { slug: 'beta' } });
    expect((await del('beta', alice)).status).toBe(200);
    expect((await del('never-pinned', alice)).status).toBe(200);
    expect(await slugsOf(await get(alice))).toEqual(['gamma', 'alpha']);
  });

  it('trims the slug and accepts a JSON body whatever its content type', async () => {
    const res = await post('{"slug":"  delta  "}', s.bearer('trim'));
    expect(await res.json()).toEqual({ success: true, data: { slug: 'delta' } });
    expect((await post('{"slug":"epsilon"}', s.bearer('trim'), 'application/octet-stream')).status).toBe(200);
    expect(await slugsOf(await get(s.bearer('trim')))).toEqual(['epsilon', 'delta']);
  });

  it('skips pins of servers that left the catalog, and shows them again if they return', async () => {
    const dan = s.bearer('dan');
    await post('{"slug":"alpha"}', dan);
    await s.catalogStore.put([{ record: makeRecord('comet') }]);
    await post('{"slug":"comet"}', dan);
    await s.catalogStore.delete(['comet']);
    expect(await slugsOf(await get(dan))).toEqual(['alpha']);
    await s.catalogStore.put([{ record: makeRecord('comet') }]);
    expect(await slugsOf(await get(dan))).toEqual(['comet', 'alpha']);
  });
});

describe('bad input', () => {
  it('answers 404 NOT_FOUND for a slug that is not in the catalog', async () => {
    const res = await post('{"slug":"no-such-server"}', s.bearer('eve'));
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ success: false, error: { code: 'NOT_FOUND', message: expect.stringContaining('no-such-server') } });
  });

  it.each<[string, string | undefined, string]>([
    ['no body', undefined, 'body'],
    ['an empty body', '', 'body'],
    ['malformed JSON', '{"slug":', 'body'],
    ['a JSON array', '["alpha"]', 'body'],
    ['JSON null', 'null', 'body'],
    ['a JSON string', '"alpha"', 'body'],
    ['no slug', '{}', 'slug'],
    ['a null slug', '{"slug":null}', 'slug'],
    ['an empty slug', '{"slug":""}', 'slug'],
    ['a blank slug', '{"slug":"   "}', 'slug'],
    ['a slug over 200 characters', JSON.stringify({ slug: 'a'.repeat(201) }), 'slug'],
    ['a numeric slug', '{"slug":5}', 'slug'],
    ['an array slug', '{"slug":["alpha"]}', 'slug'],
  ])('answers 400 INVALID_QUERY to %s', async (_what, body, field) => {
    const res = await post(body, s.bearer('eve'));
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      success: false,
      error: { code: 'INVALID_QUERY', message: expect.any(String), details: [{ field, message: expect.any(String) }] },
    });
  });

  it('answers 400 to an over-long slug on DELETE, and checks the token before the input', async () => {
    expect((await del('a'.repeat(201), s.bearer('eve'))).status).toBe(400);
    expect((await post('{"slug":', undefined)).status).toBe(401);
  });
});

describe('the catalog bearer tier', () => {
  it('raises the catalog limit for a valid bearer and silently ignores a bad one', async () => {
    const good = await s.fetch('/api/categories', { headers: { authorization: s.bearer('tier') } });
    expect(good.status).toBe(200);
    expect(good.headers.get('x-ratelimit-limit')).toBe('200');
    const bad = await s.fetch('/api/categories', { headers: { authorization: 'Bearer nope' } });
    expect(bad.status).toBe(200);
    expect(bad.headers.get('x-ratelimit-limit')).toBe('60');
  });
});

describe('the catalog catch-all over the merged route table', () => {
  it('answers wrong verbs on the favorites paths with 405 and the Allow of each path', async () => {
    for (const [method, path, allow] of [
      ['PUT', '/api/favorites', 'GET, POST'],
      ['DELETE', '/api/favorites', 'GET, POST'],
      ['GET', '/api/favorites/alpha', 'DELETE'],
      ['POST', '/api/favorites/alpha', 'DELETE'],
    ]) {
      const res = await s.fetch(path, { method, headers: { authorization: s.bearer('verbs') }, ...(method !== 'GET' && { body: '{}' }) });
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe(allow);
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('METHOD_NOT_ALLOWED');
    }
    // Catalog reads keep `Allow: GET`.
    expect((await s.fetch('/api/mcps', { method: 'POST', body: '{}' })).headers.get('allow')).toBe('GET');
  });

  it('answers CORS preflights of the favorites paths with their verbs and the Authorization header', async () => {
    const list = await s.fetch('/api/favorites', { method: 'OPTIONS', headers: { origin: 'https://site.example', 'access-control-request-method': 'POST' } });
    expect(list.status).toBe(204);
    expect(list.headers.get('access-control-allow-methods')).toBe('GET, POST, OPTIONS');
    expect(list.headers.get('access-control-allow-headers')).toMatch(/Authorization/);
    expect(list.headers.get('access-control-allow-origin')).toBe('*');
    const one = await s.fetch('/api/favorites/alpha', { method: 'OPTIONS', headers: { 'access-control-request-method': 'DELETE' } });
    expect(one.status).toBe(204);
    expect(one.headers.get('access-control-allow-methods')).toBe('DELETE, OPTIONS');
  });

  it('never dispatches a favorites route to a catalog handler', async () => {
    for (const event of [
      apiEvent('POST', '/api/favorites', { routeKey: 'POST /api/favorites', body: '{"slug":"alpha"}', headers: { authorization: s.bearer('misrouted') } }),
      apiEvent('GET', '/api/favorites', { headers: { authorization: s.bearer('misrouted') } }),
    ]) {
      const res = await handleCatalogRequest(event, s.catalogDeps, 'misrouted');
      expect(res.statusCode).toBe(500);
      expect(JSON.parse(res.body ?? '')).toMatchObject({ success: false, error: { code: 'INTERNAL_ERROR' } });
    }
  });
});

describe('the favorites function on its own', () => {
  const call = (event: ReturnType<typeof apiEvent>, deps: FavoritesDeps = s.deps) => handleFavoritesRequest(event, deps, 'test');

  it('answers 405 with Allow naming the verbs of each path, 404 elsewhere, and CORS preflights with 204', async () => {
    const put = await call(apiEvent('PUT', '/api/favorites'));
    expect(put.statusCode).toBe(405);
    expect(put.headers.allow).toBe('GET, POST');
    expect(JSON.parse(put.body ?? '')).toMatchObject({ success: false, error: { code: 'METHOD_NOT_ALLOWED' } });
    const getOne = await call(apiEvent('GET', '/api/favorites/alpha'));
    expect(getOne.statusCode).toBe(405);
    expect(getOne.headers.allow).toBe('DELETE');
    expect((await call(apiEvent('GET', '/api/favorites/a/b'))).statusCode).toBe(404);

    const preflight = await call(
      apiEvent('OPTIONS', '/api/favorites', { headers: { 'access-control-request-method': 'POST', origin: 'https://site.example' } }),
    );
    expect(preflight.statusCode).toBe(204);
    expect(preflight.headers['access-control-allow-methods']).toBe('GET, POST, OPTIONS');
    expect(preflight.headers['access-control-allow-headers']).toMatch(/Authorization/);
    expect(preflight.headers['access-control-allow-origin']).toBe('*');
    const preflightOne = await call(apiEvent('OPTIONS', '/api/favorites/alpha', { headers: { 'access-control-request-method': 'DELETE' } }));
    expect(preflightOne.headers['access-control-allow-methods']).toBe('DELETE, OPTIONS');
  });

  it('dispatches on the route key API Gateway resolved', async () => {
    const res = await call(
      apiEvent('DELETE', '/api/favorites/alpha', {
        routeKey: 'DELETE /api/favorites/{slug}',
        pathParameters: { slug: 'alpha' },
        headers: { authorization: s.bearer('rk') },
      }),
    );
    expect(res.statusCode).toBe(200);
    expect(JSON.parse(res.body ?? '')).toEqual({ success: true, data: { slug: 'alpha' } });
  });

  it('answers 503 AUTH_UNAVAILABLE with Retry-After when the JWKS or the token table is down', async () => {
    const jwksDown = createTokenVerifier({ ...s.authConfig, jwt: { kind: 'local', issuer: ISSUER, jwksUri: `${await deadUrl()}/.well-known/jwks.json` } });
    const res = await call(apiEvent('GET', '/api/favorites', { headers: { authorization: s.bearer('alice') } }), { ...s.deps, verifier: jwksDown });
    expect(res.statusCode).toBe(503);
    expect(res.headers['retry-after']).toBe('5');
    expect(res.headers['access-control-allow-origin']).toBe('*');
    // The outage gives the anonymous tier, never a 401.
    expect(res.headers['x-ratelimit-limit']).toBe('60');
    expect(JSON.parse(res.body ?? '')).toEqual({ success: false, error: { code: 'AUTH_UNAVAILABLE', message: expect.any(String) } });

    const { accessToken } = await s.tokens.issueTokens({ sub: 'alice', clientId: 'c', scopes: [], resource: AUDIENCE }, { accessTtlSeconds: 600 });
    const downClient = dynamoClient({ region: 'us-east-1', dynamoEndpoint: await deadUrl() });
    try {
      const tableDown = createTokenVerifier(s.authConfig, { tokens: new DynamoTokenStore(documentClient(downClient), 'tokens') });
      const opaque = await call(apiEvent('POST', '/api/favorites', { headers: { authorization: `Bearer ${accessToken}` }, body: '{"slug":"alpha"}' }), {
        ...s.deps,
        verifier: tableDown,
      });
      expect(opaque.statusCode).toBe(503);
      expect(JSON.parse(opaque.body ?? '').error.code).toBe('AUTH_UNAVAILABLE');
    } finally {
      downClient.destroy();
    }
  });
});

describe('the per-user cap (default 1,000)', () => {
  // Handler calls with a catalog that knows every slug, so 1,000 servers need not be seeded.
  let departed = new Set<string>();
  const deps = (): FavoritesDeps => ({
    ...s.deps,
    catalog: { getRecord: async (slug) => (departed.has(slug) ? undefined : makeRecord(slug)) },
  });
  const ctx = (body: string, sub: string) => ({
    event: apiEvent('POST', '/api/favorites', { body, headers: { authorization: s.bearer(sub) } }),
    query: parseRawQuery(''),
    params: {},
    requestId: 'cap',
    // The pipeline verifies the token before a handler runs; called directly, the handler gets the caller it would have.
    principal: { sub, scopes: [], kind: 'jwt' as const, expiresAt: 0 },
  });

  it('refuses the 1,001st pin with 400, still accepts a repeat, and makes room from departed servers', async () => {
    expect(s.deps.favoritesConfig.maxFavorites).toBe(1000);
    departed = new Set();
    for (let i = 0; i < 1000; i++) await expect(s.deps.favorites.pin('carol', `srv-${i}`, 1000)).resolves.toBe('pinned');

    await expect(addFavorite(ctx('{"slug":"one-too-many"}', 'carol'), deps())).rejects.toMatchObject({
      code: 'INVALID_QUERY',
      details: [{ field: 'slug', message: expect.stringContaining('1000') }],
    });
    const repeat = await addFavorite(ctx('{"slug":"srv-7"}', 'carol'), deps());
    expect(repeat).toMatchObject({ kind: 'json', body: { success: true, data: { slug: 'srv-7' } } });

    departed = new Set(['srv-3', 'srv-4']);
    await expect(addFavorite(ctx('{"slug":"one-too-many"}', 'carol'), deps())).resolves.toMatchObject({ body: { data: { slug: 'one-too-many' } } });
    await expect(addFavorite(ctx('{"slug":"and-another"}', 'carol'), deps())).resolves.toMatchObject({ body: { data: { slug: 'and-another' } } });
    await expect(addFavorite(ctx('{"slug":"third"}', 'carol'), deps())).rejects.toBeInstanceOf(CatalogError);

    const listed = await listFavorites(
      { ...ctx('', 'carol'), event: apiEvent('GET', '/api/favorites', { headers: { authorization: s.bearer('carol') } }) },
      deps(),
    );
    const data = (listed as { body: { data: Array<{ slug: string }> } }).body.data;
    expect(data).toHaveLength(1000);
    expect(data.slice(0, 2).map((d) => d.slug)).toEqual(['and-another', 'one-too-many']);
  });
});
