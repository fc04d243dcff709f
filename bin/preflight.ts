/**
 * `npm run preflight -- [-c stage=<name>] [-c reservedConcurrency=recommended] [...]` (AWS
 * credentials): what the next `npx cdk deploy --all` with the same flags and region would fail on,
 * and how to fix it, before it runs (README, "First deploy"). It synthesizes the stacks offline as
 * the CLI would, then reads, in the home region and in us-east-1:
 *
 * - the Lambda concurrent-executions limit and what is still unreserved (GetAccountSettings),
 *   against the reservations the templates add (less those the deployed stacks hold already, read
 *   from their deployed templates): Lambda keeps 100 of the limit unreserved;
 * - the CDK bootstrap stack (`CDKToolkit`): present, in a usable state, and of a version the
 *   templates accept;
 * - a stack of the deployment left in ROLLBACK_COMPLETE (a failed first deploy), which must be
 *   deleted before CloudFormation can create it again;
 * - and, offline, whether the stage's alarms reach anyone (the synth warning).
 *
 * Exit 0 when nothing would fail (warnings are printed), 1 otherwise.
 */
import { CloudFormationClient, DescribeStacksCommand, GetTemplateCommand, type Stack } from '@aws-sdk/client-cloudformation';
import { GetAccountSettingsCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { contextFlags, type DeployTarget, minBootstrapVersion, reservedIn, synthTarget } from './deploy-target';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

/** What Lambda keeps unreserved in every account and region. */
export const LAMBDA_UNRESERVED_MINIMUM = 100;
/** The default concurrency limit of an established account; new accounts may start lower. */
const USUAL_LIMIT = 1000;
const TOOLKIT_STACK = 'CDKToolkit';

export interface RegionClients {
  readonly lambda: LambdaClient;
  readonly cloudformation: CloudFormationClient;
}

export interface Finding {
  readonly level: 'ok' | 'warn' | 'fail';
  readonly region?: string;
  readonly message: string;
}

async function describeStack(cfn: CloudFormationClient, name: string): Promise<Stack | undefined> {
  try {
    return (await cfn.send(new DescribeStacksCommand({ StackName: name }))).Stacks?.[0];
  } catch (err) {
    // CloudFormation answers a missing stack with a ValidationError "… does not exist".
    if (err instanceof Error && /does not exist/.test(err.message)) return undefined;
    throw err;
  }
}

async function deployedReservations(cfn: CloudFormationClient, name: string): Promise<number> {
  const body = (await cfn.send(new GetTemplateCommand({ StackName: name, TemplateStage: 'Original' }))).TemplateBody;
  return body ? reservedIn(JSON.parse(body) as DeployTarget['stacks'][number]['template']) : 0;
}

/** The checks of one region: its Lambda limit against the reservations of its stacks, its bootstrap stack, failed stacks. */
async function checkRegion(region: string, target: DeployTarget, clients: RegionClients): Promise<Finding[]> {
  const out: Finding[] = [];
  const stacks = target.stacks.filter((s) => s.region === region);

  const toolkit = await describeStack(clients.cloudformation, TOOLKIT_STACK);
  const needed = Math.max(...stacks.map((s) => minBootstrapVersion(s.template)));
  const bootstrap = `npx cdk bootstrap aws://<account>/${region}`;
  if (!toolkit) out.push({ level: 'fail', region, message: `no CDK bootstrap stack (${TOOLKIT_STACK}) here: run \`${bootstrap}\`` });
  else if (!/_COMPLETE$/.test(toolkit.StackStatus ?? '') || /ROLLBACK|DELETE/.test(toolkit.StackStatus ?? ''))
    out.push({ level: 'fail', region, message: `the CDK bootstrap stack is ${toolkit.StackStatus}: fix or delete it, then \`${bootstrap}\`` });
  else {
    const version = Number(toolkit.Outputs?.find((o) => o.OutputKey === 'BootstrapVersion')?.OutputValue ?? 0);
    if (version < needed)
      out.push({
        level: 'fail',
        region,
        message: `the CDK bootstrap stack is version ${version}; the templates need ${needed} or later: run \`${bootstrap}\``,
      });
    else out.push({ level: 'ok', region, message: `CDK bootstrap stack version ${version} (${needed} or later needed)` });
  }

  let held = 0;
  for (const s of stacks) {
    const existing = await describeStack(clients.cloudformation, s.name);
    if (!existing) continue;
    if (existing.StackStatus === 'ROLLBACK_COMPLETE')
      out.push({
        level: 'fail',
        region,
        message: `${s.name} is ROLLBACK_COMPLETE (a first deploy that failed): delete it (\`aws cloudformation delete-stack --region ${region} --stack-name ${s.name}\`), fix the cause, deploy again`,
      });
    else held += await deployedReservations(clients.cloudformation, s.name);
  }

  const settings = (await clients.lambda.send(new GetAccountSettingsCommand({}))).AccountLimit ?? {};
  const limit = settings.ConcurrentExecutions ?? 0;
  const unreserved = settings.UnreservedConcurrentExecutions ?? 0;
  const wanted = stacks.reduce((n, s) => n + reservedIn(s.template), 0);
  const extra = wanted - held;
  const room = unreserved - LAMBDA_UNRESERVED_MINIMUM;
  const figures = `Lambda concurrency limit ${limit}, unreserved ${unreserved}; the stacks reserve ${wanted}${held ? ` (${held} of it already reserved by their deployed versions)` : ''}`;
  if (extra > room) {
    const limitNeeded = limit + (extra - room);
    out.push({
      level: 'fail',
      region,
      message: `${figures}: reserving ${extra} more would leave less than the ${LAMBDA_UNRESERVED_MINIMUM} Lambda keeps unreserved, and the deploy fails ("… below its minimum value"). Deploy without reserved concurrency (drop -c reservedConcurrency=recommended / the stage's reservedConcurrency), or raise the limit to ${limitNeeded} or more: \`aws service-quotas request-service-quota-increase --region ${region} --service-code lambda --quota-code L-B99A9384 --desired-value ${Math.max(limitNeeded, USUAL_LIMIT)}\``,
    });
  } else out.push({ level: 'ok', region, message: figures });
  if (limit < USUAL_LIMIT)
    out.push({
      level: 'warn',
      region,
      message: `the account's Lambda concurrency limit here is ${limit} (new accounts start low): every function shares it and throttles past it (the Throttles alarms); ask for ${USUAL_LIMIT}: \`aws service-quotas request-service-quota-increase --region ${region} --service-code lambda --quota-code L-B99A9384 --desired-value ${USUAL_LIMIT}\``,
    });
  return out;
}

/** Every finding of the deployment `target`, region by region (the home region, then us-east-1), then the alarms. */
export async function preflight(target: DeployTarget, clients: (region: string) => RegionClients): Promise<Finding[]> {
  const regions = [...new Set([target.homeRegion, 'us-east-1'])];
  const findings: Finding[] = [];
  for (const region of regions) findings.push(...(await checkRegion(region, target, clients(region))));
  const unreached = target.stacks.flatMap((s) => s.warnings.filter((w) => w.includes('nobody is subscribed')));
  if (unreached.length) for (const message of unreached) findings.push({ level: 'fail', message });
  else findings.push({ level: 'ok', message: `the alarms of stage '${target.stage}' notify a subscriber (or the stage says they need none)` });
  return findings;
}

export function report(findings: Finding[]): string {
  return findings.map((f) => `${f.level === 'ok' ? 'ok  ' : f.level === 'warn' ? 'WARN' : 'FAIL'} ${f.region ? `[${f.region}] ` : ''}${f.message}`).join('\n');
}

async function main(): Promise<void> {
  const { context, rest } = contextFlags(process.argv.slice(2));
  if (rest.length) throw new Error(`unknown arguments: ${rest.join(' ')} (only -c key=value, as for cdk deploy)`);
  const target = synthTarget(context);
  console.log(`preflight of stage '${target.stage}' in ${target.homeRegion}: ${target.stacks.map((s) => `${s.name} (${s.region})`).join(', ')}`);
  const findings = await preflight(target, (region) => ({ lambda: new LambdaClient({ region }), cloudformation: new CloudFormationClient({ region }) }));
  console.log(report(findings));
  const failed = findings.filter((f) => f.level === 'fail').length;
  console.log(
    failed ? `${failed} problem(s) would fail the deploy or leave it unwatched: fix them, then run this again.` : 'nothing found that would fail the deploy.',
  );
  process.exitCode = failed ? 1 : 0;
}

if (require.main === module) {
  main().catch((err: unknown) => {
    console.error('[preflight] failed:', err instanceof Error ? err.message : err);
    process.exitCode = 2;
  });
}
