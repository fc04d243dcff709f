import * as path from 'node:path';
import { Duration, Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import type * as logs from 'aws-cdk-lib/aws-logs';
import * as scheduler from 'aws-cdk-lib/aws-scheduler';
import * as schedulerTargets from 'aws-cdk-lib/aws-scheduler-targets';
import { Construct } from 'constructs';
import { appFunction } from './lambda-function';
import { acknowledge, nagFlatten, nagRef } from './nag';

/**
 * Regions enabled by default in every account where CloudFront has a regional edge cache, which is
 * where Lambda@Edge runs and writes its logs (CloudFront Developer Guide, "Edge function logs").
 */
export const EDGE_LOG_REGIONS: readonly string[] = [
  'us-east-1',
  'us-east-2',
  'us-west-1',
  'us-west-2',
  'ca-central-1',
  'sa-east-1',
  'eu-west-1',
  'eu-west-2',
  'eu-west-3',
  'eu-central-1',
  'eu-north-1',
  'ap-south-1',
  'ap-northeast-1',
  'ap-northeast-2',
  'ap-northeast-3',
  'ap-southeast-1',
  'ap-southeast-2',
];

export interface EdgeLogRetentionProps {
  /** The Lambda@Edge function's log group name (the same in every region). */
  readonly logGroupName: string;
  readonly retention: logs.RetentionDays;
  /** @default EDGE_LOG_REGIONS */
  readonly regions?: readonly string[];
  /** @default - none: a daily run needs no floor, and a reservation in us-east-1 needs room in its account limit */
  readonly reservedConcurrentExecutions?: number;
}

/**
 * A daily schedule and a small function (lambdas/ops/edge-log-retention.ts) that give the
 * Lambda@Edge function's log group its retention in every region it has run in: Lambda@Edge
 * creates those groups itself, with no retention, where CloudFormation cannot reach.
 */
export class EdgeLogRetention extends Construct {
  readonly fn: NodejsFunction;

  constructor(scope: Construct, id: string, props: EdgeLogRetentionProps) {
    super(scope, id);
    const regions = props.regions ?? EDGE_LOG_REGIONS;
    const { fn, role } = appFunction(this, 'Function', {
      description: "Sets the retention of the Lambda@Edge function's log group in every region it runs in",
      roleDescription: 'Edge log retention: describes log groups and sets the retention of one of them, in each region',
      entry: path.join(__dirname, '..', 'lambdas', 'ops', 'edge-log-retention.ts'),
      memorySize: 256,
      timeout: Duration.minutes(2),
      reservedConcurrentExecutions: props.reservedConcurrentExecutions,
      serviceName: 'edge-log-retention',
      // EventBridge Scheduler invokes it asynchronously; its own acknowledgements below say why no DLQ.
      invokedBy: undefined,
      logRetention: props.retention,
      environment: { EDGE_LOG_GROUP: props.logGroupName, RETENTION_DAYS: String(props.retention), REGIONS: regions.join(',') },
    });
    this.fn = fn;
    const stack = Stack.of(this);
    const groupArn = (name: string) => `arn:${stack.partition}:logs:*:${stack.account}:log-group:${name}`;
    const list = groupArn('*');
    const group = [groupArn(props.logGroupName), groupArn(`${props.logGroupName}:*`)];
    role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['logs:DescribeLogGroups'], resources: [list] }));
    role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['logs:PutRetentionPolicy'], resources: group }));
    acknowledge(
      role,
      `AwsSolutions-IAM5[Resource::${nagFlatten(this, list)}]`,
      'logs:DescribeLogGroups is authorized on the account-wide log-group resource only (it lists); the function uses it with a name prefix to find the one group, in each region Lambda@Edge may run in.',
    );
    acknowledge(
      role,
      `AwsSolutions-IAM5[Resource::${nagFlatten(this, group[0])}]`,
      "The retention is set on the Lambda@Edge function's one log group, in every region it runs in: the region is the only wildcard.",
    );
    acknowledge(
      role,
      `AwsSolutions-IAM5[Resource::${nagFlatten(this, group[1])}]`,
      "The same log group's ARN with its log-stream suffix, which IAM matches for log-group actions; the region is the only wildcard.",
    );
    for (const [rule, reason] of [
      [
        'Serverless-LambdaDLQ',
        'Invoked by EventBridge Scheduler, whose target has a retry policy; a failed run is a function error (alarmed) and the next daily run repeats the idempotent work.',
      ],
      [
        'Serverless-LambdaAsyncFailureDestination',
        'Invoked by EventBridge Scheduler with retries; a failed run is a function error (alarmed) and the next daily run repeats the idempotent work.',
      ],
    ] as const) {
      acknowledge(fn, rule, reason);
    }

    // A role of its own, trusted by the scheduler of this account only, that may invoke this one function.
    const invoker = new iam.Role(this, 'ScheduleRole', {
      assumedBy: new iam.ServicePrincipal('scheduler.amazonaws.com', { conditions: { StringEquals: { 'aws:SourceAccount': stack.account } } }),
      description: 'EventBridge Scheduler: invokes the edge log retention function daily',
    });
    acknowledge(
      invoker,
      `AwsSolutions-IAM5[Resource::${nagRef(fn, 'Arn')}:*]`,
      "The schedule's target grants lambda:InvokeFunction on this one function and its qualified ARNs (versions, aliases), which is still this function only.",
    );
    new scheduler.Schedule(this, 'Daily', {
      description: "Sets the retention of the Lambda@Edge function's log groups in every region",
      schedule: scheduler.ScheduleExpression.rate(Duration.days(1)),
      target: new schedulerTargets.LambdaInvoke(fn, { role: invoker, retryAttempts: 3, maxEventAge: Duration.hours(6) }),
    });
  }
}
