/**
 * CDK assertions on the OAuth front inside the deployed stack: its Lambda, routes from the route
 * table plus the greedy routes of its two prefixes, least-privilege grants, the Cognito app client
 * it signs users in with, CloudFront behaviours for `/oauth/*` and `/.well-known/*`, cdk-nag.
 */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import type { IConstruct } from 'constructs';
import { OAUTH_ROUTES, OAUTH_WELL_KNOWN_ROUTES } from '../../lambdas/oauth/routes';
import { routeKey } from '../../lambdas/shared/http/route-table';
import { CatalogStack } from '../../lib/catalog-stack';
import { OAUTH_PROXY_PATHS } from '../../lib/oauth-front';
import { nagViolations } from '../support/nag';

const ROOT = path.join(__dirname, '..', '..');
const CONTEXT = (JSON.parse(readFileSync(path.join(ROOT, 'cdk.json'), 'utf8')) as { context: Record<string, unknown> }).context;
const CACHING_DISABLED = '4135ea2d-6df8-44a3-9df3-4b5a84be39ad';
const ALL_VIEWER_EXCEPT_HOST_HEADER = 'b689b0a8-53d0-40ab-baf2-68738e2966ac';

type Resources = Record<string, { Type: string; Properties: Record<string, unknown> }>;
interface Statement {
  Action: string | string[];
  Resource: unknown;
}

let app: App;
let stack: CatalogStack;
let template: Template;
let resources: Resources;

beforeAll(() => {
  app = new App({ context: CONTEXT });
  stack = new CatalogStack(app, 'McpCatalog', { env: { account: '123456789012', region: 'eu-west-1' }, sharpLayer: 'skip' });
  template = Template.fromStack(stack);
  resources = template.toJSON().Resources as Resources;
}, 180_000);

function logicalId(scope: IConstruct): string {
  const cfn = scope.node.defaultChild ?? scope;
  return Stack.of(scope).resolve((cfn as unknown as { logicalId: string }).logicalId) as string;
}

function roleStatements(role: IConstruct): Statement[] {
  return Object.values(template.findResources('AWS::IAM::Policy'))
    .filter((p) => (p.Properties.Roles as unknown[]).some((r) => JSON.stringify(r) === JSON.stringify({ Ref: logicalId(role) })))
    .flatMap((p) => p.Properties.PolicyDocument.Statement as Statement[]);
}

function onResource(statements: Statement[], resource: unknown): string[] {
  const want = JSON.stringify(resource);
  return statements
    .filter((st) => (Array.isArray(st.Resource) ? st.Resource : [st.Resource]).some((r) => JSON.stringify(r) === want))
    .flatMap((st) => (Array.isArray(st.Action) ? st.Action : [st.Action]))
    .sort();
}

const tableArn = (table: IConstruct) => ({ 'Fn::GetAtt': [logicalId(table), 'Arn'] });

describe('OAuth front Lambda', () => {
  it('runs Node.js 24 on arm64 with its own role', () => {
    expect(resources[logicalId(stack.oauth.fn)].Properties).toMatchObject({
      Runtime: 'nodejs24.x',
      Architectures: ['arm64'],
      Handler: 'index.handler',
      MemorySize: 512,
      Timeout: 10,
      Role: { 'Fn::GetAtt': [logicalId(stack.oauth.role), 'Arn'] },
    });
  });

  it('gets the Cognito upstream, the token and client tables, the signing keys and the lifetimes', () => {
    const env = (resources[logicalId(stack.oauth.fn)].Properties.Environment as { Variables: Record<string, unknown> }).Variables;
    const domain = { 'Fn::GetAtt': [logicalId(stack.edge.distribution), 'DomainName'] };
    expect(env).toMatchObject({
      AUTH_MODE: 'cognito',
      COGNITO_USER_POOL_ID: { Ref: logicalId(stack.auth.userPool) },
      OAUTH_COGNITO_CLIENT_ID: { Ref: logicalId(stack.oauth.cognitoClient) },
      COGNITO_DOMAIN: expect.anything(),
      PUBLIC_URL: { 'Fn::Join': ['', ['https://', domain]] },
      AUTH_AUDIENCE: { 'Fn::Join': ['', ['https://', domain, '/mcp']] },
      AUTH_TOKEN_TABLE: { Ref: logicalId(stack.auth.tokenTable) },
      AUTH_CLIENT_TABLE: { Ref: logicalId(stack.auth.clientTable) },
      CURSOR_SECRET_ARN: { Ref: logicalId(stack.data.cursorKeysSecret) },
      OAUTH_ACCESS_TOKEN_TTL_SECONDS: '3600',
      OAUTH_REFRESH_TOKEN_TTL_SECONDS: String(30 * 24 * 3600),
      OAUTH_CODE_TTL_SECONDS: '60',
      OAUTH_UNUSED_CLIENT_TTL_SECONDS: String(24 * 3600),
      OAUTH_IDLE_CLIENT_TTL_SECONDS: String(90 * 24 * 3600),
      POWERTOOLS_SERVICE_NAME: 'oauth',
    });
    expect(JSON.stringify(env.COGNITO_DOMAIN)).toContain('.auth.');
  });

  it('has exactly the grants the front needs, and no managed policies', () => {
    expect(resources[logicalId(stack.oauth.role)].Properties.ManagedPolicyArns).toBeUndefined();
    const statements = roleStatements(stack.oauth.role);
    expect(onResource(statements, tableArn(stack.auth.tokenTable))).toEqual([
      'dynamodb:BatchGetItem',
      'dynamodb:GetItem',
      'dynamodb:PutItem',
      'dynamodb:UpdateItem',
    ]);
    expect(onResource(statements, tableArn(stack.auth.clientTable))).toEqual(['dynamodb:GetItem', 'dynamodb:PutItem']);
    expect(onResource(statements, tableArn(stack.auth.favoritesTable))).toEqual([]);
    expect(onResource(statements, tableArn(stack.data.catalogTable))).toEqual([]);
    // Per-IP limits of registration and token requests: one conditional update per request.
    expect(onResource(statements, tableArn(stack.data.rateLimitTable))).toEqual(['dynamodb:UpdateItem']);
    const actions = statements.flatMap((st) => (Array.isArray(st.Action) ? st.Action : [st.Action]));
    expect(actions.filter((a) => a.includes('*'))).toEqual([]);
    expect(actions.filter((a) => /^(s3|es|kms|cognito-idp):/.test(a))).toEqual([]);
    const secretReads = statements.filter((st) => JSON.stringify(st.Action).includes('secretsmanager:GetSecretValue'));
    // The signing keys, and the origin header secret that makes the viewer address the client IP.
    expect(secretReads.flatMap((st) => st.Resource)).toEqual([
      { Ref: logicalId(stack.data.cursorKeysSecret) },
      { Ref: logicalId(stack.data.originVerifySecret) },
    ]);
  });
});

describe('routes on the HTTP API', () => {
  it("declares every route of the front's tables and the greedy routes of its prefixes, all on the front's Lambda", () => {
    const routes = Object.values(template.findResources('AWS::ApiGatewayV2::Route'));
    const integrations = template.findResources('AWS::ApiGatewayV2::Integration');
    const ofFront = new Set(
      Object.entries(integrations)
        .filter(([, i]) => JSON.stringify(i.Properties.IntegrationUri) === JSON.stringify({ 'Fn::GetAtt': [logicalId(stack.oauth.fn), 'Arn'] }))
        .map(([id]) => JSON.stringify({ 'Fn::Join': ['', ['integrations/', { Ref: id }]] })),
    );
    expect(ofFront.size).toBeGreaterThan(0);
    const frontKeys = routes.filter((r) => ofFront.has(JSON.stringify(r.Properties.Target))).map((r) => r.Properties.RouteKey as string);
    const expected = [...OAUTH_WELL_KNOWN_ROUTES, ...OAUTH_ROUTES].map(routeKey).concat(OAUTH_PROXY_PATHS.map((p) => `ANY ${p}`));
    expect(frontKeys.sort()).toEqual(expected.sort());
    for (const key of expected) template.hasResourceProperties('AWS::ApiGatewayV2::Route', { RouteKey: key, AuthorizationType: 'NONE' });
    // The catch-all stays the catalog's.
    const catchAll = routes.find((r) => r.Properties.RouteKey === '$default');
    expect(ofFront.has(JSON.stringify(catchAll?.Properties.Target))).toBe(false);
  });
});

describe('Cognito app client of the front', () => {
  it('is public, authorization code only, openid only, back to <publicUrl>/oauth/callback', () => {
    const client = resources[logicalId(stack.oauth.cognitoClient)].Properties;
    const domain = { 'Fn::GetAtt': [logicalId(stack.edge.distribution), 'DomainName'] };
    expect(client).toMatchObject({
      UserPoolId: { Ref: logicalId(stack.auth.userPool) },
      GenerateSecret: false,
      AllowedOAuthFlows: ['code'],
      AllowedOAuthFlowsUserPoolClient: true,
      AllowedOAuthScopes: ['openid'],
      CallbackURLs: [{ 'Fn::Join': ['', ['https://', domain, '/oauth/callback']] }],
      SupportedIdentityProviders: ['COGNITO'],
      PreventUserExistenceErrors: 'ENABLED',
    });
  });
});

describe('CloudFront', () => {
  it('sends /oauth/* and /.well-known/* to the API origin, uncached, with cookies, query strings and the viewer-address function', () => {
    const [distribution] = Object.values(template.findResources('AWS::CloudFront::Distribution'));
    const config = distribution.Properties.DistributionConfig as {
      DefaultCacheBehavior: { TargetOriginId: string };
      CacheBehaviors: Array<{
        PathPattern: string;
        TargetOriginId: string;
        CachePolicyId: string;
        OriginRequestPolicyId: string;
        AllowedMethods: string[];
        ViewerProtocolPolicy: string;
        FunctionAssociations?: unknown[];
      }>;
      Origins: Array<{ Id: string; DomainName: unknown }>;
    };
    const domainOf = (originId: string) => JSON.stringify(config.Origins.find((o) => o.Id === originId)?.DomainName);
    const apiDomain = domainOf(config.DefaultCacheBehavior.TargetOriginId);
    for (const pattern of ['/oauth/*', '/.well-known/*']) {
      const b = config.CacheBehaviors.find((c) => c.PathPattern === pattern);
      expect(b).toBeDefined();
      expect(domainOf(b?.TargetOriginId as string)).toBe(apiDomain);
      expect(b).toMatchObject({
        CachePolicyId: CACHING_DISABLED,
        OriginRequestPolicyId: ALL_VIEWER_EXCEPT_HOST_HEADER,
        ViewerProtocolPolicy: 'redirect-to-https',
      });
      expect(b?.AllowedMethods).toEqual(expect.arrayContaining(['GET', 'POST', 'OPTIONS']));
      expect(b?.FunctionAssociations).toHaveLength(1);
    }
  });
});

describe('cdk-nag (AwsSolutions)', () => {
  it('has no unacknowledged finding on the front', () => {
    const violations = nagViolations(app);
    const mine = violations.flatMap((v) =>
      v.violatingResources
        .filter((r) => (r.constructPath ?? '').includes('/OAuth/') || (r.constructPath ?? '').includes('RouteOauth'))
        .map((r) => `${v.ruleName} at ${r.constructPath}`),
    );
    expect(mine).toEqual([]);
  });
});
