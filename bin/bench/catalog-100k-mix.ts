import { embeddedSearchIndex } from '../../lambdas/catalog-core';
import { createCatalogDeps } from '../../lambdas/catalog/wiring';
import { generateCatalog, toSearchDocument } from '../local-stack/synthetic';
import { handlerLatencyRows, startBenchBackends } from './catalog';
import { catalogListMix, catalogQueryMix } from './catalog-mix';
import { ms, type BenchSection } from './stats';

const COUNT = 100_000;

/**
 * Handler latency per endpoint at 100,000 servers over a varied query mix (issue 29): each case
 * cycles over many distinct URLs of its endpoint (pages, sorts, filters, searches), so no answer is
 * a repeat of the last one and the response cache is off. The catalog is generated and indexed in
 * this process (the `catalog-100k` section does the same through the CLIs and a snapshot, and takes
 * most of an hour for the seed).
 */
export async function runCatalog100kMixBench(log: (m: string) => void): Promise<BenchSection> {
  const backends = await startBenchBackends('bench-catalog-100k-mix-', { responseCacheEntries: 0 });
  const { config } = backends;
  try {
    log(`generating and indexing ${COUNT} synthetic servers`);
    const started = performance.now();
    const servers = generateCatalog(COUNT);
    const index = embeddedSearchIndex({});
    await index.replaceAll(servers.map(toSearchDocument));
    await index.facets();
    const built = performance.now() - started;
    const mix = catalogQueryMix(servers);
    const of = (prefix: string) => mix.urls.filter((u) => u.startsWith(prefix));
    // Deeper pages of every sort and category as well as the mix's own list and filter pages.
    const lists = [...of('/api/mcps?'), ...catalogListMix(1260)];
    const groups: Array<[string, string[]]> = [
      ['/mcps: pages, sorts, filters', lists],
      ['/search: words, pairs, filters, pages', of('/api/search?')],
      ['/autocomplete: prefixes', of('/api/autocomplete?')],
      ['/v0.1/servers: searches, first pages', of('/api/v0.1/servers?')],
      ['/facets, /categories, /languages, /licenses', ['/api/facets', '/api/categories', '/api/languages', '/api/licenses']],
    ];
    const cases = groups.map(([name, urls]) => ({
      name: `${name} (${urls.length} URLs in turn)`,
      make: (i: number): [string, string] => {
        const [p, q = ''] = urls[(i * 7919) % urls.length].split('?');
        return [p, q];
      },
    }));
    const deps = await createCatalogDeps(config, index);
    const rows: BenchSection['rows'] = [[`generate and index ${COUNT.toLocaleString('en-US')} servers in-process`, ms(built), '', '']];
    rows.push(...(await handlerLatencyRows(deps, cases, log)));
    return {
      title: 'Catalog handler latency at 100,000 servers, a varied query mix per endpoint',
      method: [
        `- Data: \`generateCatalog(${COUNT})\` (deterministic) indexed in this process by the embedded engine; rate-limit buckets in DynamoDB Local.`,
        "- Cases: one per endpoint, each cycling (a stride of 7,919 through its list, so consecutive requests differ) over distinct URLs: for `/mcps` the query mix's list and filter pages (every sort, filters alone and combined, pages up to 20) and pages 1-14 of every sort unfiltered and by each category; for `/search` the mix's searches (single words, pairs, some with a category filter, some past page 1); its autocomplete prefixes; its registry-feed pages (first pages, most with `search`); the four facet endpoints in turn. Each row names how many distinct URLs its case cycles over. The response cache is off, so every request validates, queries and serialises.",
        '- As in "Catalog API": `handleCatalogRequest` in-process, 200 warm-up requests then 3,000 timed (`performance.now()`) per case, the real limiter at the spec\'s anonymous limit over 100 client IPs per case (every 6th request of a caller takes a lease from DynamoDB Local, concurrently).',
      ].join('\n'),
      rows,
    };
  } finally {
    await backends.close();
  }
}
