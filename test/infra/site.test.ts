/**
 * CDK assertions on the site (lib/site.ts) in a stack of its own: the catalog's data, an HTTP API,
 * the distribution and the site, as `CatalogStack` wires them. The render function and its
 * stylesheet and scripts, its routes on the API, the CloudFront behaviours with the site's cache
 * policy, `/` mapped to `/index.html`, least-privilege grants, and cdk-nag.
 */
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { App, Duration, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as apigwv2 from 'aws-cdk-lib/aws-apigatewayv2';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import { routeKey } from '../../lambdas/shared/http/route-table';
import { SITE_ANY_PATHS, SITE_API, SITE_PATH_PATTERNS } from '../../lambdas/site/routes';
import { CatalogData } from '../../lib/catalog-data';
import { Edge } from '../../lib/edge';
import { Site } from '../../lib/site';

const ROOT = path.join(__dirname, '..', '..');
const CONTEXT = (JSON.parse(readFileSync(path.join(ROOT, 'cdk.json'), 'utf8')) as { context: Record<string, unknown> }).context;
const ALL_VIEWER_EXCEPT_HOST_HEADER = 'b689b0a8-53d0-40ab-baf2-68738e2966ac';

type Resources = Record<string, { Type: string; Properties: Record<string, unknown> }>;

let app: App;
let stack: Stack;
let site: Site;
let edge: Edge;
let data: CatalogData;
let template: Template;
let resources: Resources;

function logicalId(scope: IConstruct): string {
  const cfn = scope.node.defaultChild ?? scope;
  return Stack.of(scope).resolve((cfn as unknown as { logicalId: string }).logicalId) as string;
}

beforeAll(() => {
  app = new App({ context: CONTEXT });
  stack = new Stack(app, 'SiteTest', { env: { account: '123456789012', region: 'us-east-1' } });
  data = new CatalogData(stack, 'Data');
  const httpApi = new apigwv2.HttpApi(stack, 'HttpApi', { createDefaultStage: false });
  const originDomainName = `${httpApi.apiId}.execute-api.us-east-1.amazonaws.com`;
  edge = new Edge(stack, 'Edge', {
    apiOriginDomainName: originDomainName,
    iconsBucket: data.iconsBucket,
    originVerifySecret: data.originVerifySecret,
    accessLogsBucket: data.accessLogsBucket,
  });
  site = new Site(stack, 'Site', {
    data,
    httpApi,
    apiOriginDomainName: originDomainName,
    edge,
    publicUrl: 'https://mcp.example.com',
    edgeCache: Duration.minutes(10),
    siteName: 'Example MCP',
  });
  template = Template.fromStack(stack);
  resources = template.toJSON().Resources as Resources;
}, 180_000);

/** The OpenSearch domain (the default engine; the small-catalog mode has none). */
function searchDomain(): IConstruct {
  if (!data.searchDomain) throw new Error('this stack has no search domain');
  return data.searchDomain;
}

describe('the render function', () => {
  it('runs Node.js 24 on arm64 with the environment lambdas/site/config.ts reads', () => {
    const fn = resources[logicalId(site.fn)].Properties;
    expect(fn).toMatchObject({ Runtime: 'nodejs24.x', Architectures: ['arm64'], MemorySize: 512, Timeout: 10 });
    expect((fn.Environment as { Variables: Record<string, unknown> }).Variables).toMatchObject({
      PUBLIC_URL: 'https://mcp.example.com',
      CATALOG_TABLE: { Ref: logicalId(data.catalogTable) },
      RATE_LIMIT_TABLE: { Ref: logicalId(data.rateLimitTable) },
      SEARCH_BACKEND: 'opensearch',
      OPENSEARCH_URL: { 'Fn::Join': ['', ['https://', { 'Fn::GetAtt': [logicalId(searchDomain()), 'DomainEndpoint'] }]] },
      ORIGIN_VERIFY_SECRET_ARN: { Ref: logicalId(data.originVerifySecret) },
      SITE_NAME: 'Example MCP',
      SITE_EDGE_CACHE_SECONDS: '600',
      SITE_BROWSER_CACHE_SECONDS: '60',
      SITE_RATE_RPS: '30',
      SITE_RATE_BURST: '60',
      POWERTOOLS_SERVICE_NAME: 'site',
    });
  });

  it('carries its stylesheet, scripts and icon beside the bundle, where assets.ts reads them', () => {
    const outdir = app.synth().directory;
    const key = ((resources[logicalId(site.fn)].Properties.Code as { S3Key: string }).S3Key as string).replace(/\.zip$/, '');
    const asset = path.join(outdir, `asset.${key}`);
    for (const f of ['index.js', 'client/site.css', 'client/site.js', 'client/theme.js', 'client/icon.svg'])
      expect({ f, exists: existsSync(path.join(asset, f)) }).toEqual({ f, exists: true });
    expect(readFileSync(path.join(asset, 'client/site.js'), 'utf8')).toBe(readFileSync(path.join(ROOT, 'lambdas/site/client/site.js'), 'utf8'));
  });

  it("keeps the README renderer's libraries in markdown-libs.js beside the bundle, loaded by the first README, and the X-Ray chunk too", () => {
    const outdir = app.synth().directory;
    const key = ((resources[logicalId(site.fn)].Properties.Code as { S3Key: string }).S3Key as string).replace(/\.zip$/, '');
    const asset = path.join(outdir, `asset.${key}`);
    const index = readFileSync(path.join(asset, 'index.js'), 'utf8');
    const libs = readFileSync(path.join(asset, 'markdown-libs.js'), 'utf8');
    // Strings of the libraries' own code (postcss's error class, markdown-it's block rules): in the chunk, not in index.js.
    for (const marker of ['CssSyntaxError', 'blockquote_open']) {
      expect({ marker, inChunk: libs.includes(marker), inIndex: index.includes(marker) }).toEqual({ marker, inChunk: true, inIndex: false });
    }
    expect(index.includes('markdown-libs')).toBe(true);
    expect(existsSync(path.join(asset, 'xray.js'))).toBe(true);
    // And it loads in a fresh Node process, as the first README's require does.
    const lib = require(path.join(asset, 'markdown-libs.js')) as { MarkdownIt: unknown; sanitizeHtml: unknown };
    expect(typeof lib.MarkdownIt).toBe('function');
    expect(typeof lib.sanitizeHtml).toBe('function');
  });

  it('may read a server (Query on the catalog table), spend from the limiter, read search and the origin secret, and nothing else', () => {
    const policies = Object.values(resources).filter(
      (r) =>
        r.Type === 'AWS::IAM::Policy' && (r.Properties.Roles as unknown[]).some((x) => JSON.stringify(x) === JSON.stringify({ Ref: logicalId(site.role) })),
    );
    const actions = policies.flatMap((p) =>
      (p.Properties.PolicyDocument as { Statement: Array<{ Action: string | string[] }> }).Statement.flatMap((st) => [st.Action].flat()),
    );
    expect([...new Set(actions)].sort()).toEqual(
      [
        'dynamodb:Query',
        'dynamodb:UpdateItem',
        'es:ESHttpGet',
        'es:ESHttpHead',
        'es:ESHttpPost',
        'logs:CreateLogStream',
        'logs:PutLogEvents',
        'secretsmanager:DescribeSecret',
        'secretsmanager:GetSecretValue',
        // Active tracing (the deployment's default): these support no resource-level permissions.
        'xray:PutTelemetryRecords',
        'xray:PutTraceSegments',
      ].sort(),
    );
    // The Queries are of the catalog table (a server's items) and the trust table (checks, changes, the feed's breaking changes).
    const queried = policies
      .flatMap((p) => (p.Properties.PolicyDocument as { Statement: Array<{ Action: string | string[]; Resource: unknown }> }).Statement)
      .filter((st) => [st.Action].flat().includes('dynamodb:Query'))
      .flatMap((st) => [st.Resource].flat());
    expect(queried).toEqual(
      expect.arrayContaining([{ 'Fn::GetAtt': [logicalId(data.catalogTable), 'Arn'] }, { 'Fn::GetAtt': [logicalId(data.trustTable), 'Arn'] }]),
    );
    const role = resources[logicalId(site.role)].Properties;
    expect(role.ManagedPolicyArns).toBeUndefined();
    const domain = resources[logicalId(searchDomain())].Properties;
    const statements = (domain.AccessPolicies as { Statement: Array<{ Principal: { AWS: unknown }; Action: string[] }> }).Statement;
    const mine = statements.filter((st) =>
      [st.Principal.AWS].flat().some((p) => JSON.stringify(p) === JSON.stringify({ 'Fn::GetAtt': [logicalId(site.role), 'Arn'] })),
    );
    expect(mine.flatMap((st) => st.Action).sort()).toEqual(['es:ESHttpGet', 'es:ESHttpHead', 'es:ESHttpPost']);
  });
});

describe('routes on the HTTP API', () => {
  it('declares every page of SITE_API and ANY on each page path, all to the render function, and no $default', () => {
    const routes = Object.values(template.findResources('AWS::ApiGatewayV2::Route'));
    const keys = routes.map((r) => r.Properties.RouteKey as string);
    expect(keys.sort()).toEqual([...SITE_API.routes.map(routeKey), ...SITE_ANY_PATHS.map((p) => `ANY ${p}`)].sort());
    expect(keys).not.toContain('$default');
    const integrations = template.findResources('AWS::ApiGatewayV2::Integration');
    for (const [, i] of Object.entries(integrations)) {
      expect(i.Properties).toMatchObject({
        IntegrationType: 'AWS_PROXY',
        PayloadFormatVersion: '2.0',
        IntegrationUri: { 'Fn::GetAtt': [logicalId(site.fn), 'Arn'] },
      });
    }
    expect(SITE_ANY_PATHS).toEqual([
      '/',
      '/index.html',
      '/servers',
      '/servers/{slug}',
      '/servers/{slug}/feed.xml',
      '/search',
      '/favorites',
      '/tokens',
      '/feed.xml',
      '/sitemap.xml',
      '/robots.txt',
      '/oauth-client.json',
      '/assets/{file}',
    ]);
  });
});

describe('CloudFront', () => {
  const config = () =>
    (Object.values(template.findResources('AWS::CloudFront::Distribution'))[0].Properties as { DistributionConfig: Record<string, unknown> })
      .DistributionConfig;

  it('maps / to /index.html (a behaviour cannot match the root itself)', () => {
    expect(config().DefaultRootObject).toBe('index.html');
  });

  it('sends each page path to the API origin with the site cache policy, all viewer headers but Host, and the viewer-address function', () => {
    const behaviors = config().CacheBehaviors as Array<Record<string, unknown>>;
    const defaultOrigin = (config().DefaultCacheBehavior as { TargetOriginId: string }).TargetOriginId;
    for (const pattern of SITE_PATH_PATTERNS) {
      const b = behaviors.find((x) => x.PathPattern === pattern);
      expect({ pattern, found: b !== undefined }).toEqual({ pattern, found: true });
      expect(b).toMatchObject({
        CachePolicyId: { Ref: logicalId(site.cachePolicy) },
        OriginRequestPolicyId: ALL_VIEWER_EXCEPT_HOST_HEADER,
        ViewerProtocolPolicy: 'redirect-to-https',
        Compress: true,
        FunctionAssociations: [{ EventType: 'viewer-request', FunctionARN: { 'Fn::GetAtt': [logicalId(edge.viewerAddressFunction), 'FunctionARN'] } }],
      });
      const origin = (config().Origins as Array<{ Id: string; DomainName: unknown; OriginCustomHeaders?: unknown }>).find((o) => o.Id === b?.TargetOriginId);
      expect(JSON.stringify(origin?.DomainName)).toBe(
        JSON.stringify((config().Origins as Array<{ Id: string; DomainName: unknown }>).find((o) => o.Id === defaultOrigin)?.DomainName),
      );
      expect(origin?.OriginCustomHeaders).toEqual([expect.objectContaining({ HeaderName: 'x-origin-verify' })]);
    }
  });

  it('caches pages as long as their Cache-Control says, keyed by path and query string only (never a cookie or Authorization)', () => {
    expect(resources[logicalId(site.cachePolicy)].Properties.CachePolicyConfig).toMatchObject({
      MinTTL: 0,
      DefaultTTL: 0,
      MaxTTL: 365 * 24 * 3600,
      ParametersInCacheKeyAndForwardedToOrigin: {
        CookiesConfig: { CookieBehavior: 'none' },
        HeadersConfig: { HeaderBehavior: 'none' },
        QueryStringsConfig: { QueryStringBehavior: 'all' },
        EnableAcceptEncodingGzip: true,
        EnableAcceptEncodingBrotli: true,
      },
    });
  });
});

describe('cdk-nag', () => {
  it('finds nothing unacknowledged in the site', () => {
    const violations = new AwsSolutionsChecks().validateScope(app).violations;
    const mine = violations.flatMap((v) =>
      v.violatingResources.filter((r) => (r.constructPath ?? '').includes('/Site/')).map((r) => `${v.ruleName} at ${r.constructPath}`),
    );
    expect(mine).toEqual([]);
  });
});
