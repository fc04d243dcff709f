import { startTestCatalog, type TestCatalog } from '../support/catalog-harness';
import { docOf, makeRecord } from '../support/records';
import { serverJsonValidator, serverListValidator } from '../support/registry-schemas';
import { FIXTURE, loadFixture } from './catalog-fixture';

type Feed = {
  servers: Array<{ server: Record<string, unknown> & { name: string }; _meta: Record<string, Record<string, unknown>> }>;
  metadata: { count: number; nextCursor?: string };
};

let cat: TestCatalog;
const LONG_PREFIX = `com.longnames/${'n'.repeat(70)}`;
const LONG = ['a', 'b', 'c'].map((s) => makeRecord(`long-${s}`, { name: `${LONG_PREFIX}-${s}` }));

beforeAll(async () => {
  cat = await startTestCatalog({ seed: 150, config: { siteUrlTemplate: 'https://mcp.example.org/servers/{slug}' } });
  await loadFixture(cat);
  await cat.deps.store.put(LONG.map((record) => ({ record })));
  await cat.deps.index.upsert(LONG.map((record) => docOf({ record })));
});
afterAll(() => cat?.close());

async function feed(query: string): Promise<{ status: number; body: Feed }> {
  const res = await cat.get(`/api/v0.1/servers${query}`);
  return { status: res.status, body: (await res.json()) as Feed };
}

async function walk(query: string, limit: number): Promise<{ names: string[]; pages: number; cursors: string[] }> {
  const names: string[] = [];
  const cursors: string[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const sep = query ? '&' : '';
    const { status, body } = await feed(`?${query}${sep}limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    expect(status).toBe(200);
    expect(body.metadata.count).toBe(body.servers.length);
    names.push(...body.servers.map((s) => s.server.name));
    cursor = body.metadata.nextCursor;
    if (cursor) cursors.push(cursor);
    pages++;
  } while (cursor && pages < 1000);
  return { names, pages, cursors };
}

describe('GET /api/v0.1/servers', () => {
  it('pages through every server once, in name order, with cursors of at most 200 chars', async () => {
    const all = (await cat.deps.index.slugs()).length;
    const { names, cursors } = await walk('', 17);
    expect(names).toHaveLength(all);
    expect(new Set(names).size).toBe(all);
    expect([...names].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))).toEqual(names);
    for (const c of cursors) expect(c.length).toBeLessThanOrEqual(200);
    expect(names).toEqual(expect.arrayContaining(LONG.map((r) => r.name)));
  });

  it('continues correctly across names that share a long prefix', async () => {
    const { names } = await walk('search=longnames', 1);
    expect(names).toEqual(LONG.map((r) => r.name));
  });

  it('defaults to 50 per page and leaves nextCursor out on the last page', async () => {
    const first = await feed('');
    expect(first.body.servers).toHaveLength(50);
    expect(first.body.metadata.nextCursor).toEqual(expect.any(String));
    const small = await feed('?search=com.alpha/');
    expect(small.body.metadata).toEqual({ count: 1 });
  });

  it('searches names case-insensitively and filters by updated_since (inclusive, any offset)', async () => {
    expect((await feed('?search=COM.ALPHA')).body.servers.map((s) => s.server.name)).toEqual(['com.alpha/postgres-mcp']);
    const since = await walk(`search=${encodeURIComponent('com.')}&updated_since=${encodeURIComponent('2026-11-10T02:00:00+02:00')}`, 50);
    expect(since.names).toContain('com.alpha/postgres-mcp');
    const later = await walk('updated_since=2026-11-10T00:00:00.001Z', 50);
    expect(later.names).not.toContain('com.alpha/postgres-mcp');
  });

  it('ignores version', async () => {
    const a = await feed('?limit=5');
    const b = await feed('?limit=5&version=0.0.1');
    expect(b.body).toEqual(a.body);
  });

  it('refuses forged, truncated and foreign cursors with 400 INVALID_QUERY', async () => {
    const { body } = await feed('?limit=3');
    const c = body.metadata.nextCursor as string;
    const flipped = c.slice(0, 10) + (c[10] === 'A' ? 'B' : 'A') + c.slice(11);
    const foreign = (await feed('?limit=3&search=com')).body.metadata.nextCursor as string;
    for (const bad of [flipped, c.slice(0, -2), `${c}AA`]) {
      const r = await feed(`?limit=3&cursor=${encodeURIComponent(bad)}`);
      expect(r.status).toBe(400);
    }
    // A cursor of another query (here: another search) is foreign.
    const r = await feed(`?limit=3&cursor=${encodeURIComponent(foreign)}`);
    expect(r.status).toBe(400);
    expect((r.body as unknown as { error: { code: string } }).error.code).toBe('INVALID_QUERY');
    // The same query accepts it.
    expect((await feed(`?limit=3&search=com&cursor=${encodeURIComponent(foreign)}`)).status).toBe(200);
  });

  it('carries CatalogMeta under io.<brand>.catalog/v0', async () => {
    const { body } = await feed('?search=com.alpha/');
    const meta = body.servers[0]._meta['io.example.catalog/v0'];
    expect(meta).toEqual({
      slug: 'alpha-db',
      grades: { license: 'A', maintenance: 'A', quality: 'untested' },
      categories: ['Data & Databases'],
      toolCount: 2,
      health: FIXTURE[0].record.health,
      downloads: 12000,
      updatedAt: '2026-11-10T00:00:00.000Z',
      url: 'https://mcp.example.org/servers/alpha-db',
    });
  });

  it('every server validates against the official server.json schema, every page against ServerList', async () => {
    const validServer = serverJsonValidator();
    const validList = serverListValidator();
    let cursor: string | undefined;
    let checked = 0;
    do {
      const { body } = await feed(`?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(validList(body) ? [] : validList.errors).toEqual([]);
      for (const entry of body.servers) {
        const name = entry.server.name;
        expect(validServer(entry.server) ? [] : [name, validServer.errors]).toEqual([]);
        expect(entry.server).toMatchObject({
          name: expect.any(String),
          description: expect.any(String),
          version: expect.any(String),
          status: expect.any(String),
        });
        expect(Array.isArray(entry.server.packages) && Array.isArray(entry.server.remotes)).toBe(true);
        checked++;
      }
      cursor = body.metadata.nextCursor;
    } while (cursor);
    expect(checked).toBeGreaterThan(150);
  });

  it('the validators do reject a broken entry', () => {
    const validServer = serverJsonValidator();
    expect(validServer({ name: 'no-slash', description: 'x', version: '1' })).toBe(false);
    expect(validServer({ name: 'a.b/c', description: 'x', version: '1', packages: [{ registryType: 'npm', identifier: 'x' }] })).toBe(false);
    expect(serverListValidator()({ servers: [{ server: { name: 'a.b/c' } }] })).toBe(false);
  });
});

describe('cursor keys rotated while instances are warm', () => {
  it('pages across two instances started either side of a rotation, in both directions', async () => {
    const { randomBytes } = await import('node:crypto');
    const { writeFileSync } = await import('node:fs');
    const { join } = await import('node:path');
    const { createCatalogDeps } = await import('../../lambdas/catalog/wiring');
    const { handleCatalogRequest } = await import('../../lambdas/catalog/api');
    const file = join(process.env.TEST_TMP_DIR as string, `rotation-${randomBytes(3).toString('hex')}.json`);
    const k1 = { id: 1, secret: randomBytes(32).toString('base64') };
    const k2 = { id: 2, secret: randomBytes(32).toString('base64') };
    writeFileSync(file, JSON.stringify({ current: k1 }));
    const early = await createCatalogDeps({ ...cat.deps.config, cursorKeysFile: file, responseCacheEntries: 0 }, cat.deps.index);
    // The rotation: a new current key, the old one kept as previous.
    writeFileSync(file, JSON.stringify({ current: k2, previous: k1 }));
    const late = await createCatalogDeps({ ...cat.deps.config, cursorKeysFile: file, responseCacheEntries: 0 }, cat.deps.index);
    const page = async (deps: typeof early, cursor?: string) => {
      const query = `limit=5${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
      const event = {
        version: '2.0',
        routeKey: 'GET /api/v0.1/servers',
        rawPath: '/api/v0.1/servers',
        rawQueryString: query,
        headers: {},
        requestContext: { http: { method: 'GET', path: '/api/v0.1/servers', sourceIp: '198.51.100.2' }, requestId: 'r' },
      } as never;
      const res = await handleCatalogRequest(event, deps, 'r');
      return { status: res.statusCode, body: JSON.parse(res.body as string) as Feed };
    };
    // The early instance still signs with the old key: the late one knows it as the previous key.
    const fromEarly = await page(early);
    const onLate = await page(late, fromEarly.body.metadata.nextCursor);
    expect(onLate.status).toBe(200);
    // The late instance signs with the new key, which the early one meets for the first time.
    const fromLate = await page(late);
    const onEarly = await page(early, fromLate.body.metadata.nextCursor);
    expect(onEarly.status).toBe(200);
    expect(onEarly.body.servers.map((s) => s.server.name)).toEqual(onLate.body.servers.map((s) => s.server.name));
  });
});
