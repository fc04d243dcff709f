/**
 * The deployment as `npx cdk synth` builds it (bin/app.ts with cdk.json's context), in the modes an
 * operator deploys: the default, `-c searchEngine=embedded`, `-c stage=staging`, and the default
 * with a home region outside us-east-1 (the edge and CloudFront-alarms stacks exist only there).
 * Bundling and the sharp layer are skipped (templates only). One `app.synth()` per mode: cdk-nag's
 * packs run as they do at `cdk synth` and fail it on a finding without an acknowledgement.
 */
import { Stack } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';
import { cdkContext, synthApp } from '../../bin/deploy-target';
import type { StageConfig } from '../../bin/stages';
import type { Deployment } from '../../lib/deployment';

/** cdk.json's context, for tests that build a stack of their own. */
export const CDK_CONTEXT = cdkContext();
export const ACCOUNT = '123456789012';

// biome-ignore lint/suspicious/noExplicitAny: a synthesized template is untyped JSON, read here path by path.
export type Json = any;
export type Resource = { Type: string; Properties: Record<string, Json>; DeletionPolicy?: string };

export interface SynthStack {
  readonly name: string;
  readonly region: string;
  readonly template: { Resources: Record<string, Resource>; Outputs?: Record<string, Json> };
  readonly warnings: string[];
  readonly terminationProtection: boolean;
}

export interface SynthMode {
  readonly name: string;
  readonly deployment: Deployment;
  readonly stacks: SynthStack[];
  /** The stack of the home region. */
  readonly main: SynthStack;
}

export interface ModeSpec {
  readonly name: string;
  /** `-c key=value` of `cdk synth`. */
  readonly context?: Record<string, string>;
  readonly region: string;
  /** bin/stages.ts, or a variant of it. */
  readonly stages?: Readonly<Record<string, StageConfig>>;
}

/** The four modes of the issue: every test of the first deploy runs on each. */
export const MODES: readonly ModeSpec[] = [
  { name: 'default', region: 'us-east-1' },
  { name: 'embedded', context: { searchEngine: 'embedded' }, region: 'us-east-1' },
  { name: 'staging', context: { stage: 'staging' }, region: 'us-east-1' },
  { name: 'eu-west-1', region: 'eu-west-1' },
];

export function synthMode(spec: ModeSpec): SynthMode {
  const { deployment, stacks: synthesized } = synthApp(spec.context ?? {}, { CDK_DEPLOY_REGION: spec.region, CDK_DEPLOY_ACCOUNT: ACCOUNT }, spec.stages);
  const stacks = synthesized as SynthStack[];
  const main = stacks.find((s) => s.name === deployment.main.stackName) as SynthStack;
  return { name: spec.name, deployment, stacks, main };
}

export const ofType = (stack: SynthStack, type: string): Array<[string, Resource]> =>
  Object.entries(stack.template.Resources).filter(([, r]) => r.Type === type);

/** The logical id a construct (or its default CloudFormation resource) has in its stack's template. */
export function logicalId(scope: IConstruct): string {
  const cfn = scope.node.defaultChild ?? scope;
  return Stack.of(scope).resolve((cfn as unknown as { logicalId: string }).logicalId) as string;
}
