/**
 * `npm run alarms:test -- [-c stage=<name>] [--stack <name>] [--alarm <name>] [--timeout-seconds 120]`
 * (AWS credentials, after a deploy): proves that an alarm reaches a person. It
 *
 * 1. reads the stage's alarm topic (the `AlarmTopicArn` output of its main stack, or of `--stack`:
 *    CloudFront's alarms stack in us-east-1) and picks one alarm of the stack that notifies it (or
 *    `--alarm`), in the region of CDK_DEPLOY_REGION (else the CLI's);
 * 2. sets that alarm to ALARM (`SetAlarmState`);
 * 3. waits for CloudWatch's record of the notification: the alarm's history gets an `Action` item
 *    for the topic, "Successfully executed action …" when SNS took the message, "Failed to
 *    execute action …" when it refused it (a topic policy without CloudWatch, a key CloudWatch may
 *    not use). That is delivery to the topic, observed where CloudWatch writes it down;
 * 4. sets the alarm back to the state it had (its OK action notifies again: two messages arrive);
 * 5. counts the topic's confirmed subscriptions (an email address that never confirmed receives
 *    nothing).
 *
 * Exit 0 when the topic took the notification and has a confirmed subscriber, 1 otherwise.
 */
import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import {
  type AlarmHistoryItem,
  CloudWatchClient,
  DescribeAlarmHistoryCommand,
  DescribeAlarmsCommand,
  type MetricAlarm,
  SetAlarmStateCommand,
  type StateValue,
} from '@aws-sdk/client-cloudwatch';
import { ListSubscriptionsByTopicCommand, SNSClient } from '@aws-sdk/client-sns';
import { flags, positiveInt } from './cli-args';
import { contextFlags, mainStackName, regionFromEnv } from './deploy-target';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

export interface AlarmTestClients {
  readonly cloudformation: CloudFormationClient;
  readonly cloudwatch: CloudWatchClient;
  readonly sns: SNSClient;
}

export interface AlarmTestOptions {
  readonly stackName: string;
  /** An alarm of the stack to use; default: the first that notifies the topic and is OK. */
  readonly alarm?: string;
  /** How long to wait for CloudWatch's record of the notification. @default 120000 */
  readonly timeoutMs?: number;
  /** Between two reads of the alarm's history. @default 2000 */
  readonly pollMs?: number;
  readonly log?: (line: string) => void;
}

export interface AlarmTestResult {
  readonly alarm: string;
  readonly topicArn: string;
  /** CloudWatch's record: delivered to the topic, refused by it, or nothing within the timeout. */
  readonly delivery: 'delivered' | 'refused' | 'no-record';
  /** The history item's summary (why it was refused, say). */
  readonly detail?: string;
  readonly confirmedSubscriptions: number;
  readonly pendingSubscriptions: number;
  /** The state the alarm was set back to. */
  readonly restoredTo: StateValue;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function topicOf(cfn: CloudFormationClient, stackName: string): Promise<string> {
  const stack = (await cfn.send(new DescribeStacksCommand({ StackName: stackName }))).Stacks?.[0];
  const arn = stack?.Outputs?.find((o) => o.OutputKey === 'AlarmTopicArn')?.OutputValue;
  if (!arn) throw new Error(`${stackName} has no AlarmTopicArn output: is the stage deployed in this region?`);
  return arn;
}

async function alarmsOf(cw: CloudWatchClient, stackName: string): Promise<MetricAlarm[]> {
  const out: MetricAlarm[] = [];
  let NextToken: string | undefined;
  do {
    // CloudFormation names an alarm `<stack name>-<logical id>-<suffix>`.
    const page = await cw.send(new DescribeAlarmsCommand({ AlarmNamePrefix: `${stackName}-`, AlarmTypes: ['MetricAlarm'], NextToken }));
    out.push(...(page.MetricAlarms ?? []));
    NextToken = page.NextToken;
  } while (NextToken);
  return out;
}

function pick(alarms: MetricAlarm[], topicArn: string, name?: string): MetricAlarm {
  if (name) {
    const a = alarms.find((x) => x.AlarmName === name);
    if (!a) throw new Error(`no alarm named ${name} in the stack`);
    if (!a.AlarmActions?.includes(topicArn)) throw new Error(`${name} does not notify ${topicArn}`);
    return a;
  }
  const notifying = alarms.filter((a) => a.AlarmActions?.includes(topicArn) && a.ActionsEnabled !== false);
  const chosen = notifying.find((a) => a.StateValue === 'OK') ?? notifying.find((a) => a.StateValue !== 'ALARM');
  if (!chosen) throw new Error(`no alarm of the stack notifies ${topicArn} from a state other than ALARM`);
  return chosen;
}

/** The Action item CloudWatch wrote for `topicArn` since `since`, if any. */
async function actionRecord(cw: CloudWatchClient, alarm: string, topicArn: string, since: Date): Promise<AlarmHistoryItem | undefined> {
  const items = (
    await cw.send(new DescribeAlarmHistoryCommand({ AlarmName: alarm, HistoryItemType: 'Action', StartDate: since, ScanBy: 'TimestampDescending' }))
  ).AlarmHistoryItems;
  return items?.find((i) => `${i.HistorySummary ?? ''} ${i.HistoryData ?? ''}`.includes(topicArn));
}

export async function testAlarmDelivery(opts: AlarmTestOptions, clients: AlarmTestClients): Promise<AlarmTestResult> {
  const log = opts.log ?? (() => undefined);
  const topicArn = await topicOf(clients.cloudformation, opts.stackName);
  const alarm = pick(await alarmsOf(clients.cloudwatch, opts.stackName), topicArn, opts.alarm);
  const name = alarm.AlarmName as string;
  const original = (alarm.StateValue ?? 'OK') as StateValue;
  log(`alarm ${name} (now ${original}) notifies ${topicArn}: setting it to ALARM`);
  // CloudWatch's timestamps are its own: a minute's margin for a skewed local clock.
  const since = new Date(Date.now() - 60_000);
  const before = await actionRecord(clients.cloudwatch, name, topicArn, since);
  let record: AlarmHistoryItem | undefined;
  try {
    await clients.cloudwatch.send(
      new SetAlarmStateCommand({ AlarmName: name, StateValue: 'ALARM', StateReason: 'npm run alarms:test: checking that this alarm reaches its topic' }),
    );
    const deadline = Date.now() + (opts.timeoutMs ?? 120_000);
    for (;;) {
      const r = await actionRecord(clients.cloudwatch, name, topicArn, since);
      if (r && r.Timestamp?.getTime() !== before?.Timestamp?.getTime()) {
        record = r;
        break;
      }
      if (Date.now() >= deadline) break;
      await sleep(opts.pollMs ?? 2000);
    }
  } finally {
    await clients.cloudwatch.send(
      new SetAlarmStateCommand({ AlarmName: name, StateValue: original, StateReason: 'npm run alarms:test: back to the state it had' }),
    );
    log(`alarm ${name} set back to ${original}`);
  }
  const summary = record?.HistorySummary ?? '';
  const delivery = !record
    ? 'no-record'
    : /^Successfully/i.test(summary) || /"actionState"\s*:\s*"Succeeded"/.test(record.HistoryData ?? '')
      ? 'delivered'
      : 'refused';

  const subs = (await clients.sns.send(new ListSubscriptionsByTopicCommand({ TopicArn: topicArn }))).Subscriptions ?? [];
  const pending = subs.filter((s) => s.SubscriptionArn === 'PendingConfirmation').length;
  const confirmed = subs.filter((s) => s.SubscriptionArn?.startsWith('arn:')).length;
  return {
    alarm: name,
    topicArn,
    delivery,
    ...(record && { detail: summary }),
    confirmedSubscriptions: confirmed,
    pendingSubscriptions: pending,
    restoredTo: original,
  };
}

/** The verdict in words, and whether it passed. */
export function verdict(r: AlarmTestResult, timeoutMs: number): { ok: boolean; lines: string[] } {
  const lines: string[] = [];
  if (r.delivery === 'delivered') lines.push(`delivered: CloudWatch published the ALARM notification to ${r.topicArn} (${r.detail})`);
  else if (r.delivery === 'refused')
    lines.push(`REFUSED: ${r.detail}. The topic's policy must let cloudwatch.amazonaws.com publish (README, "Alarms"); with a KMS key, its key policy too`);
  else lines.push(`NO RECORD: CloudWatch wrote no action for ${r.topicArn} within ${timeoutMs / 1000} s; are the alarm's actions enabled?`);
  if (r.confirmedSubscriptions === 0)
    lines.push(
      `NOBODY: the topic has no confirmed subscription (${r.pendingSubscriptions} pending): confirm the subscription email, or set alarms.emails / alarms.topicArn (bin/stages.ts) and deploy`,
    );
  else
    lines.push(
      `${r.confirmedSubscriptions} confirmed subscription(s)${r.pendingSubscriptions ? `, ${r.pendingSubscriptions} pending confirmation` : ''}: expect an ALARM and an OK message`,
    );
  return { ok: r.delivery === 'delivered' && r.confirmedSubscriptions > 0, lines };
}

async function main(): Promise<void> {
  const { context, rest } = contextFlags(process.argv.slice(2));
  process.argv = [...process.argv.slice(0, 2), ...rest];
  const f = flags({ alarm: { type: 'string' }, stack: { type: 'string' }, 'timeout-seconds': { type: 'string' } });
  const region = regionFromEnv(process.env);
  const stackName = f.stack ?? mainStackName(context.stage ?? 'prod');
  const timeoutMs = positiveInt(f['timeout-seconds'], 'timeout-seconds', 120) * 1000;
  const result = await testAlarmDelivery(
    { stackName, alarm: f.alarm, timeoutMs, log: (l) => console.log(l) },
    { cloudformation: new CloudFormationClient({ region }), cloudwatch: new CloudWatchClient({ region }), sns: new SNSClient({ region }) },
  );
  const v = verdict(result, timeoutMs);
  for (const l of v.lines) console.log(l);
  process.exitCode = v.ok ? 0 : 1;
}

if (require.main === module) {
  main().catch((err: unknown) => {
    console.error('[alarms:test] failed:', err instanceof Error ? err.message : err);
    process.exitCode = 2;
  });
}
