import { startTestCatalog, type TestCatalog } from '../support/catalog-harness';
import { loadFixture } from './catalog-fixture';

/**
 * Every parameter's wrong type, range, length, enum and duplicate, each answered with
 * 400 INVALID_QUERY naming the field, never a 500; unknown parameters are ignored.
 */
let cat: TestCatalog;
beforeAll(async () => {
  cat = await startTestCatalog();
  await loadFixture(cat);
});
afterAll(() => cat?.close());

const long = (n: number) => 'x'.repeat(n);

const BAD: Array<[string, string]> = [
  // /mcps
  ['/api/mcps?page=0', 'page'],
  ['/api/mcps?page=-1', 'page'],
  ['/api/mcps?page=1.5', 'page'],
  ['/api/mcps?page=abc', 'page'],
  ['/api/mcps?page=', 'page'],
  ['/api/mcps?page=1e3', 'page'],
  ['/api/mcps?page=99999999999999999999', 'page'],
  ['/api/mcps?page=1&page=2', 'page'],
  ['/api/mcps?limit=0', 'limit'],
  ['/api/mcps?limit=101', 'limit'],
  ['/api/mcps?limit=ten', 'limit'],
  ['/api/mcps?limit=10&limit=20', 'limit'],
  ['/api/mcps?type=docker', 'type'],
  ['/api/mcps?type=npm,docker', 'type'],
  ['/api/mcps?type=NPM', 'type'],
  ['/api/mcps?type=', 'type'],
  ['/api/mcps?type=npm,', 'type'],
  ['/api/mcps?category=Databases', 'category'],
  ['/api/mcps?category=data%20%26%20databases', 'category'],
  [`/api/mcps?language=${long(81)}`, 'language'],
  ['/api/mcps?language=', 'language'],
  ['/api/mcps?language=%20%20', 'language'],
  [`/api/mcps?license=${long(81)}`, 'license'],
  ['/api/mcps?license=', 'license'],
  [`/api/mcps?type=${Array(21).fill('npm').join(',')}`, 'type'],
  ['/api/mcps?sort=stars-asc', 'sort'],
  ['/api/mcps?sort=', 'sort'],
  ['/api/mcps?sort=name&sort=stars', 'sort'],
  ['/api/mcps?view=compact', 'view'],
  ['/api/mcps?view=card&view=full', 'view'],
  // /search
  ['/api/search', 'q'],
  ['/api/search?q=', 'q'],
  ['/api/search?q=%20%20%20', 'q'],
  [`/api/search?q=${long(101)}`, 'q'],
  ['/api/search?q=a&q=b', 'q'],
  ['/api/search?q=a&limit=0', 'limit'],
  ['/api/search?q=a&limit=101', 'limit'],
  ['/api/search?q=a&page=0', 'page'],
  ['/api/search?q=a&type=rust', 'type'],
  ['/api/search?q=a&category=x', 'category'],
  [`/api/search?q=a&language=${long(81)}`, 'language'],
  ['/api/search?q=a&view=x', 'view'],
  // /autocomplete
  ['/api/autocomplete', 'q'],
  ['/api/autocomplete?q=', 'q'],
  [`/api/autocomplete?q=${long(101)}`, 'q'],
  ['/api/autocomplete?q=a&limit=0', 'limit'],
  ['/api/autocomplete?q=a&limit=21', 'limit'],
  ['/api/autocomplete?q=a&limit=x', 'limit'],
  ['/api/autocomplete?q=a&limit=1&limit=2', 'limit'],
  // /v0.1/servers
  ['/api/v0.1/servers?limit=0', 'limit'],
  ['/api/v0.1/servers?limit=101', 'limit'],
  ['/api/v0.1/servers?limit=many', 'limit'],
  ['/api/v0.1/servers?updated_since=yesterday', 'updated_since'],
  ['/api/v0.1/servers?updated_since=2026-13-01T00:00:00Z', 'updated_since'],
  ['/api/v0.1/servers?updated_since=2026-11-01', 'updated_since'],
  ['/api/v0.1/servers?updated_since=2026-11-01T00:00:00', 'updated_since'],
  ['/api/v0.1/servers?cursor=', 'cursor'],
  [`/api/v0.1/servers?cursor=${long(201)}`, 'cursor'],
  ['/api/v0.1/servers?cursor=not-a-cursor', 'cursor'],
  ['/api/v0.1/servers?cursor=%00%01', 'cursor'],
  ['/api/v0.1/servers?search=', 'search'],
  [`/api/v0.1/servers?search=${long(101)}`, 'search'],
  ['/api/v0.1/servers?version=', 'version'],
  [`/api/v0.1/servers?version=${long(101)}`, 'version'],
  ['/api/v0.1/servers?limit=1&limit=2', 'limit'],
  // path parameters
  [`/api/mcps/${long(201)}`, 'slug'],
  [`/api/icons/${long(201)}`, 'slug'],
  ['/api/mcps/%20', 'slug'],
];

describe('bad input → 400 INVALID_QUERY with the field named', () => {
  it.each(BAD)('%s', async (path, field) => {
    const res = await cat.get(path);
    expect(res.status).toBe(400);
    const body = (await res.json()) as { success: boolean; error: { code: string; message: string; details: Array<{ field: string; message: string }> } };
    expect(body.success).toBe(false);
    expect(body.error.code).toBe('INVALID_QUERY');
    expect(body.error.details.map((d) => d.field)).toContain(field);
    for (const d of body.error.details) expect(d.message.length).toBeGreaterThan(0);
  });
});

describe('what is not an error', () => {
  it.each([
    '/api/mcps?unknown=1&another=x',
    '/api/mcps?page=1&utm_source=a&utm_source=b',
    '/api/mcps?limit=100&page=1',
    '/api/mcps?limit=1',
    '/api/mcps?page=%2B2',
    '/api/mcps?language=Klingon',
    '/api/mcps?license=WTFPL',
    `/api/mcps?language=${long(80)}`,
    '/api/search?q=a&sort=whatever',
    `/api/search?q=${long(100)}`,
    '/api/autocomplete?q=a&limit=20',
    '/api/v0.1/servers?version=1.2.3',
    '/api/v0.1/servers?version=latest',
    '/api/v0.1/servers?updated_since=2026-11-01T00:00:00%2B02:00',
    '/api/v0.1/servers?updated_since=2026-11-01T00:00:00.123Z',
    `/api/mcps/${long(200)}`,
  ])('%s', async (path) => {
    const res = await cat.get(path);
    expect([200, 404]).toContain(res.status);
    if (res.status === 404) expect(path).toMatch(/\/api\/mcps\/x+$/);
  });
});

describe('slugs no server can have', () => {
  // Control characters reach the handler decoded; S3 refuses them in a key, which was a 500.
  it.each(['/api/icons/%00', '/api/icons/a%0Ab', '/api/icons/%7F', '/api/mcps/%00', '/api/mcps/a%0Db'])('%s is a 404 in the envelope', async (path) => {
    const res = await cat.get(path);
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ success: false, error: { code: 'NOT_FOUND', message: expect.any(String) } });
  });
});

it('a bad category names every valid label, so a caller can correct it without the docs', async () => {
  const res = await cat.get('/api/mcps?category=Databases');
  expect(res.status).toBe(400);
  const body = (await res.json()) as { error: { details: Array<{ field: string; message: string }> } };
  const message = body.error.details.find((d) => d.field === 'category')?.message ?? '';
  for (const label of ['Development & Coding', 'Data & Databases', 'Browser & Automation', 'Knowledge & Memory', 'Other']) expect(message).toContain(label);
});
