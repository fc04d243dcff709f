import { embeddedSearchIndex } from '../../lambdas/catalog-core';
import './env';
import { readFileSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { createServer } from 'node:http';
import { createCatalogHandler } from '../../lambdas/catalog/api';
import { CATALOG_API } from '../../lambdas/catalog/routes';
import { generateCatalog, toSearchDocument } from '../local-stack/synthetic';
import { createCatalogDeps } from '../../lambdas/catalog/wiring';
import { localCatalogConfig } from '../local-stack/catalog-env';
import { dataDir } from '../local-stack/data-dir';
import { createLocalServer, listen } from '../local-stack/server';
import type { RecordedAnswer } from './catalog';

/**
 * A server for the throughput comparison, in its own process so the load generator does not share
 * its event loop: `stack` is the local stack's HTTP server with the real catalog handler over
 * 10,000 servers; `bare` is plain node:http answering the same bytes (this machine's ceiling).
 */

async function main(): Promise<void> {
  const [mode, arg, bareProfile] = process.argv.slice(2);
  if (mode === 'bare') {
    // The stack's own answers, recorded once per URL of the query mix: status, headers and body.
    const recorded = JSON.parse(readFileSync(arg, 'utf8')) as Record<string, RecordedAnswer>;
    const answers = new Map(Object.entries(recorded).map(([url, r]) => [url, { ...r, bytes: Buffer.from(r.body) }]));
    const server = createServer((req, res) => {
      const a = answers.get(req.url ?? '');
      if (!a) {
        res.writeHead(404).end();
        return;
      }
      res.writeHead(a.status, a.headers);
      res.end(a.bytes);
    });
    if (bareProfile !== undefined) profileOnSignal(bareProfile);
    server.listen(0, '127.0.0.1', () => {
      const addr = server.address();
      process.stdout.write(`${JSON.stringify({ port: typeof addr === 'object' && addr ? addr.port : 0 })}\n`);
    });
    return;
  }
  const env = JSON.parse(arg) as {
    dynamo: string;
    s3: string;
    tmp: string;
    rateTable: string;
    count: number;
    keys: string;
    cache: boolean;
    /** `spec`: the spec's limits per caller, callers told apart by the viewer address behind the origin secret. */
    limits: 'spec' | 'raised';
    originSecret: string;
    /** `false`: one table call per new caller (RATE_BATCH_TAKES=0), to show what batching the takes saves. */
    batch?: boolean;
    /** Response cache bounds other than the defaults (entries, MB). */
    cacheEntries?: number;
    cacheMb?: number;
    /** Where to write a CPU profile of the span between SIGUSR2 (after start-up and warm-up) and SIGINT. */
    profile?: string;
  };
  const base = localCatalogConfig(dataDir(env.tmp), env.dynamo, env.s3);
  const config = {
    ...base,
    rateLimitTable: env.rateTable,
    searchSnapshotPath: undefined,
    cursorKeysFile: env.keys,
    // `raised`: one client is not what the limit is about (recording answers); the limiter still runs.
    ...(env.limits === 'raised' && { anonymous: { rate: 1_000_000, burst: 1_000_000 } }),
    // As behind CloudFront: the viewer address is trusted with the secret header, so many callers share one connection pool.
    originVerifySecret: env.originSecret,
    ...(!env.cache && { responseCacheEntries: 0 }),
    ...(env.batch === false && { rateBatchTakes: false }),
    ...(env.cacheEntries !== undefined && { responseCacheEntries: env.cacheEntries }),
    ...(env.cacheMb !== undefined && { responseCacheMb: env.cacheMb }),
  };
  const index = embeddedSearchIndex({});
  await index.replaceAll(generateCatalog(env.count).map(toSearchDocument));
  const deps = await createCatalogDeps(config, index);
  const running = await listen(
    // Catalog reads only: the favorites routes (another function) are not part of this comparison.
    createLocalServer({
      apis: [
        {
          table: { ...CATALOG_API, routes: CATALOG_API.routes.filter((r) => r.fn === 'catalog') },
          functions: { catalog: createCatalogHandler(async () => deps) },
        },
      ],
      ready: () => true,
    }),
    0,
  );
  if (env.profile !== undefined) profileOnSignal(env.profile);
  process.stdout.write(`${JSON.stringify({ port: running.port })}\n`);
}

/**
 * The V8 sampling profiler (what `--cpu-prof` runs) from SIGUSR2 to SIGINT, written as a
 * `.cpuprofile`: unlike `--cpu-prof` it leaves out start-up (generating and indexing the catalog)
 * and the warm pass, so the profile is the measured load alone.
 */
function profileOnSignal(file: string): void {
  const session = new Session();
  session.connect();
  let started: Promise<void> | undefined;
  process.on('SIGUSR2', () => {
    started ??= (async () => {
      await session.post('Profiler.enable');
      await session.post('Profiler.setSamplingInterval', { interval: 200 });
      await session.post('Profiler.start');
    })();
  });
  process.removeAllListeners('SIGINT');
  process.on('SIGINT', () => {
    void (async () => {
      if (started) {
        await started;
        const { profile } = await session.post('Profiler.stop');
        writeFileSync(file, JSON.stringify(profile));
      }
      process.exit(0);
    })();
  });
}

process.on('SIGINT', () => process.exit(0));
main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
