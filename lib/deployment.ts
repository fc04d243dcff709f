import { Annotations, Aspects, CfnOutput, Stack, Tags } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as logs from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { metricsNamespace } from '../lambdas/shared/observability/metric-names';
import { CatalogStack } from './catalog-stack';
import type { CatalogStackProps } from './catalog-stack-props';
import { LogGroupsWithRetention } from './log-groups';
import { unreachedAlarms } from './alarm-settings';
import { Monitoring } from './monitoring';
import { AccountGlobalNames, checkStage, stackIds } from './naming';

/** One deployment of the product: a stage in a region (and account). */
export interface DeploymentProps extends Omit<CatalogStackProps, 'env' | 'edgeStack' | 'crossRegionReferences'> {
  /** The stage (`-c stage=<name>`). @default 'prod' */
  readonly stage?: string;
  /** The home region: every regional resource is here. */
  readonly region: string;
  /** @default - account-agnostic (the CLI's account at deploy time) */
  readonly account?: string;
  /**
   * A production stage: termination protection on every stack of the deployment, and a synth
   * warning while viewers get the default `*.cloudfront.net` certificate (TLSv1 allowed).
   * @default - true for the stage `prod`
   */
  readonly production?: boolean;
  /**
   * ARN of an IAM managed policy set as the permissions boundary of every role of every stack
   * (the app's, and CDK's custom-resource providers'), as enterprise landing zones require
   * (`-c permissionsBoundary=<arn>`). It must allow what the roles' own policies grant.
   * @default - none
   */
  readonly permissionsBoundaryArn?: string;
}

export interface Deployment {
  readonly main: CatalogStack;
  /** us-east-1, before `main` (outside us-east-1 only): Lambda@Edge, the WAF web ACL, the certificate. */
  readonly edge?: Stack;
  /** us-east-1, after `main` (outside us-east-1 only): CloudFront's alarm and the edge log sweep's. */
  readonly cdnAlarms?: Stack;
}

/**
 * The stacks of a deployment. In us-east-1 everything is one stack `<stage>-McpCatalog`. In any
 * other region, CloudFront's pieces that must live in us-east-1 go into `<stage>-McpCatalog-edge-<region>`
 * (deployed first) and CloudFront's alarms into `<stage>-McpCatalog-cdn-alarms-<region>` (deployed
 * last: CloudFront publishes its metrics only in us-east-1, and an alarm must be in the region of its
 * metric). The region is in both ids, so two regions of one stage share no us-east-1 stack.
 * `cdk deploy --all` deploys them in that order; `cdk destroy --all` removes them in reverse.
 */
export function deployCatalog(scope: Construct, props: DeploymentProps): Deployment {
  const stage = checkStage(props.stage ?? 'prod');
  const ids = stackIds(stage, props.region);
  const outside = props.region !== 'us-east-1';
  const usEast1 = { account: props.account, region: 'us-east-1' };
  const edge = outside
    ? new Stack(scope, ids.edge, {
        env: usEast1,
        crossRegionReferences: true,
        description: `MCP catalog ${stage} (${props.region}): what CloudFront needs in us-east-1 (Lambda@Edge, WAF web ACL, certificate)`,
      })
    : undefined;
  const main = new CatalogStack(scope, ids.main, {
    ...props,
    stage,
    env: { account: props.account, region: props.region },
    ...(edge && { edgeStack: edge, crossRegionReferences: true }),
  });
  if (edge) main.addStackDependency(edge);

  let cdnAlarms: Stack | undefined;
  if (outside) {
    cdnAlarms = new Stack(scope, ids.cdnAlarms, {
      env: usEast1,
      crossRegionReferences: true,
      description: `MCP catalog ${stage} (${props.region}): CloudFront's alarms, in us-east-1 where its metrics are`,
    });
    const monitoring = new Monitoring(cdnAlarms, 'Monitoring', {
      settings: props.alarms,
      topicArn: props.alarms?.usEast1TopicArn,
      namespace: metricsNamespace(stage),
    });
    monitoring.watchDistribution(main.edge.distribution);
    // The edge log sweep runs in us-east-1 too; its alarms can only be here.
    monitoring.watchFunction('EdgeLogRetentionFunction', main.edgeLogRetention.fn);
    new CfnOutput(cdnAlarms, 'AlarmTopicArn', { description: "SNS topic CloudFront's alarms notify (us-east-1)", value: monitoring.topic.topicArn });
    cdnAlarms.addStackDependency(main);
    Tags.of(cdnAlarms).add('mcp-catalog:stage', stage);
    Aspects.of(cdnAlarms).add(new AccountGlobalNames(stage, props.region));
    Aspects.of(cdnAlarms).add(new LogGroupsWithRetention(props.logRetention ?? logs.RetentionDays.ONE_MONTH));
  }
  const production = props.production ?? stage === 'prod';
  for (const stack of [edge, main, cdnAlarms]) {
    if (!stack) continue;
    if (production) stack.terminationProtection = true;
    if (props.permissionsBoundaryArn)
      iam.PermissionsBoundary.of(stack).apply(iam.ManagedPolicy.fromManagedPolicyArn(stack, 'PermissionsBoundary', props.permissionsBoundaryArn));
  }
  for (const problem of unreachedAlarms(props.alarms, { stage, homeRegion: props.region }))
    Annotations.of(main).addWarningV2('mcp-catalog:alarms-unsubscribed', problem);
  if (production && !props.domainNames?.length) {
    Annotations.of(main).addWarningV2(
      'mcp-catalog:default-certificate',
      `Stage '${stage}' serves viewers on the default *.cloudfront.net certificate, whose security policy CloudFront fixes at TLSv1: set domainNames with hostedZone or certificateArn in bin/stages.ts for TLSv1.2_2021 (README, "Custom domain")`,
    );
  }
  return { main, edge, cdnAlarms };
}
