/**
 * What `npx cdk deploy` would deploy, synthesized offline for the operator's scripts
 * (`npm run preflight`, `npm run alarms:test`): the same `-c key=value` flags and the same region
 * variables as the CDK CLI, bin/app.ts with cdk.json's context, no bundling and no sharp layer
 * (only the templates are read).
 */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { App } from 'aws-cdk-lib';
import type { Deployment } from '../lib/deployment';
import { stackIds } from '../lib/naming';
import { catalogApp } from './app';
import { type StageConfig, STAGES } from './stages';

export interface TargetStack {
  readonly name: string;
  readonly region: string;
  /** The synthesized template. */
  readonly template: { Resources?: Record<string, { Type: string; Properties?: Record<string, unknown> }>; Rules?: Record<string, unknown> };
  /** The synth warnings of the stack (annotations). */
  readonly warnings: string[];
  readonly terminationProtection: boolean;
}

export interface DeployTarget {
  readonly stage: string;
  readonly homeRegion: string;
  readonly stacks: TargetStack[];
}

/** `-c key=value` (or `--context key=value`) pairs of the command line; anything else is refused. */
export function contextFlags(argv: string[]): { context: Record<string, string>; rest: string[] } {
  const context: Record<string, string> = {};
  const rest: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '-c' || a === '--context') {
      const kv = argv[++i] ?? '';
      const eq = kv.indexOf('=');
      if (eq < 1) throw new Error(`${a} needs key=value, got "${kv}"`);
      context[kv.slice(0, eq)] = kv.slice(eq + 1);
    } else rest.push(a);
  }
  return { context, rest };
}

/** The home region as bin/app.ts chooses it (a stage may pin its own; it is read from the synthesized stacks). */
export function regionFromEnv(env: NodeJS.ProcessEnv): string {
  for (const k of ['CDK_DEPLOY_REGION', 'CDK_DEFAULT_REGION', 'AWS_REGION', 'AWS_DEFAULT_REGION']) {
    const v = env[k]?.trim();
    if (v) return v;
  }
  return 'us-east-1';
}

/** cdk.json's context, which the CDK CLI gives bin/app.ts. */
export const cdkContext = (): Record<string, unknown> =>
  (JSON.parse(readFileSync(path.join(__dirname, '..', 'cdk.json'), 'utf8')) as { context: Record<string, unknown> }).context;

/**
 * bin/app.ts synthesized as `cdk synth` builds it, with cdk.json's context and these `-c` flags,
 * templates only (no bundling, no sharp layer): the deployment and its stacks, edge first.
 */
export function synthApp(
  context: Record<string, string>,
  env: NodeJS.ProcessEnv,
  stages: Readonly<Record<string, StageConfig>> = STAGES,
): { deployment: Deployment; stacks: TargetStack[] } {
  const app = new App({ context: { ...cdkContext(), 'aws:cdk:bundling-stacks': [], sharpLayer: 'skip', ...context } });
  const deployment = catalogApp(app, env, stages);
  const assembly = app.synth();
  const stacks = [deployment.edge, deployment.main, deployment.cdnAlarms]
    .filter((s) => s !== undefined)
    .map((s) => {
      const artifact = assembly.getStackArtifact(s.artifactId);
      return {
        name: artifact.stackName,
        region: artifact.environment.region,
        template: artifact.template as TargetStack['template'],
        warnings: artifact.messages.filter((m) => m.level === 'warning').map((m) => String(m.entry.data)),
        terminationProtection: artifact.terminationProtection === true,
      };
    });
  return { deployment, stacks };
}

export function synthTarget(context: Record<string, string>, env: NodeJS.ProcessEnv = process.env): DeployTarget {
  const region = regionFromEnv(env);
  const { deployment, stacks } = synthApp(context, { ...env, CDK_DEPLOY_REGION: env.CDK_DEPLOY_REGION ?? region });
  return { stage: deployment.main.stage, homeRegion: deployment.main.region, stacks };
}

/** The main stack's name of a stage (what `alarms:test` looks up without a synth). */
export const mainStackName = (stage: string): string => stackIds(stage, 'any').main;

/** Reserved concurrency a template asks for: the sum over its functions. */
export function reservedIn(template: TargetStack['template']): number {
  return Object.values(template.Resources ?? {})
    .filter((r) => r.Type === 'AWS::Lambda::Function')
    .reduce((n, r) => n + (typeof r.Properties?.ReservedConcurrentExecutions === 'number' ? r.Properties.ReservedConcurrentExecutions : 0), 0);
}

/**
 * The lowest CDK bootstrap version the template accepts: its `CheckBootstrapVersion` rule refuses a
 * list of versions (1-5 today), and the lowest accepted is the one after them.
 */
export function minBootstrapVersion(template: TargetStack['template']): number {
  const refused = JSON.stringify(template.Rules?.CheckBootstrapVersion ?? {}).match(/\[((?:"\d+",?)+)\]/);
  if (!refused) return 6;
  return Math.max(...refused[1].split(',').map((v) => Number(v.replace(/"/g, '')))) + 1;
}
