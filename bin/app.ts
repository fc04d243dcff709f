/**
 * The CDK app: `npx cdk synth` / `npx cdk deploy` (cdk.json runs this file with tsx).
 *
 * Deployment settings come from the environment, each with the default the constructs document:
 *   CDK_DEPLOY_REGION / CDK_DEFAULT_REGION   region of the stack (us-east-1 when neither is set, so that
 *                                            `cdk synth` works on a machine without AWS credentials)
 *   CDK_DEPLOY_ACCOUNT / CDK_DEFAULT_ACCOUNT account (left open when unset: an account-agnostic template)
 *   CATALOG_BRAND                            `io.<brand>.catalog/v0` in the registry feed (default example)
 *   SITE_URL_TEMPLATE                        CatalogMeta.url template (default: none, url omitted)
 *   EDGE_CACHE_SECONDS                       short edge cache of catalog JSON (default 0: none)
 *   PUBLIC_URL                               public base URL, e.g. https://mcp.example.com (default: the
 *                                            CloudFront domain); the token audience is <PUBLIC_URL>/mcp
 *   COGNITO_SELF_SIGN_UP                     `true` lets anyone create an account (default false)
 *   COGNITO_DOMAIN_PREFIX                    hosted sign-in domain prefix (default mcp-<stack uuid>)
 *
 * Lambda@Edge must be created in us-east-1; CDK's EdgeFunction needs the stack's region to be known
 * at synth time, which is why the region always has a value here. In another region, CDK adds a small
 * `edge-lambda-stack-…` stack in us-east-1 for the function.
 */
import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { CatalogStack } from '../lib/catalog-stack';

function optionalEnv(name: string): string | undefined {
  const v = process.env[name];
  return v === undefined || v.trim() === '' ? undefined : v.trim();
}

function wholeSeconds(name: string): number | undefined {
  const v = optionalEnv(name);
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${name} must be a whole number of seconds >= 0, got "${v}"`);
  return n;
}

function flag(name: string): boolean | undefined {
  const v = optionalEnv(name);
  if (v === undefined) return undefined;
  if (v !== 'true' && v !== 'false') throw new Error(`${name} must be true or false, got "${v}"`);
  return v === 'true';
}

const app = new App();

new CatalogStack(app, 'McpCatalog', {
  env: {
    account: optionalEnv('CDK_DEPLOY_ACCOUNT') ?? optionalEnv('CDK_DEFAULT_ACCOUNT'),
    region: optionalEnv('CDK_DEPLOY_REGION') ?? optionalEnv('CDK_DEFAULT_REGION') ?? 'us-east-1',
  },
  brand: optionalEnv('CATALOG_BRAND'),
  siteUrlTemplate: optionalEnv('SITE_URL_TEMPLATE'),
  edgeCacheSeconds: wholeSeconds('EDGE_CACHE_SECONDS'),
  publicUrl: optionalEnv('PUBLIC_URL'),
  selfSignUp: flag('COGNITO_SELF_SIGN_UP'),
  signInDomainPrefix: optionalEnv('COGNITO_DOMAIN_PREFIX'),
});

// cdk-nag 3.x is a policy-validation plugin (not an Aspect): findings that are not acknowledged
// with a reason fail `cdk synth` and land in cdk.out/policy-validation-report.json.
Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
