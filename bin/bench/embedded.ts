// The bench measures the snapshot engine itself: it reaches past the core's face for its classes.
import { S3SnapshotStore, S3SnapshotWriter } from '../../lambdas/catalog-core/search/s3-snapshot';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { s3Client, s3Config } from '../../lambdas/shared/aws/clients';
import { SDK_EXTERNALS } from '../../lib/bundling-externals';
import { startDynamoLocal, startS3Server } from '../local-stack/backends';
import { localCatalogConfig, provision } from '../local-stack/catalog-env';
import { dataDir } from '../local-stack/data-dir';
import { ensureBuckets } from '../local-stack/provision';
import { generateCatalog, toSearchDocument } from '../local-stack/synthetic';
import { ms, summarize, type BenchSection } from './stats';

/**
 * The small-catalog mode's cold start (`searchEngine: 'embedded'`): the catalog function's bundle,
 * as CDK builds it, in a fresh Node process whose first request loads the S3 snapshot (from the
 * loopback S3 server) and answers `/api/mcps`, then a warm request. At 10,000 and 30,000 servers.
 */

const ROOT = join(__dirname, '..', '..');
const SIZES = [10_000, 30_000];
const RUNS = 3;

/** What the fresh process does: load the bundle, answer a first and a few warm requests, report. */
const CHILD = `
const t0 = performance.now();
const { handler } = require(process.env.BUNDLE);
const loaded = performance.now();
const event = (path, query) => ({
  version: '2.0', routeKey: 'GET ' + path, rawPath: path, rawQueryString: query, headers: {}, isBase64Encoded: false,
  requestContext: { accountId: 'bench', apiId: 'bench', domainName: 'x', domainPrefix: 'x', requestId: 'r', routeKey: 'GET ' + path, stage: '$default', time: '', timeEpoch: 0,
    http: { method: 'GET', path, protocol: 'HTTP/1.1', sourceIp: '10.0.0.1', userAgent: 'bench' } },
});
(async () => {
  const first = await handler(event('/api/mcps', 'limit=24'), {});
  const answered = performance.now();
  if (first.statusCode !== 200) throw new Error('first request: ' + first.statusCode + ' ' + first.body);
  const total = JSON.parse(first.body).meta.pagination.total;
  const warm = [];
  for (let i = 0; i < 20; i++) {
    const s = performance.now();
    await handler(event('/api/search', 'q=server' + (i % 5)), {});
    warm.push(performance.now() - s);
  }
  process.stdout.write(JSON.stringify({ require: loaded - t0, first: answered - loaded, total, warm, rssMb: process.memoryUsage().rss / 2 ** 20 }));
})().catch((e) => { console.error(e); process.exit(1); });
`;

export async function runEmbeddedBench(log: (m: string) => void): Promise<BenchSection> {
  const tmp = mkdtempSync(join(tmpdir(), 'bench-embedded-'));
  const [ddb, s3] = await Promise.all([startDynamoLocal({}), startS3Server({ dir: join(tmp, 's3'), buckets: [] })]);
  const dir = join(ROOT, '.bench', 'embedded');
  mkdirSync(dir, { recursive: true });
  try {
    const keys = join(tmp, 'keys.json');
    writeFileSync(keys, JSON.stringify({ current: { id: 1, secret: randomBytes(32).toString('base64') } }));
    const config = { ...localCatalogConfig(dataDir(tmp), ddb.endpoint, s3.endpoint), cursorKeysFile: keys };
    await provision(config);
    const bucket = 'search-snapshots';
    const client = s3Client(config);
    await ensureBuckets(client, [bucket]);
    client.destroy();

    const bundle = join(dir, 'catalog.js');
    await build({
      entryPoints: [join(ROOT, 'lambdas', 'catalog', 'handler.ts')],
      outfile: bundle,
      bundle: true,
      minify: true,
      platform: 'node',
      target: 'node20',
      format: 'cjs',
      external: [...SDK_EXTERNALS],
      logLevel: 'silent',
    });

    const rows: BenchSection['rows'] = [];
    for (const n of SIZES) {
      const key = `search/catalog-${n}.json.gz`;
      const store = new S3SnapshotStore((mod) => new mod.S3Client(s3Config(config)), bucket, key);
      log(`generating ${n} servers and writing their snapshot`);
      const docs = generateCatalog(n).map(toSearchDocument);
      const started = performance.now();
      await new S3SnapshotWriter(store).replaceAll(docs);
      const writeMs = performance.now() - started;
      const got = await store.get();
      if (got === undefined || got === 'unchanged') throw new Error('snapshot was not written');
      const gz = await headSize(config, bucket, key);
      const samples: Array<{ require: number; first: number; total: number; warm: number[]; rssMb: number }> = [];
      for (let i = 0; i < RUNS; i++) {
        const out = spawnSync(process.execPath, ['-e', CHILD], {
          cwd: ROOT,
          encoding: 'utf8',
          env: {
            ...process.env,
            BUNDLE: bundle,
            LOG_LEVEL: 'SILENT',
            AWS_REGION: 'us-east-1',
            AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
            DYNAMODB_ENDPOINT: ddb.endpoint,
            S3_ENDPOINT: s3.endpoint,
            CATALOG_TABLE: config.catalogTable,
            RATE_LIMIT_TABLE: config.rateLimitTable,
            ICONS_BUCKET: config.iconsBucket,
            CURSOR_KEYS_FILE: keys,
            SEARCH_BACKEND: 'embedded',
            SEARCH_SNAPSHOT_BUCKET: bucket,
            SEARCH_SNAPSHOT_KEY: key,
            AUTH_MODE: 'local',
            PUBLIC_URL: 'http://localhost:3000',
          },
        });
        if (out.status !== 0) throw new Error(`cold start at ${n} failed: ${out.stderr}`);
        const sample = JSON.parse(out.stdout) as (typeof samples)[number];
        if (sample.total !== n) throw new Error(`the snapshot served ${sample.total} servers, not ${n}`);
        samples.push(sample);
      }
      const first = summarize(samples.map((s) => s.first)).p50;
      const req = summarize(samples.map((s) => s.require)).p50;
      const warm = summarize(samples.flatMap((s) => s.warm));
      const rss = summarize(samples.map((s) => s.rssMb)).p50;
      log(`${n}: first request ${ms(first)}, module ${ms(req)}, rss ${rss.toFixed(0)} MB`);
      rows.push([
        `${n.toLocaleString('en')} servers: snapshot (gzip) / JSON`,
        `${(gz / 2 ** 20).toFixed(1)} MiB / ${(Buffer.byteLength(got.json) / 2 ** 20).toFixed(1)} MiB`,
        '',
        '',
      ]);
      rows.push([`${n.toLocaleString('en')} servers: writing it (build + gzip + PUT, the crawler's finalize)`, ms(writeMs), '', '']);
      rows.push([`${n.toLocaleString('en')} servers: cold start, module init`, ms(req), '', '']);
      rows.push([`${n.toLocaleString('en')} servers: cold start, first request (snapshot GET, gunzip, parse, first query)`, ms(first), '', 'informational']);
      rows.push([`${n.toLocaleString('en')} servers: warm /search p50 / p99`, `${ms(warm.p50)} / ${ms(warm.p99)}`, '', '']);
      rows.push([
        `${n.toLocaleString('en')} servers: memory (RSS) after the first request`,
        `${rss.toFixed(0)} MB`,
        '< 1024 MB (the function)',
        rss < 1024 ? 'met' : '**missed**',
      ]);
    }
    return {
      title: 'Small-catalog mode: embedded search cold start',
      rows,
      method: [
        `- Data: \`generateCatalog(n)\` (deterministic, seed 1), written as one snapshot generation by \`S3SnapshotWriter\` (what the crawler's finalize and \`npm run reindex\` do) to the loopback S3 server; DynamoDB Local holds the rate-limit table.`,
        `- Cold start: the catalog function's bundle (esbuild as CDK builds it, \`@aws-sdk/*\` from node_modules as the runtime provides it) \`require\`d in a fresh \`node\` process with the embedded mode's environment; its first request (\`/api/mcps\`) loads the snapshot (GET, gunzip, JSON parse, engine state), then 20 warm \`/search\` requests. Median of ${RUNS} processes.`,
        '- In AWS the GET comes from S3 in the same region (tens of MB/s for one stream) and the init runs on the function\'s memory-proportional CPU (1024 MB: a little more than half a vCPU), so expect the first request to take longer than here; later generations are loaded by the one request per instance that finds them (README, "Deployment": search modes).',
      ].join('\n'),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await Promise.all([ddb.stop(), s3.stop()]);
    rmSync(tmp, { recursive: true, force: true });
  }
}

/** The stored (gzipped) size of the snapshot object. */
async function headSize(config: Parameters<typeof s3Client>[0], bucket: string, key: string): Promise<number> {
  const { HeadObjectCommand } = await import('@aws-sdk/client-s3');
  const client = s3Client(config);
  try {
    return (await client.send(new HeadObjectCommand({ Bucket: bucket, Key: key }))).ContentLength ?? 0;
  } finally {
    client.destroy();
  }
}
