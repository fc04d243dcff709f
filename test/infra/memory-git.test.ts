/**
 * CDK assertions on the git remote (synthesized once): the streaming function runs the /v1
 * pipeline with the memory API's environment, behind a function URL in RESPONSE_STREAM mode; the
 * distribution sends the git paths to it before `/v1/*`; the buffered /v1 function caps its git
 * answers at what a buffered Lambda response carries; cdk-nag leaves nothing unacknowledged.
 */
import { App } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';
import { Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { CatalogStack } from '../../lib/catalog-stack';
import { CDK_CONTEXT, logicalId } from '../support/deployment-modes';
import { EXPORT_PATH_PATTERNS, GIT_PATH_PATTERNS } from '../../lib/memory-git';

type Resource = { Type: string; Properties: Record<string, unknown> };

let app: App;
let stack: CatalogStack;
let template: Template;
let violations: string[];

beforeAll(() => {
  app = new App({ context: CDK_CONTEXT });
  stack = new CatalogStack(app, 'McpCatalog', { env: { account: '123456789012', region: 'us-east-1' } });
  template = Template.fromStack(stack);
  const gitPath = stack.memoryGit.node.path;
  violations = new AwsSolutionsChecks()
    .validateScope(app)
    .violations.flatMap((v) => v.violatingResources.map((r) => `${v.ruleName} at ${r.constructPath ?? ''}`))
    .filter((v) => v.includes(gitPath));
}, 300_000);

const variables = (fn: IConstruct) =>
  ((template.toJSON().Resources[logicalId(fn)] as Resource).Properties.Environment as { Variables: Record<string, unknown> }).Variables;

it('runs the /v1 pipeline with the memory API environment, streaming up to 190 MiB', () => {
  const fn = template.toJSON().Resources[logicalId(stack.memoryGit.fn)] as Resource;
  expect(fn.Properties).toMatchObject({ Runtime: 'nodejs24.x', Architectures: ['arm64'], MemorySize: 2048, Timeout: 300 });
  const env = variables(stack.memoryGit.fn);
  const api = variables(stack.memory.fn);
  for (const k of ['MEMORY_TABLE', 'MEMORY_BUCKET', 'RATE_LIMIT_TABLE', 'CURSOR_SECRET_ARN', 'ORIGIN_VERIFY_SECRET_ARN', 'MEMORY_RATE_LIMIT']) {
    expect(env[k]).toEqual(api[k]);
  }
  // The verifier's settings depend on the distribution, which points at this function: a parameter by name, not the environment.
  expect(env.AUTH_MODE).toBeUndefined();
  expect(env.AUTH_AUDIENCE).toBeUndefined();
  expect(env.MEMORY_SETTINGS_PARAMETER).toMatch(/^\/McpCatalog\/.+\/settings$/);
  const parameter = template.toJSON().Resources[logicalId(stack.memoryGit.settings)] as Resource;
  expect(parameter.Type).toBe('AWS::SSM::Parameter');
  expect(parameter.Properties).toMatchObject({ Name: env.MEMORY_SETTINGS_PARAMETER, Type: 'String', Tier: 'Standard' });
  expect(JSON.stringify(parameter.Properties.Value)).toMatch(/AUTH_MODE.*cognito/);
  expect(JSON.stringify(fn)).not.toContain(logicalId(stack.memoryGit.settings));
  expect(env.MEMORY_GIT_MAX_RESPONSE_BYTES).toBe(String(190 * 1024 * 1024));
  // A push answers once it has landed: before CloudFront's 60 s origin read timeout, with a margin; behind API Gateway, the core's 25 s default.
  expect(env.MEMORY_PUSH_SECONDS).toBe('50');
  expect(api.MEMORY_PUSH_SECONDS).toBeUndefined();
  // The buffered function behind API Gateway answers git only what fits a buffered response.
  expect(api.MEMORY_GIT_MAX_RESPONSE_BYTES).toBe(String(4 * 1024 * 1024));
  // Exports stream here up to the streamed limit; behind API Gateway they are inline or a 302.
  expect(env).toMatchObject({ MEMORY_EXPORT_DELIVERY: 'stream', MEMORY_EXPORT_STREAM_MAX_BYTES: String(190 * 1024 * 1024) });
  expect(api.MEMORY_EXPORT_DELIVERY).toBe('buffered');
});

it('has a function URL in RESPONSE_STREAM mode with auth NONE (the bearer is checked in the function)', () => {
  template.hasResourceProperties('AWS::Lambda::Url', {
    TargetFunctionArn: { 'Fn::GetAtt': [logicalId(stack.memoryGit.fn), 'Arn'] },
    AuthType: 'NONE',
    InvokeMode: 'RESPONSE_STREAM',
  });
});

it('sends the git and export paths to the function URL before /v1/*, uncached, with the viewer-address function and the origin secret', () => {
  const [distribution] = Object.values(template.findResources('AWS::CloudFront::Distribution'));
  const config = distribution.Properties.DistributionConfig as {
    CacheBehaviors: Array<Record<string, unknown>>;
    Origins: Array<{
      Id: string;
      DomainName: unknown;
      OriginCustomHeaders?: Array<{ HeaderName: string }>;
      CustomOriginConfig?: { OriginReadTimeout?: number };
    }>;
  };
  const patterns = config.CacheBehaviors.map((b) => b.PathPattern);
  const streamed = [...GIT_PATH_PATTERNS, ...EXPORT_PATH_PATTERNS];
  expect(EXPORT_PATH_PATTERNS).toEqual(['/v1/memories/export', '/v1/memories/*/export', '/v1/vaults/export', '/v1/vaults/*/export']);
  for (const p of streamed) expect(patterns.indexOf(p)).toBeGreaterThanOrEqual(0);
  expect(Math.max(...streamed.map((p) => patterns.indexOf(p)))).toBeLessThan(patterns.indexOf('/v1/*'));
  for (const b of config.CacheBehaviors.filter((x) => streamed.includes(x.PathPattern as string))) {
    expect(b).toMatchObject({
      AllowedMethods: ['GET', 'HEAD', 'OPTIONS', 'PUT', 'PATCH', 'POST', 'DELETE'],
      CachePolicyId: '4135ea2d-6df8-44a3-9df3-4b5a84be39ad',
      Compress: false,
    });
    expect(b.FunctionAssociations).toEqual([expect.objectContaining({ EventType: 'viewer-request' })]);
    const origin = config.Origins.find((o) => o.Id === b.TargetOriginId);
    expect(JSON.stringify(origin?.DomainName)).toContain(logicalId(stack.memoryGit.functionUrl));
    expect(origin?.OriginCustomHeaders?.map((h) => h.HeaderName)).toEqual(['x-origin-verify']);
    expect(origin?.CustomOriginConfig?.OriginReadTimeout).toBe(60);
  }
});

it('leaves cdk-nag with nothing unacknowledged on what it adds', () => {
  expect(violations).toEqual([]);
});
