import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadAuthConfig } from '../../lambdas/identity/config';
import { LocalIssuer } from '../../lambdas/identity/local-issuer';
import { createTokenVerifier } from '../../lambdas/identity/verifier';
import { handleMemoryRequest } from '../../lambdas/memory-api/api';
import { loadMemoryApiConfig, type MemoryApiConfig } from '../../lambdas/memory-api/config';
import { createMemoryApiDeps } from '../../lambdas/memory-api/wiring';
import { createMemoryRuntime, ImmutableCache, memoryTableDefinitions } from '../../lambdas/memory';
import { dynamoClient, s3Client } from '../../lambdas/shared/aws/clients';
import { parseKeyRing } from '../../lambdas/shared/cursor';
import type { HttpEvent, HttpResult } from '../../lambdas/shared/http/types';
import { sharedLimiter } from '../../lambdas/shared/rate-limit/leasing-config';
import { startDynamoLocal, startS3Server } from '../local-stack/backends';
import { localCatalogConfig, provision } from '../local-stack/catalog-env';
import { dataDir } from '../local-stack/data-dir';
import { ensureBuckets, ensureTables } from '../local-stack/provision';
import { runMemoryScale } from './memory-scale';
import { ms, summarize, verdict, timeEach, type BenchSection } from './stats';
import { countsOf, fetchedTwice, oneWave, onlyKinds, storageLog, type StorageCall } from './storage-log';
import { noise } from '../../test/support/noise';

/**
 * `npm run bench -- memory`: the `/v1` handler in-process (real verifier with an RS256 token, the
 * shared DynamoDB rate limiter, the memory core on DynamoDB Local and the loopback S3 server) over a
 * 1,000-note memory; latency per operation and the storage calls of each, counted by SDK middleware;
 * then memories of 1,000 to 50,000 notes on fresh instances (`memory-scale.ts`). `MEMORY_BENCH_SIZES`
 * (comma-separated) picks other sizes for a quick run.
 */
const NOTES = 1000;
/** The memory whose export crosses the inline limit. */
const LARGE_NOTES = 1200;

/**
 * Wall time of `fn` and the highest RSS while it ran, above the RSS before it: sampled every 5 ms,
 * and the process's own maximum when `fn` set a new one (a synchronous stretch the timer missed).
 */
async function peakDuring<T>(fn: () => Promise<T>): Promise<{ result: T; ms: number; peakBytes: number }> {
  const before = process.memoryUsage().rss;
  const maxBefore = process.resourceUsage().maxRSS * 1024;
  let peak = before;
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 5);
  const t = performance.now();
  try {
    const result = await fn();
    const elapsed = performance.now() - t;
    const maxAfter = process.resourceUsage().maxRSS * 1024;
    if (maxAfter > maxBefore) peak = Math.max(peak, maxAfter);
    return { result, ms: elapsed, peakBytes: Math.max(0, peak - before) };
  } finally {
    clearInterval(timer);
  }
}
const ISSUER = 'http://bench.local';
const AUDIENCE = `${ISSUER}/mcp`;

function event(method: string, path: string, query: string, headers: Record<string, string>, body?: string): HttpEvent {
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: path,
    rawQueryString: query,
    headers,
    requestContext: {
      accountId: 'bench',
      apiId: 'bench',
      domainName: 'localhost',
      domainPrefix: 'localhost',
      http: { method, path, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'bench' },
      requestId: 'bench',
      routeKey: '$default',
      stage: '$default',
      time: '',
      timeEpoch: 0,
    },
    body,
    isBase64Encoded: false,
  };
}

const WORDS = ['apples', 'pears', 'kubernetes', 'memory', 'notes', 'design', 'budget', 'latency', 'search', 'history'];

function noteText(i: number): string {
  const w = (k: number) => WORDS[(i * 7 + k) % WORDS.length];
  // A link to the next note by file name, so the link graph has an edge per note (the last one's dangles).
  return `---\ntags: [area-${i % 10}]\n---\n# Note ${i}\n\nA note about ${w(0)} and ${w(1)}, with ${w(2)} #t${i % 5}.\n\n${`Body line ${i} on ${w(3)}. `.repeat(8)}\n\n## Next\n\nSee [[note-${i + 1}]].\n`;
}

const fmtCalls = (calls: readonly StorageCall[]): string =>
  Object.entries(countsOf(calls))
    .sort()
    .map(([k, v]) => `${v} ${k}`)
    .join(', ') || 'none';

/** Exactly these calls and no other kind: e.g. `{ 'dynamodb.GetItem': 1 }`. */
const exactly = (calls: readonly StorageCall[], expected: Record<string, number>): boolean => {
  const got = countsOf(calls);
  return Object.keys({ ...got, ...expected }).every((k) => got[k] === expected[k]);
};

export async function runMemoryBench(log: (m: string) => void): Promise<BenchSection> {
  const tmp = mkdtempSync(join(tmpdir(), 'memory-bench-'));
  const [ddb, s3] = await Promise.all([startDynamoLocal({}), startS3Server({ dir: join(tmp, 's3'), buckets: [] })]);
  try {
    const keys = join(tmp, 'keys.json');
    writeFileSync(keys, JSON.stringify({ current: { id: 1, secret: randomBytes(32).toString('base64') } }));
    const catalogConfig = localCatalogConfig(dataDir(tmp), ddb.endpoint, s3.endpoint);
    await provision(catalogConfig, { auth: false });
    const base = loadMemoryApiConfig({});
    const config: MemoryApiConfig = {
      ...base,
      // Not a benchmark of the limit: raised so every request is served (DECISIONS).
      rateLimit: 1_000_000,
      rateLimitTable: catalogConfig.rateLimitTable,
      cursorKeysFile: keys,
      memory: {
        ...base.memory,
        region: catalogConfig.region,
        dynamoEndpoint: ddb.endpoint,
        s3Endpoint: s3.endpoint,
        memoryTable: 'bench-memories',
        memoryBucket: 'bench-memories',
      },
    };
    const admin = {
      d: dynamoClient({ region: config.memory.region, dynamoEndpoint: ddb.endpoint }),
      s: s3Client({ region: config.memory.region, s3Endpoint: s3.endpoint }),
    };
    await ensureTables(admin.d, memoryTableDefinitions({ memories: config.memory.memoryTable }));
    await ensureBuckets(admin.s, [config.memory.memoryBucket]);

    const issuer = LocalIssuer.loadOrCreate(join(tmp, 'issuer.json'), ISSUER);
    const jwks = JSON.stringify(issuer.jwks());
    const verifier = createTokenVerifier(loadAuthConfig({ AUTH_MODE: 'local', AUTH_ISSUER: ISSUER, AUTH_AUDIENCE: AUDIENCE }), {
      fetchImpl: async () => new Response(jwks, { headers: { 'content-type': 'application/json' } }),
    });
    const token = issuer.signAccessToken({ sub: 'bench', scope: 'memory:read memory:write', ttlSeconds: 3600, audience: AUDIENCE });
    const auth = { authorization: `Bearer ${token}` };
    // The limiter on a client of its own, so the counter below sees the operation's calls only.
    const limiter = sharedLimiter(dynamoClient({ region: config.memory.region, dynamoEndpoint: ddb.endpoint }), config.rateLimitTable, config.rateLimiter);
    const ring = parseKeyRing(JSON.stringify({ current: { id: 1, secret: randomBytes(32).toString('base64') } }));
    const runtime = createMemoryRuntime(config.memory, ring, { overrides: { cache: new ImmutableCache(256 * 1024 * 1024) } });
    const deps = await createMemoryApiDeps(config, verifier, { runtime, limiter });
    const counter = storageLog({ s3: runtime.s3, dynamodb: runtime.dynamodb });
    const call = async (method: string, path: string, query = '', body?: unknown): Promise<HttpResult> => {
      const headers: Record<string, string> = { ...auth, ...(body !== undefined && { 'content-type': 'application/json' }) };
      const res = await handleMemoryRequest(event(method, path, query, headers, body === undefined ? undefined : JSON.stringify(body)), deps, 'bench');
      if (res.statusCode >= 300) throw new Error(`${method} ${path}?${query}: ${res.statusCode} ${res.body}`);
      return res;
    };

    log(`seeding a memory of ${NOTES} notes`);
    const caller = { account: 'bench' };
    await runtime.service.createMemory(caller, 'big');
    const paths = Array.from({ length: NOTES }, (_, i) => `area-${i % 10}/topic-${i % 37}/note-${i}.md`);
    await runtime.service.importNotes(
      caller,
      'big',
      paths.map((path, i) => ({ path, markdown: noteText(i) })),
    );

    const rows: BenchSection['rows'] = [];
    const calls: Array<[string, StorageCall[], string, boolean]> = [];

    // Cold: a fresh instance (its own clients and an empty cache), as a new Lambda instance would be;
    // the seeding instance's cache holds every object it wrote.
    log('cold requests on a fresh instance');
    const coldRuntime = createMemoryRuntime(config.memory, ring, { overrides: { cache: new ImmutableCache(256 * 1024 * 1024) } });
    const coldDeps = { ...deps, service: coldRuntime.service };
    const coldCounter = storageLog({ s3: coldRuntime.s3, dynamodb: coldRuntime.dynamodb });
    const coldCall = async (path: string, query = ''): Promise<HttpResult> => {
      const res = await handleMemoryRequest(event('GET', path, query, auth), coldDeps, 'bench');
      if (res.statusCode >= 300) throw new Error(`GET ${path}?${query}: ${res.statusCode} ${res.body}`);
      return res;
    };
    const coldRead = await coldCounter.record(() => coldCall(`/v1/memories/big/notes/${paths[500]}`));
    const cr = countsOf(coldRead.calls);
    calls.push([
      'read, cold (fresh instance)',
      coldRead.calls,
      '≤ 1 GetItem + 2 GetObject, nothing else',
      (cr['dynamodb.GetItem'] ?? 0) <= 1 && (cr['s3.GetObject'] ?? 0) <= 2 && onlyKinds(coldRead.calls, ['dynamodb.GetItem', 's3.GetObject']),
    ]);
    const t0 = performance.now();
    const coldSearch = await coldCounter.record(() => coldCall('/v1/memories/big/search', 'q=kubernetes&limit=20'));
    const coldSearchMs = performance.now() - t0;
    const cs = countsOf(coldSearch.calls);
    const twice = fetchedTwice(coldSearch.calls);
    calls.push([
      'search, first of an instance (the index and the segments of packed texts it names, never a note)',
      coldSearch.calls,
      `1 GetItem + ≤ ${NOTES} GetObject, no object twice, nothing else`,
      cs['dynamodb.GetItem'] === 1 &&
        (cs['s3.GetObject'] ?? 0) <= NOTES &&
        twice.length === 0 &&
        onlyKinds(coldSearch.calls, ['dynamodb.GetItem', 's3.GetObject']),
    ]);
    // DESIGN.md's own budget for the same request: a handful of fetches, not one per note (at 10,000
    // notes at most 10 GetObject); measured here at 1,000 notes, where it holds a fortiori.
    calls.push([
      'search, first of an instance: object fetches against the DESIGN budget',
      coldSearch.calls.filter((c) => c.call === 's3.GetObject'),
      '≤ 10 GetObject (a handful, not one per note)',
      (cs['s3.GetObject'] ?? 0) <= 10,
    ]);
    const again = await coldCounter.record(() => coldCall('/v1/memories/big/search', 'q=design&limit=20'));
    calls.push(['search, second of that instance (other query)', again.calls, '1 GetItem', exactly(again.calls, { 'dynamodb.GetItem': 1 })]);
    coldCounter.detach();
    coldRuntime.s3.destroy();
    coldRuntime.dynamodb.destroy();

    log('warm reads, listings, searches, writes');
    const read = await timeEach(300, (i) => call('GET', `/v1/memories/big/notes/${paths[(i * 13) % NOTES]}`));
    const list = await timeEach(100, () => call('GET', '/v1/memories/big/notes', 'depth=all&type=file&limit=200'));
    const search = await timeEach(50, (i) => call('GET', '/v1/memories/big/search', `q=${WORDS[i % WORDS.length]}&limit=20`));
    const write = await timeEach(200, (i) =>
      call('PUT', `/v1/memories/big/notes/area-${i % 10}/topic-${i % 37}/bench-${i}.md`, '', { body: `bench write ${i}` }),
    );

    const warmRead = await counter.record(() => call('GET', `/v1/memories/big/notes/${paths[13]}`));
    calls.push(['read, warm', warmRead.calls, '1 GetItem', exactly(warmRead.calls, { 'dynamodb.GetItem': 1 })]);
    const warmList = await counter.record(() => call('GET', '/v1/memories/big/notes', 'depth=all&type=file&limit=200'));
    calls.push(['list, warm (no object twice across requests)', warmList.calls, '1 GetItem', exactly(warmList.calls, { 'dynamodb.GetItem': 1 })]);
    const warmSearch = await counter.record(() => call('GET', '/v1/memories/big/search', 'q=apples&limit=20'));
    const ws = countsOf(warmSearch.calls);
    calls.push([
      'search, warm',
      warmSearch.calls,
      '1 GetItem (+ the index of a new rev), nothing else',
      ws['dynamodb.GetItem'] === 1 && (ws['s3.GetObject'] ?? 0) <= 1 && onlyKinds(warmSearch.calls, ['dynamodb.GetItem', 's3.GetObject']),
    ]);
    const warmWrite = await counter.record(() => call('PUT', '/v1/memories/big/notes/area-1/topic-1/counted.md', '', { body: 'counted write' }));
    const w = warmWrite.calls;
    const wc = countsOf(w);
    const at = (kind: string) => w.filter((c) => c.call === kind);
    // The order of the budget: the rev read ends before the first PUT starts, the PUTs overlap (one
    // parallel wave), and the conditional write starts after the last PUT ended.
    const ordered =
      Math.max(...at('dynamodb.GetItem').map((c) => c.end)) <= Math.min(...at('s3.PutObject').map((c) => c.start)) &&
      Math.max(...at('s3.PutObject').map((c) => c.end)) <= Math.min(...at('dynamodb.UpdateItem').map((c) => c.start));
    calls.push([
      'write, warm',
      w,
      '1 GetItem, then 1 parallel wave of PutObject, then 1 UpdateItem; nothing else',
      wc['dynamodb.GetItem'] === 1 &&
        wc['dynamodb.UpdateItem'] === 1 &&
        (wc['s3.PutObject'] ?? 0) >= 1 &&
        onlyKinds(w, ['dynamodb.GetItem', 's3.PutObject', 'dynamodb.UpdateItem']) &&
        oneWave(w, 's3.PutObject') &&
        ordered,
    ]);

    for (const [name, samples] of [
      ['write (PUT note, JSON)', write],
      ['read (GET note, JSON)', read],
      ['list (GET notes, depth=all, 200 entries)', list],
      ['search (GET search, 1,000 notes)', search],
    ] as const) {
      const s = summarize(samples);
      rows.push([`handler ${name} p50 / p99`, `${ms(s.p50)} / ${ms(s.p99)}`, '', '']);
    }
    rows.push(['handler search, first of a fresh instance (1,000 notes)', ms(coldSearchMs), '', '']);
    for (const [name, c, target, ok] of calls) rows.push([`storage calls: ${name}`, fmtCalls(c), target, verdict(ok)]);

    // Exports either side of the inline limit (its default, 4 MiB): the 1,000-note memory above, and
    // 1,200 notes of 6 KB that zlib cannot shrink much, whose bundle goes to S3 behind a 302.
    log('exports: inline and over the inline limit');
    await runtime.service.importNotes(
      caller,
      'large',
      Array.from({ length: LARGE_NOTES }, (_, i) => ({
        path: `area-${i % 12}/topic-${i % 31}/note-${i}.md`,
        markdown: `# Note ${i}\n\n${noise(i + 1, 6000)}\n`,
      })),
      { createMemory: true },
    );
    // As the /v1 function behind API Gateway answers them (buffered): inline, or stored in S3 as they
    // are made and a 302. Streamed exports (the function URL, the local server) are measured at 10,000 notes below.
    const buffered = { ...deps, config: { ...deps.config, exportDelivery: 'buffered' as const } };
    for (const [memory, notes] of [
      ['big', NOTES],
      ['large', LARGE_NOTES],
    ] as const) {
      const e = await peakDuring(() => handleMemoryRequest(event('GET', `/v1/memories/${memory}/export`, '', auth), buffered, 'bench'));
      if (e.result.statusCode !== 200 && e.result.statusCode !== 302) throw new Error(`export of ${memory}: ${e.result.statusCode} ${e.result.body}`);
      const r = e.result;
      const size = r.statusCode === 302 ? (await fetch(JSON.parse(String(r.body)).url)).arrayBuffer() : Promise.resolve(Buffer.from(String(r.body), 'base64'));
      const mib = ((await size).byteLength / 2 ** 20).toFixed(1);
      const how = r.statusCode === 302 ? '302 to a presigned S3 URL' : 'inline';
      rows.push([`export, ${notes.toLocaleString('en')} notes (${mib} MiB bundle, buffered: ${how}): time`, ms(e.ms), '', 'informational']);
      rows.push([
        `export, ${notes.toLocaleString('en')} notes: peak RSS above the RSS before it`,
        `${(e.peakBytes / 2 ** 20).toFixed(0)} MiB`,
        '',
        'informational',
      ]);
    }
    const sizes = (process.env.MEMORY_BENCH_SIZES ?? '1000,10000,50000').split(',').map(Number);
    const scale = await runMemoryScale(
      {
        config,
        deps,
        ring,
        token: (sub) => issuer.signAccessToken({ sub, scope: 'memory:read memory:write', ttlSeconds: 3600, audience: AUDIENCE }),
        event,
        peakDuring,
        noteText,
        log,
        tmp,
      },
      sizes,
    );
    rows.push(...scale.rows);
    counter.detach();
    runtime.s3.destroy();
    runtime.dynamodb.destroy();
    admin.d.destroy();
    admin.s.destroy();
    return {
      title: 'Memory REST API (/v1)',
      method: [
        `- Data: one memory of ${NOTES} notes (about 1 KB each, front matter and tags, 10 areas × 37 topics) imported as one commit into DynamoDB Local (rev lock) and the loopback S3 server (git objects, per-commit indexes).`,
        '- Handler figures: `handleMemoryRequest` called in-process with API Gateway v2 events, sequentially, so each includes token verification (an RS256 local-issuer JWT through aws-jwt-verify, JWKS cached), the shared DynamoDB rate limiter (run concurrently with verification; limit raised so nothing is refused), the core and the response shaping. Reads cycle over the notes (300 samples), listings 100, searches 50 over 10 query words, writes 200 new notes without If-Match (each a commit).',
        "- Storage calls: recorded by SDK middleware on the core's own S3 and DynamoDB clients (`bin/bench/storage-log.ts`: each call's kind, object key, start and end; the limiter has its own client and is not counted), for one request each, cold (fresh instance cache) and warm. The budgets are DESIGN.md's, and each verdict checks all of its target: the kinds of call (no other kind made), the counts, no object fetched twice, and for a write the order and the wave (the rev read ends before the first PUT starts; every PUT starts before any PUT ends; the conditional write starts after the last PUT ended).",
        `- Exports, buffered (as the \`/v1\` function behind API Gateway answers them, \`MEMORY_EXPORT_DELIVERY=buffered\`): \`GET /v1/memories/{memory}/export\` through the handler, for the 1,000-note memory (inline) and for one of ${LARGE_NOTES.toLocaleString('en')} notes of 6 KB of base64 noise (deflate cannot shrink it below the 4 MiB inline limit, so the bundle is written to S3 as it is made and the answer is a 302); time from request to answer (bundle made, and for the 302 stored and presigned), and the highest resident memory of the process during it above what it was before (sampled every 5 ms, and the process's maximum RSS when the export set a new one).`,
        scale.method,
        '- Local backends add their own latency (Java DynamoDB Local and a Node S3 server on loopback): the absolute figures are an upper bound of what the code costs, not AWS latencies.',
      ].join('\n'),
      rows,
    };
  } finally {
    await Promise.all([ddb.stop(), s3.stop()]);
    rmSync(tmp, { recursive: true, force: true });
  }
}
