import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { checkHandlers } from '../../lambdas/crawler/check-handler';
import { loadCrawlerConfig } from '../../lambdas/crawler/config';
import { createChecker } from '../../lambdas/crawler/check-wiring';
import { CatalogChecks } from '../../lib/catalog-checks';
import { CatalogData } from '../../lib/catalog-data';
import { definitionOf, runStateMachine, type AslMachine } from '../support/asl';
import { startTestCatalog, type TestCatalog } from '../support/catalog-harness';
import { startSwitchableMcp, type SwitchableMcp } from '../support/crawler-fakes';
import { docOf, makeRecord } from '../support/records';

/**
 * The check schedule's Lambda entry (lambdas/crawler/check-handler.ts) driven by the state machine
 * CDK synthesizes for it (lib/catalog-checks.ts), interpreted by test/support/asl.ts: the plan,
 * batch and finish events are the ones its Parameters and ItemSelector build, and a failed batch
 * takes its Catch. Behind the handler: DynamoDB Local, the embedded index, a loopback MCP server.
 */
jest.setTimeout(120_000);

function synthesizedDefinition(): AslMachine {
  const stack = new Stack(new App({ context: { 'aws:cdk:bundling-stacks': [] } }), 'ChecksMachine');
  new CatalogChecks(stack, 'Checks', { data: new CatalogData(stack, 'Data', { searchEngine: 'embedded' }), maxConcurrency: 2 });
  const [machine] = Object.values(Template.fromStack(stack).findResources('AWS::StepFunctions::StateMachine')) as Array<{
    Properties: { DefinitionString: unknown };
  }>;
  return definitionOf(machine.Properties.DefinitionString);
}

const machine = synthesizedDefinition();
const SLUGS = ['alpha', 'beta', 'gamma'];
let catalog: TestCatalog;
let fake: SwitchableMcp;
let events: Array<Record<string, unknown>>;
let failOffsets: number[];

async function execute(id: string) {
  const { deps } = createChecker(loadCrawlerConfig({ CRAWLER_ALLOW_PRIVATE_HOSTS: 'true' }), {
    store: catalog.deps.store,
    index: catalog.deps.index,
    trust: catalog.deps.trust,
    // Two batches of the three hosted servers.
    settings: { batchSize: 2 },
  });
  const { handler } = checkHandlers(async () => ({ deps }));
  return runStateMachine(
    machine,
    {},
    {
      lambda: async (payload) => {
        const event = payload as Record<string, unknown>;
        events.push(event);
        if (event.action === 'batch' && failOffsets.includes(event.offset as number))
          throw Object.assign(new Error('injected batch failure'), { name: 'Error' });
        return handler(event);
      },
      sqs: async () => undefined,
    },
    id,
  );
}

const checksOf = async (slug: string) => (await catalog.deps.trust.checks(slug, '2000-01-01T00:00:00.000Z')).length;

beforeAll(async () => {
  catalog = await startTestCatalog();
  fake = await startSwitchableMcp([{ name: 'ping', description: 'Answers pong to check the server is reachable', inputSchema: { type: 'object' } }]);
  const records = SLUGS.map((slug) => makeRecord(slug, { remotes: [{ type: 'streamable-http', url: fake.url }] }));
  await catalog.deps.store.put(records.map((record) => ({ record })));
  await catalog.deps.index.upsert(records.map((record) => docOf({ record })));
});
afterAll(async () => {
  await fake?.close();
  await catalog?.close();
});
beforeEach(() => {
  events = [];
  failOffsets = [];
});

it('a scheduled round: Plan cuts the hosted servers into batches, the Map checks each, Finish sums them', async () => {
  const run = await execute('round-1');
  expect(run.status).toBe('SUCCEEDED');
  expect(run.output).toEqual({ total: 3, batches: 2, checked: 3, up: 3, auth: 0, down: 0, markedDown: 0, skipped: 0 });
  expect(events.filter((e) => e.action === 'batch').map((e) => [e.offset, e.limit])).toEqual(
    expect.arrayContaining([
      [0, 2],
      [2, 1],
    ]),
  );
  for (const slug of SLUGS) expect(await checksOf(slug)).toBe(1);
});

it('a failed batch is not retried (a check is one observation): the other batch is written, Finish runs, then the round fails', async () => {
  const before = await Promise.all(SLUGS.map(checksOf));
  failOffsets = [0];
  const run = await execute('round-2');
  expect(run.status).toBe('FAILED');
  expect(run.error?.Cause).toContain('1 of 2 check batches failed');
  expect(events.filter((e) => e.action === 'batch' && e.offset === 0)).toHaveLength(1);
  expect(events.at(-1)).toMatchObject({ action: 'finish', total: 3 });
  const after = await Promise.all(SLUGS.map(checksOf));
  // Name order: alpha and beta were the failed batch, gamma the other.
  expect(after.map((n, i) => n - before[i])).toEqual([0, 0, 1]);
});

it('refuses a batch event without a range', async () => {
  const { handler } = checkHandlers(async () => {
    throw new Error('never built');
  });
  await expect(handler({ action: 'batch', offset: -1, limit: 2 })).rejects.toThrow(/needs offset and limit/);
  await expect(handler({ action: 'sweep' })).rejects.toThrow(/unknown check action sweep/);
});
