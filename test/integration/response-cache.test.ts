import { startTestCatalog, type TestCatalog } from '../support/catalog-harness';
import { docOf, makeRecord } from '../support/records';
import { loadFixture } from './catalog-fixture';

/** Cached responses never outlive the index content they were built from. */
let cat: TestCatalog;
beforeAll(async () => {
  cat = await startTestCatalog();
  await loadFixture(cat);
});
afterAll(() => cat?.close());

const body = async (path: string) => (await cat.get(path)).json() as Promise<{ data: unknown; meta?: { pagination: { total: number } } }>;

it('serves repeated reads identically and changes them as soon as the index changes', async () => {
  const first = await body('/api/mcps');
  expect(await body('/api/mcps')).toEqual(first);
  const facets = await body('/api/facets');
  expect(first.meta?.pagination.total).toBe(6);

  const added = makeRecord('omega-new', { name: 'com.omega/fresh', description: 'A brand new wombat server', categories: ['Security'], popularity: 0.99 });
  await cat.deps.index.upsert([docOf({ record: added })]);

  const after = await body('/api/mcps');
  expect(after.meta?.pagination.total).toBe(7);
  expect((after.data as Array<{ slug: string }>)[0].slug).toBe('omega-new');
  expect(await body('/api/facets')).not.toEqual(facets);
  expect(((await body('/api/search?q=wombat')).data as Array<{ slug: string }>).map((s) => s.slug)).toEqual(['omega-new']);

  await cat.deps.index.remove(['omega-new']);
  expect((await body('/api/mcps')).meta?.pagination.total).toBe(6);
});

it('keeps per-request headers per request on a cache hit', async () => {
  const slow = await startTestCatalog({ config: { anonymous: { rate: 1, burst: 1000 } } });
  try {
    await loadFixture(slow);
    const a = await slow.get('/api/categories');
    const b = await slow.get('/api/categories');
    expect(await b.json()).toEqual(await a.json());
    expect(Number(b.headers.get('x-ratelimit-remaining'))).toBe(Number(a.headers.get('x-ratelimit-remaining')) - 1);
    expect(b.headers.get('access-control-allow-origin')).toBe('*');
  } finally {
    await slow.close();
  }
});
