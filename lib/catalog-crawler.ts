import * as path from 'node:path';
import { Annotations, CfnDeletionPolicy, Duration, RemovalPolicy, type CfnResource } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as scheduler from 'aws-cdk-lib/aws-scheduler';
import * as schedulerTargets from 'aws-cdk-lib/aws-scheduler-targets';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import type * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { ENRICH_STEPS, type EnrichStep } from '../lambdas/crawler/domain/types';
import type { CatalogData } from './catalog-data';
import { appFunction, functionDefaults, type FunctionLogLevel } from './lambda-function';
import { acknowledge, nagFlatten, nagRef } from './nag';
import { CRAWL_STATE_TABLE } from '../lambdas/crawler/tables';
import { sharpLayer, type SharpLayerSource } from './crawler/sharp-layer';
import { crawlStateMachine } from './crawler/state-machine';
import { whenAny } from './alarms';
import { grantTable, tableKeys } from './tables';

export interface CatalogCrawlerProps {
  /** The catalog table, icons bucket and search engine (domain or snapshot bucket) the crawler fills. */
  readonly data: CatalogData;
  /**
   * How often the schedule starts a crawl (EventBridge Scheduler `rate(...)`, whole minutes).
   * Runs are incremental (`updated_since` the last high-water mark), so a short rate is cheap.
   * @default Duration.hours(6)
   */
  readonly schedule?: Duration;
  /**
   * Whether the schedule is enabled. A disabled schedule still lets the state machine be started by
   * hand (input `{"mode": "full"}` forces a full crawl).
   * @default true
   */
  readonly scheduleEnabled?: boolean;
  /**
   * Upstream registry (REGISTRY_URL).
   * @default 'https://registry.modelcontextprotocol.io'
   */
  readonly registryUrl?: string;
  /**
   * Secrets Manager secret holding a GitHub token (a plain string or JSON `{"token": "…"}`);
   * the function may read it (GITHUB_TOKEN_SECRET_ARN). Without a token GitHub allows 60 requests
   * an hour, far too few for a first crawl; ETag revalidation keeps later runs cheap either way.
   * @default - `githubTokenSecretName`, else no token (a synth warning)
   */
  readonly githubTokenSecret?: secretsmanager.ISecret;
  /**
   * The name of that secret in this account and region, e.g. `mcp-catalog/github-token`: created
   * by the operator (README, "Deployment"), never by the stack, so the token is never in a template.
   * @default - no token, unless `githubTokenSecret` is given
   */
  readonly githubTokenSecretName?: string;
  /**
   * The sharp layer (`/opt/nodejs/node_modules/sharp` for linux-arm64 glibc): `build` (synth
   * installs it, cached per version, see lib/crawler/sharp-layer.ts), `skip` (an empty placeholder
   * and the `icon` step off: infrastructure tests), or a layer of your own.
   * @default 'build' (an install that fails, e.g. offline, falls back to `skip` with a warning)
   */
  readonly sharpLayer?: SharpLayerSource;
  /** Where built layers are cached between synths. @default node_modules/.cache/mcp-catalog */
  readonly sharpLayerCacheDir?: string;
  /** The npm executable that builds the layer (e.g. a wrapper that sets a proxy). @default 'npm' */
  readonly sharpLayerNpm?: string;
  /**
   * Reserved concurrency of the crawler function: its Map state runs `maxConcurrency` units at
   * once, plus plan and finalize.
   * @default - unreserved; `CatalogStack` reserves maxConcurrency + 2
   */
  readonly reservedConcurrentExecutions?: number;
  /**
   * Enrichment steps to run (CRAWLER_STEPS); an empty list runs none.
   * @default - all steps (all but `icon` while the sharp layer is the placeholder)
   */
  readonly steps?: EnrichStep[];
  /**
   * Units (pages of upstream rows) crawled in parallel by the state machine's Map state. Each
   * unit runs its own per-host limits, so this also bounds the load on GitHub, npm and PyPI.
   * @default 4
   */
  readonly maxConcurrency?: number;
  /**
   * Memory of the crawler function, in MB (sharp and the per-unit enrichment concurrency want
   * some; arm64 CPU share grows with it).
   * @default 1024
   */
  readonly memorySize?: number;
  /**
   * Attempts after the first when a task's function fails or times out (Plan, each Unit, Finalize;
   * every task is idempotent). Lambda service errors and throttling are retried separately.
   * @default 3
   */
  readonly taskRetries?: number;
  /**
   * Name of the OpenSearch index (or alias) the crawler writes (OPENSEARCH_INDEX); must be the one
   * the catalog API reads.
   * @default 'catalog'
   */
  readonly searchIndex?: string;
  /**
   * Removal policy of the crawl-state table (slug ownership lives there: losing it would let slugs
   * move between names). With RETAIN the table also gets deletion protection.
   * @default - the same as the catalog table of `data`
   */
  readonly removalPolicy?: RemovalPolicy;
  /**
   * Limit on one execution. A timed-out execution is reported by an extra alarm on
   * ExecutionsTimedOut; the next run resumes its crawl.
   * @default - none: every task has its own timeout and bounded retries
   */
  readonly executionTimeout?: Duration;
  /**
   * Retention of the function's and the state machine's logs (operational data: they go with the
   * stack).
   * @default RetentionDays.ONE_MONTH
   */
  readonly logRetention?: logs.RetentionDays;
  /**
   * Level of the function's structured logs (LOG_LEVEL).
   * @default 'INFO'
   */
  readonly logLevel?: FunctionLogLevel;
  /**
   * Actions of the two alarms (failed run, dead-lettered message), e.g. an SNS topic action.
   * @default - none: the alarms are visible in CloudWatch only
   */
  readonly alarmActions?: cloudwatch.IAlarmAction[];
  /**
   * More environment variables of the function (CRAWLER_* limits, GITHUB_API_URL, …; see
   * lambdas/crawler/config.ts). They override the ones this construct sets.
   * @default - none
   */
  readonly environment?: Record<string, string>;
  /**
   * The crawler Lambda's entry file; it must export `handler` (`{ action: 'plan' | 'unit' | 'finalize' }`).
   * @default lambdas/crawler/handler.ts
   */
  readonly entry?: string;
}

const DEFAULT_ENTRY = path.join(__dirname, '..', 'lambdas', 'crawler', 'handler.ts');
const DEFAULT_REGISTRY_URL = 'https://registry.modelcontextprotocol.io';

/**
 * The crawler in AWS: an EventBridge Scheduler schedule starts a Step Functions state machine that
 * drives one Lambda function (`lambdas/crawler/handler.ts`) through its three actions:
 *
 *   Mode given? ─▶ Plan ◀─(planned = false)─┐        (execution input `{"mode": "full"}` forces
 *                   └──▶ Planned? ──────────┘         a full crawl; the schedule sends `auto`)
 *                           │ planned = true
 *                           ▼
 *                   Map over units (maxConcurrency, retries with backoff + jitter) ─▶ Unit
 *                           ▼
 *                        Finalize
 *
 * Any failure (after retries) is caught around the whole flow: the execution's input and the error
 * go to an SQS dead-letter queue, then the execution fails. The crawl itself is never lost: the run
 * stays current in the crawl-state table and the next execution resumes it (Plan returns the units
 * still pending). Schedule deliveries that fail land in the same queue. Alarms watch failed
 * executions and the queue.
 *
 * Overlapping executions (a run outlasting the schedule rate, a manual start) are safe rather than
 * prevented: only one crawl run is current at a time (a conditional write in the crawl state), so
 * a second execution's Plan resumes the same run id, units already done are no-ops, a unit run
 * twice writes nothing the second time (unchanged content is not written), and Finalize of a
 * finished run returns the stored report. Keep the rate well above a typical run's duration
 * (minutes for an incremental run) to avoid doing the same work twice.
 *
 * Limits: the inline Map keeps the units of one run in the execution state (256 KB, about 3,000
 * units) and history (25,000 events); a 10,000-server crawl is about 100-200 units.
 */
export class CatalogCrawler extends Construct {
  /** The crawl state (`pk`, `sk`; TTL `expiresAt`), as `crawlerTableDefinitions` declares it. */
  readonly stateTable: dynamodb.Table;
  readonly fn: NodejsFunction;
  readonly role: iam.Role;
  readonly sharpLayer: lambda.ILayerVersion;
  /** False when the function got the empty placeholder layer (icons cannot be re-encoded). */
  readonly sharpAvailable: boolean;
  readonly stateMachine: sfn.StateMachine;
  /** Failed executions (input + error) and failed schedule deliveries. */
  readonly deadLetterQueue: sqs.Queue;
  readonly schedule: scheduler.Schedule;
  /** At least one execution failed in the period. */
  readonly failedRunsAlarm: cloudwatch.Alarm;
  /** The dead-letter queue holds a message. */
  readonly deadLetterAlarm: cloudwatch.Alarm;
  /** Only with `executionTimeout`. */
  readonly timedOutRunsAlarm?: cloudwatch.Alarm;

  constructor(scope: Construct, id: string, props: CatalogCrawlerProps) {
    super(scope, id);
    const { data } = props;
    const retention = props.logRetention ?? functionDefaults(this).logRetention ?? logs.RetentionDays.ONE_MONTH;
    const maxConcurrency = props.maxConcurrency ?? 4;
    if (!Number.isInteger(maxConcurrency) || maxConcurrency < 1) throw new Error(`maxConcurrency must be a whole number >= 1, got ${maxConcurrency}`);
    const taskRetries = props.taskRetries ?? 3;
    if (!Number.isInteger(taskRetries) || taskRetries < 0) throw new Error(`taskRetries must be a whole number >= 0, got ${taskRetries}`);
    const rate = props.schedule ?? Duration.hours(6);
    if (rate.toSeconds() < 60 || rate.toSeconds() % 60 !== 0) throw new Error(`schedule must be a whole number of minutes >= 1, got ${rate.toHumanString()}`);

    // --- Crawl state -------------------------------------------------------------------------
    const removalPolicy = props.removalPolicy ?? removalPolicyOf(data.catalogTable);
    const key = data.catalogTable.encryptionKey;
    this.stateTable = new dynamodb.Table(this, 'StateTable', {
      ...tableKeys(CRAWL_STATE_TABLE),
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      ...(key ? { encryption: dynamodb.TableEncryption.CUSTOMER_MANAGED, encryptionKey: key } : { encryption: dynamodb.TableEncryption.AWS_MANAGED }),
      deletionProtection: removalPolicy === RemovalPolicy.RETAIN,
      removalPolicy,
    });

    // --- Function ----------------------------------------------------------------------------
    ({ layer: this.sharpLayer, available: this.sharpAvailable } = sharpLayer(this, props.sharpLayer ?? 'build', {
      ...(props.sharpLayerCacheDir && { cacheDir: props.sharpLayerCacheDir }),
      ...(props.sharpLayerNpm && { npm: props.sharpLayerNpm }),
    }));
    const githubToken =
      props.githubTokenSecret ??
      (props.githubTokenSecretName ? secretsmanager.Secret.fromSecretNameV2(this, 'GithubToken', props.githubTokenSecretName) : undefined);
    if (!githubToken) {
      Annotations.of(this).addWarningV2(
        'mcp-catalog:crawler-github-unauthenticated',
        'The crawler calls GitHub without a token (60 requests an hour, too few for a first crawl): create a Secrets Manager secret with a token and set githubTokenSecretName (README, "Deployment").',
      );
    }

    const steps = props.steps ?? (this.sharpAvailable ? undefined : ENRICH_STEPS.filter((s) => s !== 'icon'));
    const environment: Record<string, string> = {
      REGISTRY_URL: props.registryUrl ?? DEFAULT_REGISTRY_URL,
      CRAWL_STATE_TABLE: this.stateTable.tableName,
      CATALOG_TABLE: data.catalogTable.tableName,
      ...data.trustEnvironment(),
      ICONS_BUCKET: data.iconsBucket.bucketName,
      ...data.searchEnvironment(props.searchIndex ?? 'catalog'),
      ...(githubToken && { GITHUB_TOKEN_SECRET_ARN: githubToken.secretArn }),
      ...(steps && { CRAWLER_STEPS: steps.length === 0 ? 'none' : steps.join(',') }),
      // Last, so they override the variables above and appFunction's LOG_LEVEL, POWERTOOLS_SERVICE_NAME, NODE_OPTIONS.
      ...props.environment,
    };

    ({ fn: this.fn, role: this.role } = appFunction(this, 'Function', {
      description: 'MCP catalog crawler: plan, unit and finalize actions of the crawl state machine',
      roleDescription: 'Catalog crawler: writes the catalog, crawl state, icons and search index',
      entry: props.entry ?? DEFAULT_ENTRY,
      memorySize: props.memorySize ?? 1024,
      timeout: Duration.minutes(15),
      reservedConcurrentExecutions: props.reservedConcurrentExecutions,
      logRetention: retention,
      logLevel: props.logLevel,
      serviceName: 'crawler',
      invokedBy: 'the crawl state machine (Step Functions tasks with retries; a failed execution goes to the crawl dead-letter queue)',
      environment,
      layers: [this.sharpLayer],
      bundling: {
        // The SDK is in the runtime; sharp is a native module and comes from the layer.
        externalModules: ['@aws-sdk/*', '@smithy/*', 'sharp'],
        // `import('sharp')` (and the lazily loaded S3 client) as require(): CommonJS resolution
        // searches NODE_PATH, which is how /opt/nodejs/node_modules (the layer) is found.
        esbuildArgs: { '--supported:dynamic-import': 'false' },
      },
    }));

    // Least privilege: exactly the DynamoDB operations of the adapters the crawler uses (keep in
    // step with them). Catalog (DynamoCatalogStore get/put/delete): Query, GetItem, BatchWriteItem.
    // Crawl state (DynamoCrawlState): Get/Put/BatchGet/BatchWrite, Query, Scan, and the Put and
    // Update items of its transactions.
    // The small-catalog mode rebuilds the snapshot from a Scan of the catalog at finalize.
    grantTable(data.catalogTable, this.role, [
      'dynamodb:GetItem',
      'dynamodb:Query',
      'dynamodb:BatchWriteItem',
      ...(data.searchEngine === 'embedded' ? ['dynamodb:Scan'] : []),
    ]);
    // Trust (DynamoTrustStore.putChanges): the changelog entries of a unit's writes, one batch.
    grantTable(data.trustTable, this.role, ['dynamodb:BatchWriteItem']);
    grantTable(this.stateTable, this.role, [
      'dynamodb:GetItem',
      'dynamodb:BatchGetItem',
      'dynamodb:Query',
      'dynamodb:Scan',
      'dynamodb:PutItem',
      'dynamodb:UpdateItem',
      'dynamodb:BatchWriteItem',
    ]);
    // Icons live under api/icons/ (write-once: HEAD then PUT); HEAD needs GetObject, and
    // ListBucket makes a missing key a 404 rather than a 403.
    this.role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['s3:GetObject', 's3:PutObject'],
        resources: [data.iconsBucket.arnForObjects('api/icons/*')],
      }),
    );
    this.role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['s3:ListBucket'],
        resources: [data.iconsBucket.bucketArn],
      }),
    );
    acknowledge(
      this.role,
      `AwsSolutions-IAM5[Resource::${nagRef(data.iconsBucket, 'Arn')}/api/icons/*]`,
      'The crawler stores one icon per slug under the api/icons/ prefix of the icons bucket (checks for it, then writes it once), so it reads and writes objects under that one prefix of one bucket.',
    );
    data.grantSearch(this.role, 'readwrite');
    if (githubToken) {
      githubToken.grantRead(this.role);
      if (!props.githubTokenSecret) {
        acknowledge(
          this.role,
          `AwsSolutions-IAM5[Resource::${nagFlatten(this, githubToken.secretArn)}-??????]`,
          'The GitHub token secret is named by the operator (githubTokenSecretName) and created outside the stack; Secrets Manager appends six random characters to a name in its ARN, so the read grant names the secret with that suffix, read-only.',
        );
      }
    }

    // --- State machine -----------------------------------------------------------------------
    this.deadLetterQueue = new sqs.Queue(this, 'DeadLetterQueue', {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    acknowledge(
      this.deadLetterQueue,
      'AwsSolutions-SQS3',
      'This queue is the dead-letter queue of the crawl: failed executions (input and error) and failed schedule deliveries land here for inspection and an alarm; nothing consumes it automatically, so it needs no dead-letter queue of its own.',
    );
    acknowledge(
      this.deadLetterQueue,
      'Serverless-SQSRedrivePolicy',
      'This queue is itself the dead-letter queue of the crawl; nothing consumes it, so no message is ever redriven from it (an operator reads it, alarmed on its depth).',
    );

    this.stateMachine = crawlStateMachine(this, {
      fn: this.fn,
      deadLetterQueue: this.deadLetterQueue,
      maxConcurrency,
      taskRetries,
      logRetention: retention,
      executionTimeout: props.executionTimeout,
    });

    // --- Schedule ----------------------------------------------------------------------------
    this.schedule = new scheduler.Schedule(this, 'Schedule', {
      description: `Starts the MCP catalog crawl every ${rate.toHumanString()}`,
      schedule: scheduler.ScheduleExpression.rate(rate),
      enabled: props.scheduleEnabled ?? true,
      target: new schedulerTargets.StepFunctionsStartExecution(this.stateMachine, {
        input: scheduler.ScheduleTargetInput.fromObject({ mode: 'auto' }),
        deadLetterQueue: this.deadLetterQueue,
        retryAttempts: 3,
        maxEventAge: Duration.hours(1),
      }),
    });

    // --- Alarms ------------------------------------------------------------------------------
    const period = Duration.minutes(5);
    this.failedRunsAlarm = whenAny(
      this,
      'FailedRunsAlarm',
      'A crawl execution failed (its input and error are in the crawler dead-letter queue; the next run resumes the crawl)',
      this.stateMachine.metricFailed({ period, statistic: cloudwatch.Stats.SUM }),
    );
    this.deadLetterAlarm = whenAny(
      this,
      'DeadLetterAlarm',
      'The crawler dead-letter queue holds failed executions or undelivered schedule events',
      this.deadLetterQueue.metricApproximateNumberOfMessagesVisible({ period, statistic: cloudwatch.Stats.MAXIMUM }),
    );
    if (props.executionTimeout) {
      this.timedOutRunsAlarm = whenAny(
        this,
        'TimedOutRunsAlarm',
        'A crawl execution timed out (the next run resumes the crawl)',
        this.stateMachine.metricTimedOut({ period, statistic: cloudwatch.Stats.SUM }),
      );
    }
    for (const action of props.alarmActions ?? []) {
      for (const alarm of [this.failedRunsAlarm, this.deadLetterAlarm, this.timedOutRunsAlarm]) alarm?.addAlarmAction(action);
    }
  }
}

/** The removal policy a table was given, read back from its CloudFormation deletion policy. */
function removalPolicyOf(table: dynamodb.Table): RemovalPolicy {
  const policy = (table.node.defaultChild as CfnResource).cfnOptions.deletionPolicy;
  switch (policy) {
    case CfnDeletionPolicy.DELETE:
      return RemovalPolicy.DESTROY;
    case CfnDeletionPolicy.SNAPSHOT:
      return RemovalPolicy.SNAPSHOT;
    case CfnDeletionPolicy.RETAIN_EXCEPT_ON_CREATE:
      return RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE;
    default:
      return RemovalPolicy.RETAIN;
  }
}

export { sharpLayerState } from './crawler/sharp-layer';
