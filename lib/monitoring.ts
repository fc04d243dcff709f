/**
 * Alarms on every failure path, into one SNS topic, and one CloudWatch dashboard for the product.
 * Constructs hand what they want watched to a `Monitoring` (`watchFunction` takes any function,
 * `watchTable` any table…), so a construct added later gets its alarms in one line.
 * Why each threshold is what it is: README, "Deployment" → "Alarms".
 */
import { ArnFormat, Duration, Stack } from 'aws-cdk-lib';
import type * as apigwv2 from 'aws-cdk-lib/aws-apigatewayv2';
import type * as cloudfront from 'aws-cdk-lib/aws-cloudfront';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as actions from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as subscriptions from 'aws-cdk-lib/aws-sns-subscriptions';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import type * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { CRAWL_METRICS, EVENT_METRICS, REQUEST_METRICS } from '../lambdas/shared/observability/metric-names';
import type { AlarmSettings } from './alarm-settings';
import { acknowledge } from './nag';

export interface MonitoringProps {
  readonly settings?: AlarmSettings;
  /** EMF namespace of the application metrics (`McpCatalog/<stage>`). */
  readonly namespace: string;
  /** Encrypts the topic this construct creates (its key policy must let CloudWatch use it). @default - not encrypted */
  readonly encryptionKey?: kms.IKey;
  /** Name of the dashboard (account-global: carries the stage and region). Without it, no dashboard. */
  readonly dashboardName?: string;
  /** The topic ARN to use instead of `settings.topicArn` (the us-east-1 alarms take `usEast1TopicArn`). */
  readonly topicArn?: string;
}

export const FIVE_MINUTES = Duration.minutes(5);

/** The operations a table's system-errors alarm reads when the caller names none. */
const DEFAULT_TABLE_OPERATIONS = [dynamodb.Operation.GET_ITEM, dynamodb.Operation.PUT_ITEM, dynamodb.Operation.UPDATE_ITEM, dynamodb.Operation.QUERY];

/** The alarm topic, the alarms, and the dashboard they are drawn on. */
export class Monitoring extends Construct {
  readonly topic: sns.ITopic;
  readonly dashboard?: cloudwatch.Dashboard;
  readonly alarms: cloudwatch.Alarm[] = [];
  readonly settings: Required<Omit<AlarmSettings, 'topicArn' | 'emails' | 'usEast1TopicArn' | 'noSubscriberOnPurpose'>>;
  readonly namespace: string;
  private readonly action: cloudwatch.IAlarmAction;

  constructor(scope: Construct, id: string, props: MonitoringProps) {
    super(scope, id);
    const s = props.settings ?? {};
    this.namespace = props.namespace;
    this.settings = {
      faultRatePercent: s.faultRatePercent ?? 1,
      minRequests: s.minRequests ?? 20,
      p99LatencyMs: s.p99LatencyMs ?? 3000,
      functionErrors: s.functionErrors ?? 1,
      jvmMemoryPressurePercent: s.jvmMemoryPressurePercent ?? 80,
      freeStoragePercent: s.freeStoragePercent ?? 25,
      cpuCreditBalance: s.cpuCreditBalance ?? 20,
    };
    const existing = props.topicArn ?? s.topicArn;
    if (existing) {
      this.topic = sns.Topic.fromTopicArn(this, 'Topic', existing);
    } else {
      const topic = new sns.Topic(this, 'Topic', {
        displayName: 'MCP catalog alarms',
        enforceSSL: true,
        ...(props.encryptionKey && { masterKey: props.encryptionKey }),
      });
      // `enforceSSL` gives the topic a policy of its own, which replaces SNS's default one (that let
      // the account's principals and CloudWatch publish): every service that publishes here must be
      // allowed by name. CloudWatch, for this account's alarms only.
      this.allowPublishFrom(
        topic,
        'cloudwatch.amazonaws.com',
        Stack.of(this).formatArn({ service: 'cloudwatch', resource: 'alarm', resourceName: '*', arnFormat: ArnFormat.COLON_RESOURCE_NAME }),
      );
      // CloudWatch publishes to an encrypted topic only with the key's permission.
      props.encryptionKey?.grant(new iam.ServicePrincipal('cloudwatch.amazonaws.com'), 'kms:Decrypt', 'kms:GenerateDataKey*');
      if (!props.encryptionKey) {
        acknowledge(
          topic,
          'AwsSolutions-SNS2',
          'Alarm notifications carry alarm names and states only. Encrypting the topic needs a customer-managed key whose policy lets CloudWatch publish ($1 a month); pass encryptionKey to the stack and the topic uses it.',
        );
      }
      for (const email of s.emails ?? []) topic.addSubscription(new subscriptions.EmailSubscription(email));
      for (const sub of topic.node.findAll()) {
        if (sub instanceof sns.Subscription) {
          acknowledge(
            sub,
            'Serverless-SNSRedrivePolicy',
            'An email subscription of the alarm topic: SNS retries email delivery on its own, and a notification that is never delivered stays visible as the alarm state and history in CloudWatch, which is the record an operator acts on.',
          );
        }
      }
      this.topic = topic;
    }
    this.action = new actions.SnsAction(this.topic);
    if (props.dashboardName) {
      this.dashboard = new cloudwatch.Dashboard(this, 'Dashboard', { dashboardName: props.dashboardName, defaultInterval: Duration.hours(6) });
    }
  }

  /**
   * Lets an AWS service publish to the topic this construct created, on behalf of this account only
   * (`aws:SourceAccount`) and, when given, only for resources matching `sourceArn` (the confused-
   * deputy conditions). An existing topic (`topicArn`) keeps the policy its owner gave it.
   */
  allowPublish(service: string, sourceArn?: string): void {
    if (this.topic instanceof sns.Topic) this.allowPublishFrom(this.topic, service, sourceArn);
  }

  private allowPublishFrom(topic: sns.Topic, service: string, sourceArn?: string): void {
    topic.addToResourcePolicy(
      new iam.PolicyStatement({
        sid: `Publish-${service.split('.')[0]}`,
        principals: [new iam.ServicePrincipal(service)],
        actions: ['sns:Publish'],
        resources: [topic.topicArn],
        conditions: {
          StringEquals: { 'aws:SourceAccount': Stack.of(this).account },
          ...(sourceArn && { ArnLike: { 'aws:SourceArn': sourceArn } }),
        },
      }),
    );
  }

  /** An alarm that notifies the topic when it fires and when it recovers. */
  alarm(id: string, props: cloudwatch.AlarmProps): cloudwatch.Alarm {
    const alarm = new cloudwatch.Alarm(this, id, { actionsEnabled: true, ...props });
    this.adopt(alarm);
    return alarm;
  }

  /** Sends an alarm made elsewhere (the crawler's) to the topic too. */
  adopt(alarm: cloudwatch.Alarm): void {
    alarm.addAlarmAction(this.action);
    alarm.addOkAction(this.action);
    this.alarms.push(alarm);
  }

  /** Rows on the dashboard (none without one). */
  widgets(...w: cloudwatch.IWidget[]): void {
    this.dashboard?.addWidgets(...w);
  }

  /** Errors and throttles of any function, and its row on the dashboard. */
  watchFunction(name: string, fn: lambda.IFunction, opts: { errors?: number } = {}): cloudwatch.Alarm[] {
    const errors = this.alarm(`${name}Errors`, {
      alarmDescription: `${name}: the function failed (an unhandled error or a timeout) ${opts.errors ?? this.settings.functionErrors} time(s) or more in 5 minutes; its logs say which request`,
      metric: fn.metricErrors({ period: FIVE_MINUTES, statistic: cloudwatch.Stats.SUM }),
      threshold: opts.errors ?? this.settings.functionErrors,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    const throttles = this.alarm(`${name}Throttles`, {
      alarmDescription: `${name}: requests were throttled: the function reached its reserved concurrency (raise reservedConcurrency) or the account's limit`,
      metric: fn.metricThrottles({ period: FIVE_MINUTES, statistic: cloudwatch.Stats.SUM }),
      threshold: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    this.widgets(
      new cloudwatch.GraphWidget({
        title: `${name}: invocations, errors, throttles`,
        left: [fn.metricInvocations({ statistic: 'Sum' }), fn.metricErrors({ statistic: 'Sum' }), fn.metricThrottles({ statistic: 'Sum' })],
        width: 8,
      }),
      new cloudwatch.GraphWidget({
        title: `${name}: duration p50 / p99 (ms)`,
        left: [fn.metricDuration({ statistic: 'p50' }), fn.metricDuration({ statistic: 'p99' })],
        width: 8,
      }),
      new cloudwatch.GraphWidget({
        title: `${name}: concurrent executions`,
        left: [fn.metric('ConcurrentExecutions', { statistic: 'Maximum' })],
        width: 8,
      }),
    );
    return [errors, throttles];
  }

  /** A fault rate in percent of requests, judged only over `minRequests` requests. */
  private faultRate(label: string, faults: cloudwatch.IMetric, requests: cloudwatch.IMetric): cloudwatch.MathExpression {
    return new cloudwatch.MathExpression({
      label,
      expression: `IF(FILL(requests, 0) >= ${this.settings.minRequests}, 100 * FILL(faults, 0) / requests, 0)`,
      usingMetrics: { faults, requests },
      period: FIVE_MINUTES,
    });
  }

  /** 5xx rate and p99 latency of an HTTP API (API Gateway's own metrics: every route, every function behind it). */
  watchHttpApi(name: string, api: apigwv2.IHttpApi): cloudwatch.Alarm[] {
    const rate = this.faultRate(
      `${name} 5xx %`,
      api.metricServerError({ statistic: 'Sum', period: FIVE_MINUTES }),
      api.metricCount({ statistic: 'Sum', period: FIVE_MINUTES }),
    );
    const faults = this.alarm(`${name}FaultRate`, {
      alarmDescription: `${name}: more than ${this.settings.faultRatePercent}% of requests answered 5xx over 5 minutes (at least ${this.settings.minRequests} requests)`,
      metric: rate,
      threshold: this.settings.faultRatePercent,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    const latency = this.alarm(`${name}P99Latency`, {
      alarmDescription: `${name}: p99 latency above ${this.settings.p99LatencyMs} ms for 15 minutes`,
      metric: api.metricLatency({ statistic: 'p99', period: FIVE_MINUTES }),
      threshold: this.settings.p99LatencyMs,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 3,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    this.widgets(
      new cloudwatch.GraphWidget({
        title: `${name}: requests, 4xx, 5xx`,
        left: [api.metricCount({ statistic: 'Sum' }), api.metricClientError({ statistic: 'Sum' }), api.metricServerError({ statistic: 'Sum' })],
        width: 12,
      }),
      new cloudwatch.GraphWidget({
        title: `${name}: latency p50 / p99 (ms)`,
        left: [api.metricLatency({ statistic: 'p50' }), api.metricLatency({ statistic: 'p99' })],
        width: 12,
      }),
    );
    return [faults, latency];
  }

  /** 5xx rate of a function URL (the MCP endpoint): function errors, throttles and timeouts surface there. */
  watchFunctionUrl(name: string, fn: lambda.IFunction): cloudwatch.Alarm {
    const url = (metric: string) => fn.metric(metric, { statistic: 'Sum', period: FIVE_MINUTES });
    const alarm = this.alarm(`${name}UrlFaultRate`, {
      alarmDescription: `${name}: more than ${this.settings.faultRatePercent}% of function URL requests answered 5xx over 5 minutes (at least ${this.settings.minRequests} requests)`,
      metric: this.faultRate(`${name} URL 5xx %`, url('Url5xxCount'), url('UrlRequestCount')),
      threshold: this.settings.faultRatePercent,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    this.widgets(
      new cloudwatch.GraphWidget({
        title: `${name} function URL: requests, 4xx, 5xx`,
        left: [url('UrlRequestCount'), url('Url4xxCount'), url('Url5xxCount')],
        width: 24,
      }),
    );
    return alarm;
  }

  /**
   * Throttled requests and system errors of a table (on-demand tables throttle only past their
   * account or partition limits). DynamoDB publishes system errors per operation, and each metric an
   * alarm reads is billed, so the alarm reads the operations the table is used with.
   */
  watchTable(name: string, table: dynamodb.ITable, operations: dynamodb.Operation[] = DEFAULT_TABLE_OPERATIONS): cloudwatch.Alarm[] {
    const throttled = new cloudwatch.MathExpression({
      label: `${name}: throttle events`,
      expression: 'FILL(r, 0) + FILL(w, 0)',
      usingMetrics: {
        r: table.metric('ReadThrottleEvents', { statistic: 'Sum', period: FIVE_MINUTES }),
        w: table.metric('WriteThrottleEvents', { statistic: 'Sum', period: FIVE_MINUTES }),
      },
      period: FIVE_MINUTES,
    });
    const throttles = this.alarm(`${name}Throttles`, {
      alarmDescription: `${name} table: reads or writes were throttled`,
      metric: throttled,
      threshold: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    const systemErrors = this.alarm(`${name}SystemErrors`, {
      alarmDescription: `${name} table: DynamoDB answered requests with a 500 (a service-side error)`,
      metric: table.metricSystemErrorsForOperations({ operations, period: FIVE_MINUTES }),
      threshold: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    this.widgets(
      new cloudwatch.GraphWidget({
        title: `${name} table: consumed capacity, throttles`,
        left: [table.metricConsumedReadCapacityUnits({ statistic: 'Sum' }), table.metricConsumedWriteCapacityUnits({ statistic: 'Sum' })],
        right: [throttled],
        width: 12,
      }),
    );
    return [throttles, systemErrors];
  }

  /** Messages waiting in a dead-letter queue. */
  watchQueue(name: string, queue: sqs.IQueue): cloudwatch.Alarm {
    return this.alarm(`${name}Depth`, {
      alarmDescription: `${name}: messages are waiting in the queue`,
      metric: queue.metricApproximateNumberOfMessagesVisible({ statistic: 'Maximum', period: FIVE_MINUTES }),
      threshold: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
  }

  /**
   * No successful crawl for two schedule periods: the finalize step counts `CrawlsSucceeded`, and
   * its absence is the alarm (missing data breaches). CloudWatch judges at most a day per period,
   * so a longer window is split into whole days.
   */
  watchCrawlFreshness(schedule: Duration, stateMachine: sfn.IStateMachine): cloudwatch.Alarm {
    const window = schedule.toSeconds() * 2;
    const day = 86_400;
    const period = Duration.seconds(Math.min(window, day));
    const periods = window <= day ? 1 : Math.ceil(window / day);
    const succeeded = this.appMetric(CRAWL_METRICS.succeeded, 'crawler', { statistic: 'Sum', period });
    const alarm = this.alarm('CrawlStale', {
      alarmDescription: `No crawl finished in ${Duration.seconds(window).toHumanString()} (two schedule periods): the catalog is getting stale. Look at the state machine's executions and the dead-letter queue`,
      metric: succeeded,
      threshold: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.LESS_THAN_THRESHOLD,
      evaluationPeriods: periods,
      treatMissingData: cloudwatch.TreatMissingData.BREACHING,
    });
    this.widgets(
      new cloudwatch.GraphWidget({
        title: 'Crawler: executions started, succeeded, failed',
        left: [
          stateMachine.metricStarted({ statistic: 'Sum' }),
          stateMachine.metricSucceeded({ statistic: 'Sum' }),
          stateMachine.metricFailed({ statistic: 'Sum' }),
        ],
        width: 8,
      }),
      new cloudwatch.GraphWidget({
        title: 'Crawler: servers added, updated, removed, rejected',
        left: [CRAWL_METRICS.added, CRAWL_METRICS.updated, CRAWL_METRICS.removed, CRAWL_METRICS.rejected].map((n) =>
          this.appMetric(n, 'crawler', { statistic: 'Sum' }),
        ),
        width: 8,
      }),
      new cloudwatch.GraphWidget({
        title: 'Crawler: freshness (s since the last crawl), health checks',
        left: [this.appMetric(CRAWL_METRICS.freshnessSeconds, 'crawler', { statistic: 'Maximum' })],
        right: [CRAWL_METRICS.healthLive, CRAWL_METRICS.healthAuthRequired, CRAWL_METRICS.healthDown].map((n) =>
          this.appMetric(n, 'crawler', { statistic: 'Sum' }),
        ),
        width: 8,
      }),
    );
    return alarm;
  }

  /** CloudFront's 5xx rate (only in a us-east-1 stack: CloudFront publishes its metrics there). */
  watchDistribution(distribution: cloudfront.IDistribution): cloudwatch.Alarm {
    const region = Stack.of(this).region;
    if (region !== 'us-east-1') throw new Error(`CloudFront alarms must be in us-east-1, where its metrics are; this stack is in ${region}`);
    const metric = (name: string, statistic: string) =>
      new cloudwatch.Metric({
        namespace: 'AWS/CloudFront',
        metricName: name,
        dimensionsMap: { DistributionId: distribution.distributionId, Region: 'Global' },
        statistic,
        period: FIVE_MINUTES,
      });
    return this.alarm('CdnFaultRate', {
      alarmDescription: `CloudFront: more than ${this.settings.faultRatePercent}% of viewer requests answered 5xx over 5 minutes (at least ${this.settings.minRequests} requests)`,
      metric: new cloudwatch.MathExpression({
        label: 'CloudFront 5xx %',
        expression: `IF(FILL(requests, 0) >= ${this.settings.minRequests}, FILL(rate, 0), 0)`,
        usingMetrics: { rate: metric('5xxErrorRate', 'Average'), requests: metric('Requests', 'Sum') },
        period: FIVE_MINUTES,
      }),
      threshold: this.settings.faultRatePercent,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
  }

  /** CloudFront's graphs on this stack's dashboard (a dashboard may show another region's metrics). */
  showDistribution(distribution: cloudfront.IDistribution): void {
    const metric = (name: string, statistic: string) =>
      new cloudwatch.Metric({
        namespace: 'AWS/CloudFront',
        metricName: name,
        dimensionsMap: { DistributionId: distribution.distributionId, Region: 'Global' },
        statistic,
        region: 'us-east-1',
      });
    this.widgets(
      new cloudwatch.GraphWidget({ title: 'CloudFront: requests', left: [metric('Requests', 'Sum')], width: 12 }),
      new cloudwatch.GraphWidget({
        title: 'CloudFront: 4xx / 5xx error rate (%)',
        left: [metric('4xxErrorRate', 'Average'), metric('5xxErrorRate', 'Average')],
        width: 12,
      }),
    );
  }

  /** The application's own metrics (EMF) of the pipeline and the memory core, per service. */
  showApplication(services: string[]): void {
    const events = [
      EVENT_METRICS.rateLimited,
      EVENT_METRICS.authFailures,
      EVENT_METRICS.authUnavailable,
      EVENT_METRICS.originRefused,
      EVENT_METRICS.ifMatchConflicts,
      EVENT_METRICS.rebaseRetries,
      EVENT_METRICS.credentialRefusals,
    ];
    this.widgets(
      new cloudwatch.GraphWidget({
        title: 'Application: rate-limit denials, auth failures and 503s, origin refusals',
        left: services.flatMap((svc) => events.slice(0, 4).map((n) => this.appMetric(n, svc, { statistic: 'Sum', label: `${svc} ${n}` }))),
        width: 12,
      }),
      new cloudwatch.GraphWidget({
        title: 'Memory: If-Match conflicts, rebase retries, credential refusals',
        left: ['memory', 'mcp'].flatMap((svc) => events.slice(4).map((n) => this.appMetric(n, svc, { statistic: 'Sum', label: `${svc} ${n}` }))),
        width: 12,
      }),
      // One line per route of each service (SEARCH finds the routes that have had traffic).
      new cloudwatch.GraphWidget({
        title: `Request latency p99 per route (${REQUEST_METRICS.latency})`,
        left: services.map(
          (svc) =>
            new cloudwatch.MathExpression({
              label: '',
              expression: `SEARCH('{${this.namespace},route,service} MetricName="${REQUEST_METRICS.latency}" service="${svc}"', 'p99', 300)`,
              usingMetrics: {},
              period: FIVE_MINUTES,
            }),
        ),
        width: 24,
      }),
    );
  }

  /** A metric of the application's namespace for one service (dimension `service`). */
  appMetric(name: string, service: string, options: cloudwatch.MetricOptions = {}): cloudwatch.Metric {
    return new cloudwatch.Metric({ namespace: this.namespace, metricName: name, dimensionsMap: { service }, ...options });
  }
}
