/**
 * CDK assertions on the memory REST API inside the deployment stack (synthesized once; the Lambdas
 * bundle with the local esbuild): its data, its function, its least-privilege role, its routes from
 * MEMORY_API plus the /v1 catch-all, CloudFront's /v1/* behaviour, and cdk-nag on everything it adds.
 */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { App } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as cxapi from 'aws-cdk-lib/cx-api';
import { MEMORY_API } from '../../lambdas/memory-api/routes';
import { routeKey } from '../../lambdas/shared/http/route-table';
import { CatalogStack } from '../../lib/catalog-stack';
import { CDK_CONTEXT, logicalId } from '../support/deployment-modes';
import { nagViolations } from '../support/nag';
import { MEMORY_BUCKET_DENIED_ACTIONS } from '../../lib/memory-api';

type Resource = { Type: string; Properties: Record<string, unknown>; DeletionPolicy?: string };

let app: App;
let stack: CatalogStack;
let template: Template;
let violations: string[];

beforeAll(() => {
  app = new App({ context: { ...CDK_CONTEXT, [cxapi.ASSET_RESOURCE_METADATA_ENABLED_CONTEXT]: true } });
  stack = new CatalogStack(app, 'McpCatalog', { env: { account: '123456789012', region: 'us-east-1' }, sharpLayer: 'skip', memoryApi: { rateLimit: 60 } });
  template = Template.fromStack(stack);
  const memoryPath = stack.memory.node.path;
  violations = nagViolations(app)
    .flatMap((v) => v.violatingResources.map((r) => `${v.ruleName} at ${r.constructPath ?? ''}`))
    .filter(
      (v) =>
        v.includes(memoryPath) ||
        /RouteMemory|Route(ListMemories|CreateMemory|ExportAll|GetMemory|RetireMemory|Restore|ListNotes|ReadNote|WriteNote|EditNote|DeleteNote|SearchNotes|ExportMemory)/.test(
          v,
        ),
    );
}, 300_000);

describe('data', () => {
  it('keeps memories in a private, encrypted, TLS-only bucket whose exports/ expire after a day', () => {
    const bucket = template.toJSON().Resources[logicalId(stack.memory.bucket)] as Resource;
    expect(bucket.DeletionPolicy).toBe('Retain');
    expect(bucket.Properties).toMatchObject({
      PublicAccessBlockConfiguration: { BlockPublicAcls: true, BlockPublicPolicy: true, IgnorePublicAcls: true, RestrictPublicBuckets: true },
      BucketEncryption: { ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }] },
      OwnershipControls: { Rules: [{ ObjectOwnership: 'BucketOwnerEnforced' }] },
      LoggingConfiguration: { LogFilePrefix: 's3/memories/' },
    });
    // Versioned: an object overwritten or deleted by mistake comes back (README, "Restore"); AWS Backup needs it too.
    expect(bucket.Properties.VersioningConfiguration).toEqual({ Status: 'Enabled' });
    const rules = (bucket.Properties.LifecycleConfiguration as { Rules: Array<Record<string, unknown>> }).Rules;
    expect(rules).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ Prefix: 'exports/', ExpirationInDays: 1, NoncurrentVersionExpiration: { NoncurrentDays: 1 }, Status: 'Enabled' }),
        expect.objectContaining({ AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 }, NoncurrentVersionExpiration: { NoncurrentDays: 90 } }),
        expect.objectContaining({ ExpiredObjectDeleteMarker: true }),
      ]),
    );
    // Nothing but exports expires: git objects are referenced by history forever.
    expect(rules.filter((r) => r.ExpirationInDays !== undefined).map((r) => r.Prefix)).toEqual(['exports/']);
    template.hasResourceProperties('AWS::S3::BucketPolicy', {
      Bucket: { Ref: logicalId(stack.memory.bucket) },
      PolicyDocument: {
        Statement: Match.arrayWith([Match.objectLike({ Effect: 'Deny', Action: 's3:*', Condition: { Bool: { 'aws:SecureTransport': 'false' } } })]),
      },
    });
    // The bucket itself refuses deletes by either memory function, whatever their roles are granted later.
    const policy = Object.values(template.findResources('AWS::S3::BucketPolicy')).find(
      (p) => JSON.stringify(p.Properties.Bucket) === JSON.stringify({ Ref: logicalId(stack.memory.bucket) }),
    );
    if (!policy) throw new Error('the memory bucket has no bucket policy');
    const denied = (policy.Properties.PolicyDocument.Statement as Array<{ Effect: string; Action: string[]; Principal?: { AWS?: unknown } }>).filter(
      (st) => st.Effect === 'Deny' && Array.isArray(st.Action) && st.Action.includes('s3:DeleteObject'),
    );
    // (CDK merges the two functions' statements into one with both principals.)
    const principals = denied.flatMap((st) => [st.Principal?.AWS].flat()).map((p) => JSON.stringify(p));
    expect(principals.sort()).toEqual(
      [stack.memory.role, stack.mcp.role, stack.memoryGit.role].map((r) => JSON.stringify({ 'Fn::GetAtt': [logicalId(r), 'Arn'] })).sort(),
    );
    for (const st of denied) expect([...st.Action].sort()).toEqual([...MEMORY_BUCKET_DENIED_ACTIONS].sort());
  });

  it('keeps the rev lock in an on-demand, PITR, encrypted table keyed like memoryTableDefinitions', () => {
    const table = template.toJSON().Resources[logicalId(stack.memory.table)] as Resource;
    expect(table.DeletionPolicy).toBe('Retain');
    expect(table.Properties).toMatchObject({
      KeySchema: [
        { AttributeName: 'account', KeyType: 'HASH' },
        { AttributeName: 'name', KeyType: 'RANGE' },
      ],
      BillingMode: 'PAY_PER_REQUEST',
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      SSESpecification: { SSEEnabled: true },
      DeletionProtectionEnabled: true,
    });
  });
});

describe('function and permissions', () => {
  it('bundles the presigner of large exports beside the function, and leaves only the SDK clients to the runtime', () => {
    const fn = template.toJSON().Resources[logicalId(stack.memory.fn)] as Resource & { Metadata: Record<string, string> };
    const dir = path.join(app.synth().directory, fn.Metadata[cxapi.ASSET_RESOURCE_METADATA_PATH_KEY]);
    const bundle = readFileSync(path.join(dir, 'index.js'), 'utf8');
    const chunk = readFileSync(path.join(dir, 'presigner.js'), 'utf8');
    // Real requires only: the SigV4a error message quotes `[require("@aws-sdk/signature-v4-crt");]` as advice.
    const sdkRequires = (code: string) => [...code.matchAll(/(?<!\[)require\("(@aws-sdk\/[^"]+)"\)/g)].map((m) => m[1]);
    expect(sdkRequires(bundle)).toEqual(expect.arrayContaining(['@aws-sdk/client-s3', '@aws-sdk/client-dynamodb']));
    for (const code of [bundle, chunk]) expect(sdkRequires(code).filter((m) => !/^@aws-sdk\/(client|lib)-/.test(m))).toEqual([]);
    // The presigner's own code, not a require of it: its query-string signing names X-Amz-Expires.
    // It is in presigner.js, which the first large export requires, and out of index.js.
    expect(chunk.includes('X-Amz-Expires')).toBe(true);
    expect(bundle.includes('X-Amz-Expires')).toBe(false);
    expect(bundle.includes('["."' + ',"presigner"]')).toBe(true);
  });

  it("runs Node.js 24 on arm64 with the spec's limits and the data's names in its environment", () => {
    const fn = template.toJSON().Resources[logicalId(stack.memory.fn)] as Resource;
    expect(fn.Properties).toMatchObject({ Runtime: 'nodejs24.x', Architectures: ['arm64'], Handler: 'index.handler' });
    const env = (fn.Properties.Environment as { Variables: Record<string, unknown> }).Variables;
    expect(env).toMatchObject({
      MEMORY_TABLE: { Ref: logicalId(stack.memory.table) },
      MEMORY_BUCKET: { Ref: logicalId(stack.memory.bucket) },
      MEMORY_RATE_LIMIT: '60',
      MEMORY_RATE_WINDOW_SECONDS: '60',
      MEMORY_EXPORT_INLINE_BYTES: String(4 * 1024 * 1024),
      RATE_LIMIT_TABLE: { Ref: logicalId(stack.data.rateLimitTable) },
      AUTH_MODE: 'cognito',
    });
    expect(env.CURSOR_SECRET_ARN).toBeDefined();
    expect(env.ORIGIN_VERIFY_SECRET_ARN).toBeDefined();
  });

  it('grants only what the handlers do', () => {
    const policies = Object.values(template.findResources('AWS::IAM::Policy')).filter((p) =>
      (p.Properties.Roles as Array<{ Ref: string }>).some((r) => r.Ref === logicalId(stack.memory.role)),
    );
    const all = policies.flatMap(
      (p) => (p.Properties.PolicyDocument as { Statement: Array<{ Effect: string; Action: string | string[]; Resource: unknown }> }).Statement,
    );
    // What it may do; what it may never do is one Deny on the memory bucket (asserted below).
    const statements = all.filter((st) => st.Effect === 'Allow');
    const denies = all.filter((st) => st.Effect === 'Deny');
    expect(denies).toHaveLength(1);
    expect([...(denies[0].Action as string[])].sort()).toEqual([...MEMORY_BUCKET_DENIED_ACTIONS].sort());
    expect(JSON.stringify(denies[0].Resource)).toContain(logicalId(stack.memory.bucket));
    const actionsOn = (id: string) =>
      statements
        .filter((st) => JSON.stringify(st.Resource).includes(id))
        .flatMap((st) => (Array.isArray(st.Action) ? st.Action : [st.Action]))
        .sort();
    expect(actionsOn(logicalId(stack.memory.table))).toEqual([
      'dynamodb:ConditionCheckItem',
      'dynamodb:GetItem',
      'dynamodb:PutItem',
      'dynamodb:Query',
      'dynamodb:UpdateItem',
    ]);
    expect(actionsOn(logicalId(stack.data.rateLimitTable))).toEqual(['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem']);
    // (action, resource) pairs on the bucket, whatever statements CDK merged them into.
    const pairs = statements
      .flatMap((st) => (Array.isArray(st.Resource) ? st.Resource : [st.Resource]).map((r) => ({ st, r: JSON.stringify(r) })))
      .filter(({ r }) => r.includes(logicalId(stack.memory.bucket)))
      .flatMap(({ st, r }) => (Array.isArray(st.Action) ? st.Action : [st.Action]).map((a) => `${a} ${r.match(/\/(m|exports)\/\*/)?.[0] ?? 'bucket'}`));
    expect([...new Set(pairs)].sort()).toEqual([
      's3:AbortMultipartUpload /exports/*',
      's3:GetObject /exports/*',
      's3:GetObject /m/*',
      's3:ListBucket bucket',
      's3:PutObject /exports/*',
      's3:PutObject /m/*',
    ]);
    expect(JSON.stringify(statements)).not.toMatch(/"s3:\*"|"dynamodb:\*"|s3:DeleteObject|dynamodb:DeleteItem|dynamodb:Scan/);
    // Only X-Ray (which has no resource-level permissions) is granted on every resource.
    expect(statements.filter((st) => st.Resource === '*').flatMap((st) => st.Action)).toEqual(['xray:PutTelemetryRecords', 'xray:PutTraceSegments']);
  });
});

describe('personal access tokens', () => {
  type Statement = { Effect: string; Action: string | string[]; Resource: unknown; Condition?: unknown };
  const onTokenTable = (role: IConstruct): Array<{ actions: string[]; condition?: unknown }> =>
    Object.values(template.findResources('AWS::IAM::Policy'))
      .filter((p) => (p.Properties.Roles as Array<{ Ref: string }>).some((r) => r.Ref === logicalId(role)))
      .flatMap((p) => (p.Properties.PolicyDocument as { Statement: Statement[] }).Statement)
      .filter((st) => st.Effect === 'Allow' && JSON.stringify(st.Resource) === JSON.stringify({ 'Fn::GetAtt': [logicalId(stack.auth.tokenTable), 'Arn'] }))
      .map((st) => ({
        actions: [...(Array.isArray(st.Action) ? st.Action : [st.Action])].sort(),
        ...(st.Condition !== undefined && { condition: st.Condition }),
      }));
  const leading = (...keys: string[]) => ({ 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': keys } });

  it('the /v1 function reads tokens and writes only the personal tokens’ and their owners’ items (it manages them)', () => {
    expect(onTokenTable(stack.memory.role)).toEqual([
      { actions: ['dynamodb:BatchGetItem', 'dynamodb:GetItem'] },
      { actions: ['dynamodb:PutItem', 'dynamodb:UpdateItem'], condition: leading('pat#*', 'pat-owner#*') },
    ]);
  });

  it.each([
    ['MCP', () => stack.mcp.role],
    ['git', () => stack.memoryGit.role],
  ])('the %s function reads tokens and updates only personal tokens’ items (their last use)', (_, role) => {
    expect(onTokenTable(role())).toEqual([
      { actions: ['dynamodb:BatchGetItem', 'dynamodb:GetItem'] },
      { actions: ['dynamodb:UpdateItem'], condition: leading('pat#*') },
    ]);
  });

  it('the catalog and favorites functions only read the token table (personal tokens are refused there)', () => {
    for (const role of [stack.api.role, stack.api.favoritesRole])
      expect(onTokenTable(role)).toEqual([{ actions: ['dynamodb:BatchGetItem', 'dynamodb:GetItem'] }]);
  });
});

describe('routes and edge', () => {
  it('declares every MEMORY_API route and the /v1 catch-all on the HTTP API, integrated with the memory function', () => {
    const routes = Object.values(template.findResources('AWS::ApiGatewayV2::Route')) as Resource[];
    const keys = routes.map((r) => r.Properties.RouteKey as string);
    for (const k of [...MEMORY_API.routes.map(routeKey), 'ANY /v1/{proxy+}', 'ANY /v1']) expect(keys).toContain(k);
    const integrations = template.findResources('AWS::ApiGatewayV2::Integration');
    const memoryIntegrations = Object.entries(integrations)
      .filter(([, i]) => JSON.stringify(i.Properties.IntegrationUri) === JSON.stringify({ 'Fn::GetAtt': [logicalId(stack.memory.fn), 'Arn'] }))
      .map(([id]) => id);
    expect(memoryIntegrations).toHaveLength(2);
    for (const r of routes.filter((x) => /^(\w+ \/v1)/.test(String(x.Properties.RouteKey)))) {
      const target = JSON.stringify(r.Properties.Target);
      expect(memoryIntegrations.some((id) => target.includes(id))).toBe(true);
      expect(r.Properties.AuthorizationType).toBe('NONE');
    }
    // `export` is a literal route, so API Gateway prefers it over {memory}.
    expect(keys).toContain('GET /v1/memories/export');
  });

  it('sends /v1/* to the API origin through CloudFront, uncached by default, with the viewer-address function', () => {
    const [distribution] = Object.values(template.findResources('AWS::CloudFront::Distribution'));
    const behaviors = distribution.Properties.DistributionConfig.CacheBehaviors as Array<Record<string, unknown>>;
    const v1 = behaviors.find((b) => b.PathPattern === '/v1/*');
    expect(v1).toMatchObject({
      AllowedMethods: ['GET', 'HEAD', 'OPTIONS', 'PUT', 'PATCH', 'POST', 'DELETE'],
      CachePolicyId: '4135ea2d-6df8-44a3-9df3-4b5a84be39ad',
      ViewerProtocolPolicy: 'redirect-to-https',
    });
    expect(v1?.FunctionAssociations).toEqual([expect.objectContaining({ EventType: 'viewer-request' })]);
  });

  it('leaves cdk-nag with nothing unacknowledged on what it adds', () => {
    expect(violations).toEqual([]);
  });
});
