import { DynamoCatalogStore, type CatalogDetail } from '../../lambdas/catalog-core';
import { randomBytes } from 'node:crypto';
import { DeleteTableCommand } from '@aws-sdk/client-dynamodb';
import { ensureTables, tableDefinitions } from '../../bin/local-stack/provision';
import { generateCatalog } from '../../bin/local-stack/synthetic';
import { documentClient, dynamoClient } from '../../lambdas/shared/aws/clients';

/**
 * The full-table read behind `npm run reindex`, the small-catalog snapshot and the seed, on
 * DynamoDB Local: a parallel scan of many segments, each of several 1 MB pages, gives back every
 * server exactly once with its README and tools, whatever the number of segments.
 */
jest.setTimeout(120_000);
const endpoint = process.env.TEST_DYNAMODB_ENDPOINT;
if (!endpoint) throw new Error('test backends are not running (jest globalSetup)');
const ddb = dynamoClient({ region: 'us-east-1', dynamoEndpoint: endpoint });
const table = `catalog-scan-${randomBytes(4).toString('hex')}`;
const store = new DynamoCatalogStore(documentClient(ddb), table);

// 240 servers; every third has a 40 KB README, so the table is about 3.5 MB and a segment of a
// few segments spans several pages, with partitions cut across page boundaries.
const servers: CatalogDetail[] = generateCatalog(240, { seed: 7 }).map((s, i) => ({
  record: s.record,
  ...(s.readme && { readme: i % 3 === 0 ? { ...s.readme, content: s.readme.content.padEnd(40_000, ' lorem') } : s.readme }),
  ...(s.tools && { tools: s.tools }),
}));
const bySlug = new Map(servers.map((s) => [s.record.slug, s]));

beforeAll(async () => {
  await ensureTables(ddb, [tableDefinitions({ catalog: table, rateLimits: `${table}-unused` })[0]]);
  await store.put(servers.map((s) => ({ record: s.record, readme: s.readme ?? null, tools: s.tools ?? null })));
});
afterAll(async () => {
  await ddb.send(new DeleteTableCommand({ TableName: table }));
  ddb.destroy();
});

async function scanned(opts: { segments?: number; concurrency?: number }): Promise<CatalogDetail[]> {
  const out: CatalogDetail[] = [];
  for await (const d of store.scanAll(opts)) out.push(d);
  return out;
}

it.each([
  ['one sequential scan', { segments: 1 }],
  ['3 segments, one at a time', { segments: 3, concurrency: 1 }],
  ['3 segments at once', { segments: 3, concurrency: 3 }],
  ['the default (64 segments, 4 at once)', {}],
])('%s: every server once, complete', async (_name, opts) => {
  const got = await scanned(opts);
  expect(got).toHaveLength(servers.length);
  expect(new Set(got.map((d) => d.record.slug)).size).toBe(servers.length);
  for (const d of got) expect(d).toEqual(bySlug.get(d.record.slug));
});

it('several segments, each of several pages (what the test above relies on)', async () => {
  const { ScanCommand } = await import('@aws-sdk/lib-dynamodb');
  const out = await documentClient(ddb).send(new ScanCommand({ TableName: table, Segment: 0, TotalSegments: 3 }));
  expect(out.LastEvaluatedKey).toBeDefined();
  expect(out.Items?.length).toBeGreaterThan(0);
});

it('a reader that stops early stops the scan: no more pages are read, nothing hangs', async () => {
  const seen: string[] = [];
  for await (const d of store.scanAll({ segments: 8, concurrency: 4 })) {
    seen.push(d.record.slug);
    if (seen.length === 5) break;
  }
  expect(seen).toHaveLength(5);
  expect(seen.every((s) => bySlug.has(s))).toBe(true);
});
