import { startTestCatalog, type TestCatalog } from '../support/catalog-harness';
import { FIXTURE, loadFixture } from './catalog-fixture';

type Envelope<T> = { success: boolean; data: T; meta?: { pagination?: Record<string, unknown>; search?: { query: string } } };
type Server = Record<string, unknown> & { slug: string };

let cat: TestCatalog;

beforeAll(async () => {
  cat = await startTestCatalog();
  await loadFixture(cat);
});
afterAll(async () => {
  await cat?.close();
});

async function getJson<T>(path: string): Promise<{ status: number; body: T; headers: Headers }> {
  const res = await cat.get(path);
  return { status: res.status, body: (await res.json()) as T, headers: res.headers };
}

async function slugs(path: string): Promise<string[]> {
  const { status, body } = await getJson<Envelope<Server[]>>(path);
  expect(status).toBe(200);
  return body.data.map((s) => s.slug);
}

describe('GET /api/mcps', () => {
  it('lists by popularity with slug tie-break, 24 per page, with pagination meta', async () => {
    const { body, headers } = await getJson<Envelope<Server[]>>('/api/mcps');
    expect(body.success).toBe(true);
    // delta-docker is deprecated: after the active servers in the default order.
    expect(body.data.map((s) => s.slug)).toEqual(['alpha-db', 'beta-search', 'zeta-mcpb', 'gamma-remote', 'epsilon-nuget', 'delta-docker']);
    expect(body.meta?.pagination).toEqual({ page: 1, limit: 24, total: 6, totalPages: 1, hasMore: false });
    expect(headers.get('content-type')).toMatch(/^application\/json/);
    expect(headers.get('access-control-allow-origin')).toBe('*');
  });

  it.each([
    ['name', ['gamma-remote', 'alpha-db', 'delta-docker', 'epsilon-nuget', 'zeta-mcpb', 'beta-search']],
    ['stars', ['alpha-db', 'beta-search', 'delta-docker', 'zeta-mcpb', 'epsilon-nuget', 'gamma-remote']],
    ['updated', ['alpha-db', 'beta-search', 'gamma-remote', 'delta-docker', 'zeta-mcpb', 'epsilon-nuget']],
    ['downloads', ['alpha-db', 'beta-search', 'zeta-mcpb', 'delta-docker', 'epsilon-nuget', 'gamma-remote']],
    ['trending', ['alpha-db', 'beta-search', 'zeta-mcpb', 'epsilon-nuget', 'gamma-remote', 'delta-docker']],
    ['popularity', ['alpha-db', 'beta-search', 'zeta-mcpb', 'gamma-remote', 'epsilon-nuget', 'delta-docker']],
  ])('sort=%s has the spec direction and breaks ties by slug (popularity and trending: the deprecated server last)', async (sort, expected) => {
    expect(await slugs(`/api/mcps?sort=${sort}`)).toEqual(expected);
  });

  it('pages with page and limit', async () => {
    const { body } = await getJson<Envelope<Server[]>>('/api/mcps?sort=name&limit=4&page=2');
    expect(body.data.map((s) => s.slug)).toEqual(['zeta-mcpb', 'beta-search']);
    expect(body.meta?.pagination).toEqual({ page: 2, limit: 4, total: 6, totalPages: 2, hasMore: false });
    const first = await getJson<Envelope<Server[]>>('/api/mcps?sort=name&limit=4');
    expect(first.body.meta?.pagination?.hasMore).toBe(true);
    const past = await getJson<Envelope<Server[]>>('/api/mcps?page=9');
    expect(past.body.data).toEqual([]);
    expect(past.body.meta?.pagination).toMatchObject({ page: 9, total: 6, hasMore: false });
  });

  it.each([
    ['type=remote', ['alpha-db', 'gamma-remote']],
    ['type=npm', ['alpha-db', 'zeta-mcpb']],
    ['type=npm,pypi', ['alpha-db', 'beta-search', 'zeta-mcpb']],
    ['type=oci&type=nuget', ['delta-docker', 'epsilon-nuget']],
    ['type=mcpb', ['zeta-mcpb']],
    ['category=Cloud%20%26%20DevOps', ['delta-docker', 'gamma-remote']],
    ['category=Cloud%20%26%20DevOps&type=oci', ['delta-docker']],
    ['category=Knowledge%20%26%20Memory&category=Search%20%26%20Web', ['beta-search', 'zeta-mcpb']],
    ['language=Go', ['alpha-db']],
    ['language=go', []],
    ['language=Klingon', []],
    ['language=Rust,C%23', ['delta-docker', 'epsilon-nuget']],
    ['license=MIT', ['delta-docker', 'zeta-mcpb']],
    ['license=MIT%20License', ['delta-docker', 'zeta-mcpb']],
    ['license=GPL-3.0', ['beta-search']],
    ['license=Apache-2.0,MIT', ['alpha-db', 'delta-docker', 'zeta-mcpb']],
    ['license=MIT&language=Rust', ['delta-docker']],
    ['type=remote&language=Python', []],
  ])('filters %s (OR within a parameter, AND across)', async (query, expected) => {
    expect(await slugs(`/api/mcps?sort=name&${query}`).then((s) => s.sort())).toEqual(expected);
  });

  it('view=card (default) gives exactly the CatalogServer fields; view=full adds enrichment', async () => {
    const card = (await getJson<Envelope<Server[]>>('/api/mcps?limit=1')).body.data[0];
    expect(Object.keys(card).sort()).toEqual(
      [
        'category',
        'crawledAt',
        'description',
        'github',
        'isOfficial',
        'name',
        'packages',
        'remotes',
        'repositoryUrl',
        'slug',
        'status',
        'title',
        'toolCount',
        'updatedAt',
        'version',
      ].sort(),
    );
    expect(card.packages).toEqual([{ registryType: 'npm', identifier: '@example/alpha-db', version: '1.0.0' }]);
    expect(card.github).toEqual({ language: 'Go', license: 'Apache License 2.0', stars: 500 });
    const full = (await getJson<Envelope<Server[]>>('/api/mcps?limit=1&view=full')).body.data[0];
    expect(full).toMatchObject({
      downloads: 12000,
      grades: { license: 'A', maintenance: 'A', quality: 'untested' },
      health: { live: true, checkedAt: '2026-11-20T00:00:00.000Z', toolCount: 2 },
      popularity: 0.9,
      trending: 40,
      iconUrl: '/api/icons/alpha-db',
    });
  });

  it('omits unknown optional fields instead of sending null', async () => {
    const all = (await getJson<Envelope<Server[]>>('/api/mcps?view=full')).body.data;
    const g = all.find((s) => s.slug === 'gamma-remote') as Server;
    for (const k of ['github', 'repositoryUrl', 'updatedAt', 'downloads', 'iconUrl']) expect(g).not.toHaveProperty(k);
    expect(g.grades).toEqual({ license: null, maintenance: null, quality: 'untested' });
    // null appears only where the spec says so: the grades.
    const nulls: string[] = [];
    const walk = (v: unknown, path: string): void => {
      if (v === null) nulls.push(path);
      else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) walk(x, `${path}.${k}`);
    };
    for (const s of all) walk(s, s.slug);
    expect(nulls).toEqual(['gamma-remote.grades.license', 'gamma-remote.grades.maintenance']);
  });
});

describe('GET /api/mcps/{slug}', () => {
  it('merges README and tools into the full record', async () => {
    const { status, body } = await getJson<Envelope<Server>>('/api/mcps/alpha-db');
    expect(status).toBe(200);
    expect(body.data.slug).toBe('alpha-db');
    expect(body.data.readme).toEqual(FIXTURE[0].readme);
    expect(body.data.tools).toEqual(FIXTURE[0].tools);
    expect(body.data.grades).toBeDefined();
  });

  it('omits readme and tools when absent, and 404s an unknown slug in the envelope', async () => {
    const { body } = await getJson<Envelope<Server>>('/api/mcps/epsilon-nuget');
    expect(body.data).not.toHaveProperty('readme');
    expect(body.data).not.toHaveProperty('tools');
    const missing = await getJson<{ success: boolean; error: { code: string } }>('/api/mcps/no-such-server');
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ success: false, error: { code: 'NOT_FOUND', message: expect.any(String) } });
  });
});

describe('GET /api/search', () => {
  it('ranks a name/description hit above a README-only hit and echoes the trimmed query', async () => {
    const { body } = await getJson<Envelope<Server[]>>('/api/search?q=%20postgres%20');
    expect(body.data.map((s) => s.slug)).toEqual(['alpha-db', 'delta-docker']);
    expect(body.meta?.search).toEqual({ query: 'postgres' });
    expect(body.meta?.pagination).toEqual({ page: 1, limit: 24, total: 2, totalPages: 1, hasMore: false });
  });

  it('searches README text and tool names and descriptions', async () => {
    expect(await slugs('/api/search?q=zanzibar')).toEqual(['alpha-db']);
    expect(await slugs('/api/search?q=quokka_lookup')).toEqual(['beta-search']);
    // Words no server holds, nor any word one edit away (the fuzzy fallback would widen a typo).
    expect(await slugs('/api/search?q=xylophonic-zeppelin-quasar')).toEqual([]);
  });

  it('applies the shared filters and ignores sort whatever its value', async () => {
    expect(await slugs('/api/search?q=postgres&type=oci')).toEqual(['delta-docker']);
    expect(await slugs('/api/search?q=postgres&sort=not-a-sort&sort=twice')).toEqual(['alpha-db', 'delta-docker']);
  });

  it('refuses pages beyond the search window with 400 and a clear message', async () => {
    const { status, body } = await getJson<{ error: { code: string; details: Array<{ field: string; message: string }> } }>(
      '/api/search?q=postgres&page=101&limit=100',
    );
    expect(status).toBe(400);
    expect(body.error.code).toBe('INVALID_QUERY');
    expect(body.error.details[0].field).toBe('page');
  });
});

describe('GET /api/autocomplete', () => {
  it.each([
    ['com.al', ['alpha-db']],
    ['web', ['beta-search']],
    ['gamma%20c', ['gamma-remote']],
    ['COM.', ['alpha-db', 'zeta-mcpb', 'epsilon-nuget', 'delta-docker']],
    ['xyz', []],
  ])('prefix %s', async (q, expected) => {
    expect(await slugs(`/api/autocomplete?q=${q}`)).toEqual(expected);
  });

  it('returns slug, name, title and description, the name standing in for a missing title', async () => {
    const { body } = await getJson<Envelope<Array<Record<string, string>>>>('/api/autocomplete?q=io.github.beta');
    expect(body.data).toEqual([
      { slug: 'beta-search', name: 'io.github.beta/web-search', title: 'io.github.beta/web-search', description: 'Search the web with many engines' },
    ]);
    expect((await getJson<Envelope<unknown[]>>('/api/autocomplete?q=com&limit=2')).body.data).toHaveLength(2);
  });
});

describe('facets and slugs', () => {
  const categories = [
    { name: 'Cloud & DevOps', count: 2 },
    { name: 'Development & Coding', count: 2 },
    { name: 'AI & Machine Learning', count: 1 },
    { name: 'Data & Databases', count: 1 },
    { name: 'Knowledge & Memory', count: 1 },
    { name: 'Search & Web', count: 1 },
  ];
  const languages = ['C#', 'Go', 'Python', 'Rust', 'TypeScript'].map((name) => ({ name, count: 1 }));
  const licenses = [
    { name: 'MIT License', count: 2 },
    { name: 'Apache License 2.0', count: 1 },
    { name: 'GNU General Public License v3.0', count: 1 },
    { name: 'Other', count: 1 },
  ];

  it('counts categories, languages and licenses, most-used first', async () => {
    expect((await getJson<Envelope<unknown>>('/api/categories')).body.data).toEqual(categories);
    expect((await getJson<Envelope<unknown>>('/api/languages')).body.data).toEqual(languages);
    expect((await getJson<Envelope<unknown>>('/api/licenses')).body.data).toEqual(licenses);
    expect((await getJson<Envelope<unknown>>('/api/facets')).body.data).toEqual({ categories, languages, licenses });
  });

  it('lists every slug with its last-modified time, falling back to crawledAt', async () => {
    const { body } = await getJson<Envelope<Array<{ slug: string; updatedAt: string }>>>('/api/slugs');
    expect(body.data.map((s) => s.slug)).toEqual(['alpha-db', 'beta-search', 'delta-docker', 'epsilon-nuget', 'gamma-remote', 'zeta-mcpb']);
    expect(body.data.find((s) => s.slug === 'gamma-remote')?.updatedAt).toBe('2026-09-09T09:09:09.000Z');
    expect(body.data.find((s) => s.slug === 'alpha-db')?.updatedAt).toBe('2026-11-10T00:00:00.000Z');
  });
});

describe('GET /api/icons/{slug}', () => {
  it('serves the webp bytes with immutable caching and no rate-limit headers', async () => {
    const res = await cat.get('/api/icons/alpha-db');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/webp');
    expect(res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(res.headers.get('x-ratelimit-limit')).toBeNull();
    const bytes = Buffer.from(await res.arrayBuffer());
    expect(bytes.subarray(0, 4).toString()).toBe('RIFF');
    expect(bytes.subarray(8, 12).toString()).toBe('WEBP');
  });

  it('is a 404 in the JSON envelope when no icon is cached', async () => {
    const res = await cat.get('/api/icons/beta-search');
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ success: false, error: { code: 'NOT_FOUND', message: expect.any(String) } });
  });
});

describe('routing, CORS and errors', () => {
  it('answers an unknown path with 404 in the envelope', async () => {
    for (const path of ['/api/nope', '/api/mcps/a/b', '/api']) {
      const res = await cat.get(path);
      expect(res.status).toBe(404);
      expect(await res.json()).toEqual({ success: false, error: { code: 'NOT_FOUND', message: expect.any(String) } });
    }
  });

  it.each(['POST', 'PUT', 'PATCH', 'DELETE'])('answers %s with 405 and Allow: GET', async (method) => {
    for (const path of ['/api/mcps', '/api/mcps/alpha-db', '/api/v0.1/servers', '/api/icons/alpha-db', '/api/openapi.json']) {
      const res = await cat.get(path, { method, body: method === 'DELETE' ? undefined : '{}' });
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe('GET');
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('METHOD_NOT_ALLOWED');
    }
  });

  it('answers a CORS preflight with 204 and plain OPTIONS with 405', async () => {
    const pre = await cat.get('/api/search', { method: 'OPTIONS', headers: { origin: 'https://x.example', 'access-control-request-method': 'GET' } });
    expect(pre.status).toBe(204);
    expect(pre.headers.get('access-control-allow-origin')).toBe('*');
    expect(pre.headers.get('access-control-allow-methods')).toContain('GET');
    const plain = await cat.get('/api/search', { method: 'OPTIONS' });
    expect(plain.status).toBe(405);
  });

  it('exposes the rate-limit headers to browsers', async () => {
    const res = await cat.get('/api/facets');
    expect(res.headers.get('access-control-expose-headers')).toBe('X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, Retry-After');
  });

  it('serves /api/openapi.json raw (no envelope)', async () => {
    const res = await cat.get('/api/openapi.json');
    const doc = (await res.json()) as { openapi: string; info: { version: string } };
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe('1.0.0');
  });
});

describe('GET /api/mcps by uptime (its own catalog: two servers with check history, one of them down)', () => {
  let withHistory: TestCatalog;
  const history = (uptime: number, down: boolean) => ({
    uptime: { '24h': uptime, '7d': uptime, '30d': uptime },
    consecutiveFailures: down ? 3 : 0,
    down,
    checks: 10,
  });
  const HISTORY: Record<string, ReturnType<typeof history>> = { 'gamma-remote': history(99.5, false), 'epsilon-nuget': history(70, true) };
  beforeAll(async () => {
    withHistory = await startTestCatalog();
    await loadFixture(
      withHistory,
      FIXTURE.map((e) => (HISTORY[e.record.slug] ? { ...e, record: { ...e.record, healthHistory: HISTORY[e.record.slug] } } : e)),
    );
  });
  afterAll(async () => {
    await withHistory?.close();
  });
  const get = async (path: string) => {
    const res = await withHistory.get(path);
    return { status: res.status, body: (await res.json()) as Envelope<Server[]> & { error?: { code: string; details?: { field: string }[] } } };
  };

  it('sort=uptime puts the highest 30-day uptime first and servers without history last (by slug)', async () => {
    const { status, body } = await get('/api/mcps?sort=uptime');
    expect(status).toBe(200);
    expect(body.data.map((s) => s.slug)).toEqual(['gamma-remote', 'epsilon-nuget', 'alpha-db', 'beta-search', 'delta-docker', 'zeta-mcpb']);
    expect(body.data.slice(0, 2).map((s) => [s.uptime, s.down])).toEqual([
      [99.5, undefined],
      [70, true],
    ]);
  });

  it('uptimeMin keeps servers at or above it; up=true leaves out the server marked down', async () => {
    expect((await get('/api/mcps?uptimeMin=70')).body.data.map((s) => s.slug)).toEqual(['gamma-remote', 'epsilon-nuget']);
    expect((await get('/api/mcps?uptimeMin=99.6')).body.meta?.pagination).toMatchObject({ total: 0 });
    const up = await get('/api/mcps?up=true&sort=uptime');
    expect(up.body.data.map((s) => s.slug)).toEqual(['gamma-remote', 'alpha-db', 'beta-search', 'delta-docker', 'zeta-mcpb']);
    expect((await get('/api/mcps?up=false')).body.meta?.pagination).toMatchObject({ total: 6 });
    expect((await get('/api/search?q=postgres&uptimeMin=50')).body.meta?.pagination).toMatchObject({ total: 0 });
  });

  it.each(['uptimeMin=101', 'uptimeMin=-1', 'uptimeMin=1e2', 'uptimeMin=', 'uptimeMin=abc', 'up=yes', 'sort=uptimes'])(
    'refuses %s with INVALID_QUERY naming the parameter',
    async (query) => {
      const { status, body } = await get(`/api/mcps?${query}`);
      expect(status).toBe(400);
      expect(body.error?.code).toBe('INVALID_QUERY');
      expect(body.error?.details?.map((d) => d.field)).toEqual([query.split('=')[0]]);
    },
  );
});
