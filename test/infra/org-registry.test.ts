/**
 * CDK assertions on the organisation registry (lib/org-registry.ts) inside the whole catalog stack,
 * synthesized without bundling: its function and grants, its routes and catch-all on the catalog's
 * HTTP API, CloudFront's `/org/*` behaviour, the settings bucket, the `catalog-admins` group, and no
 * cdk-nag finding left unacknowledged.
 */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { ORG_API } from '../../lambdas/catalog/org/routes';
import { routeKey } from '../../lambdas/shared/http/route-table';
import { CatalogStack } from '../../lib/catalog-stack';
import { nagViolations } from '../support/nag';

const ROOT = path.join(__dirname, '..', '..');
const CONTEXT = (JSON.parse(readFileSync(path.join(ROOT, 'cdk.json'), 'utf8')) as { context: Record<string, unknown> }).context;

type Resources = Record<string, { Type: string; Properties: Record<string, unknown> }>;

let stack: CatalogStack;
let template: Template;
let resources: Resources;

const idOf = (construct: { node: { defaultChild?: unknown } }) =>
  Stack.of(stack).resolve((construct.node.defaultChild as { logicalId: string }).logicalId) as string;

beforeAll(() => {
  const app = new App({ context: { ...CONTEXT, 'aws:cdk:bundling-stacks': [] } });
  stack = new CatalogStack(app, 'OrgTest', { env: { account: '123456789012', region: 'us-east-1' }, sharpLayer: 'skip' });
  template = Template.fromStack(stack);
  resources = template.toJSON().Resources as Resources;
});

test('the org function knows where the allow-list is and who may edit it', () => {
  const fn = resources[idOf(stack.org.fn)];
  const env = (fn.Properties.Environment as { Variables: Record<string, unknown> }).Variables;
  expect(env).toMatchObject({
    ORG_SETTINGS_BUCKET: { Ref: idOf(stack.org.settingsBucket) },
    ORG_ALLOW_LIST_KEY: 'org/allow-list.yaml',
    ORG_ALLOW_LIST_REFRESH_SECONDS: '30',
    ORG_ADMIN_GROUP: 'catalog-admins',
    RATE_BATCH_TAKES: '0',
    CATALOG_TABLE: { Ref: idOf(stack.data.catalogTable) },
  });
  template.hasResourceProperties('AWS::Cognito::UserPoolGroup', { GroupName: 'catalog-admins', UserPoolId: { Ref: idOf(stack.auth.userPool) } });
});

test('it may read and replace the allow-list object only, and take the lease in the rate-limits table', () => {
  const policies = Object.values(resources).filter(
    (r) => r.Type === 'AWS::IAM::Policy' && JSON.stringify(r.Properties.Roles).includes(idOf(stack.org.role as never)),
  );
  const statements = policies.flatMap((p) => (p.Properties.PolicyDocument as { Statement: Array<{ Action: string | string[]; Resource: unknown }> }).Statement);
  const s3Writes = statements.filter((s) => [s.Action].flat().some((a) => a.startsWith('s3:Put')));
  expect(s3Writes).toHaveLength(1);
  expect(JSON.stringify(s3Writes[0].Resource)).toContain('/org/allow-list.yaml');
  expect(JSON.stringify(s3Writes[0].Resource)).toContain(idOf(stack.org.settingsBucket));
  const lease = statements.find((s) => [s.Action].flat().includes('dynamodb:DeleteItem'));
  expect(JSON.stringify(lease?.Resource)).toContain(idOf(stack.data.rateLimitTable));
  expect(statements.flatMap((s) => [s.Action].flat())).not.toContain('dynamodb:PartiQLInsert');
});

test('the settings bucket is private, versioned and logged', () => {
  template.hasResourceProperties('AWS::S3::Bucket', {
    VersioningConfiguration: { Status: 'Enabled' },
    PublicAccessBlockConfiguration: { BlockPublicAcls: true, BlockPublicPolicy: true, IgnorePublicAcls: true, RestrictPublicBuckets: true },
    LoggingConfiguration: Match.objectLike({ LogFilePrefix: 's3/settings/' }),
  });
});

test('every route of ORG_API and the /org catch-all reach the org function; CloudFront sends /org/* to the API', () => {
  const keys = Object.values(resources)
    .filter((r) => r.Type === 'AWS::ApiGatewayV2::Route')
    .map((r) => r.Properties.RouteKey as string);
  for (const route of ORG_API.routes) expect(keys).toContain(routeKey(route));
  expect(keys).toEqual(expect.arrayContaining(['ANY /org/{proxy+}', 'ANY /org']));
  const dist = Object.values(resources).find((r) => r.Type === 'AWS::CloudFront::Distribution') as unknown as {
    Properties: { DistributionConfig: { CacheBehaviors: Array<{ PathPattern: string; AllowedMethods: string[] }> } };
  };
  const org = dist.Properties.DistributionConfig.CacheBehaviors.find((b) => b.PathPattern === '/org/*');
  expect(org?.AllowedMethods).toEqual(expect.arrayContaining(['GET', 'OPTIONS', 'PUT']));
});

test('cdk-nag: nothing left unacknowledged', () => {
  expect(nagViolations(stack).map((v) => `${v.ruleName} ${v.violatingResources.map((r) => r.locations.join(',')).join(' ')}`)).toEqual([]);
});

/** A reader of the allow-list: told where it is, and allowed to read that object only (and to learn it is missing). */
function expectAllowListReader(fn: { node: { defaultChild?: unknown } }, role: unknown) {
  const env = (resources[idOf(fn)].Properties.Environment as { Variables: Record<string, unknown> }).Variables;
  expect(env).toMatchObject({ ORG_SETTINGS_BUCKET: { Ref: idOf(stack.org.settingsBucket) }, ORG_ALLOW_LIST_KEY: 'org/allow-list.yaml' });
  const statements = Object.values(resources)
    .filter((r) => r.Type === 'AWS::IAM::Policy' && JSON.stringify(r.Properties.Roles).includes(idOf(role as never)))
    .flatMap((p) => (p.Properties.PolicyDocument as { Statement: Array<{ Action: string | string[]; Resource: unknown }> }).Statement)
    .filter((s) => JSON.stringify(s.Resource).includes(idOf(stack.org.settingsBucket)));
  expect(statements.flatMap((s) => [s.Action].flat()).sort()).toEqual(['s3:GetObject', 's3:ListBucket']);
  const object = statements.find((s) => [s.Action].flat().includes('s3:GetObject'));
  expect(JSON.stringify(object?.Resource)).toContain('/org/allow-list.yaml');
}

test('the site reads the allow-list (its badges): the file, read-only', () => {
  expectAllowListReader(stack.site.fn, stack.site.role);
});

test("the catalog function reads the allow-list (search_servers' orgOnly on /api/mcp): the file, read-only", () => {
  expectAllowListReader(stack.api.fn, stack.api.role);
});
