import { CachedAllowList, S3AllowListStore } from '../../lambdas/catalog-core';
import { documentClient, dynamoClient, s3Client } from '../../lambdas/shared/aws/clients';
import { startTestSite, type TestSite } from '../support/site-harness';

/**
 * The "allowed in your organisation" badge: on the cards of the list, search and home pages and on
 * the detail page (with the pin), for the servers the allow-list allows, read from the S3 file
 * through the same cache the organisation registry uses; no badge anywhere without an allow-list.
 */
const BADGE = 'Allowed in your organisation';
let site: TestSite;
let plain: TestSite;
let store: S3AllowListStore;
let allowed: { slug: string; name: string };
let other: { slug: string; name: string };

const page = async (t: TestSite, path: string) => {
  const res = await t.get(path);
  expect(res.status).toBe(200);
  return res.text();
};
/** The card of a server on a list page: from its link to the end of its list item. */
const cardOf = (htmlText: string, slug: string) => {
  const at = htmlText.indexOf(`href="/servers/${slug}"`);
  expect(at).toBeGreaterThan(-1);
  const end = htmlText.indexOf('<li class="card">', at);
  return htmlText.slice(htmlText.lastIndexOf('<li class="card">', at), end < 0 ? undefined : end);
};

beforeAll(async () => {
  let cache: CachedAllowList | undefined;
  site = await startTestSite({ seed: 12, allowList: { current: () => (cache as CachedAllowList).current() } });
  plain = await startTestSite({ seed: 12 });
  const config = site.config;
  const clientOpts = { region: config.region, dynamoEndpoint: config.dynamoEndpoint, s3Endpoint: config.s3Endpoint };
  store = new S3AllowListStore(() => s3Client(clientOpts), config.allowList, { doc: documentClient(dynamoClient(clientOpts)), table: config.rateLimitTable });
  cache = new CachedAllowList(store, 0);
  const all = (await site.catalog.index.list({ filters: {}, sort: 'name', page: { offset: 0, limit: 12 } })).items;
  [allowed, other] = [all[0], all[1]];
  await store.replace(`allow:\n  - name: ${allowed.name}\n    version: 9.9.9\n`, 'application/yaml', { ifNoneMatch: '*' });
});
afterAll(async () => {
  await site?.close();
  await plain?.close();
  await store?.destroy();
});

test('list, search and home pages badge the allowed server only', async () => {
  const list = await page(site, '/servers?sort=name');
  expect(cardOf(list, allowed.slug)).toContain(BADGE);
  expect(cardOf(list, other.slug)).not.toContain(BADGE);
  expect(list.split(BADGE)).toHaveLength(2);
  const found = await page(site, `/search?q=${encodeURIComponent(allowed.name.split('/')[1])}`);
  expect(cardOf(found, allowed.slug)).toContain(BADGE);
  expect(await page(site, '/')).toContain(BADGE);
});

test('the detail page badges the allowed server with its pin, and not another', async () => {
  expect(await page(site, `/servers/${allowed.slug}`)).toContain(`${BADGE} (pinned to 9.9.9)`);
  expect(await page(site, `/servers/${other.slug}`)).not.toContain(BADGE);
});

test('without an allow-list no page shows the badge', async () => {
  for (const path of ['/', '/servers?sort=name', `/servers/${allowed.slug}`]) expect(await page(plain, path)).not.toContain(BADGE);
});
