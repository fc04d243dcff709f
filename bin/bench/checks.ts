/**
 * Check-round benchmark (for `npm run bench -- checks`): one round of the check schedule over N
 * hosted servers (default 5,000) against loopback fake MCP servers, DynamoDB Local and the S3
 * server, through the functions AWS runs (`planChecks`, then `checkBatch` per batch, two batches
 * at once as the Map runs them). Reports the round's wall time, each batch's duration (the check
 * function's work per invocation) and the DynamoDB items written. Returns a `BenchSection`.
 */

import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CatalogStore, TrustStore } from '../../lambdas/catalog-core';
import { checkBatch, planChecks, type CheckBatchRef, type CheckCounts } from '../../lambdas/crawler/checks';
import { loadCrawlerConfig } from '../../lambdas/crawler/config';
import { createChecker } from '../../lambdas/crawler/check-wiring';
import { mapLimit } from '../../lambdas/shared/concurrency';
import { startTestCatalog } from '../../test/support/catalog-harness';
import { startSwitchableMcp, type FakeTool, type SwitchableMcp } from '../../test/support/crawler-fakes';
import { docOf, makeRecord } from '../../test/support/records';
import { startDynamoLocal, startS3Server } from '../local-stack/backends';
import { ms, summarize, type BenchSection } from './stats';

const TOOLS: FakeTool[] = [
  { name: 'get_forecast', description: 'Get the weather forecast for a city', inputSchema: { type: 'object', properties: { city: { type: 'string' } } } },
  { name: 'get_alerts', description: 'Active weather alerts for a region', inputSchema: { type: 'object', properties: { region: { type: 'string' } } } },
];

/** Fake servers the hosted servers share (each its own loopback port, so per-host politeness applies as across real hosts). */
const FAKES = 50;
/** One fake in ten answers 503: the round writes failures as well as answers. */
const DOWN_EVERY = 10;

/** `target` with some methods replaced (the others bound to it): a port that counts what passes through. */
function counting<T extends object>(target: T, over: Partial<T>): T {
  return new Proxy(target, {
    get(t, key) {
      if (key in over) return over[key as keyof T];
      const v = Reflect.get(t, key, t);
      return typeof v === 'function' ? v.bind(t) : v;
    },
  });
}

export async function runChecksBench(log: (m: string) => void): Promise<BenchSection> {
  const count = Number(process.env.CHECKS_BENCH_COUNT ?? 5_000);
  const dir = mkdtempSync(join(tmpdir(), 'checks-bench-'));
  mkdirSync(join(dir, 'tmp'));
  const [ddb, s3] = await Promise.all([startDynamoLocal({}), startS3Server({ dir: join(dir, 's3'), buckets: [] })]);
  const saved = { ddb: process.env.TEST_DYNAMODB_ENDPOINT, s3: process.env.TEST_S3_ENDPOINT, tmp: process.env.TEST_TMP_DIR };
  process.env.TEST_DYNAMODB_ENDPOINT = ddb.endpoint;
  process.env.TEST_S3_ENDPOINT = s3.endpoint;
  process.env.TEST_TMP_DIR = join(dir, 'tmp');
  const fakes: SwitchableMcp[] = await Promise.all(Array.from({ length: FAKES }, () => startSwitchableMcp(TOOLS)));
  fakes.forEach((f, i) => {
    if (i % DOWN_EVERY === DOWN_EVERY - 1) f.state = 'down';
  });
  const catalog = await startTestCatalog();
  try {
    const records = Array.from({ length: count }, (_, i) =>
      makeRecord(`hosted-${String(i).padStart(5, '0')}`, { remotes: [{ type: 'streamable-http', url: `${fakes[i % FAKES].url}/${i}` }] }),
    );
    for (let i = 0; i < records.length; i += 500) {
      const part = records.slice(i, i + 500);
      await catalog.deps.store.put(part.map((record) => ({ record })));
      await catalog.deps.index.upsert(part.map((record) => docOf({ record })));
    }
    log(`checks: ${count} hosted servers loaded`);

    // Every DynamoDB item the round writes: checks and changelog entries (trust table), records and tools (catalog table).
    const writes = { checks: 0, changes: 0, catalog: 0 };
    const trust = counting(catalog.deps.trust, {
      putChecks: (items: Parameters<TrustStore['putChecks']>[0]) => {
        writes.checks += items.length;
        return catalog.deps.trust.putChecks(items);
      },
      putChanges: (items: Parameters<TrustStore['putChanges']>[0]) => {
        writes.changes += items.length;
        return catalog.deps.trust.putChanges(items);
      },
    });
    const store = counting(catalog.deps.store, {
      put: (items: Parameters<CatalogStore['put']>[0]) => {
        writes.catalog += items.reduce((n, w) => n + 1 + (w.tools != null ? 1 : 0) + (w.readme != null ? 1 : 0), 0);
        return catalog.deps.store.put(items);
      },
    });
    const { deps } = createChecker(loadCrawlerConfig({ CRAWLER_ALLOW_PRIVATE_HOSTS: 'true' }), { store, index: catalog.deps.index, trust });

    const started = Date.now();
    const plan = await planChecks(deps.index, deps.settings.batchSize);
    const batchMs: number[] = [];
    const totals: CheckCounts = { checked: 0, up: 0, auth: 0, down: 0, markedDown: 0, skipped: 0 };
    await mapLimit<CheckBatchRef, void>(plan.batches, 2, async (b) => {
      const t0 = performance.now();
      const c = await checkBatch(deps, b);
      batchMs.push(performance.now() - t0);
      for (const k of Object.keys(c) as Array<keyof CheckCounts>) totals[k] += c[k];
      if (batchMs.length % 10 === 0) log(`checks: ${batchMs.length}/${plan.batches.length} batches`);
    });
    const wallMs = Date.now() - started;
    const batch = summarize(batchMs);
    const maxBatch = Math.max(...batchMs);
    const items = writes.checks + writes.changes + writes.catalog;
    log(`checks: ${(wallMs / 1000).toFixed(1)} s, batch p50 ${ms(batch.p50)}, ${items} items written`);
    return {
      title: `Check round: ${count.toLocaleString('en-US')} hosted servers`,
      method: [
        `One round of the check schedule as AWS runs it: \`planChecks\` (batches of ${deps.settings.batchSize} in the index's name order), then`,
        `\`checkBatch\` per batch (the check function's work per invocation: ${deps.settings.concurrency} servers at once, each host kept to`,
        `${loadCrawlerConfig({}).hostConcurrency} requests), two batches at once (the Map's concurrency here), in one process, against ${FAKES}`,
        `loopback fake MCP servers (\`test/support/crawler-fakes.ts\`, the SDK over Streamable HTTP: initialize and tools/list; one in ${DOWN_EVERY}`,
        'answers 503), DynamoDB Local (catalog and trust tables), the S3 server and the embedded index. The first round of a fresh catalog:',
        'every server gets its first check and its tools captured (a tools item and no changelog entry: the first capture is the baseline).',
        'Items written are counted at the store and trust ports (one DynamoDB item each: a check, a changelog entry, a record, a tools item);',
        'reads of each history from the trust table are not counted. The monthly cost at hourly checks is not derived here.',
      ].join(' '),
      rows: [
        ['round: wall time', `${(wallMs / 1000).toFixed(1)} s`, '—', ''],
        ['round: servers checked (up / down)', `${totals.checked} (${totals.up} / ${totals.down}), ${totals.skipped} skipped`, `${count}`, ''],
        ['check function: batches', String(plan.batches.length), '—', ''],
        ['check function: duration per batch p50 / p99 / max', `${ms(batch.p50)} / ${ms(batch.p99)} / ${ms(maxBatch)}`, '—', ''],
        ['DynamoDB items written', `${items} (${writes.checks} checks, ${writes.changes} changelog entries, ${writes.catalog} catalog items)`, '—', ''],
        ['DynamoDB items written per server checked', (items / Math.max(1, totals.checked)).toFixed(2), '—', ''],
      ],
    };
  } finally {
    await catalog.close();
    await Promise.all(fakes.map((f) => f.close()));
    await Promise.all([ddb.stop(), s3.stop()]);
    process.env.TEST_DYNAMODB_ENDPOINT = saved.ddb;
    process.env.TEST_S3_ENDPOINT = saved.s3;
    process.env.TEST_TMP_DIR = saved.tmp;
    rmSync(dir, { recursive: true, force: true });
  }
}
