/**
 * The production deployment as `cdk synth` builds it (lib/deployment.ts, bin/app.ts, bin/stages.ts):
 * the stacks of a stage outside us-east-1, alarms on every failure path into one topic, tracing and
 * metrics on every function, the WAF web ACL, origins that answer only CloudFront, versioned and
 * backed-up memories, reserved concurrency, the small-catalog mode without OpenSearch, and two
 * stages in two regions of one account with no account-global name twice. Templates only: bundling
 * is skipped (test/infra/catalog-stack.test.ts checks the bundles), and so is the sharp layer.
 */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { App, type Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import type { IConstruct } from 'constructs';
import { catalogApp } from '../../bin/app';
import { costByMode, costTable } from '../../bin/idle-cost';
import { STAGES } from '../../bin/stages';
import { type Deployment, deployCatalog, type DeploymentProps } from '../../lib/deployment';
import { MEMORY_BUCKET_DENIED_ACTIONS } from '../../lib/memory-api';
import { ACCOUNT_GLOBAL_NAMES } from '../../lib/naming';
import { ALWAYS_COUNTED } from '../../lib/waf';
import { nagViolations } from '../support/nag';

const ROOT = path.join(__dirname, '..', '..');
const CONTEXT = (JSON.parse(readFileSync(path.join(ROOT, 'cdk.json'), 'utf8')) as { context: Record<string, unknown> }).context;
const ACCOUNT = '123456789012';

// biome-ignore lint/suspicious/noExplicitAny: a synthesized template is untyped JSON, read here path by path.
type Json = any;
type Resource = { Type: string; Properties: Record<string, Json>; DeletionPolicy?: string };
type Resources = Record<string, Resource>;

function app(context: Record<string, unknown> = {}): App {
  return new App({ context: { ...CONTEXT, 'aws:cdk:bundling-stacks': [], ...context } });
}

function deploy(props: Partial<DeploymentProps> & { region?: string } = {}, a: App = app()): Deployment & { app: App } {
  const d = deployCatalog(a, {
    stage: 'prod',
    region: 'eu-west-1',
    account: ACCOUNT,
    sharpLayer: 'skip',
    githubTokenSecretName: 'mcp-catalog/github-token',
    ...props,
  });
  return { ...d, app: a };
}

const resourcesOf = (stack: Stack): Resources => Template.fromStack(stack).toJSON().Resources as Resources;
const ofType = (r: Resources, type: string): Array<[string, Resource]> => Object.entries(r).filter(([, v]) => v.Type === type);
const logicalId = (c: IConstruct): string => {
  const cfn = c.node.defaultChild ?? c;
  return (cfn as unknown as { stack: Stack; logicalId: string }).stack.resolve((cfn as unknown as { logicalId: string }).logicalId) as string;
};
const ref = (c: IConstruct) => ({ Ref: logicalId(c) });

/** Names CloudFormation resources must not share: per region, or per account. */
const UNIQUE_NAMES: Record<string, { key: string; scope: 'region' | 'account' }> = {
  'AWS::Logs::LogGroup': { key: 'LogGroupName', scope: 'region' },
  'AWS::SSM::Parameter': { key: 'Name', scope: 'region' },
  'AWS::SecretsManager::Secret': { key: 'Name', scope: 'region' },
  'AWS::Backup::BackupVault': { key: 'BackupVaultName', scope: 'region' },
  'AWS::Scheduler::Schedule': { key: 'Name', scope: 'region' },
  'AWS::StepFunctions::StateMachine': { key: 'StateMachineName', scope: 'region' },
  'AWS::Lambda::Function': { key: 'FunctionName', scope: 'region' },
  'AWS::SNS::Topic': { key: 'TopicName', scope: 'region' },
  'AWS::DynamoDB::Table': { key: 'TableName', scope: 'region' },
  'AWS::Cognito::UserPoolDomain': { key: 'Domain', scope: 'region' },
  'AWS::IAM::Role': { key: 'RoleName', scope: 'account' },
  'AWS::S3::Bucket': { key: 'BucketName', scope: 'account' },
};

let prod: Deployment & { app: App };
let main: Resources;
let edge: Resources;
let cdn: Resources;

beforeAll(() => {
  prod = deploy({ alarms: { emails: ['oncall@example.com'] } });
  main = resourcesOf(prod.main);
  edge = resourcesOf(prod.edge as Stack);
  cdn = resourcesOf(prod.cdnAlarms as Stack);
}, 300_000);

describe('the stacks of a stage outside us-east-1', () => {
  it('are <stage>-McpCatalog in its region, and its edge (before) and CloudFront alarms (after) stacks in us-east-1', () => {
    expect([prod.edge, prod.main, prod.cdnAlarms].map((s) => [s?.stackName, s?.region])).toEqual([
      ['prod-McpCatalog-edge-eu-west-1', 'us-east-1'],
      ['prod-McpCatalog', 'eu-west-1'],
      ['prod-McpCatalog-cdn-alarms-eu-west-1', 'us-east-1'],
    ]);
    expect(prod.main.dependencies.map((s) => s.stackName)).toEqual(['prod-McpCatalog-edge-eu-west-1']);
    expect(prod.cdnAlarms?.dependencies.map((s) => s.stackName).sort()).toEqual(['prod-McpCatalog', 'prod-McpCatalog-edge-eu-west-1']);
  });

  it('in us-east-1, one stack holds it all (web ACL, edge function, CloudFront alarm)', () => {
    const here = deploy({ region: 'us-east-1' });
    expect(here.edge).toBeUndefined();
    expect(here.cdnAlarms).toBeUndefined();
    const r = resourcesOf(here.main);
    expect(ofType(r, 'AWS::WAFv2::WebACL')).toHaveLength(1);
    expect(ofType(r, 'AWS::CloudWatch::Alarm').some(([, a]) => JSON.stringify(a.Properties).includes('5xxErrorRate'))).toBe(true);
  });

  it('pass cdk-nag AwsSolutions and Serverless, every stack', () => {
    const violations = nagViolations(prod.app).flatMap((v) => v.violatingResources.map((r) => `${v.ruleName} at ${r.constructPath}`));
    expect(violations).toEqual([]);
  });
});

describe('alarms on every failure path, into one topic', () => {
  const alarms = () => ofType(main, 'AWS::CloudWatch::Alarm').map(([, a]) => a.Properties);
  const topic = () => ofType(main, 'AWS::SNS::Topic')[0][0];

  it('an SNS topic with the email subscriptions of the stage, which every alarm notifies when it fires and when it recovers', () => {
    expect(ofType(main, 'AWS::SNS::Topic')).toHaveLength(1);
    expect(ofType(main, 'AWS::SNS::Subscription').map(([, s]) => [s.Properties.Protocol, s.Properties.Endpoint])).toEqual([['email', 'oncall@example.com']]);
    expect(alarms().length).toBeGreaterThanOrEqual(35);
    for (const a of alarms()) {
      expect(a.AlarmActions).toEqual([{ Ref: topic() }]);
      expect(a.OKActions).toEqual([{ Ref: topic() }]);
    }
  });

  it('an existing topic instead, when the stage names one', () => {
    const r = resourcesOf(deploy({ alarms: { topicArn: 'arn:aws:sns:eu-west-1:123456789012:pager' } }).main);
    expect(ofType(r, 'AWS::SNS::Topic')).toHaveLength(0);
    for (const [, a] of ofType(r, 'AWS::CloudWatch::Alarm')) expect(a.Properties.AlarmActions).toEqual(['arn:aws:sns:eu-west-1:123456789012:pager']);
  });

  it('errors and throttles of every function of the stack', () => {
    // The app's own functions (CDK's custom-resource providers are not ours to alarm on).
    const fns = ofType(main, 'AWS::Lambda::Function')
      .filter(([, f]) => f.Properties.Environment?.Variables?.POWERTOOLS_SERVICE_NAME)
      .map(([id]) => id);
    // catalog, favorites, the organisation registry, OAuth, /v1, the git remote, /mcp, the site, the crawler, the health checks, the origin secret's rotation.
    expect(fns).toHaveLength(11);
    for (const fn of fns) {
      for (const metric of ['Errors', 'Throttles']) {
        const found = alarms().filter(
          (a) => a.MetricName === metric && JSON.stringify(a.Dimensions) === JSON.stringify([{ Name: 'FunctionName', Value: { Ref: fn } }]),
        );
        expect({ fn, metric, alarms: found.length }).toEqual({ fn, metric, alarms: 1 });
      }
    }
  });

  it("the HTTP API's 5xx rate and p99 latency, the 5xx rate of each function URL (MCP, the git remote)", () => {
    const api = logicalId(prod.main.api.httpApi);
    const math = alarms().filter((a) => a.Metrics);
    const rate = math.find((a) => JSON.stringify(a.Metrics).includes('"5xx"') && JSON.stringify(a.Metrics).includes(api));
    expect(rate?.Metrics[0].Expression).toBe('IF(FILL(requests, 0) >= 20, 100 * FILL(faults, 0) / requests, 0)');
    expect(rate).toMatchObject({ Threshold: 1, ComparisonOperator: 'GreaterThanThreshold' });
    expect(alarms().find((a) => a.MetricName === 'Latency' && a.ExtendedStatistic === 'p99')).toMatchObject({ Threshold: 3000, EvaluationPeriods: 3 });
    const urls = math.filter((a) => JSON.stringify(a.Metrics).includes('Url5xxCount')).map((a) => JSON.stringify(a.Metrics));
    for (const fn of [prod.main.mcp.fn, prod.main.memoryGit.fn]) expect(urls.filter((m) => m.includes(logicalId(fn)))).toHaveLength(1);
  });

  it('throttles and system errors of every table', () => {
    const tables = ofType(main, 'AWS::DynamoDB::Table').map(([id]) => id);
    expect(tables).toHaveLength(8);
    for (const t of tables) {
      const on = alarms().filter((a) => JSON.stringify(a.Metrics ?? '').includes(`"Ref":"${t}"`));
      expect({ t, throttles: on.some((a) => JSON.stringify(a.Metrics).includes('ThrottleEvents')) }).toEqual({ t, throttles: true });
      expect({ t, systemErrors: on.some((a) => JSON.stringify(a.Metrics).includes('SystemErrors')) }).toEqual({ t, systemErrors: true });
    }
  });

  it('OpenSearch red, yellow, free storage (25% of the volume), JVM pressure, CPU credits, blocked writes and snapshots', () => {
    const search = alarms().filter((a) => a.Namespace === 'AWS/ES');
    expect(search.map((a) => a.MetricName).sort()).toEqual(
      [
        'AutomatedSnapshotFailure',
        'CPUCreditBalance',
        'ClusterIndexWritesBlocked',
        'ClusterStatus.red',
        'ClusterStatus.yellow',
        'FreeStorageSpace',
        'JVMMemoryPressure',
      ].sort(),
    );
    expect(search.find((a) => a.MetricName === 'FreeStorageSpace')).toMatchObject({ Threshold: 2560, ComparisonOperator: 'LessThanOrEqualToThreshold' });
    expect(search.find((a) => a.MetricName === 'ClusterStatus.red')).toMatchObject({ TreatMissingData: 'breaching' });
  });

  it('the crawler: failed executions, dead letters, and no successful crawl for two schedule periods', () => {
    expect(alarms().find((a) => a.MetricName === 'ExecutionsFailed')).toBeDefined();
    expect(alarms().find((a) => a.MetricName === 'ApproximateNumberOfMessagesVisible')).toBeDefined();
    expect(alarms().find((a) => a.MetricName === 'CrawlsSucceeded')).toMatchObject({
      Namespace: 'McpCatalog/prod',
      Dimensions: [{ Name: 'service', Value: 'crawler' }],
      Period: 12 * 3600,
      Threshold: 1,
      ComparisonOperator: 'LessThanThreshold',
      TreatMissingData: 'breaching',
    });
  });

  it("CloudFront's 5xx rate in us-east-1, on the main stack's distribution, with its own topic and the same emails", () => {
    const [[, alarm]] = ofType(cdn, 'AWS::CloudWatch::Alarm').filter(([, a]) => JSON.stringify(a.Properties.Metrics ?? '').includes('5xxErrorRate'));
    expect(JSON.stringify(alarm.Properties.Metrics)).toContain('"Fn::GetStackOutput"');
    expect(JSON.stringify(alarm.Properties.Metrics)).toContain('"StackName":"prod-McpCatalog"');
    expect(ofType(cdn, 'AWS::SNS::Subscription').map(([, s]) => s.Properties.Endpoint)).toEqual(['oncall@example.com']);
    // The edge log sweep's own errors are alarmed there too (its metrics are in us-east-1).
    expect(ofType(cdn, 'AWS::CloudWatch::Alarm').filter(([, a]) => a.Properties.MetricName === 'Errors')).toHaveLength(1);
  });

  it('one dashboard for the product, named for the stage and region (dashboard names are account-wide)', () => {
    const dashboards = ofType(main, 'AWS::CloudWatch::Dashboard');
    expect(dashboards.map(([, d]) => d.Properties.DashboardName)).toEqual(['prod-mcp-catalog-eu-west-1']);
    const body = JSON.stringify(dashboards[0][1].Properties.DashboardBody);
    for (const widget of ['requests, 4xx, 5xx', 'OpenSearch: cluster status', 'Crawler: freshness', 'CloudFront: requests', 'If-Match conflicts'])
      expect(body).toContain(widget);
  });
});

describe('tracing, metrics and logs', () => {
  it('every function of the app is X-Ray active with the metrics namespace of its stage, except Lambda@Edge (unsupported there)', () => {
    for (const [stack, r] of [
      [prod.main, main],
      [prod.edge, edge],
    ] as const) {
      // Every function but CDK's cross-region reader (a custom-resource provider of EdgeFunction).
      const mine = ofType(r, 'AWS::Lambda::Function').filter(([id]) => !id.startsWith('CustomCrossRegion'));
      expect(mine.length).toBeGreaterThan(0);
      for (const [id, f] of mine) {
        const env = f.Properties.Environment?.Variables ?? {};
        if (f.Properties.Runtime === 'nodejs22.x') {
          expect({ id, tracing: f.Properties.TracingConfig }).toEqual({ id, tracing: undefined });
          continue;
        }
        expect({ id, tracing: f.Properties.TracingConfig }).toEqual({ id, tracing: { Mode: 'Active' } });
        expect({ id, enabled: env.POWERTOOLS_TRACE_ENABLED }).toEqual({ id, enabled: 'true' });
        if (stack === prod.main) expect({ id, namespace: env.POWERTOOLS_METRICS_NAMESPACE }).toEqual({ id, namespace: 'McpCatalog/prod' });
      }
    }
    expect(ofType(main, 'AWS::StepFunctions::StateMachine')[0][1].Properties.TracingConfiguration).toEqual({ Enabled: true });
  });

  it('tracing can be turned off for a stage', () => {
    const r = resourcesOf(deploy({ region: 'us-east-1', tracing: false }).main);
    for (const [, f] of ofType(r, 'AWS::Lambda::Function')) expect(f.Properties.TracingConfig).toBeUndefined();
  });

  it('every log group of every stack has a retention, and every function logs to one of them', () => {
    for (const r of [main, edge, cdn]) {
      for (const [id, g] of ofType(r, 'AWS::Logs::LogGroup')) expect({ id, days: typeof g.Properties.RetentionInDays }).toEqual({ id, days: 'number' });
      for (const [id, f] of ofType(r, 'AWS::Lambda::Function'))
        expect({ id, logs: f.Properties.LoggingConfig?.LogGroup !== undefined }).toEqual({ id, logs: true });
    }
    expect(ofType(main, 'AWS::Logs::LogGroup').length).toBeGreaterThanOrEqual(10);
  });

  it("the Lambda@Edge function logs to one named group (the same name in every region); a daily sweep sets that group's retention everywhere", () => {
    const [[, fn]] = ofType(edge, 'AWS::Lambda::Function').filter(([, f]) => f.Properties.Runtime === 'nodejs22.x');
    const groupId = fn.Properties.LoggingConfig.LogGroup.Ref as string;
    expect(edge[groupId].Properties).toMatchObject({ LogGroupName: '/mcp-catalog/prod-eu-west-1/icon-not-found', RetentionInDays: 30 });
    const [[, sweep]] = ofType(edge, 'AWS::Lambda::Function').filter(([, f]) => f.Properties.Environment?.Variables?.EDGE_LOG_GROUP);
    expect(sweep.Properties.Environment.Variables).toMatchObject({ EDGE_LOG_GROUP: { Ref: groupId }, RETENTION_DAYS: '30' });
    expect(sweep.Properties.Environment.Variables.REGIONS.split(',')).toEqual(
      expect.arrayContaining(['us-east-1', 'eu-west-1', 'ap-southeast-1', 'sa-east-1']),
    );
    expect(ofType(edge, 'AWS::Scheduler::Schedule')[0][1].Properties.ScheduleExpression).toBe('rate(1 day)');
  });
});

describe('the edge', () => {
  it('a WAF web ACL for CloudFront: a rate rule per IP above the app limits, then the common and known-bad-inputs groups, body rules counted', () => {
    const [[, acl]] = ofType(edge, 'AWS::WAFv2::WebACL');
    expect(acl.Properties.Scope).toBe('CLOUDFRONT');
    const rules = acl.Properties.Rules as Array<Record<string, Json>>;
    expect(rules.map((r) => r.Name)).toEqual(['RatePerIp', 'AWSManagedRulesCommonRuleSet', 'AWSManagedRulesKnownBadInputsRuleSet']);
    expect(rules[0].Statement.RateBasedStatement).toEqual({ Limit: 15000, AggregateKeyType: 'IP', EvaluationWindowSec: 300 });
    expect(rules[0].Action.Block.CustomResponse.ResponseCode).toBe(429);
    for (const r of rules.slice(1)) {
      const counted = r.Statement.ManagedRuleGroupStatement.RuleActionOverrides.map((o: { Name: string }) => o.Name);
      expect(counted).toEqual(ALWAYS_COUNTED[r.Name]);
    }
    // The distribution in eu-west-1 reads the ACL's ARN from the us-east-1 stack.
    const [[, dist]] = ofType(main, 'AWS::CloudFront::Distribution');
    expect(dist.Properties.DistributionConfig.WebACLId).toEqual({
      'Fn::GetStackOutput': { StackName: 'prod-McpCatalog-edge-eu-west-1', Region: 'us-east-1', OutputName: expect.stringContaining('WebAcl') },
    });
  });

  it('opt-out (waf: false), or an existing ACL by ARN', () => {
    const none = deploy({ region: 'us-east-1', waf: false });
    expect(ofType(resourcesOf(none.main), 'AWS::WAFv2::WebACL')).toHaveLength(0);
    const given = resourcesOf(deploy({ region: 'us-east-1', webAclArn: 'arn:aws:wafv2:us-east-1:123456789012:global/webacl/x/1' }).main);
    expect(ofType(given, 'AWS::WAFv2::WebACL')).toHaveLength(0);
    expect(ofType(given, 'AWS::CloudFront::Distribution')[0][1].Properties.DistributionConfig.WebACLId).toBe(
      'arn:aws:wafv2:us-east-1:123456789012:global/webacl/x/1',
    );
  });

  it('origins answer only CloudFront: the secret header on every API origin and on /mcp, and the MCP function reads it', () => {
    const [[, dist]] = ofType(main, 'AWS::CloudFront::Distribution');
    const origins = dist.Properties.DistributionConfig.Origins as Array<{
      DomainName: unknown;
      OriginCustomHeaders?: Array<{ HeaderName: string }>;
      S3OriginConfig?: unknown;
    }>;
    const custom = origins.filter((o) => o.S3OriginConfig === undefined);
    expect(custom.length).toBeGreaterThanOrEqual(2);
    for (const o of custom) expect(o.OriginCustomHeaders?.map((h) => h.HeaderName)).toEqual(['x-origin-verify']);
    const env = main[logicalId(prod.main.mcp.fn)].Properties.Environment.Variables;
    expect(env.ORIGIN_VERIFY_SECRET_ARN).toEqual(ref(prod.main.data.originVerifySecret));
  });

  it('with a custom domain for the API, the execute-api endpoint is disabled and CloudFront calls that domain; alias records and certificates come from the hosted zone', () => {
    const d = deploy({
      region: 'us-east-1',
      domainNames: ['mcp.example.com'],
      hostedZone: { hostedZoneId: 'Z0123456789ABCDEFGHIJ', zoneName: 'example.com' },
      apiOriginDomain: { domainName: 'origin.mcp.example.com' },
    });
    const r = resourcesOf(d.main);
    expect(ofType(r, 'AWS::ApiGatewayV2::Api')[0][1].Properties.DisableExecuteApiEndpoint).toBe(true);
    expect(ofType(r, 'AWS::ApiGatewayV2::DomainName')[0][1].Properties.DomainName).toBe('origin.mcp.example.com');
    expect(ofType(r, 'AWS::ApiGatewayV2::ApiMapping')).toHaveLength(1);
    const certs = ofType(r, 'AWS::CertificateManager::Certificate').map(([, c]) => [c.Properties.DomainName, c.Properties.ValidationMethod]);
    expect(certs.sort()).toEqual([
      ['mcp.example.com', 'DNS'],
      ['origin.mcp.example.com', 'DNS'],
    ]);
    const records = ofType(r, 'AWS::Route53::RecordSet').map(([, rs]) => `${rs.Properties.Type} ${rs.Properties.Name}`);
    expect(records.sort()).toEqual(['A mcp.example.com.', 'A origin.mcp.example.com.', 'AAAA mcp.example.com.', 'AAAA origin.mcp.example.com.']);
    const [[, dist]] = ofType(r, 'AWS::CloudFront::Distribution');
    const domains = (dist.Properties.DistributionConfig.Origins as Array<{ DomainName: unknown }>).map((o) => o.DomainName);
    expect(domains).toContain('origin.mcp.example.com');
    expect(dist.Properties.DistributionConfig.Aliases).toEqual(['mcp.example.com']);
  });
});

describe('memories you can get back', () => {
  it('an AWS Backup plan of the six tables with user or slug data and the memory bucket, its vault kept and its recovery points undeletable', () => {
    const [[, selection]] = ofType(main, 'AWS::Backup::BackupSelection');
    const resources = JSON.stringify(selection.Properties.BackupSelection.Resources);
    for (const t of [
      prod.main.memory.table,
      prod.main.auth.tokenTable,
      prod.main.auth.clientTable,
      prod.main.auth.favoritesTable,
      prod.main.data.catalogTable,
      prod.main.crawler.stateTable,
    ]) {
      expect(resources).toContain(logicalId(t));
    }
    expect(resources).toContain(logicalId(prod.main.memory.bucket));
    expect(resources).not.toContain(logicalId(prod.main.data.rateLimitTable));
    const [[, plan]] = ofType(main, 'AWS::Backup::BackupPlan');
    expect(
      plan.Properties.BackupPlan.BackupPlanRule.map((r: { RuleName: string; Lifecycle: { DeleteAfterDays: number } }) => [
        r.RuleName,
        r.Lifecycle.DeleteAfterDays,
      ]),
    ).toEqual([
      ['Daily', 35],
      ['Monthly', 365],
    ]);
    const [[, vault]] = ofType(main, 'AWS::Backup::BackupVault');
    expect(vault.DeletionPolicy).toBe('Retain');
    expect(JSON.stringify(vault.Properties.AccessPolicy)).toContain('backup:DeleteRecoveryPoint');
    expect(vault.Properties.Notifications.BackupVaultEvents).toEqual(['BACKUP_JOB_FAILED', 'BACKUP_JOB_EXPIRED', 'RESTORE_JOB_FAILED']);
    const role = main[selection.Properties.BackupSelection.IamRoleArn['Fn::GetAtt'][0]];
    expect(JSON.stringify(role.Properties.ManagedPolicyArns)).toContain('AWSBackupServiceRolePolicyForS3Backup');
  });

  it('backup: false creates none', () => {
    expect(ofType(resourcesOf(deploy({ region: 'us-east-1', backup: false }).main), 'AWS::Backup::BackupPlan')).toHaveLength(0);
  });

  it('the memory bucket is versioned, and neither memory function may delete from it', () => {
    const bucket = main[logicalId(prod.main.memory.bucket)];
    expect(bucket.Properties.VersioningConfiguration).toEqual({ Status: 'Enabled' });
    for (const role of [prod.main.memory.role, prod.main.mcp.role]) {
      const statements = ofType(main, 'AWS::IAM::Policy')
        .filter(([, p]) => JSON.stringify(p.Properties.Roles).includes(logicalId(role)))
        .flatMap(([, p]) => p.Properties.PolicyDocument.Statement as Array<{ Effect: string; Action: string | string[] }>);
      const allowed = statements.filter((s) => s.Effect === 'Allow').flatMap((s) => [s.Action].flat());
      expect(allowed.filter((a) => /Delete/.test(a))).toEqual([]);
      expect(
        statements
          .filter((s) => s.Effect === 'Deny')
          .flatMap((s) => [s.Action].flat())
          .sort(),
      ).toEqual([...MEMORY_BUCKET_DENIED_ACTIONS].sort());
    }
  });
});

describe('isolation: reserved concurrency per function', () => {
  const reserved = (r: Resources, d: Deployment) => ({
    catalog: r[logicalId(d.main.api.fn)].Properties.ReservedConcurrentExecutions,
    favorites: r[logicalId(d.main.api.favoritesFn)].Properties.ReservedConcurrentExecutions,
    oauth: r[logicalId(d.main.oauth.fn)].Properties.ReservedConcurrentExecutions,
    memory: r[logicalId(d.main.memory.fn)].Properties.ReservedConcurrentExecutions,
    mcp: r[logicalId(d.main.mcp.fn)].Properties.ReservedConcurrentExecutions,
    crawler: r[logicalId(d.main.crawler.fn)].Properties.ReservedConcurrentExecutions,
  });

  it('none by default, the recommended set when the stage asks, or the recommended set with some values changed', () => {
    expect(Object.values(reserved(main, prod))).toEqual([undefined, undefined, undefined, undefined, undefined, undefined]);
    const recommended = deploy({ region: 'us-east-1', reservedConcurrency: 'recommended' });
    expect(reserved(resourcesOf(recommended.main), recommended)).toEqual({ catalog: 100, favorites: 20, oauth: 20, memory: 50, mcp: 50, crawler: 6 });
    const custom = deploy({ region: 'us-east-1', reservedConcurrency: { catalog: 400, mcp: 0 }, crawler: { maxConcurrency: 8 } });
    expect(reserved(resourcesOf(custom.main), custom)).toEqual({ catalog: 400, favorites: 20, oauth: 20, memory: 50, mcp: undefined, crawler: 10 });
  });
});

describe('search', () => {
  it('OpenSearch: deleted with the stack (derived data), named by CloudFormation, and a single node when asked', () => {
    const [[, domain]] = ofType(main, 'AWS::OpenSearchService::Domain');
    expect(domain.DeletionPolicy).toBe('Delete');
    expect(domain.Properties.DomainName).toBeUndefined();
    const single = resourcesOf(deploy({ region: 'us-east-1', search: { instanceCount: 1 } }).main);
    expect(ofType(single, 'AWS::OpenSearchService::Domain')[0][1].Properties.ClusterConfig).toMatchObject({ InstanceCount: 1, ZoneAwarenessEnabled: false });
  });

  it('the small-catalog mode creates no OpenSearch resource in any stack: a snapshot bucket the crawler writes and the catalog reads', () => {
    const d = deploy({ searchEngine: 'embedded' });
    const stacks = [d.main, d.edge, d.cdnAlarms].filter((s): s is Stack => s !== undefined);
    for (const s of stacks) expect(JSON.stringify(Template.fromStack(s).toJSON())).not.toMatch(/OpenSearch|AWS::ES::|"es:/);
    const r = resourcesOf(d.main);
    const bucket = logicalId(d.main.data.searchSnapshotBucket as IConstruct);
    expect(r[bucket].DeletionPolicy).toBe('Delete');
    const env = (fn: IConstruct) => r[logicalId(fn)].Properties.Environment.Variables;
    for (const fn of [d.main.api.fn, d.main.crawler.fn]) {
      expect(env(fn)).toMatchObject({
        SEARCH_BACKEND: 'embedded',
        SEARCH_SNAPSHOT_BUCKET: { Ref: bucket },
        SEARCH_SNAPSHOT_KEY: 'search/catalog-index.json.gz',
      });
    }
    const actionsOn = (role: IConstruct) =>
      ofType(r, 'AWS::IAM::Policy')
        .filter(([, p]) => JSON.stringify(p.Properties.Roles).includes(logicalId(role)))
        .flatMap(([, p]) => p.Properties.PolicyDocument.Statement as Array<{ Action: string | string[]; Resource: unknown }>)
        .filter((s) => JSON.stringify(s.Resource).includes(bucket))
        .flatMap((s) => [s.Action].flat())
        .sort();
    expect(actionsOn(d.main.api.role)).toEqual(['s3:GetObject', 's3:ListBucket']);
    expect(actionsOn(d.main.crawler.role)).toEqual(['s3:GetObject', 's3:ListBucket', 's3:PutObject']);
    // The crawler's finalize rebuilds the snapshot from a Scan of the catalog.
    expect(JSON.stringify(r)).toContain('dynamodb:Scan');
    expect(nagViolations(d.app).flatMap((v) => v.violatingResources.map((x) => `${v.ruleName} at ${x.constructPath}`))).toEqual([]);
  });
});

describe('stages', () => {
  it('two stages in two regions of one account: every stack id is prefixed, no account-global name twice', () => {
    // One `cdk deploy` per stage and region (each its own app), all into the same account.
    const all = [
      deploy({ stage: 'prod', region: 'eu-west-1' }),
      deploy({ stage: 'prod', region: 'us-west-2' }),
      deploy({ stage: 'staging', region: 'eu-west-1', searchEngine: 'embedded' }),
      deploy({ stage: 'staging', region: 'us-east-1' }),
    ];
    const stacks = all.flatMap((d) => [d.edge, d.main, d.cdnAlarms]).filter((s): s is Stack => s !== undefined);
    // Stack names: unique per region, and each starts with its stage.
    const stackKeys = stacks.map((s) => `${s.region}/${s.stackName}`);
    expect(new Set(stackKeys).size).toBe(stackKeys.length);
    for (const s of stacks) expect(s.stackName).toMatch(/^(prod|staging)-McpCatalog/);
    // Account-global names (CloudFront, WAF for CloudFront, dashboards), and names per region.
    const global: string[] = [];
    const regional: string[] = [];
    for (const s of stacks) {
      for (const [, res] of Object.entries(resourcesOf(s))) {
        const spec = ACCOUNT_GLOBAL_NAMES[res.Type];
        if (spec) {
          const name = spec.path.reduce<Json>((o, k) => o?.[k], res.Properties);
          expect(typeof name).toBe('string');
          global.push(`${res.Type} ${name}`);
        }
        if (res.Type === 'AWS::CloudWatch::Dashboard') global.push(`${res.Type} ${res.Properties.DashboardName}`);
        // IAM role and S3 bucket names are account-wide (or wider); the others are unique per region.
        const named = UNIQUE_NAMES[res.Type];
        const v = named && res.Properties?.[named.key];
        if (typeof v === 'string') (named.scope === 'account' ? global : regional).push(`${named.scope === 'account' ? '' : s.region} ${res.Type} ${v}`);
      }
    }
    expect(global.length).toBeGreaterThanOrEqual(4 * 6);
    expect(global.filter((n, i) => global.indexOf(n) !== i)).toEqual([]);
    expect(regional.filter((n, i) => regional.indexOf(n) !== i)).toEqual([]);
  }, 300_000);

  it('bin/app.ts: -c stage picks the entry of bin/stages.ts, -c searchEngine overrides it, and the region comes from the CLI', () => {
    const staging = catalogApp(app({ stage: 'staging', sharpLayer: 'skip' }), { CDK_DEFAULT_REGION: 'eu-central-1' });
    expect([staging.main.stackName, staging.main.region]).toEqual(['staging-McpCatalog', 'eu-central-1']);
    const r = resourcesOf(staging.main);
    expect(STAGES.staging.searchEngine).toBe('embedded');
    expect(ofType(r, 'AWS::OpenSearchService::Domain')).toHaveLength(0);
    expect(ofType(r, 'AWS::Backup::BackupPlan')).toHaveLength(0);
    expect(ofType(r, 'AWS::Logs::LogGroup').every(([, g]) => g.Properties.RetentionInDays === 14)).toBe(true);

    const prodEmbedded = catalogApp(app({ searchEngine: 'embedded', sharpLayer: 'skip' }), { CDK_DEPLOY_REGION: 'us-east-1', CDK_DEFAULT_REGION: 'eu-west-1' });
    expect([prodEmbedded.main.stackName, prodEmbedded.main.region]).toEqual(['prod-McpCatalog', 'us-east-1']);
    expect(ofType(resourcesOf(prodEmbedded.main), 'AWS::OpenSearchService::Domain')).toHaveLength(0);

    expect(() => catalogApp(app({ searchEngine: 'elastic' }), {})).toThrow(/-c searchEngine must be one of opensearch, embedded/);
    expect(() => catalogApp(app({ stage: 'Prod!' }), {})).toThrow(/stage must be/);
  }, 300_000);
});

describe('Cognito', () => {
  it('Essentials by default, SES for its email when the stage says so', () => {
    const d = deploy({
      region: 'us-east-1',
      cognitoEmail: { fromEmail: 'no-reply@mcp.example.com', fromName: 'MCP catalog', sesVerifiedDomain: 'mcp.example.com' },
    });
    const [[, pool]] = ofType(resourcesOf(d.main), 'AWS::Cognito::UserPool');
    expect(pool.Properties.UserPoolTier).toBe('ESSENTIALS');
    expect(pool.Properties.EmailConfiguration).toMatchObject({ EmailSendingAccount: 'DEVELOPER', From: 'MCP catalog <no-reply@mcp.example.com>' });
    expect(JSON.stringify(pool.Properties.EmailConfiguration.SourceArn)).toContain('identity/mcp.example.com');
  });
});

describe('the crawler', () => {
  it('reads the GitHub token from the secret the stage names (read-only), and alarms nothing about it', () => {
    const d = deploy({ region: 'us-east-1', githubTokenSecretName: 'mcp-catalog/github-token' });
    const r = resourcesOf(d.main);
    const env = r[logicalId(d.main.crawler.fn)].Properties.Environment.Variables;
    expect(JSON.stringify(env.GITHUB_TOKEN_SECRET_ARN)).toContain('secret:mcp-catalog/github-token');
    const statements = ofType(r, 'AWS::IAM::Policy')
      .filter(([, p]) => JSON.stringify(p.Properties.Roles).includes(logicalId(d.main.crawler.role)))
      .flatMap(([, p]) => p.Properties.PolicyDocument.Statement as Array<{ Action: string | string[]; Resource: unknown }>);
    const secret = statements.find((s) => [s.Action].flat().includes('secretsmanager:GetSecretValue'));
    expect(JSON.stringify(secret?.Resource)).toContain('secret:mcp-catalog/github-token-??????');
  });
});

describe('the idle monthly cost table', () => {
  it("is in the README as npm run cost computes it from the templates: OpenSearch, its storage, the WAF, secrets, alarms' metrics, the dashboard", () => {
    const modes = costByMode();
    const [standard, single, embedded] = modes.map((m) => m.total);
    // Half the nodes, and no domain at all.
    expect(standard - single).toBeCloseTo(26.28 + 1.22, 2);
    expect(modes[2].lines.some((l) => l.row.startsWith('OpenSearch'))).toBe(false);
    expect(embedded).toBeLessThan(single);
    // What an idle deployment still pays for beyond its resources: the operator's GitHub secret, the
    // recovery storage (47 recovery points per backed-up table), and the scheduled crawl.
    for (const m of modes) {
      const rows = Object.fromEntries(m.lines.map((l) => [l.row, l]));
      expect(rows['GitHub token secret']?.monthly).toBeCloseTo(0.4, 2);
      // Only credentials are secrets; the functions' settings are free standard parameters.
      expect(rows['Secrets Manager']?.detail).toBe('2 secrets');
      expect(rows['Parameter Store']).toEqual({ row: 'Parameter Store', detail: '2 standard parameters', monthly: 0 });
      expect(rows['Point-in-time recovery']?.detail).toMatch(/^8 tables/);
      expect(rows['Backup storage']?.detail).toMatch(/^47 recovery points × 6 tables .*memory bucket/);
      expect(rows['The crawl']?.detail).toMatch(/^4 a day × 600 servers/);
      expect(rows['Health checks']?.detail).toMatch(/^24 rounds a day × 5000 hosted servers; 2\.2 GB of checks/);
    }
    const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    expect(readme).toContain(costTable(modes));
  }, 300_000);
});
