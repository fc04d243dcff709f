/**
 * The CDK app: `npx cdk synth` / `npx cdk deploy --all` (cdk.json runs this file with tsx).
 *
 * The deployment's settings are in one typed place, `bin/stages.ts` (one entry per stage, every
 * knob of `DeploymentProps`). At synth, only these choose between them:
 *
 *   -c stage=<name>             the stage (default `prod`): its entry of bin/stages.ts, and the prefix
 *                               of every stack id and account-global name
 *   -c searchEngine=embedded    the small-catalog mode (no OpenSearch domain); overrides the stage's
 *   -c sharpLayer=skip          do not build the crawler's sharp layer (no icons); default `build`
 *   -c reservedConcurrency=recommended|none   reserve the recommended concurrency per function, or
 *                               none; overrides the stage's (default: the stage's, else none)
 *   -c permissionsBoundary=<arn>  the IAM permissions boundary of every role; overrides the stage's
 *   CDK_DEPLOY_REGION / CDK_DEFAULT_REGION   the region (the stage's `region` wins; us-east-1 when
 *                               none is set, so that `cdk synth` works without AWS credentials)
 *   CDK_DEPLOY_ACCOUNT / CDK_DEFAULT_ACCOUNT the account (the stage's wins; unset: account-agnostic)
 *
 * The CLI sets CDK_DEFAULT_* from the profile. Outside us-east-1, the deployment adds two small
 * us-east-1 stacks for what CloudFront needs there (lib/deployment.ts).
 */
import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks, ServerlessChecks } from 'cdk-nag';
import { type Deployment, deployCatalog } from '../lib/deployment';
import { type StageConfig, STAGES } from './stages';

function choice<T extends string>(app: App, key: string, allowed: readonly T[]): T | undefined {
  const v: unknown = app.node.tryGetContext(key);
  if (v === undefined) return undefined;
  if (typeof v !== 'string' || !(allowed as readonly string[]).includes(v))
    throw new Error(`-c ${key} must be one of ${allowed.join(', ')}, got "${String(v)}"`);
  return v as T;
}

/** The deployment `app`'s context and the environment choose (exported for tests). */
export function catalogApp(app: App, env: NodeJS.ProcessEnv = process.env, stages: Readonly<Record<string, StageConfig>> = STAGES): Deployment {
  const optionalEnv = (name: string): string | undefined => {
    const v = env[name];
    return v === undefined || v.trim() === '' ? undefined : v.trim();
  };
  const stage = (app.node.tryGetContext('stage') as string | undefined) ?? 'prod';
  const config: StageConfig = stages[stage] ?? {};
  const searchEngine = choice(app, 'searchEngine', ['opensearch', 'embedded'] as const);
  const sharpLayer = choice(app, 'sharpLayer', ['build', 'skip'] as const);
  const reserved = choice(app, 'reservedConcurrency', ['recommended', 'none'] as const);
  const boundary: unknown = app.node.tryGetContext('permissionsBoundary');
  if (boundary !== undefined && (typeof boundary !== 'string' || !/^arn:aws[a-z-]*:iam::\d{12}:policy\/.+/.test(boundary)))
    throw new Error(`-c permissionsBoundary must be the ARN of an IAM managed policy, got "${String(boundary)}"`);
  const deployment = deployCatalog(app, {
    ...config,
    stage,
    region: config.region ?? optionalEnv('CDK_DEPLOY_REGION') ?? optionalEnv('CDK_DEFAULT_REGION') ?? 'us-east-1',
    account: config.account ?? optionalEnv('CDK_DEPLOY_ACCOUNT') ?? optionalEnv('CDK_DEFAULT_ACCOUNT'),
    ...(searchEngine && { searchEngine }),
    ...(sharpLayer && { sharpLayer }),
    ...(reserved && { reservedConcurrency: reserved === 'none' ? false : reserved }),
    ...(typeof boundary === 'string' && { permissionsBoundaryArn: boundary }),
  });
  // cdk-nag 3.x packs are policy-validation plugins (not Aspects): findings that are not acknowledged
  // with a reason fail `cdk synth` and land in cdk.out/policy-validation-report.json.
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app), new ServerlessChecks(app));
  return deployment;
}

if (require.main === module) catalogApp(new App());
