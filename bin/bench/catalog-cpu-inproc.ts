import { CATEGORIES, REGISTRY_TYPES } from '../../lambdas/catalog-core';
import { handleCatalogRequest, responseCacheOf } from '../../lambdas/catalog/api';
import type { CatalogConfig } from '../../lambdas/catalog/config';
import type { CatalogDeps } from '../../lambdas/catalog/deps';
import { dynamoClient } from '../../lambdas/shared/aws/clients';
import { DynamoTokenBuckets } from '../../lambdas/shared/rate-limit/dynamo-rate-limiter';
import { event } from './catalog';
import { LANGUAGES } from '../local-stack/synthetic';
import { ms, summarize, verdict, type BenchSection } from './stats';

const SORTS = ['popularity', 'name', 'stars', 'updated', 'downloads', 'trending'];
const KNOWN = '198.51.100.7';

/** CPU ms (user + system) of one awaited call, this process. */
async function cpuOf(fn: () => Promise<unknown>): Promise<number> {
  const before = process.cpuUsage();
  await fn();
  const d = process.cpuUsage(before);
  return (d.user + d.system) / 1000;
}

async function get(deps: CatalogDeps, query: string): Promise<void> {
  const res = await handleCatalogRequest(event('/api/mcps', query, KNOWN), deps, 'bench');
  if (res.statusCode !== 200) throw new Error(`${query}: ${res.statusCode} ${res.body}`);
}

/**
 * CPU of a sort and filter combination this index has never been asked (type × category × sort,
 * 504 of them), through the whole handler with the response cache off; after a warm-up on
 * combinations of other fields (language × license), so the JIT is warm and nothing is reused.
 */
export async function comboCpuRows(deps: CatalogDeps, log: (m: string) => void): Promise<BenchSection['rows']> {
  for (const language of LANGUAGES.slice(0, 8))
    for (const license of ['MIT', 'Apache-2.0', 'GPL-3.0'])
      for (const sort of SORTS) await get(deps, `language=${encodeURIComponent(language)}&license=${license}&sort=${sort}`);
  const samples: number[] = [];
  for (const type of REGISTRY_TYPES)
    for (const category of CATEGORIES)
      for (const sort of SORTS) samples.push(await cpuOf(() => get(deps, `type=${type}&category=${encodeURIComponent(category)}&sort=${sort}`)));
  const s = summarize(samples);
  log(`never-seen combination: p50 ${ms(s.p50)} p99 ${ms(s.p99)} CPU`);
  return [
    [
      `a sort and filter combination never asked before (type × category × sort, ${samples.length}), whole handler, cache off: CPU p50 / p99`,
      `${ms(s.p50)} / ${ms(s.p99)}`,
      'p50 < 1 ms',
      verdict(s.p50 < 1),
    ],
  ];
}

/**
 * What the response cache holds for the list mix: the cache's own count of bytes per entry, against
 * the body's characters and UTF-8 bytes, and how many such entries the configured bound admits.
 */
export async function cacheSizingRows(deps: CatalogDeps, urls: readonly string[], bodies: readonly number[]): Promise<BenchSection['rows']> {
  for (const u of urls) await get(deps, u.slice(u.indexOf('?') + 1));
  const cache = responseCacheOf(deps);
  if (!cache) return [['response cache', 'off', '', '']];
  const { entries, bytes } = cache.size;
  const meanBody = bodies.reduce((a, b) => a + b, 0) / bodies.length;
  const perEntry = bytes / Math.max(1, entries);
  const bound = deps.config.responseCacheMb * 2 ** 20;
  return [
    [
      `response cache after the ${urls.length} list URLs: entries held / bytes counted / bytes per entry (body: mean ${(meanBody / 1024).toFixed(1)} KiB UTF-8)`,
      `${entries} / ${(bytes / 2 ** 20).toFixed(1)} MiB / ${(perEntry / 1024).toFixed(1)} KiB`,
      `all ${urls.length}`,
      verdict(entries === urls.length),
    ],
    [
      `  list pages of that size the configured bound holds (RESPONSE_CACHE_MB=${deps.config.responseCacheMb}, RESPONSE_CACHE_ENTRIES=${deps.config.responseCacheEntries})`,
      `${Math.min(deps.config.responseCacheEntries, Math.floor(bound / perEntry)).toLocaleString('en-US')}`,
      '',
      '',
    ],
  ];
}

/**
 * A new caller's first request against a known caller's on the request path itself: the handler's
 * wall time in-process (cache on, both answered from it), alternating, 10 ms apart so the take a
 * new caller started in the background has settled before the next request. Over HTTP on this
 * machine the same comparison also carries DynamoDB Local answering that take on the same two
 * cores as the client and the server (in AWS the table is not on the function's CPU).
 */
export async function newCallerRows(deps: CatalogDeps, urls: readonly string[]): Promise<{ fresh: number[]; known: number[] }> {
  const fresh: number[] = [];
  const known: number[] = [];
  const time = async (query: string, ip: string) => {
    const started = performance.now();
    const res = await handleCatalogRequest(event('/api/mcps', query, ip), deps, 'bench');
    const took = performance.now() - started;
    if (res.statusCode !== 200) throw new Error(`${query}: ${res.statusCode}`);
    await new Promise((r) => setTimeout(r, 10));
    return took;
  };
  for (const u of urls.slice(0, 50)) await time(u.slice(u.indexOf('?') + 1), KNOWN);
  for (let i = 0; i < 600; i++) {
    const q = urls[i % 50].slice(urls[i % 50].indexOf('?') + 1);
    fresh.push(await time(q, `10.78.${(i >> 8) & 255}.${i & 255}`));
    known.push(await time(q, KNOWN));
  }
  return { fresh, known };
}

/**
 * What one lease take costs the function itself (the AWS SDK call to the rate-limit table:
 * middleware, signing, its timers, the node:http client, the answer decoded), against DynamoDB
 * Local: the table's own work is in its process. With the load's raised limits every caller's lease
 * lives its one-second minimum, so each of `callers` takes about once a second whatever the request
 * rate: a fixed cost per second, which per request is `callers × take CPU / req/s`.
 */
export async function takeCpuRows(config: CatalogConfig, callers: number, rps: number): Promise<BenchSection['rows']> {
  const client = dynamoClient({ region: config.region, dynamoEndpoint: config.dynamoEndpoint, s3Endpoint: config.s3Endpoint });
  try {
    const buckets = new DynamoTokenBuckets(client, config.rateLimitTable, Date.now, { batch: config.rateBatchTakes });
    const policy = { name: 'bench-take', ratePerSecond: 1_000_000, burst: 1_000_000 };
    const lease = 100_000;
    let key = 0;
    const perTake = async (concurrency: number, count: number): Promise<number> => {
      const before = process.cpuUsage();
      for (let i = 0; i < count / concurrency; i++)
        await Promise.all(Array.from({ length: concurrency }, () => buckets.take(`bench-take-${key++ % callers}`, policy, lease)));
      const d = process.cpuUsage(before);
      return (d.user + d.system) / 1000 / count;
    };
    await perTake(4, 200);
    const one = await perTake(1, 400);
    const four = await perTake(4, 400);
    return [
      [
        "the limiter's lease take, CPU in the function per call (the SDK and its HTTP client; the table's work is DynamoDB Local's): one at a time / 4 at once",
        `${ms(one)} / ${ms(four)}`,
        '',
        'informational',
      ],
      [
        `  its share of the cached run: ${callers} callers' leases last 1 s at the raised limits, so about ${callers} takes a second at ${rps.toFixed(0)} req/s`,
        `${ms((callers * four) / rps)} per request (4 at once) to ${ms((callers * one) / rps)} (one at a time)`,
        '',
        'informational',
      ],
    ];
  } finally {
    client.destroy();
  }
}
