/**
 * The settings of a stage's alarms (`bin/stages.ts`, `alarms`) and the check that they reach
 * someone, shared by the stack (`Monitoring`), its synth warning and `npm run preflight`.
 */

/** Where alarms go and when they fire. Every field has a documented default. */
export interface AlarmSettings {
  /**
   * ARN of an existing SNS topic in the stack's region to send alarms to (e.g. one wired to a
   * pager). With it, no topic is created.
   * @default - a topic of this stack
   */
  readonly topicArn?: string;
  /**
   * Email addresses subscribed to the topic this stack creates (each confirms once by email).
   * @default - none: a synth warning, and `npm run preflight` fails, unless `noSubscriberOnPurpose`
   */
  readonly emails?: string[];
  /**
   * The stage's alarms reach no one and that is meant (a developer's stage; or subscriptions made
   * by hand after the deploy): no synth warning, and `npm run preflight` passes.
   * @default false
   */
  readonly noSubscriberOnPurpose?: boolean;
  /**
   * The same for CloudFront's alarms, which live in us-east-1 (its metrics exist only there) when
   * the stack is in another region: an existing topic in us-east-1.
   * @default - a topic of the us-east-1 alarms stack, with `emails` subscribed
   */
  readonly usEast1TopicArn?: string;
  /** Share of requests answered 5xx (API Gateway, the MCP function URL, CloudFront) over 5 minutes, in percent. @default 1 */
  readonly faultRatePercent?: number;
  /** Requests in 5 minutes below which a fault rate is not judged (a single 5xx of three requests is not an outage). @default 20 */
  readonly minRequests?: number;
  /** HTTP API p99 latency, over 5 minutes, three periods in a row, in milliseconds. @default 3000 */
  readonly p99LatencyMs?: number;
  /** Errors (unhandled failures and timeouts) of any one function in 5 minutes. @default 1 */
  readonly functionErrors?: number;
  /** OpenSearch JVM memory pressure, percent, 15 minutes in a row. @default 80 */
  readonly jvmMemoryPressurePercent?: number;
  /** OpenSearch free storage per node, as a share of the volume, percent. @default 25 */
  readonly freeStoragePercent?: number;
  /** OpenSearch CPU credits (burstable t3 nodes) below which the node is about to be throttled. @default 20 */
  readonly cpuCreditBalance?: number;
}

/**
 * The topics of a deployment whose alarms would reach no one, each as a sentence naming the setting
 * to change (the synth warning and `npm run preflight` say it): the home region's topic without
 * `emails` or `topicArn`, and outside us-east-1 CloudFront's topic without `emails` or
 * `usEast1TopicArn`. An existing topic is taken to have its subscribers. Empty when the stage says
 * so on purpose (`noSubscriberOnPurpose`).
 */
export function unreachedAlarms(settings: AlarmSettings | undefined, opts: { stage: string; homeRegion: string }): string[] {
  const s = settings ?? {};
  if (s.noSubscriberOnPurpose) return [];
  const emails = (s.emails ?? []).length > 0;
  const where = `stage '${opts.stage}' in bin/stages.ts`;
  const out: string[] = [];
  if (!emails && !s.topicArn)
    out.push(
      `The alarms of ${opts.homeRegion} notify a topic nobody is subscribed to: set alarms.emails or alarms.topicArn of ${where} (or alarms.noSubscriberOnPurpose: true)`,
    );
  if (opts.homeRegion !== 'us-east-1' && !emails && !s.usEast1TopicArn && s.topicArn)
    out.push(
      `CloudFront's alarms (us-east-1) notify a topic nobody is subscribed to: set alarms.usEast1TopicArn or alarms.emails of ${where} (or alarms.noSubscriberOnPurpose: true)`,
    );
  return out;
}
