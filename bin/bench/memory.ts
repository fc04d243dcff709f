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
import { countStorageCalls, createMemoryRuntime, ImmutableCache, memoryTableDefinitions, type CallCounts } from '../../lambdas/memory';
import { dynamoClient, s3Client } from '../../lambdas/shared/aws/clients';
import { parseKeyRing } from '../../lambdas/shared/cursor';
import type { HttpEvent, HttpResult } from '../../lambdas/shared/http/types';
import { sharedLimiter } from '../../lambdas/shared/rate-limit/leasing-config';
import { startDynamoLocal, startS3Server } from '../local-stack/backends';
import { localCatalogConfig, provision } from '../local-stack/catalog-env';
import { dataDir } from '../local-stack/data-dir';
import { ensureBuckets, ensureTables } from '../local-stack/provision';
import { ms, summarize, verdict, timeEach, type BenchSection } from './stats';

/**
 * `npm run bench -- memory`: the `/v1` handler in-process (real verifier with an RS256 token, the
 * shared DynamoDB rate limiter, the memory core on DynamoDB Local and the loopback S3 server) over a
 * 1,000-note memory; latency per operation and the storage calls of each, counted by SDK middleware.
 */
const NOTES = 1000;
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
  return `---\ntags: [area-${i % 10}]\n---\n# Note ${i}\n\nA note about ${w(0)} and ${w(1)}, with ${w(2)} #t${i % 5}.\n\n${`Body line ${i} on ${w(3)}. `.repeat(8)}\n`;
}

const fmtCalls = (c: CallCounts): string =>
  Object.entries(c)
    .sort()
    .map(([k, v]) => `${v} ${k}`)
    .join(', ') || 'none';

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
    const counter = countStorageCalls({ s3: runtime.s3, dynamodb: runtime.dynamodb });
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
    const calls: Array<[string, CallCounts, string, boolean]> = [];

    // Cold: a fresh instance (its own clients and an empty cache), as a new Lambda instance would be;
    // the seeding instance's cache holds every object it wrote.
    log('cold requests on a fresh instance');
    const coldRuntime = createMemoryRuntime(config.memory, ring, { overrides: { cache: new ImmutableCache(256 * 1024 * 1024) } });
    const coldDeps = { ...deps, service: coldRuntime.service };
    const coldCounter = countStorageCalls({ s3: coldRuntime.s3, dynamodb: coldRuntime.dynamodb });
    const coldCall = async (path: string, query = ''): Promise<HttpResult> => {
      const res = await handleMemoryRequest(event('GET', path, query, auth), coldDeps, 'bench');
      if (res.statusCode >= 300) throw new Error(`GET ${path}?${query}: ${res.statusCode} ${res.body}`);
      return res;
    };
    const coldRead = await coldCounter.measure(() => coldCall(`/v1/memories/big/notes/${paths[500]}`));
    calls.push([
      'read, cold (fresh instance)',
      coldRead.calls,
      '≤ 1 GetItem + 2 GetObject',
      (coldRead.calls['dynamodb.GetItem'] ?? 0) <= 1 && (coldRead.calls['s3.GetObject'] ?? 0) <= 2,
    ]);
    const t0 = performance.now();
    const coldSearch = await coldCounter.measure(() => coldCall('/v1/memories/big/search', 'q=kubernetes&limit=20'));
    const coldSearchMs = performance.now() - t0;
    calls.push([
      `search, first of an instance (each of the ${NOTES} notes fetched once)`,
      coldSearch.calls,
      `1 GetItem + ≤ ${NOTES} GetObject`,
      (coldSearch.calls['dynamodb.GetItem'] ?? 0) === 1 && (coldSearch.calls['s3.GetObject'] ?? 0) <= NOTES,
    ]);
    const again = await coldCounter.measure(() => coldCall('/v1/memories/big/search', 'q=design&limit=20'));
    calls.push(['search, second of that instance (other query)', again.calls, '1 GetItem', fmtCalls(again.calls) === '1 dynamodb.GetItem']);
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

    const warmRead = await counter.measure(() => call('GET', `/v1/memories/big/notes/${paths[13]}`));
    calls.push(['read, warm', warmRead.calls, '1 GetItem', fmtCalls(warmRead.calls) === '1 dynamodb.GetItem']);
    const warmList = await counter.measure(() => call('GET', '/v1/memories/big/notes', 'depth=all&type=file&limit=200'));
    calls.push(['list, warm (no object twice across requests)', warmList.calls, '1 GetItem', fmtCalls(warmList.calls) === '1 dynamodb.GetItem']);
    const warmSearch = await counter.measure(() => call('GET', '/v1/memories/big/search', 'q=apples&limit=20'));
    calls.push([
      'search, warm',
      warmSearch.calls,
      '1 GetItem (+ the index of a new rev)',
      (warmSearch.calls['dynamodb.GetItem'] ?? 0) === 1 && (warmSearch.calls['s3.GetObject'] ?? 0) <= 1,
    ]);
    const warmWrite = await counter.measure(() => call('PUT', '/v1/memories/big/notes/area-1/topic-1/counted.md', '', { body: 'counted write' }));
    const wc = warmWrite.calls;
    calls.push([
      'write, warm',
      wc,
      '1 GetItem + 1 wave of PutObject + 1 UpdateItem',
      wc['dynamodb.GetItem'] === 1 && wc['dynamodb.UpdateItem'] === 1 && !wc['s3.GetObject'] && (wc['s3.PutObject'] ?? 0) >= 1,
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
    rows.push(['handler search, first of a fresh instance (loads 1,000 notes)', ms(coldSearchMs), '', '']);
    for (const [name, c, target, ok] of calls) rows.push([`storage calls: ${name}`, fmtCalls(c), target, verdict(ok)]);
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
        "- Storage calls: counted by SDK middleware on the core's own S3 and DynamoDB clients (`countStorageCalls`; the limiter has its own client and is not counted), for one request each, cold (fresh instance cache) and warm. The budgets are DESIGN.md's.",
        '- Local backends add their own latency (Java DynamoDB Local and a Node S3 server on loopback): the absolute figures are an upper bound of what the code costs, not AWS latencies.',
      ].join('\n'),
      rows,
    };
  } finally {
    await Promise.all([ddb.stop(), s3.stop()]);
    rmSync(tmp, { recursive: true, force: true });
  }
}
