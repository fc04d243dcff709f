import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { crawlerHandlers } from '../../lambdas/crawler/handler';
import { crawlStateMachine } from '../../lib/crawler/state-machine';
import { definitionOf, runStateMachine, type AslMachine } from '../support/asl';
import { loadFixtureRows } from '../support/crawler-fakes';
import { catalogByName, startCrawlerEnv, type CrawlerEnv } from '../support/crawler-env';

/**
 * The crawler's Lambda entry (`handler` of lambdas/crawler/handler.ts) driven by the state machine
 * CDK synthesizes for it, interpreted (test/support/asl.ts): the plan, unit and finalize events are
 * the ones its Parameters, ItemSelector and ResultSelector build, the loop and the Map are its own,
 * and failures take its Retry and Catch. The crawler behind the handler runs on DynamoDB Local, the
 * S3 server and the loopback fakes; only the search index is the embedded one (no OpenSearch here).
 */
jest.setTimeout(180_000);

/** The definition as deployed: the construct of lib/crawler/state-machine.ts in a stack of its own. */
function synthesizedDefinition(taskRetries: number): AslMachine {
  const stack = new Stack(new App(), 'CrawlerMachine');
  const fn = new lambda.Function(stack, 'Fn', {
    runtime: lambda.Runtime.NODEJS_22_X,
    handler: 'index.handler',
    code: lambda.Code.fromInline('exports.handler=1'),
  });
  crawlStateMachine(stack, { fn, deadLetterQueue: new sqs.Queue(stack, 'Dlq'), maxConcurrency: 2, taskRetries, logRetention: logs.RetentionDays.ONE_DAY });
  const [machine] = Object.values(Template.fromStack(stack).findResources('AWS::StepFunctions::StateMachine')) as Array<{
    Properties: { DefinitionString: unknown };
  }>;
  return definitionOf(machine.Properties.DefinitionString);
}

const rows = loadFixtureRows();
let env: CrawlerEnv;
let events: Array<Record<string, unknown>>;
let dlq: unknown[];
let failUnits = 0;
const machine = synthesizedDefinition(2);

/** Runs one execution, as the schedule starts it, against the real handler. */
async function execute(input: unknown, id: string) {
  // Several Plan calls (a page of 5 rows per step, one step per call) so the Plan loop runs.
  const { handler } = crawlerHandlers(() => env.newCrawler().crawler, { CRAWLER_PLAN_MAX_STEPS: '1' });
  return runStateMachine(
    machine,
    input,
    {
      lambda: async (payload) => {
        events.push(payload as Record<string, unknown>);
        if ((payload as { action?: string }).action === 'unit' && failUnits > 0) {
          failUnits--;
          throw Object.assign(new Error('injected unit failure'), { name: 'Error' });
        }
        return handler(payload as Parameters<typeof handler>[0]);
      },
      sqs: async (body) => {
        dlq.push(body);
      },
    },
    id,
  );
}

beforeAll(async () => {
  env = await startCrawlerEnv(rows, { env: { REGISTRY_PAGE_SIZE: '5' } });
});
afterAll(() => env?.close());
beforeEach(() => {
  events = [];
  dlq = [];
  failUnits = 0;
});

it('runs a scheduled execution: Plan loops until planned, the Map sends each unit, Finalize returns the report', async () => {
  const run = await execute({ mode: 'auto' }, 'scheduled');
  expect(run.status).toBe('SUCCEEDED');
  const plans = events.filter((e) => e.action === 'plan');
  const units = events.filter((e) => e.action === 'unit');
  // The events, exactly as the definition builds them.
  expect(plans.length).toBeGreaterThan(1);
  for (const p of plans) expect(p).toEqual({ action: 'plan', mode: 'auto' });
  const runId = (run.output as { runId: string }).runId;
  for (const u of units) expect(u).toEqual({ action: 'unit', runId, unitId: expect.any(String) });
  expect(new Set(units.map((u) => u.unitId)).size).toBe(units.length);
  expect(events[events.length - 1]).toEqual({ action: 'finalize', runId });
  // The report the execution ends with is the crawl's, and the catalog holds what it says.
  const report = run.output as { mode: string; counts: { added: number; rejected: number }; highWater?: string };
  const catalog = await catalogByName(env.rawStore);
  expect(report.counts.added).toBe(catalog.size);
  expect(catalog.size).toBeGreaterThan(10);
  expect(report.highWater).toEqual(expect.any(String));
  expect(run.trace).toEqual(expect.arrayContaining(['Plan', 'Planned?', 'Units', 'Unit', 'Finalize', 'Done']));
  expect(dlq).toEqual([]);
});

it('starts in auto mode when the execution input names none (the Default mode pass state)', async () => {
  const run = await execute({}, 'no-mode');
  expect(run.status).toBe('SUCCEEDED');
  expect(events.filter((e) => e.action === 'plan').every((e) => e.mode === 'auto')).toBe(true);
  expect(run.trace[0]).toBe('Crawl');
  expect(run.trace).toContain('Default mode');
});

it('retries a failed unit by the definition (Retry on States.TaskFailed), and the execution succeeds', async () => {
  env.clock.advance(60_000);
  failUnits = 2; // within taskRetries
  const run = await execute({ mode: 'full' }, 'retried');
  expect(run.status).toBe('SUCCEEDED');
  expect(dlq).toEqual([]);
});

it('sends input and error of an execution that fails past its retries to the dead-letter queue; the next execution resumes the run', async () => {
  env.clock.advance(60_000);
  failUnits = 1_000;
  const failed = await execute({ mode: 'full' }, 'failing');
  expect(failed.status).toBe('FAILED');
  expect(failed.trace).toEqual(expect.arrayContaining(['Send to dead-letter queue', 'Crawl failed']));
  expect(dlq).toEqual([
    {
      execution: 'failing',
      startTime: expect.any(String),
      input: { mode: 'full' },
      error: { Error: 'Error', Cause: expect.stringContaining('injected unit failure') },
    },
  ]);
  const runId = (events.find((e) => e.action === 'unit') as { runId: string }).runId;
  // The run stays current: the next execution plans nothing new and finishes it.
  events = [];
  failUnits = 0;
  const next = await execute({ mode: 'auto' }, 'resuming');
  expect(next.status).toBe('SUCCEEDED');
  expect((next.output as { runId: string }).runId).toBe(runId);
  expect((await env.state.getPointer()).currentRun).toBeUndefined();
});

it('refuses events of another shape: the task fails, nothing is crawled', async () => {
  const { handler } = crawlerHandlers(() => env.newCrawler().crawler);
  await expect(handler({ action: 'unit', runId: 'r' })).rejects.toThrow('unit event needs runId and unitId');
  await expect(handler({ action: 'finalize' })).rejects.toThrow('finalize event needs runId');
  await expect(handler({ action: 'sweep' })).rejects.toThrow('unknown crawler action sweep');
});
