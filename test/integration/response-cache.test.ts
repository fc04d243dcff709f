import { dynamoClient } from '../../lambdas/shared/aws/clients';
import { DynamoTokenBuckets } from '../../lambdas/shared/rate-limit/dynamo-rate-limiter';
import { LeasingRateLimiter } from '../../lambdas/shared/rate-limit/rate-limiter';
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
  // A clock held still (from the real time: DynamoDB Local expires bucket items by their TTL): a
  // second of load between the two requests would refill the token the second one spends.
  const frozen = Date.now();
  const clock = () => frozen;
  const ddb = dynamoClient({ region: 'us-east-1', dynamoEndpoint: process.env.TEST_DYNAMODB_ENDPOINT });
  slow.deps.limiter = new LeasingRateLimiter(new DynamoTokenBuckets(ddb, slow.config.rateLimitTable, clock), { ...slow.config.rateLimiter, clock });
  try {
    await loadFixture(slow);
    const a = await slow.get('/api/categories');
    const b = await slow.get('/api/categories');
    expect(await b.json()).toEqual(await a.json());
    expect(Number(b.headers.get('x-ratelimit-remaining'))).toBe(Number(a.headers.get('x-ratelimit-remaining')) - 1);
    expect(b.headers.get('access-control-allow-origin')).toBe('*');
  } finally {
    await slow.close();
    ddb.destroy();
  }
});

describe('the cache answers, and forgets at the right moments', () => {
  it('serves a repeated index read without touching the index, and reads it again after a write', async () => {
    const list = jest.spyOn(cat.deps.index, 'list');
    const facets = jest.spyOn(cat.deps.index, 'facets');
    try {
      await body('/api/mcps?limit=3');
      await body('/api/mcps?limit=3');
      await body('/api/mcps?limit=3');
      expect(list).toHaveBeenCalledTimes(1);
      await body('/api/facets');
      await body('/api/facets');
      expect(facets).toHaveBeenCalledTimes(1);
      // Another query string is another entry.
      await body('/api/mcps?limit=4');
      expect(list).toHaveBeenCalledTimes(2);

      await cat.deps.index.upsert([docOf({ record: makeRecord('cache-buster', { name: 'com.cache/buster', popularity: 0.01 }) })]);
      await body('/api/mcps?limit=3');
      expect(list).toHaveBeenCalledTimes(3);
      await cat.deps.index.remove(['cache-buster']);
    } finally {
      list.mockRestore();
      facets.mockRestore();
    }
  });

  it('forgets what it cached when another writer changes the snapshot this instance reads', async () => {
    const { mkdtempSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { embeddedSearchIndex } = await import('../../lambdas/catalog-core');
    const { createCatalogDeps } = await import('../../lambdas/catalog/wiring');
    const { handleCatalogRequest } = await import('../../lambdas/catalog/api');
    const snapshotPath = join(mkdtempSync(join(tmpdir(), 'cache-snapshot-')), 'search.json');
    const writer = embeddedSearchIndex({ snapshotPath });
    await writer.replaceAll([docOf({ record: makeRecord('first', { name: 'com.first/one' }) })]);
    const reader = embeddedSearchIndex({ snapshotPath });
    const deps = await createCatalogDeps({ ...cat.deps.config, responseCacheEntries: 16 }, reader);
    const event = (path: string) =>
      ({
        version: '2.0',
        routeKey: `GET ${path}`,
        rawPath: path,
        rawQueryString: '',
        headers: {},
        requestContext: { http: { method: 'GET', path, sourceIp: '198.51.100.1' }, requestId: 'r' },
      }) as never;
    const slugs = async () =>
      (JSON.parse((await handleCatalogRequest(event('/api/slugs'), deps, 'r')).body as string) as { data: Array<{ slug: string }> }).data.map((s) => s.slug);
    const calls = jest.spyOn(reader, 'slugs');
    expect(await slugs()).toEqual(['first']);
    expect(await slugs()).toEqual(['first']);
    expect(calls).toHaveBeenCalledTimes(1);
    await writer.upsert([docOf({ record: makeRecord('second', { name: 'com.second/two' }) })]);
    await reader.refresh();
    expect((await slugs()).sort()).toEqual(['first', 'second']);
    expect(calls).toHaveBeenCalledTimes(2);
  });
});
