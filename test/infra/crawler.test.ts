/**
 * CDK assertions on the crawler (lib/catalog-crawler.ts) next to the catalog's data, synthesized
 * once with the function bundled by the local esbuild; cdk-nag's AwsSolutions rules run on that
 * app the way test/infra/catalog-stack.test.ts runs them. Variants (props, layers) skip bundling.
 */
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { App, Duration, RemovalPolicy, Stack, Validations, type PolicyViolation } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import * as cloudwatchActions from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import * as sns from 'aws-cdk-lib/aws-sns';
import type { IConstruct } from 'constructs';
import { crawlerTableDefinitions } from '../../lambdas/crawler/adapters/dynamo-crawl-state';
import { CatalogCrawler, sharpLayerState, type CatalogCrawlerProps } from '../../lib/catalog-crawler';
import { CatalogData, type CatalogDataProps } from '../../lib/catalog-data';
import { nagViolations } from '../support/nag';

const ROOT = path.join(__dirname, '..', '..');
/** The feature flags of cdk.json, so the test synthesizes what `cdk synth` does. */
const CONTEXT = (JSON.parse(readFileSync(path.join(ROOT, 'cdk.json'), 'utf8')) as { context: Record<string, unknown> }).context;
const ENV = { account: '123456789012', region: 'eu-west-1' };
const TOKEN_ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:github-token-AbCdEf';

type Statement = { Effect: string; Action: string | string[]; Resource: unknown; Condition?: unknown };
type Resources = Record<string, { Type: string; Properties?: Record<string, unknown>; DeletionPolicy?: string }>;

interface Fixture {
  app: App;
  stack: Stack;
  data: CatalogData;
  crawler: CatalogCrawler;
  template: Template;
  resources: Resources;
}

/** Directories created by the tests (empty or fake sharp layer builds), removed at the end. */
const tempDirs: string[] = [];
function tempDir(prefix: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  tempDirs.push(dir);
  return dir;
}
/** A directory laid out as a built layer (the files only, no binaries). */
function fakeSharpBuild(): string {
  const dir = tempDir('crawler-sharp-build-');
  for (const pkg of ['sharp', '@img/sharp-linux-arm64']) {
    mkdirSync(path.join(dir, 'nodejs', 'node_modules', pkg), { recursive: true });
    writeFileSync(path.join(dir, 'nodejs', 'node_modules', pkg, 'package.json'), JSON.stringify({ name: pkg, version: '0.34.4' }));
  }
  return dir;
}

/**
 * An `npm` that records its arguments and installs what the real one would for
 * `--os=linux --cpu=arm64` (package.json files only), or fails: the package registry is never reached.
 */
function fakeNpm(mode: 'install' | 'fail'): { npm: string; calls(): string[][] } {
  const dir = tempDir('crawler-fake-npm-');
  const log = path.join(dir, 'calls.jsonl');
  const npm = path.join(dir, 'npm');
  writeFileSync(
    npm,
    [
      '#!/usr/bin/env node',
      "const fs = require('node:fs'); const path = require('node:path');",
      `fs.appendFileSync(${JSON.stringify(log)}, JSON.stringify(process.argv.slice(2)) + '\\n');`,
      mode === 'fail' ? "console.error('npm error network: getaddrinfo ENOTFOUND (fake)'); process.exit(1);" : '',
      "for (const pkg of ['sharp', '@img/sharp-linux-arm64', '@img/sharp-libvips-linux-arm64']) {",
      "  const d = path.join(process.cwd(), 'node_modules', pkg); fs.mkdirSync(d, { recursive: true });",
      "  fs.writeFileSync(path.join(d, 'package.json'), JSON.stringify({ name: pkg, version: '0.34.4' }));",
      '}',
    ].join('\n'),
  );
  chmodSync(npm, 0o755);
  return {
    npm,
    calls: () =>
      existsSync(log)
        ? readFileSync(log, 'utf8')
            .trim()
            .split('\n')
            .map((l) => JSON.parse(l) as string[])
        : [],
  };
}

type CrawlerProps = Omit<CatalogCrawlerProps, 'data'>;

function build(crawlerProps: CrawlerProps | ((stack: Stack) => CrawlerProps) = {}, options: { bundle?: boolean; dataProps?: CatalogDataProps } = {}): Fixture {
  const context = options.bundle ? CONTEXT : { ...CONTEXT, 'aws:cdk:bundling-stacks': [] };
  const app = new App({ context });
  const stack = new Stack(app, 'CrawlerTest', { env: ENV });
  const data = new CatalogData(stack, 'Data', options.dataProps);
  // The placeholder layer unless a test says otherwise: a test never installs from the package registry.
  const props = typeof crawlerProps === 'function' ? crawlerProps(stack) : crawlerProps;
  const crawler = new CatalogCrawler(stack, 'Crawler', { data, sharpLayer: 'skip', ...props });
  const template = Template.fromStack(stack);
  return { app, stack, data, crawler, template, resources: template.toJSON().Resources as Resources };
}

function logicalId(scope: IConstruct): string {
  const cfn = scope.node.defaultChild ?? scope;
  return Stack.of(scope).resolve((cfn as unknown as { logicalId: string }).logicalId) as string;
}

const getAtt = (scope: IConstruct, attr = 'Arn') => ({ 'Fn::GetAtt': [logicalId(scope), attr] });
const ref = (scope: IConstruct) => ({ Ref: logicalId(scope) });

/** The statements of the inline policies attached to a role. */
function statementsOf(f: Fixture, roleLogicalId: string): Statement[] {
  return Object.values(f.template.findResources('AWS::IAM::Policy'))
    .filter((p) => (p.Properties.Roles as unknown[]).some((r) => JSON.stringify(r) === JSON.stringify({ Ref: roleLogicalId })))
    .flatMap((p) => p.Properties.PolicyDocument.Statement as Statement[]);
}
const actionsOf = (st: Statement) => (Array.isArray(st.Action) ? st.Action : [st.Action]);
const resourcesOf = (st: Statement) => (Array.isArray(st.Resource) ? st.Resource : [st.Resource]);
function statementWith(statements: Statement[], action: string, resource?: unknown): Statement {
  const found = statements.filter(
    (st) => actionsOf(st).includes(action) && (resource === undefined || JSON.stringify(resourcesOf(st)) === JSON.stringify([resource])),
  );
  expect(found).toHaveLength(1);
  return found[0];
}

/** The state machine's definition with CloudFormation references flattened (`<LogicalId.Attr>`). */
interface AslState {
  Type: string;
  Next?: string;
  End?: boolean;
  Default?: string;
  Choices?: Record<string, unknown>[];
  Parameters?: Record<string, unknown>;
  Resource?: string;
  Retry?: Record<string, unknown>[];
  Catch?: Record<string, unknown>[];
  Branches?: { StartAt: string; States: Record<string, AslState> }[];
  ItemProcessor?: { StartAt: string; States: Record<string, AslState> };
  [key: string]: unknown;
}
function definitionOf(f: Fixture): { StartAt: string; States: Record<string, AslState>; TimeoutSeconds?: number } {
  const [sm] = Object.values(f.template.findResources('AWS::StepFunctions::StateMachine'));
  const [, parts] = sm.Properties.DefinitionString['Fn::Join'] as [string, unknown[]];
  const text = parts
    .map((p) => {
      if (typeof p === 'string') return p;
      const o = p as { Ref?: string; 'Fn::GetAtt'?: [string, string] };
      return o.Ref !== undefined ? `<${o.Ref}>` : `<${o['Fn::GetAtt']?.join('.')}>`;
    })
    .join('');
  return JSON.parse(text);
}

function describeViolations(violations: PolicyViolation[]): string[] {
  return violations.flatMap((v) => v.violatingResources.map((r) => `${v.severity} ${v.ruleName} at ${r.constructPath}: ${v.description}`));
}

let f: Fixture;
let violations: PolicyViolation[];
let states: Record<string, AslState>;

beforeAll(() => {
  f = build((stack) => ({ githubTokenSecret: secretsmanager.Secret.fromSecretCompleteArn(stack, 'Token', TOKEN_ARN) }), { bundle: true });
  violations = nagViolations(f.app);
  const definition = definitionOf(f);
  expect(definition.StartAt).toBe('Crawl');
  states = { ...definition.States, ...definition.States.Crawl.Branches?.[0].States };
}, 180_000);

afterAll(() => {
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
});

describe('crawl-state table', () => {
  it('mirrors crawlerTableDefinitions: pk + sk, on demand, TTL on expiresAt', () => {
    const [def] = crawlerTableDefinitions('crawl-state');
    const table = f.resources[logicalId(f.crawler.stateTable)];
    expect(table.Properties).toMatchObject({
      KeySchema: def.input.KeySchema,
      AttributeDefinitions: def.input.AttributeDefinitions,
      BillingMode: def.input.BillingMode,
      TimeToLiveSpecification: { AttributeName: def.ttl, Enabled: true },
    });
  });

  it('has PITR and encryption, and is retained like the catalog table', () => {
    const table = f.resources[logicalId(f.crawler.stateTable)];
    expect(table.DeletionPolicy).toBe('Retain');
    expect(table.Properties).toMatchObject({
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      SSESpecification: { SSEEnabled: true },
      DeletionProtectionEnabled: true,
    });
  });
});

describe('crawler function', () => {
  it('runs Node.js 24 on arm64 for up to 15 minutes, with the sharp layer', () => {
    const fn = f.resources[logicalId(f.crawler.fn)];
    expect(fn.Properties).toMatchObject({
      Runtime: 'nodejs24.x',
      Architectures: ['arm64'],
      Handler: 'index.handler',
      Timeout: 900,
      MemorySize: 1024,
      Layers: [ref(f.crawler.sharpLayer)],
    });
    f.template.hasResourceProperties('AWS::Lambda::LayerVersion', {
      CompatibleRuntimes: ['nodejs24.x'],
      CompatibleArchitectures: ['arm64'],
    });
  });

  it('gets the environment lambdas/crawler/config.ts and lambdas/catalog/config.ts read', () => {
    const env = ((f.resources[logicalId(f.crawler.fn)].Properties as Record<string, unknown>).Environment as { Variables: Record<string, unknown> }).Variables;
    expect(env).toMatchObject({
      REGISTRY_URL: 'https://registry.modelcontextprotocol.io',
      CRAWL_STATE_TABLE: ref(f.crawler.stateTable),
      CATALOG_TABLE: ref(f.data.catalogTable),
      ICONS_BUCKET: ref(f.data.iconsBucket),
      SEARCH_BACKEND: 'opensearch',
      OPENSEARCH_URL: { 'Fn::Join': ['', ['https://', getAtt(f.data.searchDomain as IConstruct, 'DomainEndpoint')]] },
      OPENSEARCH_INDEX: 'catalog',
      GITHUB_TOKEN_SECRET_ARN: TOKEN_ARN,
      POWERTOOLS_SERVICE_NAME: 'crawler',
      NODE_OPTIONS: '--enable-source-maps',
    });
  });

  it('bundles the handler with sharp and the AWS SDK left external (require, so NODE_PATH finds the layer)', () => {
    const assembly = f.app.synth();
    const code = f.resources[logicalId(f.crawler.fn)].Properties?.Code as { S3Key: string };
    const bundle = readFileSync(path.join(assembly.directory, `asset.${code.S3Key.replace(/\.zip$/, '')}`, 'index.js'), 'utf8');
    expect(bundle).toContain('require("sharp")');
    expect(bundle).not.toContain('import("sharp")');
    expect(bundle).toContain('require("@aws-sdk/client-dynamodb")');
    // The handler's three actions are in the bundle.
    expect(bundle).toMatch(/unknown crawler action/);
  });
});

describe('state machine', () => {
  it('plans in a loop while planned = false, defaulting the mode to auto', () => {
    expect(states['Mode given?']).toMatchObject({ Type: 'Choice', Choices: [{ Variable: '$.mode', IsPresent: true, Next: 'Plan' }], Default: 'Default mode' });
    expect(states['Default mode']).toMatchObject({ Type: 'Pass', Result: 'auto', ResultPath: '$.mode', Next: 'Plan' });
    expect(states.Plan).toMatchObject({
      Type: 'Task',
      Resource: 'arn:<AWS::Partition>:states:::lambda:invoke',
      Parameters: { FunctionName: `<${logicalId(f.crawler.fn)}.Arn>`, Payload: { action: 'plan', 'mode.$': '$.mode' } },
      ResultPath: '$.plan',
      Next: 'Planned?',
    });
    expect(states['Planned?']).toMatchObject({
      Type: 'Choice',
      Choices: [{ Variable: '$.plan.planned', BooleanEquals: false, Next: 'Plan' }],
      Default: 'Units',
    });
  });

  it('maps over the units, 4 at a time, invoking action unit with retries (exponential backoff + jitter)', () => {
    const map = states.Units;
    expect(map).toMatchObject({ Type: 'Map', ItemsPath: '$.plan.units', MaxConcurrency: 4, ResultPath: null, Next: 'Finalize' });
    const unit = map.ItemProcessor?.States.Unit as AslState;
    expect(unit).toMatchObject({
      Type: 'Task',
      Parameters: { FunctionName: `<${logicalId(f.crawler.fn)}.Arn>`, Payload: { action: 'unit', 'runId.$': '$.runId', 'unitId.$': '$.unitId' } },
    });
    expect(unit.Retry).toEqual([
      expect.objectContaining({
        ErrorEquals: expect.arrayContaining(['Lambda.ServiceException', 'Lambda.TooManyRequestsException']),
        BackoffRate: 2,
        JitterStrategy: 'FULL',
      }),
      expect.objectContaining({ ErrorEquals: ['States.TaskFailed'], MaxAttempts: 3, BackoffRate: 2, JitterStrategy: 'FULL' }),
    ]);
  });

  it('finalizes the planned run', () => {
    expect(states.Finalize).toMatchObject({
      Type: 'Task',
      Parameters: { Payload: { action: 'finalize', 'runId.$': '$.plan.runId' } },
      End: true,
    });
    expect(states.Finalize.Retry).toHaveLength(2);
    expect(states.Plan.Retry).toEqual(states.Finalize.Retry);
  });

  it('catches any failure of the flow, sends input + error to the dead-letter queue, then fails', () => {
    expect(states.Crawl).toMatchObject({
      Type: 'Parallel',
      Catch: [{ ErrorEquals: ['States.ALL'], ResultPath: '$.error', Next: 'Send to dead-letter queue' }],
      Next: 'Done',
    });
    expect(states['Send to dead-letter queue']).toMatchObject({
      Type: 'Task',
      Resource: 'arn:<AWS::Partition>:states:::sqs:sendMessage',
      Parameters: {
        QueueUrl: `<${logicalId(f.crawler.deadLetterQueue)}>`,
        MessageBody: { 'input.$': '$$.Execution.Input', 'error.$': '$.error', 'execution.$': '$$.Execution.Id' },
      },
      Next: 'Crawl failed',
    });
    expect(states['Crawl failed']).toMatchObject({ Type: 'Fail', ErrorPath: '$.error.Error', CausePath: '$.error.Cause' });
  });

  it('logs every event to its log group and is traced with X-Ray', () => {
    const sm = f.resources[logicalId(f.crawler.stateMachine)];
    expect(sm.Properties).toMatchObject({
      StateMachineType: 'STANDARD',
      TracingConfiguration: { Enabled: true },
      LoggingConfiguration: {
        Level: 'ALL',
        IncludeExecutionData: true,
        Destinations: [{ CloudWatchLogsLogGroup: { LogGroupArn: { 'Fn::GetAtt': [expect.stringMatching(/^CrawlerStateMachineLogs/), 'Arn'] } } }],
      },
    });
    f.template.hasResourceProperties('AWS::Logs::LogGroup', { LogGroupName: Match.stringLikeRegexp('^/aws/vendedlogs/states/'), RetentionInDays: 30 });
    expect(sm.Properties?.DefinitionString).toBeDefined();
    expect(definitionOf(f).TimeoutSeconds).toBeUndefined();
  });
});

describe('schedule, dead-letter queue and alarms', () => {
  it('starts the state machine every 6 hours (EventBridge Scheduler), undelivered starts to the DLQ', () => {
    f.template.resourceCountIs('AWS::Scheduler::Schedule', 1);
    f.template.hasResourceProperties('AWS::Scheduler::Schedule', {
      ScheduleExpression: 'rate(6 hours)',
      State: 'ENABLED',
      FlexibleTimeWindow: { Mode: 'OFF' },
      Target: {
        Arn: ref(f.crawler.stateMachine),
        Input: JSON.stringify({ mode: 'auto' }),
        DeadLetterConfig: { Arn: getAtt(f.crawler.deadLetterQueue) },
        RetryPolicy: { MaximumRetryAttempts: 3, MaximumEventAgeInSeconds: 3600 },
      },
    });
  });

  it('has an encrypted dead-letter queue that refuses plain HTTP', () => {
    f.template.resourceCountIs('AWS::SQS::Queue', 1);
    expect(f.resources[logicalId(f.crawler.deadLetterQueue)].Properties).toMatchObject({
      SqsManagedSseEnabled: true,
      MessageRetentionPeriod: 14 * 24 * 3600,
    });
    f.template.hasResourceProperties('AWS::SQS::QueuePolicy', {
      Queues: [ref(f.crawler.deadLetterQueue)],
      PolicyDocument: {
        Statement: Match.arrayWith([Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } })]),
      },
    });
  });

  it('alarms on a failed execution and on a message in the dead-letter queue', () => {
    f.template.resourceCountIs('AWS::CloudWatch::Alarm', 2);
    f.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'AWS/States',
      MetricName: 'ExecutionsFailed',
      Dimensions: [{ Name: 'StateMachineArn', Value: ref(f.crawler.stateMachine) }],
      Statistic: 'Sum',
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      EvaluationPeriods: 1,
      TreatMissingData: 'notBreaching',
    });
    f.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'AWS/SQS',
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Dimensions: [{ Name: 'QueueName', Value: getAtt(f.crawler.deadLetterQueue, 'QueueName') }],
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
    });
  });
});

describe('least privilege', () => {
  it('the crawler role: exactly the tables, the icons prefix, the search domain and the token secret', () => {
    const role = f.resources[logicalId(f.crawler.role)];
    expect(role.Properties?.ManagedPolicyArns).toBeUndefined();
    const statements = statementsOf(f, logicalId(f.crawler.role));

    // The catalog: what DynamoCatalogStore's get, put and delete send.
    const catalog = statementWith(statements, 'dynamodb:BatchWriteItem', getAtt(f.data.catalogTable));
    expect(actionsOf(catalog).sort()).toEqual(['dynamodb:BatchWriteItem', 'dynamodb:GetItem', 'dynamodb:Query']);
    // The crawl state: what DynamoCrawlState sends (transactions need Put and Update).
    const state = statementWith(statements, 'dynamodb:UpdateItem', getAtt(f.crawler.stateTable));
    expect(actionsOf(state).sort()).toEqual([
      'dynamodb:BatchGetItem',
      'dynamodb:BatchWriteItem',
      'dynamodb:GetItem',
      'dynamodb:PutItem',
      'dynamodb:Query',
      'dynamodb:Scan',
      'dynamodb:UpdateItem',
    ]);
    // The trust table: the changelog of each crawl's captured tools, written in batches.
    const trust = statementWith(statements, 'dynamodb:BatchWriteItem', getAtt(f.data.trustTable));
    expect(actionsOf(trust).sort()).toEqual(['dynamodb:BatchWriteItem']);
    const tableStatements = statements.filter((st) => actionsOf(st).some((a) => a.startsWith('dynamodb:')));
    expect(tableStatements).toHaveLength(3);

    const objects = statementWith(statements, 's3:PutObject');
    expect(actionsOf(objects).sort()).toEqual(['s3:GetObject', 's3:PutObject']);
    expect(resourcesOf(objects)).toEqual([{ 'Fn::Join': ['', [getAtt(f.data.iconsBucket), '/api/icons/*']] }]);
    expect(resourcesOf(statementWith(statements, 's3:ListBucket'))).toEqual([getAtt(f.data.iconsBucket)]);

    const search = statementWith(statements, 'es:ESHttpPut');
    expect(resourcesOf(search)).toEqual([{ 'Fn::Join': ['', [getAtt(f.data.searchDomain as IConstruct), '/*']] }]);
    expect(actionsOf(search).sort()).toEqual(['es:ESHttpDelete', 'es:ESHttpGet', 'es:ESHttpHead', 'es:ESHttpPatch', 'es:ESHttpPost', 'es:ESHttpPut']);

    expect(resourcesOf(statementWith(statements, 'secretsmanager:GetSecretValue'))).toEqual([TOKEN_ARN]);
    expect(resourcesOf(statementWith(statements, 'logs:PutLogEvents'))).toEqual([getAtt(f.crawler.fn.logGroup)]);

    const actions = statements.flatMap(actionsOf);
    expect(actions.filter((a) => a.includes('*'))).toEqual([]);
    for (const forbidden of ['dynamodb:DeleteItem', 'dynamodb:DeleteTable', 's3:DeleteObject', 'kms:Decrypt', 'lambda:InvokeFunction']) {
      expect(actions).not.toContain(forbidden);
    }
    // Nothing else: logs, X-Ray (active tracing), 3 tables, icons (objects + list), search, secret.
    expect(statements).toHaveLength(9);
    expect(actionsOf(statementWith(statements, 'xray:PutTraceSegments')).sort()).toEqual(['xray:PutTelemetryRecords', 'xray:PutTraceSegments']);
  });

  it('the search domain admits the crawler role (read and write)', () => {
    const domain = f.resources[logicalId(f.data.searchDomain as IConstruct)];
    const statements = ((domain.Properties as Record<string, unknown>).AccessPolicies as { Statement: { Principal: unknown; Action: string[] }[] }).Statement;
    expect(statements).toEqual([expect.objectContaining({ Principal: { AWS: getAtt(f.crawler.role) } })]);
    expect([...statements[0].Action].sort()).toContain('es:ESHttpPut');
  });

  it('the state machine role: invoke the crawler, send to the DLQ, tracing and log delivery', () => {
    const statements = statementsOf(f, logicalId(f.crawler.stateMachine.role));
    expect(resourcesOf(statementWith(statements, 'lambda:InvokeFunction'))).toEqual([getAtt(f.crawler.fn), { 'Fn::Join': ['', [getAtt(f.crawler.fn), ':*']] }]);
    expect(resourcesOf(statementWith(statements, 'sqs:SendMessage'))).toEqual([getAtt(f.crawler.deadLetterQueue)]);
    const wildcard = statements.filter((st) => resourcesOf(st).includes('*'));
    expect(wildcard.flatMap(actionsOf).every((a) => a.startsWith('xray:') || a.startsWith('logs:'))).toBe(true);
  });

  it('the schedule role: start this state machine and send to the DLQ, nothing else', () => {
    const [schedule] = Object.values(f.template.findResources('AWS::Scheduler::Schedule'));
    const roleId = (schedule.Properties.Target.RoleArn as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
    const statements = statementsOf(f, roleId);
    expect(statements.map((st) => [actionsOf(st), resourcesOf(st)])).toEqual([
      [['states:StartExecution'], [ref(f.crawler.stateMachine)]],
      [['sqs:SendMessage'], [getAtt(f.crawler.deadLetterQueue)]],
    ]);
  });
});

describe('cdk-nag (AwsSolutions and Serverless)', () => {
  it('has no unacknowledged error or warning', () => {
    expect(describeViolations(violations)).toEqual([]);
    const annotations = Annotations.fromStack(f.stack);
    expect(annotations.findError('*', Match.anyValue())).toEqual([]);
    expect(annotations.findWarning('*', Match.stringLikeRegexp('AwsSolutions-.*'))).toEqual([]);
  });

  it("acknowledges the crawler's findings with specific reasons", () => {
    const acks: { path: string; id: string; reason: string }[] = [];
    for (const c of f.crawler.node.findAll()) {
      for (const entry of c.node.metadata) {
        if (entry.type !== Validations.ACKNOWLEDGED_RULES_METADATA_KEY) continue;
        for (const [id, reason] of Object.entries(entry.data as Record<string, string>)) {
          acks.push({ path: c.node.path, id: id.replace(/^Annotation::/, ''), reason });
        }
      }
    }
    expect(acks.map((a) => a.id).sort()).toEqual(
      [
        `AwsSolutions-IAM5[Resource::<${logicalId(f.crawler.fn)}.Arn>:*]`,
        // The state machine's tracing and log delivery, and the function's own X-Ray tracing.
        'AwsSolutions-IAM5[Resource::*]',
        'AwsSolutions-IAM5[Resource::*]',
        // Invoked synchronously by Step Functions; the dead-letter queue is itself the DLQ.
        'Serverless-LambdaAsyncFailureDestination',
        'Serverless-LambdaDLQ',
        'Serverless-SQSRedrivePolicy',
        `AwsSolutions-IAM5[Resource::<${logicalId(f.data.iconsBucket)}.Arn>/api/icons/*]`,
        // From data.grantSearch(role, 'readwrite'): the paths of the one search domain.
        `AwsSolutions-IAM5[Resource::<${logicalId(f.data.searchDomain as IConstruct)}.Arn>/*]`,
        'AwsSolutions-SQS3',
      ].sort(),
    );
    for (const a of acks) expect(a.reason.length).toBeGreaterThanOrEqual(40);
  });
});

describe('the sharp layer', () => {
  const warningPattern = Match.stringLikeRegexp('sharp layer could not be built');

  it('skipped: an empty placeholder layer and no icon step, without a warning (it was asked for)', () => {
    expect(f.crawler.sharpAvailable).toBe(false);
    expect(Annotations.fromStack(f.stack).findWarning('*', warningPattern)).toEqual([]);
    const env = ((f.resources[logicalId(f.crawler.fn)].Properties as Record<string, unknown>).Environment as { Variables: Record<string, unknown> }).Variables;
    expect(env.CRAWLER_STEPS).toBe('github,readme,downloads,health,classifier');
    expect(f.resources[logicalId(f.crawler.sharpLayer)].Properties?.Description).toMatch(/placeholder/i);
  });

  it('built by synth: npm installs sharp for linux-arm64 (glibc) once, into the cache; the next synth reuses it', () => {
    const cache = path.join(tempDir('crawler-sharp-cache-'), 'sharp-layer-0.34.4-linux-arm64-glibc');
    const fake = fakeNpm('install');
    const first = build({ sharpLayer: 'build', sharpLayerCacheDir: cache, sharpLayerNpm: fake.npm });
    expect(first.crawler.sharpAvailable).toBe(true);
    expect(fake.calls()).toHaveLength(1);
    expect(fake.calls()[0]).toEqual(expect.arrayContaining(['install', '--os=linux', '--cpu=arm64', '--libc=glibc', '--ignore-scripts', 'sharp@0.34.4']));
    expect(sharpLayerState(cache)).toBe('ok');
    const env = ((first.resources[logicalId(first.crawler.fn)].Properties as Record<string, unknown>).Environment as { Variables: Record<string, unknown> })
      .Variables;
    expect(env.CRAWLER_STEPS).toBeUndefined();
    expect(first.resources[logicalId(first.crawler.sharpLayer)].Properties?.Description).toMatch(/sharp 0\.34\.4 for linux-arm64/);
    expect(Annotations.fromStack(first.stack).findWarning('*', warningPattern)).toEqual([]);
    // Cached: no second install.
    const second = build({ sharpLayer: 'build', sharpLayerCacheDir: cache, sharpLayerNpm: fake.npm });
    expect(second.crawler.sharpAvailable).toBe(true);
    expect(fake.calls()).toHaveLength(1);
  });

  it('offline (npm fails): the placeholder, a synth warning naming the failure, and no icon step', () => {
    const cache = path.join(tempDir('crawler-sharp-cache-'), 'sharp-layer-0.34.4-linux-arm64-glibc');
    const fake = fakeNpm('fail');
    const offline = build({ sharpLayer: 'build', sharpLayerCacheDir: cache, sharpLayerNpm: fake.npm });
    expect(offline.crawler.sharpAvailable).toBe(false);
    const warnings = Annotations.fromStack(offline.stack).findWarning('*', warningPattern);
    expect(warnings).toHaveLength(1);
    expect(warnings[0].entry.data).toMatch(/ENOTFOUND/);
    expect(sharpLayerState(cache)).toBe('missing');
  });

  it('tells a build for another platform from a missing one', () => {
    const dir = fakeSharpBuild();
    expect(sharpLayerState(dir)).toBe('ok');
    rmSync(path.join(dir, 'nodejs', 'node_modules', '@img'), { recursive: true });
    expect(sharpLayerState(dir)).toBe('wrong-platform');
    expect(sharpLayerState(tempDir('crawler-empty-'))).toBe('missing');
  });

  it('a given layer is used as is', () => {
    const arn = 'arn:aws:lambda:eu-west-1:123456789012:layer:sharp:3';
    const given = build((stack) => ({ sharpLayer: lambda.LayerVersion.fromLayerVersionArn(stack, 'Sharp', arn) }));
    given.template.resourceCountIs('AWS::Lambda::LayerVersion', 0);
    expect(given.resources[logicalId(given.crawler.fn)].Properties?.Layers).toEqual([arn]);
    expect(Annotations.fromStack(given.stack).findWarning('*', warningPattern)).toEqual([]);
  });
});

describe('props', () => {
  it('schedule rate, concurrency, memory, registry, steps, timeout, alarm actions and removal policy', () => {
    const custom = build(
      (stack) => ({
        schedule: Duration.minutes(30),
        scheduleEnabled: false,
        maxConcurrency: 8,
        memorySize: 2048,
        taskRetries: 5,
        registryUrl: 'https://registry.example.com',
        steps: ['github', 'icon'],
        searchIndex: 'catalog-v2',
        executionTimeout: Duration.hours(2),
        alarmActions: [new cloudwatchActions.SnsAction(sns.Topic.fromTopicArn(stack, 'Alarms', 'arn:aws:sns:eu-west-1:123456789012:alarms'))],
        environment: { CRAWLER_HOST_CONCURRENCY: '2' },
      }),
      { dataProps: { removalPolicy: RemovalPolicy.DESTROY } },
    );
    custom.template.hasResourceProperties('AWS::Scheduler::Schedule', { ScheduleExpression: 'rate(30 minutes)', State: 'DISABLED' });
    const fn = custom.resources[logicalId(custom.crawler.fn)].Properties as Record<string, unknown>;
    expect(fn.MemorySize).toBe(2048);
    expect((fn.Environment as { Variables: Record<string, unknown> }).Variables).toMatchObject({
      REGISTRY_URL: 'https://registry.example.com',
      CRAWLER_STEPS: 'github,icon',
      OPENSEARCH_INDEX: 'catalog-v2',
      CRAWLER_HOST_CONCURRENCY: '2',
    });
    expect((fn.Environment as { Variables: Record<string, unknown> }).Variables).not.toHaveProperty('GITHUB_TOKEN_SECRET_ARN');
    const definition = definitionOf(custom);
    const branch = definition.States.Crawl.Branches?.[0].States ?? {};
    expect(branch.Units.MaxConcurrency).toBe(8);
    expect(branch.Units.ItemProcessor?.States.Unit.Retry?.[1]).toMatchObject({ MaxAttempts: 5 });
    expect(definition.TimeoutSeconds).toBe(7200);
    // The timeout adds a third alarm; every alarm notifies the topic.
    custom.template.resourceCountIs('AWS::CloudWatch::Alarm', 3);
    custom.template.hasResourceProperties('AWS::CloudWatch::Alarm', { MetricName: 'ExecutionsTimedOut' });
    for (const alarm of Object.values(custom.template.findResources('AWS::CloudWatch::Alarm'))) {
      expect(alarm.Properties.AlarmActions).toEqual(['arn:aws:sns:eu-west-1:123456789012:alarms']);
    }
    // The crawl state follows the data's removal policy.
    const table = custom.resources[logicalId(custom.crawler.stateTable)];
    expect(table.DeletionPolicy).toBe('Delete');
    expect(table.Properties?.DeletionProtectionEnabled).toBe(false);
  });

  it('refuses a schedule below a minute or of partial minutes, and a bad concurrency', () => {
    const stack = new Stack(new App({ context: { 'aws:cdk:bundling-stacks': [] } }), 'Bad', { env: ENV });
    const data = new CatalogData(stack, 'Data');
    const sharpLayer = lambda.LayerVersion.fromLayerVersionArn(stack, 'Sharp', 'arn:aws:lambda:eu-west-1:123456789012:layer:sharp:3');
    expect(() => new CatalogCrawler(stack, 'A', { data, sharpLayer, schedule: Duration.seconds(30) })).toThrow(/schedule/);
    expect(() => new CatalogCrawler(stack, 'B', { data, sharpLayer, schedule: Duration.seconds(90) })).toThrow(/schedule/);
    expect(() => new CatalogCrawler(stack, 'C', { data, sharpLayer, maxConcurrency: 0 })).toThrow(/maxConcurrency/);
    expect(() => new CatalogCrawler(stack, 'D', { data, sharpLayer, taskRetries: -1 })).toThrow(/taskRetries/);
  });
});
