/**
 * Secrets Manager's rotation function of CloudFront's origin secret (the `x-origin-verify` value,
 * lib/origin-secret-rotation.ts), in Secrets Manager's four steps, each safe to run again:
 *
 * - createSecret: a new random value as the AWSPENDING version (kept if it exists already);
 * - setSecret: the pending value into every origin header `x-origin-verify` of the distribution.
 *   From here edges send either value; the functions admit both (lambdas/shared/secrets.ts);
 * - testSecret: waits until CloudFront reports the distribution Deployed with the pending value
 *   everywhere, so no edge still sends the old one when it stops being current;
 * - finishSecret: AWSCURRENT moves to the new version (the old one becomes AWSPREVIOUS).
 *
 * A step that fails (CloudFront still deploying after the function's budget, say) fails the
 * rotation, which is the function's Errors alarm; the next rotation resumes where it stopped.
 */
import { CloudFrontClient, GetDistributionCommand, GetDistributionConfigCommand, UpdateDistributionCommand } from '@aws-sdk/client-cloudfront';
import {
  DescribeSecretCommand,
  GetRandomPasswordCommand,
  GetSecretValueCommand,
  PutSecretValueCommand,
  SecretsManagerClient,
  UpdateSecretVersionStageCommand,
} from '@aws-sdk/client-secrets-manager';
import { logger } from '../shared/logger';

export interface RotationEvent {
  readonly SecretId: string;
  readonly ClientRequestToken: string;
  readonly Step: 'createSecret' | 'setSecret' | 'testSecret' | 'finishSecret';
}

export interface RotationDeps {
  readonly secrets: SecretsManagerClient;
  readonly cloudfront: CloudFrontClient;
  readonly distributionId: string;
  /** The origin header whose value is the secret. */
  readonly header: string;
  /** How long testSecret waits for CloudFront to report the change deployed. */
  readonly deployedWithinMs: number;
  /** Between two looks at the distribution. */
  readonly pollMs: number;
}

/** The generated value: 48 letters and digits, as the stack's first value (lib/catalog-data.ts). */
const VALUE = { PasswordLength: 48, ExcludePunctuation: true, IncludeSpace: false } as const;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function pendingValue(deps: RotationDeps, e: RotationEvent): Promise<string> {
  const out = await deps.secrets.send(new GetSecretValueCommand({ SecretId: e.SecretId, VersionId: e.ClientRequestToken, VersionStage: 'AWSPENDING' }));
  if (!out.SecretString) throw new Error('the pending version has no value');
  return out.SecretString;
}

/** The distribution's origin headers named `header`, and how many of them hold `value`. */
function headersOf(
  config: { Origins?: { Items?: Array<{ CustomHeaders?: { Items?: Array<{ HeaderName?: string; HeaderValue?: string }> } }> } },
  header: string,
) {
  return (config.Origins?.Items ?? []).flatMap((o) => (o.CustomHeaders?.Items ?? []).filter((h) => h.HeaderName?.toLowerCase() === header));
}

async function createSecret(deps: RotationDeps, e: RotationEvent): Promise<void> {
  try {
    await pendingValue(deps, e);
    return;
  } catch (err) {
    if (!(err instanceof Error && err.name === 'ResourceNotFoundException')) throw err;
  }
  const { RandomPassword } = await deps.secrets.send(new GetRandomPasswordCommand(VALUE));
  await deps.secrets.send(
    new PutSecretValueCommand({ SecretId: e.SecretId, ClientRequestToken: e.ClientRequestToken, SecretString: RandomPassword, VersionStages: ['AWSPENDING'] }),
  );
}

async function setSecret(deps: RotationDeps, e: RotationEvent): Promise<void> {
  const value = await pendingValue(deps, e);
  const { DistributionConfig: config, ETag } = await deps.cloudfront.send(new GetDistributionConfigCommand({ Id: deps.distributionId }));
  if (!config) throw new Error(`distribution ${deps.distributionId} has no configuration`);
  const headers = headersOf(config, deps.header);
  if (headers.length === 0) throw new Error(`no origin of ${deps.distributionId} sends ${deps.header}`);
  const stale = headers.filter((h) => h.HeaderValue !== value);
  for (const h of stale) h.HeaderValue = value;
  if (stale.length) await deps.cloudfront.send(new UpdateDistributionCommand({ Id: deps.distributionId, IfMatch: ETag, DistributionConfig: config }));
  logger.info('origin secret: pending value set on the distribution', { origins: headers.length, changed: stale.length });
}

async function testSecret(deps: RotationDeps, e: RotationEvent): Promise<void> {
  const value = await pendingValue(deps, e);
  const deadline = Date.now() + deps.deployedWithinMs;
  for (;;) {
    const d = (await deps.cloudfront.send(new GetDistributionCommand({ Id: deps.distributionId }))).Distribution;
    const headers = headersOf(d?.DistributionConfig ?? {}, deps.header);
    const everywhere = headers.length > 0 && headers.every((h) => h.HeaderValue === value);
    if (!everywhere) throw new Error(`the distribution does not send the pending value on every origin (setSecret did not run, or a deploy overwrote it)`);
    if (d?.Status === 'Deployed') return;
    if (Date.now() >= deadline)
      throw new Error(`CloudFront has not deployed the new origin header after ${deps.deployedWithinMs / 1000} s (status ${d?.Status})`);
    await sleep(deps.pollMs);
  }
}

async function finishSecret(deps: RotationDeps, e: RotationEvent, stages: Record<string, string[]>): Promise<void> {
  const current = Object.entries(stages).find(([, s]) => s.includes('AWSCURRENT'))?.[0];
  await deps.secrets.send(
    new UpdateSecretVersionStageCommand({
      SecretId: e.SecretId,
      VersionStage: 'AWSCURRENT',
      MoveToVersionId: e.ClientRequestToken,
      RemoveFromVersionId: current,
    }),
  );
  logger.info('origin secret rotated');
}

export async function rotate(e: RotationEvent, deps: RotationDeps): Promise<void> {
  const meta = await deps.secrets.send(new DescribeSecretCommand({ SecretId: e.SecretId }));
  const stages = meta.VersionIdsToStages ?? {};
  const mine = stages[e.ClientRequestToken];
  if (!mine) throw new Error(`version ${e.ClientRequestToken} is not a version of the secret`);
  // Already current: the rotation this token belongs to is done.
  if (mine.includes('AWSCURRENT')) return;
  if (!mine.includes('AWSPENDING')) throw new Error(`version ${e.ClientRequestToken} is not pending`);
  logger.info('origin secret rotation', { step: e.Step });
  if (e.Step === 'createSecret') return createSecret(deps, e);
  if (e.Step === 'setSecret') return setSecret(deps, e);
  if (e.Step === 'testSecret') return testSecret(deps, e);
  if (e.Step === 'finishSecret') return finishSecret(deps, e, stages);
  throw new Error(`unknown rotation step ${String(e.Step)}`);
}

export async function handler(e: RotationEvent): Promise<void> {
  const region = process.env.AWS_REGION ?? 'us-east-1';
  await rotate(e, {
    secrets: new SecretsManagerClient({ region }),
    // CloudFront's API is global, signed for us-east-1.
    cloudfront: new CloudFrontClient({ region: 'us-east-1' }),
    distributionId: process.env.DISTRIBUTION_ID as string,
    header: process.env.ORIGIN_HEADER ?? 'x-origin-verify',
    deployedWithinMs: Number(process.env.DEPLOYED_WITHIN_SECONDS ?? 780) * 1000,
    pollMs: 15_000,
  });
}
