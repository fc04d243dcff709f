import { Duration, Names, RemovalPolicy } from 'aws-cdk-lib';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import * as tasks from 'aws-cdk-lib/aws-stepfunctions-tasks';
import type { Construct, IConstruct } from 'constructs';
import { functionDefaults } from '../lambda-function';
import { acknowledge, nagRef } from '../nag';

/** Lambda service errors and throttling, retried on every task before anything else. */
export const LAMBDA_SERVICE_ERRORS = [
  'Lambda.ServiceException',
  'Lambda.AWSLambdaException',
  'Lambda.SdkClientException',
  'Lambda.ClientExecutionTimeoutException',
  'Lambda.TooManyRequestsException',
];

export interface CrawlStateMachineOptions {
  fn: lambda.IFunction;
  deadLetterQueue: sqs.IQueue;
  maxConcurrency: number;
  taskRetries: number;
  logRetention: logs.RetentionDays;
  executionTimeout?: Duration;
}

/**
 * Plan (looping until planned) → Map over units → Finalize, inside one Parallel whose Catch sends
 * the execution's input and error to the dead-letter queue (see `CatalogCrawler` for the picture).
 */
export function crawlStateMachine(scope: Construct, o: CrawlStateMachineOptions): sfn.StateMachine {
  const retryTask = (task: tasks.LambdaInvoke): tasks.LambdaInvoke => {
    task.addRetry({
      errors: LAMBDA_SERVICE_ERRORS,
      interval: Duration.seconds(2),
      backoffRate: 2,
      maxAttempts: 6,
      maxDelay: Duration.minutes(1),
      jitterStrategy: sfn.JitterType.FULL,
    });
    if (o.taskRetries > 0) {
      // Function errors and timeouts: every action is idempotent, so a retry resumes the work.
      task.addRetry({
        errors: [sfn.Errors.TASKS_FAILED],
        interval: Duration.seconds(10),
        backoffRate: 2,
        maxAttempts: o.taskRetries,
        maxDelay: Duration.minutes(5),
        jitterStrategy: sfn.JitterType.FULL,
      });
    }
    return task;
  };
  const invoke = (name: string, payload: Record<string, unknown>, options: Partial<tasks.LambdaInvokeProps> = {}) =>
    retryTask(
      new tasks.LambdaInvoke(scope, name, {
        lambdaFunction: o.fn,
        payload: sfn.TaskInput.fromObject(payload),
        retryOnServiceExceptions: false,
        ...options,
      }),
    );

  const plan = invoke(
    'Plan',
    { action: 'plan', mode: sfn.JsonPath.stringAt('$.mode') },
    {
      comment: 'Pages through the upstream registry (up to CRAWLER_PLAN_MAX_STEPS pages per call), creating the units',
      resultSelector: {
        runId: sfn.JsonPath.stringAt('$.Payload.runId'),
        planned: sfn.JsonPath.stringAt('$.Payload.planned'),
        units: sfn.JsonPath.listAt('$.Payload.units'),
      },
      resultPath: '$.plan',
    },
  );
  const modeGiven = new sfn.Choice(scope, 'Mode given?')
    .when(sfn.Condition.isPresent('$.mode'), plan)
    .otherwise(new sfn.Pass(scope, 'Default mode', { result: sfn.Result.fromString('auto'), resultPath: '$.mode' }).next(plan));

  const unit = invoke(
    'Unit',
    { action: 'unit', runId: sfn.JsonPath.stringAt('$.runId'), unitId: sfn.JsonPath.stringAt('$.unitId') },
    { comment: 'Normalises, enriches and writes one unit (idempotent)', outputPath: '$.Payload' },
  );
  const units = new sfn.Map(scope, 'Units', {
    comment: 'Runs the units of the run, a few at a time',
    itemsPath: '$.plan.units',
    itemSelector: {
      runId: sfn.JsonPath.stringAt('$$.Map.Item.Value.runId'),
      unitId: sfn.JsonPath.stringAt('$$.Map.Item.Value.unitId'),
    },
    maxConcurrency: o.maxConcurrency,
    resultPath: sfn.JsonPath.DISCARD,
  });
  units.itemProcessor(unit);

  const finalize = invoke(
    'Finalize',
    { action: 'finalize', runId: sfn.JsonPath.stringAt('$.plan.runId') },
    { comment: 'Sweeps, moves the high-water mark and returns the crawl report', outputPath: '$.Payload' },
  );

  plan.next(new sfn.Choice(scope, 'Planned?').when(sfn.Condition.booleanEquals('$.plan.planned', false), plan).otherwise(units.next(finalize)));

  const failed = new sfn.Fail(scope, 'Crawl failed', { errorPath: '$.error.Error', causePath: '$.error.Cause' });
  const deadLetter = new tasks.SqsSendMessage(scope, 'Send to dead-letter queue', {
    queue: o.deadLetterQueue,
    messageBody: sfn.TaskInput.fromObject({
      execution: sfn.JsonPath.executionId,
      startTime: sfn.JsonPath.stringAt('$$.Execution.StartTime'),
      input: sfn.JsonPath.objectAt('$$.Execution.Input'),
      error: sfn.JsonPath.objectAt('$.error'),
    }),
    resultPath: sfn.JsonPath.DISCARD,
  });
  deadLetter.addRetry({ interval: Duration.seconds(2), backoffRate: 2, maxAttempts: 3, jitterStrategy: sfn.JitterType.FULL });
  deadLetter.addCatch(failed, { resultPath: '$.deadLetterError' });
  deadLetter.next(failed);

  // One Catch around the whole flow: a Parallel state with a single branch.
  const crawl = new sfn.Parallel(scope, 'Crawl', { comment: 'Plan, units, finalize', outputPath: '$[0]' })
    .branch(modeGiven)
    .addCatch(deadLetter, { errors: [sfn.Errors.ALL], resultPath: '$.error' });

  const smLogs = new logs.LogGroup(scope, 'StateMachineLogs', {
    // The vended-logs prefix keeps CloudWatch Logs' resource policy small (AWS's recommendation).
    logGroupName: `/aws/vendedlogs/states/${Names.uniqueResourceName(scope, { maxLength: 200, separator: '-' })}`,
    retention: o.logRetention,
    removalPolicy: RemovalPolicy.DESTROY,
  });
  // The stage's tracing setting (`tracing`, read by every function too).
  const tracing = functionDefaults(scope).tracing ?? true;
  const stateMachine = new sfn.StateMachine(scope, 'StateMachine', {
    comment: 'MCP catalog crawl: plan, units (Map), finalize; failures to the dead-letter queue',
    stateMachineType: sfn.StateMachineType.STANDARD,
    definitionBody: sfn.DefinitionBody.fromChainable(crawl.next(new sfn.Succeed(scope, 'Done'))),
    timeout: o.executionTimeout,
    tracingEnabled: tracing,
    logs: { destination: smLogs, level: sfn.LogLevel.ALL, includeExecutionData: true },
  });
  acknowledgeStateMachine(stateMachine, o.fn, 'crawler function', {
    tracing,
    whyUntraced:
      'The stage turned X-Ray off (tracing: false, a documented option: traces cost per segment and some organisations send none); every execution is still logged in full to its log group and alarmed on failure, which is where a failed crawl is diagnosed.',
  });
  return stateMachine;
}

/**
 * What cdk-nag flags on every state machine that runs one Lambda function, acknowledged with the
 * reasons: its role may invoke the function's qualified ARNs, tracing and log delivery take `*`,
 * and without tracing, why the stage may go without it.
 */
export function acknowledgeStateMachine(stateMachine: sfn.StateMachine, fn: IConstruct, fnNoun: string, o: { tracing: boolean; whyUntraced: string }): void {
  acknowledge(
    stateMachine.role,
    `AwsSolutions-IAM5[Resource::${nagRef(fn, 'Arn')}:*]`,
    `Step Functions invokes this one ${fnNoun}; CDK grants lambda:InvokeFunction on the function and its qualified ARNs (versions, aliases), which is still this function only.`,
  );
  acknowledge(
    stateMachine.role,
    'AwsSolutions-IAM5[Resource::*]',
    'X-Ray tracing (xray:PutTraceSegments, PutTelemetryRecords, GetSampling*) and the vended-log delivery of the state machine (logs:*LogDelivery*, PutResourcePolicy, DescribeResourcePolicies, DescribeLogGroups) support no resource-level permissions; these are the statements CDK adds for tracing and logging only.',
  );
  if (!o.tracing) {
    acknowledge(stateMachine, 'AwsSolutions-SF2', o.whyUntraced);
    acknowledge(stateMachine, 'Serverless-StepFunctionStateMachineXray', o.whyUntraced);
  }
}
