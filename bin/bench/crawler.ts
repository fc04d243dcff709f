/**
 * Crawler benchmark (for `npm run bench`): a full crawl of N synthetic upstream servers (default
 * 10,000) against the loopback fakes, DynamoDB Local and the S3 server, then an incremental
 * re-crawl after 1% of the servers changed upstream. Reports wall time, upstream requests, HTTP
 * requests and catalog writes. Returns a `BenchSection` for bin/bench.ts.
 */

import { toServerJson } from '../../lambdas/catalog-core';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BenchSection } from './stats';
import { verdict } from './stats';
import { startDynamoLocal, startS3Server } from '../local-stack/backends';
import { generateCatalog } from '../local-stack/synthetic';
import { runCrawl } from '../../lambdas/crawler/crawler';
import type { CrawlReport } from '../../lambdas/crawler/domain/types';
import { startCrawlerEnv } from '../../test/support/crawler-env';

/** Upstream ServerResponse rows for the synthetic catalog (latest versions, one per name). */
export function syntheticUpstreamRows(count: number): unknown[] {
  return generateCatalog(count).map(({ record }) => {
    const { status: _status, ...server } = toServerJson(record);
    const publishedAt = record.publishedAt ?? record.crawledAt;
    return {
      server,
      _meta: {
        'io.modelcontextprotocol.registry/official': {
          status: record.status,
          publishedAt,
          updatedAt: record.updatedAt ?? publishedAt,
          isLatest: true,
        },
      },
    };
  });
}

function bump(rows: unknown[], share: number, at: string): unknown[] {
  const out = structuredClone(rows) as Array<{ server: { version: string; description: string }; _meta: Record<string, Record<string, unknown>> }>;
  const step = Math.max(1, Math.round(1 / share));
  for (let i = 0; i < out.length; i += step) {
    out[i].server.version = `${out[i].server.version}-next`;
    out[i]._meta['io.modelcontextprotocol.registry/official'].updatedAt = at;
    out[i]._meta['io.modelcontextprotocol.registry/official'].publishedAt = at;
  }
  return out;
}

export async function runCrawlerBench(log: (m: string) => void): Promise<BenchSection> {
  const count = Number(process.env.CRAWLER_BENCH_COUNT ?? 10_000);
  const dir = mkdtempSync(join(tmpdir(), 'crawler-bench-'));
  const [ddb, s3] = await Promise.all([startDynamoLocal({}), startS3Server({ dir: join(dir, 's3'), buckets: [] })]);
  const saved = { ddb: process.env.TEST_DYNAMODB_ENDPOINT, s3: process.env.TEST_S3_ENDPOINT };
  process.env.TEST_DYNAMODB_ENDPOINT = ddb.endpoint;
  process.env.TEST_S3_ENDPOINT = s3.endpoint;
  const rows = syntheticUpstreamRows(count);
  // The production timeouts (10 s per request, 5 s per health check), and slow remotes that hang
  // until the health timeout ends them, as they cost a real crawl.
  const env = await startCrawlerEnv(rows, {
    now: '2026-11-01T12:00:00.000Z',
    env: { CRAWLER_HTTP_TIMEOUT_MS: '10000', CRAWLER_HEALTH_TIMEOUT_MS: '5000' },
    slowRemotes: 'hang',
  });
  try {
    const timed = async (label: string, mode: 'full' | 'auto') => {
      env.resetCounts();
      const upstreamBefore = env.registry.pageRequests().length;
      const { crawler, http } = env.newCrawler();
      const started = Date.now();
      let lastLog = 0;
      const report: CrawlReport = await runCrawl(crawler, {
        mode,
        unitConcurrency: 2,
        onProgress: (p) => {
          if (p.phase === 'units' && Date.now() - lastLog > 10_000) {
            lastLog = Date.now();
            log(`${label}: ${p.done}/${p.total} units`);
          }
        },
      });
      const wallMs = Date.now() - started;
      const upstream = env.registry.pageRequests().length - upstreamBefore;
      const writes = env.counts.storePut + env.counts.storeDelete;
      log(`${label}: ${(wallMs / 1000).toFixed(1)} s, ${upstream} upstream pages, ${http.stats.requests} HTTP requests, ${writes} store writes`);
      return { report, wallMs, upstream, http: http.stats.requests, writes, index: env.counts.indexUpsert + env.counts.indexRemove };
    };
    const full = await timed('full crawl', 'full');
    env.clock.advance(3_600_000);
    env.registry.setRows(bump(env.rows, 0.01, '2026-11-01T12:30:00.000Z'));
    const inc = await timed('incremental re-crawl (1% changed)', 'auto');
    const changed = Math.ceil(count / Math.max(1, Math.round(1 / 0.01)));
    return {
      title: `Crawler: ${count.toLocaleString('en-US')} synthetic upstream servers`,
      method: [
        `\`runCrawl\` (the code behind \`npm run crawl\`) against loopback fakes of the registry (100 rows a page), GitHub (ETag/304),`,
        'npm, PyPI, icon hosts and remote MCP servers (the SDK server over Streamable HTTP and SSE, plus 401, dead and slow endpoints that',
        'never answer), with the production timeouts (10 s per request, 5 s per health check), DynamoDB Local, the S3 server and the embedded',
        'index; every enrichment step on. Then an incremental re-crawl',
        `after ${changed} servers (1%) published a new version. Writes are CatalogStore entries written or deleted, checked against the target and against the crawl's own report (added, updated, rejected).`,
      ].join(' '),
      rows: [
        ['full crawl: wall time', `${(full.wallMs / 1000).toFixed(1)} s`, '—', ''],
        [
          'full crawl: upstream page requests',
          String(full.upstream),
          `≤ ${Math.ceil(count / 100) + 1} (pages + the closing empty one)`,
          verdict(full.upstream <= Math.ceil(count / 100) + 1),
        ],
        ['full crawl: HTTP requests (all hosts)', String(full.http), '—', ''],
        // Every upstream server written once, none rejected: writes and the report both say so.
        [
          'full crawl: catalog writes (servers added)',
          `${full.writes} (${full.report.counts.added} added, ${full.report.counts.rejected} rejected)`,
          `${count} (every server once)`,
          verdict(full.writes === count && full.report.counts.added === count && full.report.counts.rejected === 0),
        ],
        ['incremental: wall time', `${(inc.wallMs / 1000).toFixed(1)} s`, '—', ''],
        [
          'incremental: upstream page requests',
          String(inc.upstream),
          `≤ ${Math.ceil(changed / 100) + 1}`,
          verdict(inc.upstream <= Math.ceil(changed / 100) + 1),
        ],
        [
          'incremental: catalog writes',
          `${inc.writes} (${inc.report.counts.updated} updated)`,
          `${changed} (changed only)`,
          verdict(inc.writes === changed && inc.report.counts.updated === changed && inc.report.counts.added === 0),
        ],
        ['incremental: index writes', String(inc.index), `${changed}`, verdict(inc.index === changed)],
      ],
    };
  } finally {
    await env.close();
    await Promise.all([ddb.stop(), s3.stop()]);
    process.env.TEST_DYNAMODB_ENDPOINT = saved.ddb;
    process.env.TEST_S3_ENDPOINT = saved.s3;
    rmSync(dir, { recursive: true, force: true });
  }
}
