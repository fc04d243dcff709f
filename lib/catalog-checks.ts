import * as path from 'node:path';
import { Duration, Names, RemovalPolicy } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as iam from 'aws-cdk-lib/aws-iam';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as scheduler from 'aws-cdk-lib/aws-scheduler';
import * as schedulerTargets from 'aws-cdk-lib/aws-scheduler-targets';
import * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import * as tasks from 'aws-cdk-lib/aws-stepfunctions-tasks';
import { Construct } from 'constructs';
import { DEFAULT_CHECK_SETTINGS } from '../lambdas/crawler/config';
import { whenAny } from './alarms';
import type { CatalogData } from './catalog-data';
import { acknowledgeStateMachine, LAMBDA_SERVICE_ERRORS } from './crawler/state-machine';
import { appFunction, functionDefaults, type FunctionLogLevel } from './lambda-function';
import { grantTable } from './tables';

export interface CatalogChecksProps {
  /** The catalog table, trust table and search engine the rounds read and write. */
  readonly data: CatalogData;
  /**
   * How often a round starts (EventBridge Scheduler `rate(...)`, whole minutes, at least 5). A
   * round may last at most this long (the execution's timeout), so rounds never pile up.
   * @default Duration.hours(1)
   */
  readonly schedule?: Duration;
  /**
   * Whether the schedule is enabled; disabled, a round still starts by hand
   * (`aws stepfunctions start-execution --state-machine-arn <CheckStateMachineArn>`).
   * @default true
   */
  readonly scheduleEnabled?: boolean;
  /**
   * Batches checked at once (the Map's MaxConcurrency). Each batch runs in its own function
   * instance with its own per-host limit (CRAWLER_HOST_CONCURRENCY, 4), so one host sees at most
   * this many × 4 requests in flight.
   * @default 4
   */
  readonly maxConcurrency?: number;
  /** Servers per batch (CHECK_BATCH_SIZE). @default 100 */
  readonly batchSize?: number;
  /** Servers checked at once within a batch (CHECK_CONCURRENCY). @default 16 */
  readonly concurrency?: number;
  /** Failed checks in a row that mark a server down (CHECK_DOWN_AFTER). @default 3 */
  readonly downAfter?: number;
  /** Memory of the function, in MB (checks wait on the network; little CPU). @default 512 */
  readonly memorySize?: number;
  /** Reserved concurrency of the function. @default - unreserved; `CatalogStack` reserves maxConcurrency + 1 with the recommended set */
  readonly reservedConcurrentExecutions?: number;
  /** Name of the OpenSearch index the rounds update; must be the one the catalog API reads. @default 'catalog' */
  readonly searchIndex?: string;
  /** @default RetentionDays.ONE_MONTH */
  readonly logRetention?: logs.RetentionDays;
  /** @default 'INFO' */
  readonly logLevel?: FunctionLogLevel;
  /** More environment variables of the function (CRAWLER_HEALTH_TIMEOUT_MS, …); they override the ones set here. */
  readonly environment?: Record<string, string>;
  /** The function's entry file; it must export `handler` (`{ action: 'plan' | 'batch' | 'finish' }`). @default lambdas/crawler/check-handler.ts */
  readonly entry?: string;
}

const DEFAULT_ENTRY = path.join(__dirname, '..', 'lambdas', 'crawler', 'check-handler.ts');

/**
 * The check schedule in AWS: an EventBridge Scheduler schedule starts a Step Functions state
 * machine (Standard) that drives one function (`lambdas/crawler/check-handler.ts`):
 *
 *   Plan ─▶ Map over batches (maxConcurrency) ─▶ Batch ─┬─▶ Finish
 *                                   a failed batch ─────┘ (counted; Finish then fails the round)
 *
 * Plan lists the hosted servers in the search index and returns ranges of `batchSize` (a few
 * numbers: 5,000 hosted servers are 50 items). Each Batch checks its servers, `concurrency` at a
 * time, writes one trust-table item per check and the renewed record (uptime, down mark) to the
 * catalog and the search index. Finish sums the counts, rebuilds the search snapshot in the
 * small-catalog mode, and fails the execution when a batch failed: the failed-round alarm fires.
 *
 * A check is one observation, so a batch whose function failed is not retried (its servers would
 * be checked twice in one round); throttles and Lambda service errors, where the function did not
 * run, are. The same fan-out as the crawler's, smaller: no dead-letter queue (a lost round is an
 * hour without an observation, which the history shows as such, not work to resume).
 */
export class CatalogChecks extends Construct {
  readonly fn: NodejsFunction;
  readonly role: iam.Role;
  readonly stateMachine: sfn.StateMachine;
  readonly schedule: scheduler.Schedule;
  /** A round failed (a batch or the plan failed after retries). */
  readonly failedRoundsAlarm: cloudwatch.Alarm;
  /** A round outlasted the schedule's rate. */
  readonly timedOutRoundsAlarm: cloudwatch.Alarm;

  constructor(scope: Construct, id: string, props: CatalogChecksProps) {
    super(scope, id);
    const { data } = props;
    const whole = (name: string, v: number, min: number): number => {
      if (!Number.isInteger(v) || v < min) throw new Error(`${name} must be a whole number >= ${min}, got ${v}`);
      return v;
    };
    const rate = props.schedule ?? Duration.hours(1);
    if (rate.toSeconds() < 300 || rate.toSeconds() % 60 !== 0) throw new Error(`schedule must be a whole number of minutes >= 5, got ${rate.toHumanString()}`);
    const maxConcurrency = whole('maxConcurrency', props.maxConcurrency ?? 4, 1);
    const retention = props.logRetention ?? functionDefaults(this).logRetention ?? logs.RetentionDays.ONE_MONTH;

    ({ fn: this.fn, role: this.role } = appFunction(this, 'Function', {
      description: 'MCP catalog health checks: plan, batch and finish actions of the check state machine',
      roleDescription: 'Catalog checks: reads the catalog and search, writes check history, records and search documents',
      entry: props.entry ?? DEFAULT_ENTRY,
      memorySize: props.memorySize ?? 512,
      // A batch of 100 servers whose remotes all time out on one host: 100 / 4 per host × 5 s × up to 3 remotes.
      timeout: Duration.minutes(10),
      reservedConcurrentExecutions: props.reservedConcurrentExecutions,
      logRetention: retention,
      logLevel: props.logLevel,
      serviceName: 'checks',
      invokedBy: 'the check state machine (Step Functions tasks; a failed batch fails the round and its alarm)',
      environment: {
        CATALOG_TABLE: data.catalogTable.tableName,
        ...data.trustEnvironment(),
        ...data.searchEnvironment(props.searchIndex ?? 'catalog'),
        CHECK_BATCH_SIZE: String(whole('batchSize', props.batchSize ?? DEFAULT_CHECK_SETTINGS.batchSize, 1)),
        CHECK_CONCURRENCY: String(whole('concurrency', props.concurrency ?? DEFAULT_CHECK_SETTINGS.concurrency, 1)),
        CHECK_DOWN_AFTER: String(whole('downAfter', props.downAfter ?? DEFAULT_CHECK_SETTINGS.downAfter, 1)),
        ...props.environment,
      },
      bundling: {
        // The SDK is in the runtime; sharp (the crawler's icon step, never loaded by a check) stays out.
        externalModules: ['@aws-sdk/*', '@smithy/*', 'sharp'],
        esbuildArgs: { '--supported:dynamic-import': 'false' },
      },
    }));

    // Least privilege, the operations of the adapters a round uses: the catalog (DynamoCatalogStore
    // get: Query; put: BatchWriteItem; the small-catalog rebuild: Scan), the trust table
    // (DynamoTrustStore putChecks/putChanges: BatchWriteItem; checks: Query), the search engine.
    grantTable(data.catalogTable, this.role, ['dynamodb:Query', 'dynamodb:BatchWriteItem', ...(data.searchEngine === 'embedded' ? ['dynamodb:Scan'] : [])]);
    grantTable(data.trustTable, this.role, ['dynamodb:Query', 'dynamodb:BatchWriteItem']);
    data.grantSearch(this.role, 'readwrite');

    this.stateMachine = this.roundStateMachine(maxConcurrency, retention, rate);

    this.schedule = new scheduler.Schedule(this, 'Schedule', {
      description: `Starts a health check round of the hosted MCP servers every ${rate.toHumanString()}`,
      schedule: scheduler.ScheduleExpression.rate(rate),
      enabled: props.scheduleEnabled ?? true,
      target: new schedulerTargets.StepFunctionsStartExecution(this.stateMachine, {
        input: scheduler.ScheduleTargetInput.fromObject({}),
        retryAttempts: 2,
        // A round started late is still a round; one older than a quarter of the rate is skipped.
        maxEventAge: Duration.seconds(Math.max(60, Math.floor(rate.toSeconds() / 4))),
      }),
    });

    const period = Duration.minutes(5);
    this.failedRoundsAlarm = whenAny(
      this,
      'FailedRoundsAlarm',
      'A health check round failed (a batch or the plan; see the check state machine execution and the checks function logs); the next round checks every server again',
      this.stateMachine.metricFailed({ period, statistic: cloudwatch.Stats.SUM }),
    );
    this.timedOutRoundsAlarm = whenAny(
      this,
      'TimedOutRoundsAlarm',
      'A health check round outlasted the schedule rate (raise maxConcurrency or lower the schedule)',
      this.stateMachine.metricTimedOut({ period, statistic: cloudwatch.Stats.SUM }),
    );
  }

  private roundStateMachine(maxConcurrency: number, retention: logs.RetentionDays, rate: Duration): sfn.StateMachine {
    const invoke = (name: string, payload: Record<string, unknown>, options: Partial<tasks.LambdaInvokeProps>, functionRetries: number): tasks.LambdaInvoke => {
      const task = new tasks.LambdaInvoke(this, name, {
        lambdaFunction: this.fn,
        payload: sfn.TaskInput.fromObject(payload),
        retryOnServiceExceptions: false,
        ...options,
      });
      task.addRetry({
        errors: LAMBDA_SERVICE_ERRORS,
        interval: Duration.seconds(2),
        backoffRate: 2,
        maxAttempts: 6,
        maxDelay: Duration.minutes(1),
        jitterStrategy: sfn.JitterType.FULL,
      });
      if (functionRetries > 0)
        task.addRetry({
          errors: [sfn.Errors.TASKS_FAILED],
          interval: Duration.seconds(10),
          backoffRate: 2,
          maxAttempts: functionRetries,
          jitterStrategy: sfn.JitterType.FULL,
        });
      return task;
    };

    // Plan and Finish read (Finish rewrites the snapshot whole): retried. A batch is not (see above).
    const plan = invoke(
      'Plan',
      { action: 'plan' },
      {
        comment: 'Lists the hosted servers and cuts them into batches',
        resultSelector: { 'total.$': '$.Payload.total', 'batches.$': '$.Payload.batches' },
        resultPath: '$.plan',
      },
      2,
    );
    const batch = invoke(
      'Batch',
      { action: 'batch', offset: sfn.JsonPath.numberAt('$.offset'), limit: sfn.JsonPath.numberAt('$.limit') },
      { comment: 'Checks one batch of servers and writes what it found', outputPath: '$.Payload' },
      0,
    );
    batch.addCatch(
      new sfn.Pass(this, 'Batch failed', {
        comment: 'Kept as a failed batch; Finish fails the round after the other batches',
        parameters: { failed: true, 'offset.$': '$.offset', 'error.$': '$.error.Error' },
      }),
      { errors: [sfn.Errors.ALL], resultPath: '$.error' },
    );
    const batches = new sfn.Map(this, 'Batches', {
      comment: 'Checks the batches of the round, a few at a time',
      itemsPath: '$.plan.batches',
      itemSelector: { offset: sfn.JsonPath.numberAt('$$.Map.Item.Value.offset'), limit: sfn.JsonPath.numberAt('$$.Map.Item.Value.limit') },
      maxConcurrency,
      resultPath: '$.results',
    });
    batches.itemProcessor(batch);
    const finish = invoke(
      'Finish',
      { action: 'finish', total: sfn.JsonPath.numberAt('$.plan.total'), results: sfn.JsonPath.listAt('$.results') },
      { comment: 'Sums the round, rebuilds the small-catalog snapshot, fails when a batch failed', outputPath: '$.Payload' },
      2,
    );

    const smLogs = new logs.LogGroup(this, 'StateMachineLogs', {
      logGroupName: `/aws/vendedlogs/states/${Names.uniqueResourceName(this, { maxLength: 200, separator: '-' })}`,
      retention,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    const tracing = functionDefaults(this).tracing ?? true;
    const stateMachine = new sfn.StateMachine(this, 'StateMachine', {
      comment: 'MCP catalog health check round: plan, batches (Map), finish',
      stateMachineType: sfn.StateMachineType.STANDARD,
      definitionBody: sfn.DefinitionBody.fromChainable(plan.next(batches).next(finish)),
      // Never two rounds at once for long: a round outlasting the rate times out (and alarms).
      timeout: rate,
      tracingEnabled: tracing,
      // Every state's events, without the payloads (a round's counts are in the function's logs).
      logs: { destination: smLogs, level: sfn.LogLevel.ALL, includeExecutionData: false },
    });
    acknowledgeStateMachine(stateMachine, this.fn, 'checks function', {
      tracing,
      whyUntraced:
        'The stage turned X-Ray off (tracing: false, a documented option); every round is logged to its log group and alarmed on failure and timeout, which is where a failed round is diagnosed.',
    });
    return stateMachine;
  }
}
