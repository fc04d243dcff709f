/**
 * CDK assertions on the MCP construct and its CloudFront behaviour, in a stack of its own with the
 * data it is given (the memory table and bucket, the rate-limit table, the cursor secret, the
 * token table), so it is checked without the rest of the deployment. The function bundles with the
 * local esbuild, and the bundle is held to the 1 MB budget of DESIGN.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { App, Stack, type PolicyViolation } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as iam from 'aws-cdk-lib/aws-iam';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { Edge } from '../../lib/edge';
import { MemoryMcp, type MemoryMcpProps } from '../../lib/memory-mcp';
import { nagViolations } from '../support/nag';

const ROOT = path.join(__dirname, '..', '..');
const CONTEXT = (JSON.parse(readFileSync(path.join(ROOT, 'cdk.json'), 'utf8')) as { context: Record<string, unknown> }).context;
const CACHING_DISABLED = '4135ea2d-6df8-44a3-9df3-4b5a84be39ad';
const ALL_VIEWER_EXCEPT_HOST_HEADER = 'b689b0a8-53d0-40ab-baf2-68738e2966ac';

interface Synthesized {
  app: App;
  stack: Stack;
  mcp: MemoryMcp;
  template: Template;
  violations: PolicyViolation[];
  tables: { memory: dynamodb.Table; rate: dynamodb.Table; tokens: dynamodb.Table };
}

function synthesize(extra: Partial<MemoryMcpProps> = {}): Synthesized {
  const app = new App({ context: CONTEXT });
  const stack = new Stack(app, 'McpTest', { env: { account: '123456789012', region: 'us-east-1' } });
  const key = (name: string) => ({ name, type: dynamodb.AttributeType.STRING });
  const memory = new dynamodb.Table(stack, 'RevLock', { partitionKey: key('account'), sortKey: key('name') });
  const rate = new dynamodb.Table(stack, 'RateLimits', { partitionKey: key('pk') });
  const tokens = new dynamodb.Table(stack, 'Tokens', { partitionKey: key('pk') });
  const bucket = new s3.Bucket(stack, 'Memories');
  const cursorKeysSecret = new secretsmanager.Secret(stack, 'CursorKeys');
  const auth = {
    verifierEnvironment: () => ({ AUTH_MODE: 'cognito', AUTH_AUDIENCE: 'https://mcp.example.com/mcp', AUTH_TOKEN_TABLE: tokens.tableName }),
    grantPersonalTokenUse: (grantee: iam.IGrantable) => tokens.grant(grantee, 'dynamodb:GetItem'),
  };
  const mcp = new MemoryMcp(stack, 'Mcp', { table: memory, bucket, rateLimitTable: rate, cursorKeysSecret, auth, ...extra });
  const edge = new Edge(stack, 'Edge', {
    apiOriginDomainName: 'api.example.com',
    iconsBucket: new s3.Bucket(stack, 'Icons'),
    originVerifySecret: new secretsmanager.Secret(stack, 'OriginVerify'),
    accessLogsBucket: new s3.Bucket(stack, 'Logs', { objectOwnership: s3.ObjectOwnership.OBJECT_WRITER }),
  });
  edge.addFunctionUrlBehavior('/mcp', mcp.functionUrl);
  const template = Template.fromStack(stack);
  const violations = nagViolations(app);
  return { app, stack, mcp, template, violations, tables: { memory, rate, tokens } };
}

let s: Synthesized;
beforeAll(() => {
  s = synthesize();
}, 120000);

const ref = (construct: { node: { defaultChild?: unknown } }): string =>
  Stack.of(s.stack).resolve((construct.node.defaultChild as { logicalId: string }).logicalId) as string;

type Statement = { Effect: string; Action: string | string[]; Resource: unknown };
function statementsOf(role: iam.Role): Statement[] {
  const policies = s.template.findResources('AWS::IAM::Policy');
  const roleId = ref(role);
  return Object.values(policies)
    .filter((p) => JSON.stringify(p.Properties.Roles).includes(roleId))
    .flatMap((p) => p.Properties.PolicyDocument.Statement as Statement[]);
}

describe('the function', () => {
  it('runs on Node.js 24, arm64, with the limits and the data it needs in its environment', () => {
    s.template.hasResourceProperties('AWS::Lambda::Function', {
      Runtime: 'nodejs24.x',
      Architectures: ['arm64'],
      Timeout: 25,
      Environment: {
        Variables: Match.objectLike({
          MCP_RATE_PER_MINUTE: '120',
          MCP_LIST_MAX_ENTRIES: '100',
          MEMORY_TABLE: { Ref: ref(s.tables.memory) },
          RATE_LIMIT_TABLE: { Ref: ref(s.tables.rate) },
          MCP_SETTINGS_PARAMETER: Match.stringLikeRegexp('^/McpTest/McpTestMcp[0-9A-F]{8}/settings$'),
          POWERTOOLS_SERVICE_NAME: 'mcp',
        }),
      },
    });
  });

  it('reads the verifier settings from a Parameter Store parameter it names by a fixed name, never by reference (no dependency cycle through the distribution)', () => {
    const fn = Object.values(s.template.findResources('AWS::Lambda::Function', { Properties: { Runtime: 'nodejs24.x' } }))[0];
    const env = (fn.Properties.Environment as { Variables: Record<string, unknown> }).Variables;
    const name = env.MCP_SETTINGS_PARAMETER;
    expect(typeof name).toBe('string');
    expect(env.AUTH_AUDIENCE).toBeUndefined();
    // A standard String parameter: the settings are no secret (free, where a secret costs $0.40 a month).
    s.template.resourceCountIs('AWS::SecretsManager::Secret', 2); // the cursor keys and the origin secret the test stack gives it
    const parameter = Object.values(s.template.findResources('AWS::SSM::Parameter', { Properties: { Name: name } }))[0];
    expect(parameter.Properties).toMatchObject({ Type: 'String', Tier: 'Standard' });
    expect(JSON.stringify(parameter.Properties.Value)).toContain('AUTH_AUDIENCE');
    expect(JSON.stringify(parameter.Properties.Value)).toContain('https://mcp.example.com/mcp');
    // Exactly this parameter, by its ARN: GetParameter only, no path, no wildcard.
    const reads = statementsOf(s.mcp.role).filter((st) => JSON.stringify(st.Action).includes('ssm:'));
    expect(reads).toEqual([{ Effect: 'Allow', Action: 'ssm:GetParameter', Resource: `arn:aws:ssm:us-east-1:123456789012:parameter${String(name)}` }]);
    expect(JSON.stringify(statementsOf(s.mcp.role))).not.toContain(':secret:McpTest/');
    expect(JSON.stringify(fn)).not.toContain(ref(s.mcp.settings));
    expect(JSON.stringify(statementsOf(s.mcp.role))).not.toContain(ref(s.mcp.settings));
  });

  it('has a function URL with auth type NONE (tokens are checked in code) and no CORS without allowed origins', () => {
    s.template.hasResourceProperties('AWS::Lambda::Url', { AuthType: 'NONE', InvokeMode: 'BUFFERED', Cors: Match.absent() });
    s.template.hasResourceProperties('AWS::Lambda::Permission', { Action: 'lambda:InvokeFunctionUrl', FunctionUrlAuthType: 'NONE', Principal: '*' });
  });

  it('answers browser preflights of the allowed origins with the headers MCP clients need', () => {
    const withOrigins = synthesize({ allowedOrigins: ['https://app.example.com'], ratePerMinute: 600 });
    withOrigins.template.hasResourceProperties('AWS::Lambda::Url', {
      AuthType: 'NONE',
      Cors: {
        AllowOrigins: ['https://app.example.com'],
        AllowMethods: ['POST'],
        AllowHeaders: ['Authorization', 'Content-Type', 'Accept', 'MCP-Protocol-Version', 'Mcp-Session-Id', 'Last-Event-ID'],
        ExposeHeaders: ['WWW-Authenticate', 'Mcp-Session-Id', 'Retry-After'],
        MaxAge: 86400,
      },
    });
    withOrigins.template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: Match.objectLike({ MCP_ALLOWED_ORIGINS: 'https://app.example.com', MCP_RATE_PER_MINUTE: '600' }) },
    });
  });

  it('has exactly the grants the memory core, the limiter and the verifier use, and no managed policy', () => {
    const role = s.template.findResources('AWS::IAM::Role')[ref(s.mcp.role)];
    expect(role.Properties.ManagedPolicyArns).toBeUndefined();
    const allowed = statementsOf(s.mcp.role).filter((st) => st.Effect === 'Allow');
    const actions = allowed.flatMap((st) => (Array.isArray(st.Action) ? st.Action : [st.Action]));
    expect(new Set(actions)).toEqual(
      new Set([
        'logs:CreateLogStream',
        'logs:PutLogEvents',
        'xray:PutTraceSegments',
        'xray:PutTelemetryRecords',
        'dynamodb:GetItem',
        'dynamodb:Query',
        'dynamodb:UpdateItem',
        'dynamodb:PutItem',
        'dynamodb:ConditionCheckItem',
        's3:GetObject',
        's3:PutObject',
        's3:ListBucket',
        'secretsmanager:GetSecretValue',
        'secretsmanager:DescribeSecret',
        'ssm:GetParameter',
      ]),
    );
    const rate = statementsOf(s.mcp.role).filter((st) => JSON.stringify(st.Resource).includes(ref(s.tables.rate)));
    expect(rate.flatMap((st) => st.Action).sort()).toEqual(['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem']);
    const objects = allowed.find((st) => JSON.stringify(st.Action).includes('s3:PutObject'));
    expect(JSON.stringify(objects?.Resource)).toContain('/m/*');
    expect(JSON.stringify(allowed.filter((st) => !JSON.stringify(st.Action).includes('xray:')))).not.toMatch(
      /"\*"|dynamodb:\*|s3:\*|DeleteObject|DeleteItem|Scan/,
    );
    // Deletes on the memory bucket are denied outright (MEMORY_BUCKET_DENIED_ACTIONS).
    const denied = statementsOf(s.mcp.role).filter((st) => st.Effect === 'Deny');
    expect(denied.flatMap((st) => st.Action)).toEqual(expect.arrayContaining(['s3:DeleteObject', 's3:DeleteObjectVersion', 's3:PutLifecycleConfiguration']));
  });

  it('bundles under the 1 MB budget', () => {
    const outdir = s.app.synth().directory;
    const code = s.template.findResources('AWS::Lambda::Function', { Properties: { Handler: 'index.handler', Runtime: 'nodejs24.x' } });
    const key = (Object.values(code)[0].Properties.Code as { S3Key: string }).S3Key.replace(/\.zip$/, '');
    const dir = readdirSync(outdir).find((d) => d === `asset.${key}`);
    expect(dir).toBeDefined();
    const size = statSync(path.join(outdir, dir as string, 'index.js')).size;
    expect(size).toBeLessThan(1024 * 1024);
    const bundle = readFileSync(path.join(outdir, dir as string, 'index.js'), 'utf8');
    // isomorphic-git from its ES module build (BUNDLE_ALIASES): its HTTP client, with its user agent, is tree-shaken away.
    expect(bundle).not.toContain('git/isomorphic-git@');
    // Ajv is not in index.js (AJV_ABSENT) but beside it, and works from there when a schema is asked for (lazyValidator).
    expect(bundle).not.toContain('schema with key or id');
    const check = spawnSync(
      process.execPath,
      [
        '-e',
        "const { AjvJsonSchemaValidator } = require('./ajv-validator.js'); const v = new AjvJsonSchemaValidator().getValidator({ type: 'string', format: 'email' }); process.stdout.write(JSON.stringify([v('a@example.com').valid, v('x').valid]))",
      ],
      { cwd: path.join(outdir, dir as string), encoding: 'utf8' },
    );
    expect(check.stderr).toBe('');
    expect(check.stdout).toBe('[true,false]');
  });
});

describe('CloudFront', () => {
  it('sends /mcp to the function URL: HTTPS only, every verb, never cached, viewer headers but Host', () => {
    const dist = Object.values(s.template.findResources('AWS::CloudFront::Distribution'))[0];
    const config = dist.Properties.DistributionConfig as {
      CacheBehaviors: Array<Record<string, unknown>>;
      Origins: Array<{ Id: string; DomainName: unknown; CustomOriginConfig?: { OriginProtocolPolicy: string } }>;
    };
    const mcp = config.CacheBehaviors.find((b) => b.PathPattern === '/mcp');
    expect(mcp).toMatchObject({
      ViewerProtocolPolicy: 'https-only',
      AllowedMethods: expect.arrayContaining(['POST', 'OPTIONS', 'GET', 'DELETE']),
      CachePolicyId: CACHING_DISABLED,
      OriginRequestPolicyId: ALL_VIEWER_EXCEPT_HOST_HEADER,
    });
    const origin = config.Origins.find((o) => o.Id === mcp?.TargetOriginId);
    expect(JSON.stringify(origin?.DomainName)).toContain(ref(s.mcp.functionUrl));
    expect(origin?.CustomOriginConfig?.OriginProtocolPolicy).toBe('https-only');
  });
});

describe('cdk-nag (AwsSolutions)', () => {
  it('finds nothing unacknowledged in the MCP construct', () => {
    const ours = s.violations.flatMap((v) =>
      v.violatingResources.filter((r) => (r.constructPath ?? '').includes('/Mcp/')).map((r) => `${v.ruleName} at ${r.constructPath}: ${v.description}`),
    );
    expect(ours).toEqual([]);
    // The check does run: the bare tables and buckets of this test stack have findings of their own.
    expect(s.violations.length).toBeGreaterThan(0);
  });
});
