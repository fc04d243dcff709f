import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crawlerHandlers, type PlanResult, type UnitResult } from '../../lambdas/crawler/handler';
import type { UnitRef } from '../../lambdas/crawler/domain/ports';
import { mapLimit } from '../../lambdas/shared/concurrency';
import { loadBatchSdkBudget } from '../../lambdas/shared/aws/clients';
import { startCrawlerEnv } from '../../test/support/crawler-env';
import { startDynamoLocal, startS3Server } from '../local-stack/backends';
import { syntheticUpstreamRows } from './crawler';
import { ms, summarize, verdict, type BenchSection } from './stats';

/**
 * A full crawl of 30,000 upstream servers driven the way the deployed state machine drives it
 * (`lib/crawler/state-machine.ts`): the Plan task called until it says `planned` (each call up to
 * CRAWLER_PLAN_MAX_STEPS pages, 200), the Map over the plan's units with the deployed concurrency
 * (`CatalogCrawler`'s maxConcurrency, 4), then Finalize; each call through the Lambda handler's
 * own entry (`crawlerHandlers`), as Step Functions invokes it. Measured against the limits they
 * run under: each call's time (a retried call's attempts together) against the function's 15-minute timeout, each state's JSON input
 * and output against Step Functions' 256 KiB, and the execution's history events against the
 * 25,000 of a Standard workflow (the Map is inline).
 */

const COUNT = Number(process.env.CRAWLER_DEPLOYED_COUNT ?? 30_000);
/** `CatalogCrawler`'s default, what `CatalogStack` deploys. */
const MAP_CONCURRENCY = 4;
const LAMBDA_TIMEOUT_MS = 15 * 60_000;
const PAYLOAD_LIMIT = 256 * 1024;
const HISTORY_LIMIT = 25_000;
/** `CatalogCrawler`'s default `taskRetries`: a failed task (every action is idempotent) is retried this many times. */
const TASK_RETRIES = 3;

const bytes = (v: unknown): number => Buffer.byteLength(JSON.stringify(v));
const kib = (n: number): string => `${(n / 1024).toFixed(1)} KiB`;

export async function runCrawlerDeployedBench(log: (m: string) => void): Promise<BenchSection> {
  const dir = mkdtempSync(join(tmpdir(), 'crawler-deployed-'));
  const [ddb, s3] = await Promise.all([startDynamoLocal({}), startS3Server({ dir: join(dir, 's3'), buckets: [] })]);
  const saved = { ddb: process.env.TEST_DYNAMODB_ENDPOINT, s3: process.env.TEST_S3_ENDPOINT };
  process.env.TEST_DYNAMODB_ENDPOINT = ddb.endpoint;
  process.env.TEST_S3_ENDPOINT = s3.endpoint;
  // The deployed crawler's clients have the batch budget (30 s a request, 5 attempts: handler.ts),
  // the test environment's the interactive one (1.5 s): give them the deployed budget.
  const batch = loadBatchSdkBudget();
  const budgetVars = ['AWS_DYNAMODB_TIMEOUT_MS', 'AWS_DYNAMODB_MAX_ATTEMPTS', 'AWS_S3_TIMEOUT_MS', 'AWS_S3_MAX_ATTEMPTS'] as const;
  const savedBudget = Object.fromEntries(budgetVars.map((k) => [k, process.env[k]]));
  process.env.AWS_DYNAMODB_TIMEOUT_MS = String(batch.dynamoRequestTimeoutMs);
  process.env.AWS_DYNAMODB_MAX_ATTEMPTS = String(batch.dynamoMaxAttempts);
  process.env.AWS_S3_TIMEOUT_MS = String(batch.s3RequestTimeoutMs);
  process.env.AWS_S3_MAX_ATTEMPTS = String(batch.s3MaxAttempts);
  const env = await startCrawlerEnv(syntheticUpstreamRows(COUNT), {
    now: '2026-11-01T12:00:00.000Z',
    env: { CRAWLER_HTTP_TIMEOUT_MS: '10000', CRAWLER_HEALTH_TIMEOUT_MS: '5000' },
    slowRemotes: 'hang',
  });
  try {
    const { crawler } = env.newCrawler();
    const handlers = crawlerHandlers(() => crawler, { ...process.env, CRAWLER_PLAN_MAX_STEPS: '200' });
    // As the state machine does: a failed task is retried (States.TaskFailed, taskRetries), and each retry is counted.
    let retries = 0;
    const h = {
      handler: async (event: Parameters<typeof handlers.handler>[0]) => {
        for (let attempt = 0; ; attempt++) {
          try {
            return await handlers.handler(event);
          } catch (err) {
            if (attempt >= TASK_RETRIES) throw err;
            retries++;
            log(`${String(event.action)} failed, retried as the state machine would: ${err instanceof Error ? err.message : String(err)}`);
          }
        }
      },
    };
    const started = Date.now();

    // Plan until planned; the state's document is the execution input plus `plan` (resultSelector).
    const planMs: number[] = [];
    let plan: PlanResult;
    let planState = 0;
    do {
      const t = performance.now();
      plan = (await h.handler({ action: 'plan', mode: 'full' })) as PlanResult;
      planMs.push(performance.now() - t);
      planState = Math.max(planState, bytes({ mode: 'full', plan }));
      log(`plan call ${planMs.length}: ${ms(planMs[planMs.length - 1])}, planned ${plan.planned}, ${plan.units.length} units`);
    } while (!plan.planned);
    const units: UnitRef[] = plan.units;

    // The Map: deployed concurrency, each iteration's input the unit reference, its output the handler's result.
    const unitMs: number[] = [];
    let unitOut = 0;
    let unitIn = 0;
    let done = 0;
    await mapLimit(units, MAP_CONCURRENCY, async (u) => {
      const input = { action: 'unit', runId: u.runId, unitId: u.unitId };
      unitIn = Math.max(unitIn, bytes(input));
      const t = performance.now();
      const out = (await h.handler(input)) as UnitResult;
      unitMs.push(performance.now() - t);
      unitOut = Math.max(unitOut, bytes(out));
      done++;
      if (done % 25 === 0) log(`${done}/${units.length} units`);
    });

    const t = performance.now();
    const summary = await h.handler({ action: 'finalize', runId: plan.runId });
    const finalizeMs = performance.now() - t;
    const wallMs = Date.now() - started;
    const finalOut = bytes(summary);
    const counts = (summary as { counts: { added: number; rejected: number } }).counts;

    // Standard workflow history, by the documented event sequence: a task state is 5 events (entered,
    // scheduled, started, succeeded, exited), an inline Map iteration adds 2 (started, succeeded), the
    // Choice after each plan 2; plus the Parallel, the Map and the execution's own ~12.
    const history = planMs.length * (5 + 2) + units.length * (5 + 2) + 5 + 12;
    const longest = Math.max(...planMs, ...unitMs, finalizeMs);
    const u = summarize(unitMs);
    return {
      title: `Crawler as deployed: ${COUNT.toLocaleString('en-US')} upstream servers through Step Functions' shape`,
      method: [
        `- \`crawlerHandlers\` (the crawler Lambda's entry) called as the state machine calls it: Plan until \`planned\` (CRAWLER_PLAN_MAX_STEPS 200 pages per call), the inline Map over the plan's units at the deployed MaxConcurrency (${MAP_CONCURRENCY}), Finalize. Upstream: ${COUNT.toLocaleString('en-US')} synthetic servers (\`generateCatalog\`, seed 1) on the loopback registry fake (100 rows a page), with the crawler bench's fakes of GitHub, npm, PyPI, icon hosts and remote MCP servers (slow remotes hang until the 5 s health timeout), DynamoDB Local, the S3 server and the embedded index; every enrichment step on, production timeouts, and the SDK budget the deployed crawler gives its clients (30 s a request, 5 attempts).`,
        "- Limits: each call against the function's timeout as deployed (15 min, `lib/catalog-crawler.ts`); each state's JSON (the Plan state's document with its `plan`, a Map iteration's input and the unit result, Finalize's output) against Step Functions' 256 KiB payload limit; the execution's history events against the 25,000 of a Standard workflow, counted from the documented event sequence of task, Choice and inline Map states (retries would add a few per retry). Times are this machine's (2 shared cores, the load average above); a Lambda at 1024 MB has a little more than half a vCPU and a real network, so the margin to 15 minutes is what to read, not the seconds.",
        '- Finalize here is the OpenSearch-mode one (the run\'s report); in the small-catalog mode it also rebuilds the search snapshot from the table, measured at 30,000 servers in "Small-catalog mode: embedded search cold start" (writing it).',
      ].join('\n'),
      rows: [
        ['full crawl: wall time (plan, map, finalize)', `${(wallMs / 1000).toFixed(1)} s`, '', ''],
        ['servers added / rejected', `${counts.added} / ${counts.rejected}`, `${COUNT} / 0`, verdict(counts.added === COUNT && counts.rejected === 0)],
        ['Plan calls / units', `${planMs.length} / ${units.length}`, '', ''],
        ['task retries (a failed call retried, as the state machine retries it)', String(retries), `≤ ${TASK_RETRIES} per task`, ''],
        ['longest Plan call', ms(Math.max(...planMs)), '< 15 min (function timeout)', verdict(Math.max(...planMs) < LAMBDA_TIMEOUT_MS)],
        [
          'Unit call p50 / p99 / longest',
          `${ms(u.p50)} / ${ms(u.p99)} / ${ms(Math.max(...unitMs))}`,
          '< 15 min (function timeout)',
          verdict(Math.max(...unitMs) < LAMBDA_TIMEOUT_MS),
        ],
        ['Finalize call', ms(finalizeMs), '< 15 min (function timeout)', verdict(finalizeMs < LAMBDA_TIMEOUT_MS)],
        ['longest call, share of the timeout', `${((longest / LAMBDA_TIMEOUT_MS) * 100).toFixed(1)} %`, '', ''],
        ['largest state payload: Plan state (with the units list)', kib(planState), '≤ 256 KiB', verdict(planState <= PAYLOAD_LIMIT)],
        [
          'largest state payload: Map iteration input / unit result',
          `${unitIn} B / ${unitOut} B`,
          '≤ 256 KiB',
          verdict(unitIn <= PAYLOAD_LIMIT && unitOut <= PAYLOAD_LIMIT),
        ],
        ['Finalize output (the execution output)', kib(finalOut), '≤ 256 KiB', verdict(finalOut <= PAYLOAD_LIMIT)],
        ['execution history events (estimated)', String(history), '≤ 25,000 (Standard workflow)', verdict(history <= HISTORY_LIMIT)],
        [
          'catalog size where the plan state reaches 256 KiB (units grow linearly)',
          `about ${Math.floor(((PAYLOAD_LIMIT / planState) * COUNT) / 1000) * 1000} servers`,
          '',
          'informational',
        ],
      ],
    };
  } finally {
    await env.close();
    await Promise.all([ddb.stop(), s3.stop()]);
    process.env.TEST_DYNAMODB_ENDPOINT = saved.ddb;
    process.env.TEST_S3_ENDPOINT = saved.s3;
    for (const k of budgetVars) {
      if (savedBudget[k] === undefined) delete process.env[k];
      else process.env[k] = savedBudget[k];
    }
    rmSync(dir, { recursive: true, force: true });
  }
}
