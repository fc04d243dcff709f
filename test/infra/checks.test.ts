/**
 * CDK assertions on the trust table (lib/catalog-data.ts) and the health check rounds
 * (lib/catalog-checks.ts) beside the crawler, synthesized without bundling (the bundles' size and
 * contents are checked by catalog-stack.test.ts); cdk-nag's packs run on the same app.
 */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { App, Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import type { IConstruct } from 'constructs';
import { CatalogChecks, type CatalogChecksProps } from '../../lib/catalog-checks';
import { CatalogCrawler } from '../../lib/catalog-crawler';
import { CatalogData, type CatalogDataProps } from '../../lib/catalog-data';
import { definitionOf } from '../support/asl';
import { nagViolations } from '../support/nag';

const ROOT = path.join(__dirname, '..', '..');
const CONTEXT = (JSON.parse(readFileSync(path.join(ROOT, 'cdk.json'), 'utf8')) as { context: Record<string, unknown> }).context;

type Statement = { Effect: string; Action: string | string[]; Resource: unknown };

function build(checks: Omit<CatalogChecksProps, 'data'> = {}, dataProps: CatalogDataProps = {}) {
  const app = new App({ context: { ...CONTEXT, 'aws:cdk:bundling-stacks': [] } });
  const stack = new Stack(app, 'ChecksTest', { env: { account: '123456789012', region: 'eu-west-1' } });
  const data = new CatalogData(stack, 'Data', dataProps);
  const crawler = new CatalogCrawler(stack, 'Crawler', { data, sharpLayer: 'skip' });
  const c = new CatalogChecks(stack, 'Checks', { data, ...checks });
  return { app, stack, data, crawler, checks: c, template: Template.fromStack(stack) };
}

const logicalId = (scope: IConstruct): string => Stack.of(scope).resolve((scope.node.defaultChild as unknown as { logicalId: string }).logicalId) as string;

/** The DynamoDB actions a role may take on one table (its ARN or ARN/index/*), sorted. */
function dynamoActionsOn(template: Template, role: IConstruct, table: IConstruct): string[] {
  const arn = JSON.stringify({ 'Fn::GetAtt': [logicalId(table), 'Arn'] });
  const statements = Object.values(template.findResources('AWS::IAM::Policy'))
    .filter((p) => JSON.stringify(p.Properties.Roles).includes(`"${logicalId(role)}"`))
    .flatMap((p) => p.Properties.PolicyDocument.Statement as Statement[]);
  const actions = statements
    .filter((s) => (Array.isArray(s.Resource) ? s.Resource : [s.Resource]).some((r) => JSON.stringify(r) === arn))
    .flatMap((s) => (Array.isArray(s.Action) ? s.Action : [s.Action]))
    .filter((a) => a.startsWith('dynamodb:'));
  return [...new Set(actions)].sort();
}

const f = build();

describe('the trust table', () => {
  it('slug + sk, TTL on expiresAt, on demand, PITR, SSE, retained with deletion protection', () => {
    const t = f.template.toJSON().Resources[logicalId(f.data.trustTable)];
    expect(t).toMatchObject({
      Type: 'AWS::DynamoDB::Table',
      DeletionPolicy: 'Retain',
      Properties: {
        KeySchema: [
          { AttributeName: 'slug', KeyType: 'HASH' },
          { AttributeName: 'sk', KeyType: 'RANGE' },
        ],
        TimeToLiveSpecification: { AttributeName: 'expiresAt', Enabled: true },
        BillingMode: 'PAY_PER_REQUEST',
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
        SSESpecification: { SSEEnabled: true },
        DeletionProtectionEnabled: true,
      },
    });
  });

  it('the crawler gets TRUST_TABLE and CHECK_RETENTION_DAYS and may only batch-write the changelog', () => {
    const vars = (f.template.toJSON().Resources[logicalId(f.crawler.fn)].Properties.Environment.Variables ?? {}) as Record<string, unknown>;
    expect(vars).toMatchObject({ TRUST_TABLE: { Ref: logicalId(f.data.trustTable) }, CHECK_RETENTION_DAYS: '90' });
    expect(dynamoActionsOn(f.template, f.crawler.role, f.data.trustTable)).toEqual(['dynamodb:BatchWriteItem']);
  });

  it('refuses a retention shorter than the 30 days uptime reads', () => {
    expect(() => build({}, { checkRetentionDays: 7 })).toThrow(/checkRetentionDays must be a whole number >= 30/);
    const vars = build({}, { checkRetentionDays: 120 }).template.findResources('AWS::Lambda::Function');
    expect(JSON.stringify(vars)).toContain('"CHECK_RETENTION_DAYS":"120"');
  });
});

describe('the check function', () => {
  it('gets the catalog, trust and search environment and the check settings', () => {
    const fn = f.template.toJSON().Resources[logicalId(f.checks.fn)];
    expect(fn.Properties).toMatchObject({
      Runtime: 'nodejs24.x',
      Architectures: ['arm64'],
      MemorySize: 512,
      Timeout: 600,
      Environment: {
        Variables: {
          POWERTOOLS_SERVICE_NAME: 'checks',
          CATALOG_TABLE: { Ref: logicalId(f.data.catalogTable) },
          TRUST_TABLE: { Ref: logicalId(f.data.trustTable) },
          CHECK_RETENTION_DAYS: '90',
          SEARCH_BACKEND: 'opensearch',
          OPENSEARCH_INDEX: 'catalog',
          CHECK_BATCH_SIZE: '100',
          CHECK_CONCURRENCY: '16',
          CHECK_DOWN_AFTER: '3',
        },
      },
    });
  });

  it('may do exactly what the adapters of a round do, nothing more', () => {
    expect(dynamoActionsOn(f.template, f.checks.role, f.data.catalogTable)).toEqual(['dynamodb:BatchWriteItem', 'dynamodb:Query']);
    expect(dynamoActionsOn(f.template, f.checks.role, f.data.trustTable)).toEqual(['dynamodb:BatchWriteItem', 'dynamodb:Query']);
    expect(dynamoActionsOn(f.template, f.checks.role, f.crawler.stateTable)).toEqual([]);
    // The small-catalog mode rebuilds the snapshot from a Scan of the catalog after a round.
    const embedded = build({}, { searchEngine: 'embedded' });
    expect(dynamoActionsOn(embedded.template, embedded.checks.role, embedded.data.catalogTable)).toEqual([
      'dynamodb:BatchWriteItem',
      'dynamodb:Query',
      'dynamodb:Scan',
    ]);
    expect(JSON.stringify(embedded.template.toJSON().Resources[logicalId(embedded.checks.fn)].Properties.Environment)).toContain('"SEARCH_BACKEND":"embedded"');
  });
});

describe('the round state machine and its schedule', () => {
  const [sm] = Object.values(f.template.findResources('AWS::StepFunctions::StateMachine')).filter((r) =>
    JSON.stringify(r.Properties.RoleArn).includes('ChecksStateMachineRole'),
  );
  const machine = definitionOf(sm.Properties.DefinitionString) as ReturnType<typeof definitionOf> & { TimeoutSeconds?: number };

  it('Plan → Map over the batches (bounded) → Finish, timed out at the rate', () => {
    expect(machine.StartAt).toBe('Plan');
    expect(machine.States.Plan).toMatchObject({ Type: 'Task', Next: 'Batches', Parameters: { Payload: { action: 'plan' } } });
    expect(machine.States.Batches).toMatchObject({ Type: 'Map', MaxConcurrency: 4, ItemsPath: '$.plan.batches', ResultPath: '$.results', Next: 'Finish' });
    expect(machine.States.Finish).toMatchObject({
      Type: 'Task',
      End: true,
      Parameters: { Payload: { action: 'finish', 'total.$': '$.plan.total', 'results.$': '$.results' } },
    });
    expect(machine.TimeoutSeconds).toBe(3600);
  });

  it('retries a batch only where the function did not run, and keeps a failed batch for Finish', () => {
    const processor = (
      machine.States.Batches as unknown as { ItemProcessor: { States: Record<string, { Retry?: Array<{ ErrorEquals: string[] }>; Catch?: unknown[] }> } }
    ).ItemProcessor.States;
    const retried = (processor.Batch.Retry ?? []).flatMap((r) => r.ErrorEquals);
    expect(retried).toContain('Lambda.TooManyRequestsException');
    expect(retried).not.toContain('States.TaskFailed');
    expect(processor.Batch.Catch).toEqual([{ ErrorEquals: ['States.ALL'], ResultPath: '$.error', Next: 'Batch failed' }]);
    const planRetries = ((machine.States.Plan as { Retry?: Array<{ ErrorEquals: string[] }> }).Retry ?? []).flatMap((r) => r.ErrorEquals);
    expect(planRetries).toContain('States.TaskFailed');
  });

  it('an EventBridge Scheduler schedule starts a round every hour by default, another rate per stage, or none', () => {
    f.template.hasResourceProperties('AWS::Scheduler::Schedule', {
      ScheduleExpression: 'rate(1 hour)',
      State: 'ENABLED',
      Target: { Arn: { Ref: logicalId(f.checks.stateMachine) }, RetryPolicy: { MaximumRetryAttempts: 2 } },
    });
    const every3h = build({ schedule: Duration.hours(3), maxConcurrency: 2 });
    every3h.template.hasResourceProperties('AWS::Scheduler::Schedule', { ScheduleExpression: 'rate(3 hours)' });
    const [sm3] = Object.values(every3h.template.findResources('AWS::StepFunctions::StateMachine')).filter((r) =>
      JSON.stringify(r.Properties.RoleArn).includes('ChecksStateMachineRole'),
    );
    expect(definitionOf(sm3.Properties.DefinitionString).States.Batches).toMatchObject({ MaxConcurrency: 2 });
    expect((definitionOf(sm3.Properties.DefinitionString) as { TimeoutSeconds?: number }).TimeoutSeconds).toBe(3 * 3600);
    build({ scheduleEnabled: false }).template.hasResourceProperties('AWS::Scheduler::Schedule', {
      ScheduleExpression: 'rate(1 hour)',
      State: 'DISABLED',
      Target: Match.objectLike({ Arn: Match.anyValue() }),
    });
    expect(() => build({ schedule: Duration.minutes(1) })).toThrow(/schedule must be a whole number of minutes >= 5/);
    expect(() => build({ maxConcurrency: 0 })).toThrow(/maxConcurrency must be a whole number >= 1/);
  });

  it('alarms on failed and timed-out rounds', () => {
    for (const metric of ['ExecutionsFailed', 'ExecutionsTimedOut'])
      f.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
        MetricName: metric,
        Namespace: 'AWS/States',
        Dimensions: [{ Name: 'StateMachineArn', Value: { Ref: logicalId(f.checks.stateMachine) } }],
        Threshold: 1,
      });
  });
});

describe('cdk-nag', () => {
  it('has no unacknowledged finding on the trust table, the check function, its state machine and schedule', () => {
    const found = nagViolations(f.app).flatMap((v) => v.violatingResources.map((r) => `${v.ruleName} at ${r.constructPath}`));
    expect(found).toEqual([]);
  });

  it('is clean with the data destroyed with the stack too', () => {
    const d = build({}, { removalPolicy: RemovalPolicy.DESTROY });
    expect(d.template.toJSON().Resources[logicalId(d.data.trustTable)].DeletionPolicy).toBe('Delete');
  });
});
