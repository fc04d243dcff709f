/**
 * CDK assertions on the catalog stack, synthesized once (the Lambda bundles with the local esbuild).
 * The stack is placed in eu-west-1 so the Lambda@Edge function takes the cross-region path
 * (its own us-east-1 stack); a second, us-east-1 app checks the in-region path against cdk-nag.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { App, Stack, Validations, type PolicyViolation } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import * as apigwv2 from 'aws-cdk-lib/aws-apigatewayv2';
import { FeaturePlan } from 'aws-cdk-lib/aws-cognito';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import type { IConstruct } from 'constructs';
import { tableDefinitions } from '../../bin/local-stack/provision';
import { CATALOG_API } from '../../lambdas/catalog/routes';
import { CATALOG_MCP_API } from '../../lambdas/catalog/mcp/routes';
import { crawlerTableDefinitions } from '../../lambdas/crawler/adapters/dynamo-crawl-state';
import { memoryTableDefinitions } from '../../lambdas/memory/tables';
import { MEMORY_API } from '../../lambdas/memory-api/routes';
import { ORG_API } from '../../lambdas/catalog/org/routes';
import { routeKey, type ApiTable } from '../../lambdas/shared/http/route-table';
import { Edge, ICONS_PATH_PATTERN } from '../../lib/edge';
import { CatalogStack, type CatalogStackProps } from '../../lib/catalog-stack';
import { addRoutesFromTable } from '../../lib/http-routes';
import { OAUTH_FRONT_TABLE, OAUTH_PROXY_PATHS } from '../../lib/oauth-front';
import { SITE_ANY_PATHS, SITE_API } from '../../lambdas/site/routes';
import { nagViolations } from '../support/nag';

const ROOT = path.join(__dirname, '..', '..');
/** The feature flags of cdk.json, so the test synthesizes what `cdk synth` does. */
const CONTEXT = (JSON.parse(readFileSync(path.join(ROOT, 'cdk.json'), 'utf8')) as { context: Record<string, unknown> }).context;

const CACHING_DISABLED = '4135ea2d-6df8-44a3-9df3-4b5a84be39ad';
const ALL_VIEWER_EXCEPT_HOST_HEADER = 'b689b0a8-53d0-40ab-baf2-68738e2966ac';

type Resources = Record<string, { Type: string; Properties?: Record<string, unknown>; DeletionPolicy?: string }>;

interface Synthesized {
  app: App;
  stack: CatalogStack;
  template: Template;
  edgeStack?: Stack;
  violations: PolicyViolation[];
}

function synthesize(region: string, props: Omit<CatalogStackProps, 'env'> = {}): Synthesized {
  const app = new App({ context: CONTEXT });
  // The sharp layer is skipped: a test never installs anything from the package registry.
  const stack = new CatalogStack(app, 'McpCatalog', { env: { account: '123456789012', region }, sharpLayer: 'skip', ...props });
  const template = Template.fromStack(stack);
  const edgeStack = app.node.children.find((c): c is Stack => c instanceof Stack && c !== stack);
  // cdk-nag 3.x is a policy-validation plugin: it reports through the validation report rather than
  // annotations. `validateScope` runs the same rules the plugin of bin/app.ts runs at `cdk synth`,
  // honouring every `Validations.acknowledge()`.
  const violations = nagViolations(app);
  return { app, stack, template, edgeStack, violations };
}

function describeViolations(violations: PolicyViolation[]): string[] {
  return violations.flatMap((v) => v.violatingResources.map((r) => `${v.severity} ${v.ruleName} at ${r.constructPath}: ${v.description}`));
}

function logicalId(scope: IConstruct): string {
  const cfn = scope.node.defaultChild ?? scope;
  return Stack.of(scope).resolve((cfn as unknown as { logicalId: string }).logicalId) as string;
}

let s: Synthesized;
let resources: Resources;

beforeAll(() => {
  s = synthesize('eu-west-1');
  resources = s.template.toJSON().Resources as Resources;
}, 180_000);

describe('HTTP API routes come from the route table', () => {
  it("declares every route of CATALOG_API plus $default, and nothing else (besides the OAuth front's, see oauth-front.test.ts)", () => {
    const keys = Object.values(s.template.findResources('AWS::ApiGatewayV2::Route')).map((r) => r.Properties.RouteKey as string);
    const expected = [
      ...CATALOG_API.routes.map(routeKey),
      ...CATALOG_MCP_API.routes.map(routeKey),
      '$default',
      ...OAUTH_FRONT_TABLE.routes.map(routeKey),
      ...OAUTH_PROXY_PATHS.map((p) => `ANY ${p}`),
    ];
    // And the memory REST API's (see memory-api.test.ts): its table and its /v1 catch-all.
    expected.push(...MEMORY_API.routes.map(routeKey), 'ANY /v1/{proxy+}', 'ANY /v1');
    // And the site's (see site.test.ts): its pages, and ANY on each page's path.
    expected.push(...SITE_API.routes.map(routeKey), ...SITE_ANY_PATHS.map((p) => `ANY ${p}`));
    // And the organisation registry's (see org-registry.test.ts): its table and its /org catch-all.
    expected.push(...ORG_API.routes.map(routeKey), 'ANY /org/{proxy+}', 'ANY /org');
    expect(keys.sort()).toEqual([...expected].sort());
    for (const route of [...CATALOG_API.routes, ...CATALOG_MCP_API.routes]) {
      s.template.hasResourceProperties('AWS::ApiGatewayV2::Route', { RouteKey: routeKey(route), AuthorizationType: 'NONE' });
    }
    s.template.hasResourceProperties('AWS::ApiGatewayV2::Route', { RouteKey: '$default' });
  });

  it('integrates each route with the Lambda its fn names (proxy, payload 2.0): favorites with the favorites Lambda, the rest and $default with the catalog Lambda', () => {
    const integrations = s.template.findResources('AWS::ApiGatewayV2::Integration');
    // Two more belong to the OAuth front (its table's routes and its greedy routes), two to the memory API (its table, its /v1 catch-all),
    // two to the site (its pages, ANY on their paths), two to the organisation registry (its table, ANY on /org and /org/{proxy+}).
    expect(Object.keys(integrations)).toHaveLength(10);
    const integrationOf = (fn: IConstruct): string => {
      const found = Object.entries(integrations).filter(
        ([, i]) => JSON.stringify(i.Properties.IntegrationUri) === JSON.stringify({ 'Fn::GetAtt': [logicalId(fn), 'Arn'] }),
      );
      expect(found).toHaveLength(1);
      expect(found[0][1].Properties).toMatchObject({ IntegrationType: 'AWS_PROXY', PayloadFormatVersion: '2.0' });
      return found[0][0];
    };
    const target = (id: string) => ({ 'Fn::Join': ['', ['integrations/', { Ref: id }]] });
    const byFn: Record<string, string> = { catalog: integrationOf(s.stack.api.fn), favorites: integrationOf(s.stack.api.favoritesFn) };
    const routes = Object.values(s.template.findResources('AWS::ApiGatewayV2::Route'));
    // The catalog over MCP is the catalog function's: no function, integration or behaviour of its own.
    expect(CATALOG_MCP_API.routes.map((r) => `${routeKey(r)} ${r.fn}`)).toEqual(['POST /api/mcp catalog']);
    for (const def of [...CATALOG_API.routes, ...CATALOG_MCP_API.routes]) {
      const route = routes.find((r) => r.Properties.RouteKey === routeKey(def));
      expect(route?.Properties.Target).toEqual(target(byFn[def.fn]));
    }
    expect(CATALOG_API.routes.filter((r) => r.fn === 'favorites').map(routeKey)).toEqual([
      'GET /api/favorites',
      'POST /api/favorites',
      'DELETE /api/favorites/{slug}',
    ]);
    expect(routes.find((r) => r.Properties.RouteKey === '$default')?.Properties.Target).toEqual(target(byFn.catalog));
    // API Gateway may invoke the function for each route (permissions scoped per route path).
    const permissions = Object.values(s.template.findResources('AWS::Lambda::Permission')).filter((p) => p.Properties.Principal === 'apigateway.amazonaws.com');
    expect(permissions).toHaveLength(
      CATALOG_API.routes.length +
        CATALOG_MCP_API.routes.length +
        1 +
        OAUTH_FRONT_TABLE.routes.length +
        OAUTH_PROXY_PATHS.length +
        MEMORY_API.routes.length +
        2 +
        SITE_API.routes.length +
        SITE_ANY_PATHS.length +
        ORG_API.routes.length +
        2,
    );
  });

  it('has one $default stage with auto-deploy, throttling and JSON access logs', () => {
    s.template.resourceCountIs('AWS::ApiGatewayV2::Stage', 1);
    s.template.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
      StageName: '$default',
      AutoDeploy: true,
      DefaultRouteSettings: { ThrottlingRateLimit: 1000, ThrottlingBurstLimit: 2000 },
      AccessLogSettings: {
        DestinationArn: Match.anyValue(),
        Format: Match.stringLikeRegexp('\\$context\\.requestId'),
      },
    });
  });
});

describe('catalog Lambda', () => {
  it('runs Node.js 24 on arm64 with the bundled handler', () => {
    s.template.hasResourceProperties('AWS::Lambda::Function', {
      Runtime: 'nodejs24.x',
      Architectures: ['arm64'],
      Handler: 'index.handler',
      MemorySize: 1024,
      Timeout: 10,
    });
  });

  it('gets the environment lambdas/catalog/config.ts reads', () => {
    const fn = resources[logicalId(s.stack.api.fn)];
    const env = ((fn.Properties as Record<string, unknown>).Environment as { Variables: Record<string, unknown> }).Variables;
    expect(env).toMatchObject({
      CATALOG_TABLE: { Ref: logicalId(s.stack.data.catalogTable) },
      TRUST_TABLE: { Ref: logicalId(s.stack.data.trustTable) },
      CHECK_RETENTION_DAYS: '90',
      RATE_LIMIT_TABLE: { Ref: logicalId(s.stack.data.rateLimitTable) },
      ICONS_BUCKET: { Ref: logicalId(s.stack.data.iconsBucket) },
      SEARCH_BACKEND: 'opensearch',
      OPENSEARCH_URL: { 'Fn::Join': ['', ['https://', { 'Fn::GetAtt': [logicalId(s.stack.data.searchDomain as IConstruct), 'DomainEndpoint'] }]] },
      OPENSEARCH_INDEX: 'catalog',
      CATALOG_BRAND: 'example',
      RATE_ANON_RPS: '30',
      RATE_ANON_BURST: '60',
      RATE_USER_RPS: '100',
      RATE_USER_BURST: '200',
      CURSOR_SECRET_ARN: { Ref: logicalId(s.stack.data.cursorKeysSecret) },
      ORIGIN_VERIFY_SECRET_ARN: { Ref: logicalId(s.stack.data.originVerifySecret) },
      POWERTOOLS_SERVICE_NAME: 'catalog',
      NODE_OPTIONS: '--enable-source-maps',
      ...authEnvironment(),
    });
    // The site serves the detail pages, so the registry feed's CatalogMeta.url points at them by default.
    expect(env.SITE_URL_TEMPLATE).toEqual({
      'Fn::Join': ['', ['https://', { 'Fn::GetAtt': [logicalId(s.stack.edge.distribution), 'DomainName'] }, '/servers/{slug}']],
    });
    expect(env).not.toHaveProperty('FAVORITES_TABLE');
  });

  it('has least-privilege grants and no managed policies', () => {
    const role = resources[logicalId(s.stack.api.role)];
    expect(role.Properties?.ManagedPolicyArns).toBeUndefined();
    const policies = Object.values(s.template.findResources('AWS::IAM::Policy')).filter((p) =>
      (p.Properties.Roles as unknown[]).some((r) => JSON.stringify(r) === JSON.stringify({ Ref: logicalId(s.stack.api.role) })),
    );
    const statements = policies.flatMap((p) => p.Properties.PolicyDocument.Statement as { Action: string | string[]; Resource: unknown }[]);
    const actions = statements.flatMap((st) => (Array.isArray(st.Action) ? st.Action : [st.Action]));
    expect(actions).toEqual(expect.arrayContaining(['es:ESHttpGet', 'es:ESHttpPost', 'es:ESHttpHead', 'dynamodb:UpdateItem', 's3:GetObject']));
    for (const forbidden of ['es:ESHttpPut', 'es:ESHttpDelete', 'dynamodb:PutItem', 'dynamodb:DeleteItem', 's3:PutObject']) {
      expect(actions).not.toContain(forbidden);
    }
    expect(actions.filter((a) => a.includes('*'))).toEqual([]);
    const rateLimitWrites = statements.find((st) => JSON.stringify(st.Action).includes('dynamodb:UpdateItem'));
    expect(rateLimitWrites?.Resource).toEqual({ 'Fn::GetAtt': [logicalId(s.stack.data.rateLimitTable), 'Arn'] });
    // The limiter's batched takes (RATE_BATCH_TAKES) are PartiQL inserts and updates of that table only.
    expect(onTable(statements, s.stack.data.rateLimitTable)).toEqual([
      'dynamodb:GetItem',
      'dynamodb:PartiQLInsert',
      'dynamodb:PartiQLUpdate',
      'dynamodb:UpdateItem',
    ]);
    expect(statements.filter((st) => JSON.stringify(st.Action).includes('PartiQL')).map((st) => st.Resource)).toEqual([
      { 'Fn::GetAtt': [logicalId(s.stack.data.rateLimitTable), 'Arn'] },
    ]);
    // The bearer tier: reads of the opaque-token table only.
    expect(onTable(statements, s.stack.auth.tokenTable)).toEqual(['dynamodb:BatchGetItem', 'dynamodb:GetItem']);
    expect(onTable(statements, s.stack.auth.favoritesTable)).toEqual([]);
    // A server's checks (/health) and changes (/changes): Queries of the trust table only.
    expect(onTable(statements, s.stack.data.trustTable)).toEqual(['dynamodb:Query']);
  });
});

/** The environment `loadAuthConfig()` reads, as both functions get it (Cognito mode, one audience). */
function authEnvironment(): Record<string, unknown> {
  const distributionDomain = { 'Fn::GetAtt': [logicalId(s.stack.edge.distribution), 'DomainName'] };
  const audience = { 'Fn::Join': ['', ['https://', distributionDomain, '/mcp']] };
  return {
    AUTH_MODE: 'cognito',
    COGNITO_USER_POOL_ID: { Ref: logicalId(s.stack.auth.userPool) },
    COGNITO_CLIENT_IDS: { Ref: logicalId(s.stack.auth.webClient) },
    COGNITO_RESOURCE_SERVER: audience,
    AUTH_AUDIENCE: audience,
    PUBLIC_URL: { 'Fn::Join': ['', ['https://', distributionDomain]] },
    AUTH_TOKEN_TABLE: { Ref: logicalId(s.stack.auth.tokenTable) },
    AUTH_CLIENT_TABLE: { Ref: logicalId(s.stack.auth.clientTable) },
  };
}

type Statement = { Action: string | string[]; Resource: unknown };

function roleStatements(role: IConstruct): Statement[] {
  const policies = Object.values(s.template.findResources('AWS::IAM::Policy')).filter((p) =>
    (p.Properties.Roles as unknown[]).some((r) => JSON.stringify(r) === JSON.stringify({ Ref: logicalId(role) })),
  );
  return policies.flatMap((p) => p.Properties.PolicyDocument.Statement as Statement[]);
}

/** Sorted actions the statements grant on exactly this table's ARN. */
function onTable(statements: Statement[], table: IConstruct): string[] {
  const arn = JSON.stringify({ 'Fn::GetAtt': [logicalId(table), 'Arn'] });
  return statements
    .filter((st) => (Array.isArray(st.Resource) ? st.Resource : [st.Resource]).some((r) => JSON.stringify(r) === arn))
    .flatMap((st) => (Array.isArray(st.Action) ? st.Action : [st.Action]))
    .sort();
}

describe('favorites Lambda', () => {
  it('runs Node.js 24 on arm64, bundled like the catalog Lambda', () => {
    const fn = resources[logicalId(s.stack.api.favoritesFn)];
    expect(fn.Type).toBe('AWS::Lambda::Function');
    expect(fn.Properties).toMatchObject({ Runtime: 'nodejs24.x', Architectures: ['arm64'], Handler: 'index.handler', MemorySize: 512, Timeout: 10 });
    expect(fn.Properties?.Role).toEqual({ 'Fn::GetAtt': [logicalId(s.stack.api.favoritesRole), 'Arn'] });
  });

  it('gets the catalog, rate-limit, favorites and auth environment', () => {
    const env = ((resources[logicalId(s.stack.api.favoritesFn)].Properties as Record<string, unknown>).Environment as { Variables: Record<string, unknown> })
      .Variables;
    expect(env).toMatchObject({
      CATALOG_TABLE: { Ref: logicalId(s.stack.data.catalogTable) },
      RATE_LIMIT_TABLE: { Ref: logicalId(s.stack.data.rateLimitTable) },
      FAVORITES_TABLE: { Ref: logicalId(s.stack.auth.favoritesTable) },
      ORIGIN_VERIFY_SECRET_ARN: { Ref: logicalId(s.stack.data.originVerifySecret) },
      RATE_ANON_RPS: '30',
      RATE_ANON_BURST: '60',
      RATE_USER_RPS: '100',
      RATE_USER_BURST: '200',
      POWERTOOLS_SERVICE_NAME: 'favorites',
      ...authEnvironment(),
    });
    // Nothing of the catalog's read side: no search, icons or cursor keys.
    for (const name of ['OPENSEARCH_URL', 'ICONS_BUCKET', 'CURSOR_SECRET_ARN']) expect(env).not.toHaveProperty(name);
  });

  it('has exactly the grants the favorites handlers need, and no managed policies', () => {
    expect(resources[logicalId(s.stack.api.favoritesRole)].Properties?.ManagedPolicyArns).toBeUndefined();
    const statements = roleStatements(s.stack.api.favoritesRole);
    expect(onTable(statements, s.stack.auth.favoritesTable)).toEqual([
      'dynamodb:ConditionCheckItem',
      'dynamodb:DeleteItem',
      'dynamodb:GetItem',
      'dynamodb:PutItem',
      'dynamodb:Query',
      'dynamodb:UpdateItem',
    ]);
    expect(onTable(statements, s.stack.data.catalogTable)).toEqual(['dynamodb:GetItem']);
    expect(onTable(statements, s.stack.data.rateLimitTable)).toEqual(['dynamodb:UpdateItem']);
    expect(onTable(statements, s.stack.auth.tokenTable)).toEqual(['dynamodb:BatchGetItem', 'dynamodb:GetItem']);
    expect(onTable(statements, s.stack.auth.clientTable)).toEqual([]);
    const actions = statements.flatMap((st) => (Array.isArray(st.Action) ? st.Action : [st.Action]));
    expect(actions.filter((a) => a.includes('*'))).toEqual([]);
    expect(actions.filter((a) => /^(s3|es|kms):/.test(a))).toEqual([]);
    const secretReads = statements.filter((st) => JSON.stringify(st.Action).includes('secretsmanager:GetSecretValue'));
    expect(secretReads.map((st) => st.Resource)).toEqual([{ Ref: logicalId(s.stack.data.originVerifySecret) }]);
  });
});

describe('auth', () => {
  const table = (construct: IConstruct) => resources[logicalId(construct)];
  const common = {
    BillingMode: 'PAY_PER_REQUEST',
    PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
    SSESpecification: { SSEEnabled: true },
    DeletionProtectionEnabled: true,
  };

  it('token and client tables: one key, TTL on expiresAt, on demand, PITR, SSE, retained', () => {
    expect(table(s.stack.auth.tokenTable).DeletionPolicy).toBe('Retain');
    expect(table(s.stack.auth.tokenTable).Properties).toMatchObject({
      KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
      AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
      TimeToLiveSpecification: { AttributeName: 'expiresAt', Enabled: true },
      ...common,
    });
    expect(table(s.stack.auth.clientTable).DeletionPolicy).toBe('Retain');
    expect(table(s.stack.auth.clientTable).Properties).toMatchObject({
      KeySchema: [{ AttributeName: 'clientId', KeyType: 'HASH' }],
      AttributeDefinitions: [{ AttributeName: 'clientId', AttributeType: 'S' }],
      TimeToLiveSpecification: { AttributeName: 'expiresAt', Enabled: true },
      ...common,
    });
  });

  it('every table has the keys and TTL the local stack provisions (one schema for both)', () => {
    const local = [
      ...tableDefinitions({ catalog: 'catalog', trust: 'trust', rateLimits: 'rate' }, { tokens: 'tokens', clients: 'clients', favorites: 'favorites' }),
      ...crawlerTableDefinitions('state'),
      ...memoryTableDefinitions({ memories: 'memories' }),
    ];
    const constructs = [
      s.stack.data.catalogTable,
      s.stack.data.trustTable,
      s.stack.data.rateLimitTable,
      s.stack.auth.tokenTable,
      s.stack.auth.clientTable,
      s.stack.auth.favoritesTable,
      s.stack.crawler.stateTable,
      s.stack.memory.table,
    ];
    expect(Object.keys(s.template.findResources('AWS::DynamoDB::Table'))).toHaveLength(constructs.length);
    constructs.forEach((construct, i) => {
      const props = table(construct).Properties ?? {};
      expect({
        keys: props.KeySchema,
        attributes: props.AttributeDefinitions,
        ttl: (props.TimeToLiveSpecification as { AttributeName?: string } | undefined)?.AttributeName,
      }).toEqual({
        keys: local[i].input.KeySchema,
        attributes: local[i].input.AttributeDefinitions,
        ttl: local[i].ttl,
      });
    });
  });

  it('favorites table: pk + sk, on demand, PITR, SSE, retained, no TTL', () => {
    const favorites = table(s.stack.auth.favoritesTable);
    expect(favorites.DeletionPolicy).toBe('Retain');
    expect(favorites.Properties).toMatchObject({
      KeySchema: [
        { AttributeName: 'pk', KeyType: 'HASH' },
        { AttributeName: 'sk', KeyType: 'RANGE' },
      ],
      ...common,
    });
    expect(favorites.Properties?.TimeToLiveSpecification).toBeUndefined();
  });

  it('user pool: admin-created accounts by default, strong passwords, TOTP MFA, the Essentials plan, retained', () => {
    s.template.resourceCountIs('AWS::Cognito::UserPool', 1);
    const pool = table(s.stack.auth.userPool);
    expect(pool.DeletionPolicy).toBe('Retain');
    expect(pool.Properties).toMatchObject({
      AdminCreateUserConfig: { AllowAdminCreateUserOnly: true },
      Policies: { PasswordPolicy: { MinimumLength: 12, RequireLowercase: true, RequireUppercase: true, RequireNumbers: true, RequireSymbols: true } },
      MfaConfiguration: 'OPTIONAL',
      EnabledMfas: ['SOFTWARE_TOKEN_MFA'],
      UserPoolTier: 'ESSENTIALS',
      DeletionProtection: 'ACTIVE',
      UsernameAttributes: ['email'],
    });
  });

  it('hosted sign-in on a Cognito domain unique to the stack', () => {
    s.template.hasResourceProperties('AWS::Cognito::UserPoolDomain', {
      UserPoolId: { Ref: logicalId(s.stack.auth.userPool) },
      Domain: { 'Fn::Join': ['-', ['mcp', { 'Fn::Select': [2, { 'Fn::Split': ['/', { Ref: 'AWS::StackId' }] }] }]] },
    });
  });

  it('resource server: the deployment audience as identifier, with the memory:read and memory:write scopes', () => {
    s.template.hasResourceProperties('AWS::Cognito::UserPoolResourceServer', {
      UserPoolId: { Ref: logicalId(s.stack.auth.userPool) },
      Identifier: authEnvironment().AUTH_AUDIENCE,
      Scopes: [Match.objectLike({ ScopeName: 'memory:read' }), Match.objectLike({ ScopeName: 'memory:write' })],
    });
  });

  it('web client: public (no secret), authorization code only, Cognito sign-in, both scopes', () => {
    // The web client and the OAuth front's own (oauth-front.test.ts).
    s.template.resourceCountIs('AWS::Cognito::UserPoolClient', 2);
    const client = table(s.stack.auth.webClient);
    const resourceServer = logicalId(s.stack.auth.resourceServer);
    expect(client.Properties).toMatchObject({
      GenerateSecret: false,
      AllowedOAuthFlows: ['code'],
      AllowedOAuthFlowsUserPoolClient: true,
      SupportedIdentityProviders: ['COGNITO'],
      PreventUserExistenceErrors: 'ENABLED',
      EnableTokenRevocation: true,
      CallbackURLs: [{ 'Fn::Join': ['', ['https://', { 'Fn::GetAtt': [logicalId(s.stack.edge.distribution), 'DomainName'] }, '/auth/callback']] }],
    });
    expect(client.Properties?.AllowedOAuthScopes).toEqual(
      expect.arrayContaining(['openid', ...['memory:read', 'memory:write'].map((sc) => ({ 'Fn::Join': ['', [{ Ref: resourceServer }, `/${sc}`]] }))]),
    );
  });

  it('outputs the user pool, the web client, the sign-in URL and the public URL', () => {
    s.template.hasOutput('UserPoolId', { Value: { Ref: logicalId(s.stack.auth.userPool) } });
    s.template.hasOutput('WebClientId', { Value: { Ref: logicalId(s.stack.auth.webClient) } });
    s.template.hasOutput('SignInUrl', Match.anyValue());
    s.template.hasOutput('PublicUrl', { Value: authEnvironment().PUBLIC_URL });
  });

  it('has no dependency cycle (the functions and the resource server wait for the distribution, which waits for the API only)', () => {
    const deps = new Map<string, Set<string>>();
    const collect = (node: unknown, out: Set<string>): void => {
      if (Array.isArray(node)) for (const n of node) collect(n, out);
      else if (node && typeof node === 'object') {
        for (const [k, v] of Object.entries(node)) {
          if (k === 'Ref' && typeof v === 'string') out.add(v);
          else if (k === 'Fn::GetAtt') out.add(Array.isArray(v) ? String(v[0]) : String(v).split('.')[0]);
          else if (k === 'Fn::Sub') {
            const text = typeof v === 'string' ? v : String((v as unknown[])[0]);
            for (const m of text.matchAll(/\$\{([^}.!]+)/g)) out.add(m[1]);
            collect(v, out);
          } else collect(v, out);
        }
      }
    };
    const all = s.template.toJSON().Resources as Record<string, { Properties?: unknown; DependsOn?: string | string[] }>;
    for (const [id, r] of Object.entries(all)) {
      const out = new Set<string>([r.DependsOn ?? []].flat());
      collect(r.Properties, out);
      deps.set(id, new Set([...out].filter((d) => d in all)));
    }
    const state = new Map<string, 'visiting' | 'done'>();
    const cycles: string[] = [];
    const visit = (id: string, path: string[]): void => {
      state.set(id, 'visiting');
      for (const d of deps.get(id) ?? []) {
        if (state.get(d) === 'visiting') cycles.push([...path, d].join(' -> '));
        else if (!state.has(d)) visit(d, [...path, d]);
      }
      state.set(id, 'done');
    };
    for (const id of deps.keys()) if (!state.has(id)) visit(id, [id]);
    expect(cycles).toEqual([]);
    // The distribution does not wait for either function.
    const distribution = deps.get(logicalId(s.stack.edge.distribution)) ?? new Set();
    expect([...distribution]).not.toContain(logicalId(s.stack.api.fn));
    expect([...distribution]).not.toContain(logicalId(s.stack.api.favoritesFn));
  });
});

describe('stateful resources', () => {
  it('catalog table: slug + sk, on demand, PITR, SSE, retained', () => {
    const table = resources[logicalId(s.stack.data.catalogTable)];
    expect(table.DeletionPolicy).toBe('Retain');
    expect(table.Properties).toMatchObject({
      KeySchema: [
        { AttributeName: 'slug', KeyType: 'HASH' },
        { AttributeName: 'sk', KeyType: 'RANGE' },
      ],
      BillingMode: 'PAY_PER_REQUEST',
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      SSESpecification: { SSEEnabled: true },
      DeletionProtectionEnabled: true,
    });
  });

  it('rate-limits table: pk, TTL on expiresAt, on demand, PITR, SSE', () => {
    const table = resources[logicalId(s.stack.data.rateLimitTable)];
    expect(table.Properties).toMatchObject({
      KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
      TimeToLiveSpecification: { AttributeName: 'expiresAt', Enabled: true },
      BillingMode: 'PAY_PER_REQUEST',
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      SSESpecification: { SSEEnabled: true },
    });
  });

  it('buckets block public access, are encrypted and refuse plain HTTP', () => {
    const buckets = s.template.findResources('AWS::S3::Bucket');
    // Icons, access logs, the memory bucket and the organisation's settings (the allow-list).
    expect(Object.keys(buckets)).toHaveLength(4);
    for (const [id, bucket] of Object.entries(buckets)) {
      expect(bucket.Properties.PublicAccessBlockConfiguration).toEqual({
        BlockPublicAcls: true,
        BlockPublicPolicy: true,
        IgnorePublicAcls: true,
        RestrictPublicBuckets: true,
      });
      expect(bucket.Properties.BucketEncryption.ServerSideEncryptionConfiguration[0].ServerSideEncryptionByDefault.SSEAlgorithm).toBe('AES256');
      s.template.hasResourceProperties('AWS::S3::BucketPolicy', {
        Bucket: { Ref: id },
        PolicyDocument: {
          Statement: Match.arrayWith([Match.objectLike({ Effect: 'Deny', Action: 's3:*', Condition: { Bool: { 'aws:SecureTransport': 'false' } } })]),
        },
      });
    }
    const icons = buckets[logicalId(s.stack.data.iconsBucket)];
    expect(icons.Properties.LoggingConfiguration).toMatchObject({
      DestinationBucketName: { Ref: logicalId(s.stack.data.accessLogsBucket) },
      LogFilePrefix: 's3/icons/',
    });
    expect(icons.Properties.VersioningConfiguration).toBeUndefined();
  });

  it('OpenSearch domain: HTTPS only (TLS 1.2), node-to-node, at rest, outside a VPC, roles only', () => {
    const domain = resources[logicalId(s.stack.data.searchDomain as IConstruct)];
    expect(domain.Properties).toMatchObject({
      NodeToNodeEncryptionOptions: { Enabled: true },
      EncryptionAtRestOptions: { Enabled: true },
      DomainEndpointOptions: { EnforceHTTPS: true, TLSSecurityPolicy: 'Policy-Min-TLS-1-2-2019-07' },
      ClusterConfig: { InstanceType: 't3.small.search', InstanceCount: 2, ZoneAwarenessEnabled: true },
      EBSOptions: { EBSEnabled: true, VolumeSize: 10, VolumeType: 'gp3' },
      EngineVersion: 'OpenSearch_2.19',
    });
    expect(domain.Properties?.VPCOptions).toBeUndefined();
    expect(domain.Properties?.AdvancedSecurityOptions).toBeUndefined();
    const statements = ((domain.Properties as Record<string, unknown>).AccessPolicies as { Statement: { Principal: unknown; Action: string[] }[] }).Statement;
    // Only five roles reach the domain: the API, the organisation registry and the site read, the crawler and the health checks also write.
    const byRole = (role: Parameters<typeof logicalId>[0]) =>
      statements.find((st) =>
        [(st.Principal as { AWS: unknown }).AWS].flat().some((p) => JSON.stringify(p) === JSON.stringify({ 'Fn::GetAtt': [logicalId(role), 'Arn'] })),
      );
    expect(statements.flatMap((st) => [(st.Principal as { AWS: unknown }).AWS].flat())).toHaveLength(5);
    expect(byRole(s.stack.site.role)?.Action.sort()).toEqual(['es:ESHttpGet', 'es:ESHttpHead', 'es:ESHttpPost']);
    expect(byRole(s.stack.api.role)?.Action.sort()).toEqual(['es:ESHttpGet', 'es:ESHttpHead', 'es:ESHttpPost']);
    expect(byRole(s.stack.org.role)?.Action.sort()).toEqual(['es:ESHttpGet', 'es:ESHttpHead', 'es:ESHttpPost']);
    expect(byRole(s.stack.crawler.role)?.Action).toEqual(expect.arrayContaining(['es:ESHttpPut', 'es:ESHttpDelete']));
    expect(byRole(s.stack.checks.role)?.Action).toEqual(expect.arrayContaining(['es:ESHttpPut', 'es:ESHttpPost']));
  });

  it('secrets are generated, never written into the template', () => {
    // Cursor keys and the origin header secret, both generated. The settings of the MCP function and
    // of the git remote (audience, client ids: no credential) are Parameter Store parameters.
    s.template.resourceCountIs('AWS::SecretsManager::Secret', 2);
    const written = Object.values(s.template.findResources('AWS::SecretsManager::Secret')).filter((r) => r.Properties.SecretString !== undefined);
    expect(written).toEqual([]);
    s.template.hasResourceProperties('AWS::SecretsManager::Secret', {
      GenerateSecretString: Match.objectLike({ SecretStringTemplate: '{"id":1}', GenerateStringKey: 'secret', PasswordLength: 64 }),
    });
    s.template.hasResourceProperties('AWS::SecretsManager::Secret', {
      GenerateSecretString: Match.objectLike({ PasswordLength: 48, ExcludePunctuation: true }),
    });
  });
});

describe('CloudFront', () => {
  it('sends the default behaviour to the HTTP API, uncached, with all viewer headers but Host', () => {
    s.template.hasResourceProperties('AWS::CloudFront::Distribution', {
      DistributionConfig: Match.objectLike({
        DefaultCacheBehavior: Match.objectLike({
          CachePolicyId: CACHING_DISABLED,
          OriginRequestPolicyId: ALL_VIEWER_EXCEPT_HOST_HEADER,
          AllowedMethods: Match.arrayWith(['GET', 'HEAD', 'OPTIONS', 'POST', 'DELETE']),
          ViewerProtocolPolicy: 'redirect-to-https',
        }),
        Logging: Match.objectLike({ Prefix: 'cloudfront/' }),
      }),
    });
  });

  it('runs the viewer-address CloudFront Function (JS 2.0) on viewer request of the default behaviour', () => {
    const functionId = logicalId(s.stack.edge.viewerAddressFunction);
    expect(resources[functionId]).toMatchObject({
      Type: 'AWS::CloudFront::Function',
      Properties: {
        AutoPublish: true,
        FunctionConfig: { Runtime: 'cloudfront-js-2.0' },
        FunctionCode: readFileSync(path.join(ROOT, 'lambdas', 'edge', 'viewer-address.js'), 'utf8'),
      },
    });
    s.template.resourceCountIs('AWS::CloudFront::Function', 1);
    const [distribution] = Object.values(s.template.findResources('AWS::CloudFront::Distribution'));
    const config = distribution.Properties.DistributionConfig;
    expect(config.DefaultCacheBehavior.FunctionAssociations).toEqual([
      { EventType: 'viewer-request', FunctionARN: { 'Fn::GetAtt': [functionId, 'FunctionARN'] } },
    ]);
    // Not on the icons: S3 has no use for the viewer's address.
    for (const behavior of (config.CacheBehaviors as Record<string, unknown>[]).filter((b) => b.PathPattern === ICONS_PATH_PATTERN)) {
      expect(behavior.FunctionAssociations).toBeUndefined();
    }
  });

  it('reaches the API over HTTPS (TLS 1.2) with the origin-verify header from Secrets Manager', () => {
    const [distribution] = Object.values(s.template.findResources('AWS::CloudFront::Distribution'));
    const apiOrigin = (distribution.Properties.DistributionConfig.Origins as Record<string, unknown>[]).find((o) => o.CustomOriginConfig);
    expect(apiOrigin).toMatchObject({
      CustomOriginConfig: { OriginProtocolPolicy: 'https-only', OriginSSLProtocols: ['TLSv1.2'] },
      DomainName: { 'Fn::Join': ['', [{ Ref: logicalId(s.stack.api.httpApi) }, '.execute-api.eu-west-1.', { Ref: 'AWS::URLSuffix' }]] },
      OriginCustomHeaders: [
        {
          HeaderName: 'x-origin-verify',
          // A dynamic reference CloudFormation resolves at deploy time: the value never appears in the template.
          HeaderValue: {
            'Fn::Join': ['', ['{{resolve:secretsmanager:', { Ref: logicalId(s.stack.data.originVerifySecret) }, ':SecretString:::}}']],
          },
        },
      ],
    });
  });

  it('serves /api/mcp (the catalog over MCP) through the default behaviour to the HTTP API: every verb, no behaviour of its own', () => {
    const [distribution] = Object.values(s.template.findResources('AWS::CloudFront::Distribution'));
    const config = distribution.Properties.DistributionConfig;
    const glob = (pattern: string) =>
      new RegExp(
        `^${pattern
          .replace(/[.+^${}()|[\]\\]/g, '\\$&')
          .replace(/\*/g, '.*')
          .replace(/\?/g, '.')}$`,
      );
    const matching = (config.CacheBehaviors as { PathPattern: string }[]).filter((b) => glob(b.PathPattern).test('/api/mcp'));
    expect(matching).toEqual([]);
    expect(config.DefaultCacheBehavior.AllowedMethods).toEqual(expect.arrayContaining(['POST', 'OPTIONS']));
    expect(config.DefaultCacheBehavior.OriginRequestPolicyId).toBe(ALL_VIEWER_EXCEPT_HOST_HEADER);
  });

  it('serves /api/icons/* from S3 through origin access control, cached for a year, with the origin-response edge function', () => {
    const [distribution] = Object.values(s.template.findResources('AWS::CloudFront::Distribution'));
    const config = distribution.Properties.DistributionConfig;
    const behaviors = config.CacheBehaviors as Record<string, unknown>[];
    const icons = behaviors.find((b) => b.PathPattern === ICONS_PATH_PATTERN) as Record<string, unknown>;
    expect(icons).toBeDefined();
    expect(icons).toMatchObject({
      PathPattern: '/api/icons/*',
      AllowedMethods: ['GET', 'HEAD'],
      // Outside us-east-1 the version ARN comes from CDK's cross-region reader of the edge stack's SSM parameter.
      LambdaFunctionAssociations: [
        { EventType: 'origin-response', LambdaFunctionARN: { 'Fn::GetAtt': [expect.stringMatching(/IconNotFoundArnReader/), 'FunctionArn'] } },
      ],
    });
    const s3Origin = (config.Origins as Record<string, unknown>[]).find((o) => o.Id === icons.TargetOriginId);
    expect(s3Origin).toMatchObject({
      DomainName: { 'Fn::GetAtt': [logicalId(s.stack.data.iconsBucket), 'RegionalDomainName'] },
      OriginAccessControlId: expect.anything(),
      S3OriginConfig: { OriginAccessIdentity: '' },
    });
    s.template.hasResourceProperties('AWS::CloudFront::OriginAccessControl', {
      OriginAccessControlConfig: Match.objectLike({ OriginAccessControlOriginType: 's3', SigningBehavior: 'always', SigningProtocol: 'sigv4' }),
    });
    const year = 365 * 24 * 3600;
    expect(icons.CachePolicyId).toEqual({ Ref: expect.any(String) });
    const cachePolicy = resources[(icons.CachePolicyId as { Ref: string }).Ref];
    expect(cachePolicy.Properties).toMatchObject({
      CachePolicyConfig: { DefaultTTL: year, MaxTTL: year, MinTTL: 0 },
    });
    const headersPolicy = resources[(icons.ResponseHeadersPolicyId as { Ref: string }).Ref];
    expect(headersPolicy.Properties).toMatchObject({
      ResponseHeadersPolicyConfig: {
        CorsConfig: { AccessControlAllowOrigins: { Items: ['*'] }, AccessControlAllowMethods: { Items: ['GET', 'HEAD'] } },
        // Added only when the response has no Cache-Control, so the 404 envelope's no-store stays.
        CustomHeadersConfig: {
          Items: [{ Header: 'Cache-Control', Value: `public, max-age=${year}, immutable`, Override: false }],
        },
      },
    });
    // Only CloudFront (this distribution) may read the icons.
    s.template.hasResourceProperties('AWS::S3::BucketPolicy', {
      Bucket: { Ref: logicalId(s.stack.data.iconsBucket) },
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Action: 's3:GetObject', Principal: { Service: 'cloudfront.amazonaws.com' }, Condition: Match.anyValue() }),
        ]),
      },
    });
  });

  it('puts the Lambda@Edge function in us-east-1, reachable by edgelambda.amazonaws.com', () => {
    expect(s.edgeStack?.region).toBe('us-east-1');
    const edge = Template.fromStack(s.edgeStack as Stack);
    edge.hasResourceProperties('AWS::Lambda::Function', { Runtime: 'nodejs22.x', Handler: 'index.handler', MemorySize: 128 });
    edge.hasResourceProperties('AWS::IAM::Role', {
      AssumeRolePolicyDocument: {
        Statement: Match.arrayWith([Match.objectLike({ Principal: { Service: Match.arrayWith(['edgelambda.amazonaws.com']) } })]),
      },
    });
  });

  it('outputs the distribution domain and the API URL', () => {
    s.template.hasOutput('DistributionDomainName', { Value: { 'Fn::GetAtt': [logicalId(s.stack.edge.distribution), 'DomainName'] } });
    s.template.hasOutput('ApiUrl', { Value: { 'Fn::GetAtt': [logicalId(s.stack.api.httpApi), 'ApiEndpoint'] } });
  });
});

describe('cdk-nag (AwsSolutions and Serverless)', () => {
  it('has no unacknowledged error or warning, in the stack or the us-east-1 edge stack', () => {
    expect(describeViolations(s.violations)).toEqual([]);
    // cdk-nag 3.x no longer writes annotations; the check above is the real one. Annotations still
    // must carry no error (nor any AwsSolutions message, which would mean an older cdk-nag is loaded).
    for (const stack of [s.stack, s.edgeStack as Stack]) {
      const annotations = Annotations.fromStack(stack);
      expect(annotations.findError('*', Match.anyValue())).toEqual([]);
      expect(annotations.findError('*', Match.stringLikeRegexp('AwsSolutions-.*'))).toEqual([]);
      expect(annotations.findWarning('*', Match.stringLikeRegexp('AwsSolutions-.*'))).toEqual([]);
    }
  });

  it('is also clean in us-east-1, where the edge function needs no second stack, with a given public URL and the Plus plan (threat protection enforced)', () => {
    const inRegion = synthesize('us-east-1', { publicUrl: 'https://mcp.example.com/', cognitoFeaturePlan: FeaturePlan.PLUS, selfSignUp: true });
    expect(inRegion.edgeStack).toBeUndefined();
    expect(describeViolations(inRegion.violations)).toEqual([]);
    // A given public URL is used as it is: no reference to the distribution.
    const env = (
      inRegion.template.toJSON().Resources[logicalId(inRegion.stack.api.favoritesFn)].Properties.Environment as { Variables: Record<string, unknown> }
    ).Variables;
    expect(env).toMatchObject({
      PUBLIC_URL: 'https://mcp.example.com',
      AUTH_AUDIENCE: 'https://mcp.example.com/mcp',
      COGNITO_RESOURCE_SERVER: 'https://mcp.example.com/mcp',
    });
    inRegion.template.hasResourceProperties('AWS::Cognito::UserPoolResourceServer', { Identifier: 'https://mcp.example.com/mcp' });
    inRegion.template.hasResourceProperties('AWS::Cognito::UserPool', {
      UserPoolTier: 'PLUS',
      UserPoolAddOns: { AdvancedSecurityMode: 'ENFORCED' },
      AdminCreateUserConfig: { AllowAdminCreateUserOnly: false },
    });
  }, 180_000);

  it('acknowledges every finding with a specific reason', () => {
    const acks: { path: string; id: string; reason: string }[] = [];
    for (const c of s.app.node.findAll()) {
      for (const entry of c.node.metadata) {
        if (entry.type !== Validations.ACKNOWLEDGED_RULES_METADATA_KEY) continue;
        for (const [id, reason] of Object.entries(entry.data as Record<string, string>)) acks.push({ path: c.node.path, id, reason });
      }
    }
    expect(acks.length).toBeGreaterThan(0);
    for (const a of acks) {
      expect(a.id).toMatch(/AwsSolutions-[A-Z]+[0-9]+|Serverless-[A-Za-z]+/);
      expect(a.reason.length).toBeGreaterThanOrEqual(40);
    }
  });
});

describe('edgeCacheSeconds', () => {
  it('turns on a short edge cache keyed by path, query string and Authorization', () => {
    const app = new App({ context: CONTEXT });
    const stack = new Stack(app, 'EdgeOnly', { env: { account: '123456789012', region: 'us-east-1' } });
    new Edge(stack, 'Edge', {
      apiOriginDomainName: 'abc123.execute-api.us-east-1.amazonaws.com',
      iconsBucket: new s3.Bucket(stack, 'Icons'),
      accessLogsBucket: new s3.Bucket(stack, 'Logs', { objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_PREFERRED }),
      originVerifySecret: new secretsmanager.Secret(stack, 'OriginVerify'),
      edgeCacheSeconds: 30,
    });
    const template = Template.fromStack(stack);
    template.hasResourceProperties('AWS::CloudFront::CachePolicy', {
      CachePolicyConfig: Match.objectLike({
        DefaultTTL: 30,
        MaxTTL: 30,
        MinTTL: 0,
        ParametersInCacheKeyAndForwardedToOrigin: Match.objectLike({
          HeadersConfig: { HeaderBehavior: 'whitelist', Headers: ['Authorization'] },
          QueryStringsConfig: { QueryStringBehavior: 'all' },
        }),
      }),
    });
    const [distribution] = Object.values(template.findResources('AWS::CloudFront::Distribution'));
    expect(distribution.Properties.DistributionConfig.DefaultCacheBehavior.CachePolicyId).toEqual({ Ref: expect.any(String) });
  }, 60_000);

  it('refuses a negative or fractional number of seconds', () => {
    const stack = new Stack(new App(), 'Bad', { env: { region: 'us-east-1' } });
    const props = {
      apiOriginDomainName: 'abc123.execute-api.us-east-1.amazonaws.com',
      iconsBucket: new s3.Bucket(stack, 'Icons'),
      accessLogsBucket: new s3.Bucket(stack, 'Logs'),
      originVerifySecret: new secretsmanager.Secret(stack, 'OriginVerify'),
    };
    expect(() => new Edge(stack, 'A', { ...props, edgeCacheSeconds: -1 })).toThrow(/edgeCacheSeconds/);
    expect(() => new Edge(stack, 'B', { ...props, edgeCacheSeconds: 1.5 })).toThrow(/edgeCacheSeconds/);
  });
});

describe('addApiBehavior', () => {
  it('gives addApiBehavior behaviours the same viewer-address function', () => {
    const app = new App({ context: CONTEXT });
    const stack = new Stack(app, 'EdgeOnly', { env: { account: '123456789012', region: 'us-east-1' } });
    const edge = new Edge(stack, 'Edge', {
      apiOriginDomainName: 'abc123.execute-api.us-east-1.amazonaws.com',
      iconsBucket: new s3.Bucket(stack, 'Icons'),
      accessLogsBucket: new s3.Bucket(stack, 'Logs', { objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_PREFERRED }),
      originVerifySecret: new secretsmanager.Secret(stack, 'OriginVerify'),
    });
    edge.addApiBehavior('/v1/*', 'def456.execute-api.us-east-1.amazonaws.com');
    edge.addApiBehavior('/mcp', 'def456.execute-api.us-east-1.amazonaws.com');
    const template = Template.fromStack(stack);
    template.resourceCountIs('AWS::CloudFront::Function', 1);
    const association = [{ EventType: 'viewer-request', FunctionARN: { 'Fn::GetAtt': [logicalId(edge.viewerAddressFunction), 'FunctionARN'] } }];
    const [distribution] = Object.values(template.findResources('AWS::CloudFront::Distribution'));
    const behaviors = distribution.Properties.DistributionConfig.CacheBehaviors as { PathPattern: string; FunctionAssociations?: unknown }[];
    const byPath = Object.fromEntries(behaviors.map((b) => [b.PathPattern, b.FunctionAssociations]));
    expect(byPath).toEqual({ '/api/icons/*': undefined, '/v1/*': association, '/mcp': association });
  }, 60_000);
});

describe('addRoutesFromTable', () => {
  function fixture(): { stack: Stack; api: apigwv2.HttpApi; fn: lambda.Function } {
    const stack = new Stack(new App(), 'Routes');
    const api = new apigwv2.HttpApi(stack, 'Api');
    const fn = new lambda.Function(stack, 'Fn', {
      runtime: lambda.Runtime.NODEJS_24_X,
      handler: 'index.handler',
      code: lambda.Code.fromInline('exports.handler = async () => ({ statusCode: 200 });'),
    });
    return { stack, api, fn };
  }
  const table: ApiTable = {
    catchAllFn: 'memory',
    prefix: '/v1',
    routes: [
      { method: 'GET', path: '/v1/memories', fn: 'memory', operationId: 'listMemories' },
      { method: 'PUT', path: '/v1/memories/{name}/notes/{path+}', fn: 'memory', operationId: 'putNote' },
    ],
  };

  it('declares any table (another API, greedy paths) and can leave $default to another table', () => {
    const { stack, api, fn } = fixture();
    const out = addRoutesFromTable(api, table, { memory: fn }, { catchAll: false });
    expect([...out.routes.keys()]).toEqual(['GET /v1/memories', 'PUT /v1/memories/{name}/notes/{path+}']);
    expect(out.catchAll).toBeUndefined();
    const keys = Object.values(Template.fromStack(stack).findResources('AWS::ApiGatewayV2::Route')).map((r) => r.Properties.RouteKey);
    expect(keys.sort()).toEqual(['GET /v1/memories', 'PUT /v1/memories/{name}/notes/{path+}']);
  });

  it('refuses a table naming a function it was not given', () => {
    const { api, fn } = fixture();
    expect(() => addRoutesFromTable(api, table, { catalog: fn })).toThrow(/no function named "memory"/);
  });

  it('refuses duplicate routes and routes outside the prefix', () => {
    const { api, fn } = fixture();
    const dup: ApiTable = { ...table, routes: [table.routes[0], { ...table.routes[0], operationId: 'again' }] };
    expect(() => addRoutesFromTable(api, dup, { memory: fn })).toThrow(/duplicate route GET \/v1\/memories/);
    const outside: ApiTable = { ...table, routes: [{ method: 'GET', path: '/api/x', fn: 'memory', operationId: 'x' }] };
    expect(() => addRoutesFromTable(api, outside, { memory: fn })).toThrow(/outside the table's prefix/);
  });
});

describe('the bundles CDK builds', () => {
  /** Literals only the demo-data generator (bin/local-stack/synthetic.ts) holds: they survive minification. */
  const DEMO_MARKERS = ['up.railway.app', 'onrender.com', 'GNU Affero General Public License v3.0'];

  it('carry no demo code, and each stays under 1 MB', () => {
    const outdir = s.app.synth().directory;
    const functions = Object.entries(s.template.findResources('AWS::Lambda::Function')).filter(([, r]) => {
      const code = (r as { Properties: { Code?: { S3Key?: unknown } } }).Properties.Code;
      return typeof code?.S3Key === 'string';
    });
    expect(functions.length).toBeGreaterThanOrEqual(6);
    for (const [id, r] of functions) {
      const key = ((r as { Properties: { Code: { S3Key: string } } }).Properties.Code.S3Key as string).replace(/\.zip$/, '');
      const file = path.join(outdir, `asset.${key}`, 'index.js');
      const bundle = readFileSync(file, 'utf8');
      for (const marker of DEMO_MARKERS) expect({ id, carries: bundle.includes(marker) ? marker : undefined }).toEqual({ id, carries: undefined });
      expect({ id, bytes: Buffer.byteLength(bundle) < 1024 * 1024 }).toEqual({ id, bytes: true });
    }
  });

  it("put the catalog over MCP's SDK part in mcp-endpoint.js beside the catalog function, out of its index.js, and it loads", () => {
    const outdir = s.app.synth().directory;
    const key = (resources[logicalId(s.stack.api.fn)].Properties as { Code: { S3Key: string } }).Code.S3Key.replace(/\.zip$/, '');
    const dir = path.join(outdir, `asset.${key}`);
    const index = readFileSync(path.join(dir, 'index.js'), 'utf8');
    const chunk = readFileSync(path.join(dir, 'mcp-endpoint.js'), 'utf8');
    // Strings of the SDK's transport and of the tools: in the chunk only; index.js names the chunk.
    for (const marker of ['Mcp-Session-Id header is required', 'install_server']) {
      expect({ marker, inChunk: chunk.includes(marker), inIndex: index.includes(marker) }).toEqual({ marker, inChunk: true, inIndex: false });
    }
    expect(index.includes('mcp-endpoint')).toBe(true);
    // It loads in a fresh process, as the first /api/mcp request's require does (the AWS SDK from node_modules, as the runtime provides it).
    const probe = `const m = require(${JSON.stringify(path.join(dir, 'mcp-endpoint.js'))}); console.log(typeof m.serveCatalogMcp, typeof m.unsupportedProtocolVersion)`;
    const loaded = spawnSync(process.execPath, ['-e', probe], { encoding: 'utf8', env: { ...process.env, NODE_PATH: path.join(ROOT, 'node_modules') } });
    expect(loaded.stdout.trim()).toBe('function function');
  });

  it('put the X-Ray SDK in an xray.js beside each traced function, out of index.js, loaded by the computed require of tracing.ts', () => {
    const outdir = s.app.synth().directory;
    const traced = Object.entries(s.template.findResources('AWS::Lambda::Function')).filter(
      ([, r]) => (r as { Properties: { TracingConfig?: { Mode?: string } } }).Properties.TracingConfig?.Mode === 'Active',
    );
    expect(traced.length).toBeGreaterThanOrEqual(6);
    for (const [id, r] of traced) {
      const key = ((r as { Properties: { Code: { S3Key: string } } }).Properties.Code.S3Key as string).replace(/\.zip$/, '');
      const dir = path.join(outdir, `asset.${key}`);
      const chunk = readFileSync(path.join(dir, 'xray.js'), 'utf8');
      expect({ id, captures: chunk.includes('captureAWSv3Client') }).toEqual({ id, captures: true });
      const index = readFileSync(path.join(dir, 'index.js'), 'utf8');
      // The X-Ray SDK's own strings are in the chunk only.
      expect({ id, inIndex: index.includes('AWS_XRAY_DAEMON_ADDRESS') }).toEqual({ id, inIndex: false });
      expect({ id, inChunk: chunk.includes('AWS_XRAY_DAEMON_ADDRESS') }).toEqual({ id, inChunk: true });
    }
  });
});
