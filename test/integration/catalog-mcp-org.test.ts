import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { S3AllowListStore } from '../../lambdas/catalog-core';
import { ORG_BATCH } from '../../lambdas/catalog/mcp/org';
import { documentClient, dynamoClient, s3Client } from '../../lambdas/shared/aws/clients';
import { startTestCatalog, type TestCatalog } from '../support/catalog-harness';
import { makeRecord, type Entry } from '../support/records';
import { loadFixture } from './catalog-fixture';

/**
 * `search_servers { orgOnly }` and the organisation marks of the catalog tools, through the SDK's
 * client over HTTP, with the allow-list written to the catalog's S3 file as the admin API writes
 * it: only allowed servers, block over allow, pins on the hits, pages across the scan's batches
 * with neither duplicates nor gaps, the cursor bound to orgOnly; and without an allow-list, a
 * clear tool error.
 */

/** More hits than one batch of the scan, a third of them under the allowed pattern. */
const COUNT = ORG_BATCH + 50;
const pad = (i: number) => String(i).padStart(3, '0');
const nameOf = (i: number) => (i % 3 === 0 ? `org.scan/a-${pad(i)}` : `org.scan/b-${pad(i)}`);
const ENTRIES: Entry[] = Array.from({ length: COUNT }, (_, i) => ({
  record: makeRecord(`scan-${pad(i)}`, { name: nameOf(i), description: `Marsupial ledger helper ${i}`, popularity: 0.9 - i / 1000 }),
}));

const ALLOW_LIST = `allow:
  - org.scan/a-*
  - name: org.scan/a-003
    version: 1.2.3
  - name: org.scan/b-004
block:
  - org.scan/a-*9     # block wins over the pattern
  - org.scan/b-004    # and over an exact allow
`;
const allowed = (name: string) => name.startsWith('org.scan/a-') && !name.endsWith('9');
const EXPECTED = ENTRIES.map((e) => e.record.name).filter(allowed);

let cat: TestCatalog;
let bare: TestCatalog;
let store: S3AllowListStore;
const clients: Client[] = [];

beforeAll(async () => {
  // Refresh 0: every call reads the file (a conditional GET), so no test waits for a cache.
  [cat, bare] = await Promise.all([startTestCatalog({ config: { allowListRefreshSeconds: 0 } }), startTestCatalog()]);
  await Promise.all([loadFixture(cat, ENTRIES), loadFixture(bare, ENTRIES)]);
  const config = cat.config;
  const clientOpts = { region: config.region, dynamoEndpoint: config.dynamoEndpoint, s3Endpoint: config.s3Endpoint };
  store = new S3AllowListStore(() => s3Client(clientOpts), config.allowList, { doc: documentClient(dynamoClient(clientOpts)), table: config.rateLimitTable });
  await store.replace(ALLOW_LIST, 'application/yaml', { ifNoneMatch: '*' });
}, 120000);
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
  await store?.destroy();
  await Promise.all([cat?.close(), bare?.close()]);
});

async function connect(on: TestCatalog): Promise<Client> {
  const client = new Client({ name: 'catalog-mcp-org-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${on.url}/api/mcp`)));
  clients.push(client);
  return client;
}

// biome-ignore lint/suspicious/noExplicitAny: assertions read the structured content loosely
type Structured = Record<string, any>;

async function call(c: Client, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  return (await c.callTool({ name, arguments: args })) as CallToolResult;
}

async function ok(c: Client, name: string, args: Record<string, unknown>): Promise<{ s: Structured; text: string }> {
  const res = await call(c, name, args);
  if (res.isError) throw new Error(`${name} failed: ${JSON.stringify(res.structuredContent)}`);
  const text = res.content.find((b) => b.type === 'text');
  return { s: res.structuredContent as Structured, text: text?.type === 'text' ? text.text : '' };
}

async function toolError(c: Client, name: string, args: Record<string, unknown>): Promise<{ code: string; message: string }> {
  const res = await call(c, name, args);
  if (!res.isError) throw new Error(`${name} succeeded unexpectedly: ${JSON.stringify(res.structuredContent)}`);
  return (res.structuredContent as { error: { code: string; message: string } }).error;
}

/** Every page of a search, following nextCursor. */
async function allPages(c: Client, args: Record<string, unknown>): Promise<Structured[]> {
  const pages: Structured[] = [];
  let cursor: string | undefined;
  do {
    const { s } = await ok(c, 'search_servers', { ...args, ...(cursor && { cursor }) });
    pages.push(s);
    cursor = s.nextCursor;
  } while (cursor && pages.length < 100);
  return pages;
}

let c: Client;
beforeAll(async () => {
  c = await connect(cat);
});

test('orgOnly returns only the allowed servers, block winning over allow, with the pin', async () => {
  const { s, text } = await ok(c, 'search_servers', { query: 'marsupial', orgOnly: true, limit: 50 });
  const names = s.servers.map((h: Structured) => h.name);
  expect(names.length).toBeGreaterThan(0);
  for (const name of names) expect(allowed(name)).toBe(true);
  expect(names).not.toContain('org.scan/a-009');
  expect(names).not.toContain('org.scan/b-004');
  expect(s.total).toBe(EXPECTED.length);
  expect(s.ranked).toBe(COUNT);
  for (const h of s.servers) expect(h.allowedInOrg).toBe(true);
  const pinned = s.servers.find((h: Structured) => h.name === 'org.scan/a-003');
  expect(pinned.pinnedVersion).toBe('1.2.3');
  expect(s.servers.filter((h: Structured) => h.pinnedVersion !== undefined)).toHaveLength(1);
  expect(text).toContain(`${EXPECTED.length} servers match "marsupial" and are allowed in your organisation (among its ${COUNT} best matches)`);
  expect(text).toContain('pinned to 1.2.3');
});

test('orgOnly pages across the batches of the scan in rank order, with no duplicate and no gap', async () => {
  // The plain search's ranking, filtered: the order orgOnly must page in.
  const ranking = (await allPages(c, { query: 'marsupial', limit: 50 })).flatMap((p) => p.servers.map((h: Structured) => h.name as string));
  expect(ranking).toHaveLength(COUNT);
  const pages = await allPages(c, { query: 'marsupial', orgOnly: true, limit: 7 });
  const names = pages.flatMap((p) => p.servers.map((h: Structured) => h.name as string));
  expect(names).toEqual(ranking.filter(allowed));
  expect(pages).toHaveLength(Math.ceil(EXPECTED.length / 7));
  for (const p of pages) expect(p.total).toBe(EXPECTED.length);
  // Some page holds hits from both sides of a batch boundary.
  const rankOf = (n: string) => ranking.indexOf(n);
  expect(pages.some((p) => rankOf(p.servers[0].name) < ORG_BATCH && rankOf(p.servers[p.servers.length - 1].name) >= ORG_BATCH)).toBe(true);
  expect(pages[pages.length - 1].nextCursor).toBeUndefined();
});

test('a cursor of a search without orgOnly does not continue an orgOnly one, nor the other way', async () => {
  const plain = await ok(c, 'search_servers', { query: 'marsupial', limit: 5 });
  const err = await toolError(c, 'search_servers', { query: 'marsupial', orgOnly: true, limit: 5, cursor: plain.s.nextCursor });
  expect(err).toEqual({ code: 'invalid_argument', message: expect.stringMatching(/^cursor is not a cursor of this search/) });
  const org = await ok(c, 'search_servers', { query: 'marsupial', orgOnly: true, limit: 5 });
  const back = await toolError(c, 'search_servers', { query: 'marsupial', limit: 5, cursor: org.s.nextCursor });
  expect(back.code).toBe('invalid_argument');
});

test('with an allow-list, every hit and get_server say whether it is allowed, and the pin', async () => {
  const { s } = await ok(c, 'search_servers', { query: 'marsupial', limit: 10 });
  for (const h of s.servers) expect(h.allowedInOrg).toBe(allowed(h.name));
  expect(s.ranked).toBeUndefined();
  expect((await ok(c, 'get_server', { name: 'org.scan/a-003' })).s).toMatchObject({ allowedInOrg: true, pinnedVersion: '1.2.3' });
  const blocked = await ok(c, 'get_server', { name: 'org.scan/b-004' });
  expect(blocked.s.allowedInOrg).toBe(false);
  expect(blocked.s.pinnedVersion).toBeUndefined();
  expect(blocked.text).toContain('not allowed in your organisation');
});

test('without an allow-list, orgOnly is a clear tool error and hits carry no organisation marks', async () => {
  const other = await connect(bare);
  const err = await toolError(other, 'search_servers', { query: 'marsupial', orgOnly: true });
  expect(err).toEqual({ code: 'invalid_argument', message: 'orgOnly needs an organisation allow-list, and this deployment has none: search without orgOnly' });
  const { s } = await ok(other, 'search_servers', { query: 'marsupial', orgOnly: false, limit: 3 });
  expect(s.servers).toHaveLength(3);
  for (const h of s.servers) expect(h).not.toHaveProperty('allowedInOrg');
  expect((await ok(other, 'get_server', { name: 'org.scan/a-003' })).s).not.toHaveProperty('allowedInOrg');
});
