/**
 * A loopback fake of the few AWS calls the operator's scripts make (`npm run preflight`,
 * `npm run alarms:test`) and of Parameter Store's GetParameter, which the MCP function and the git
 * remote read their settings with, speaking each service's own protocol so the real SDK v3 clients
 * talk to it unchanged (their `endpoint` set to it, or `AWS_ENDPOINT_URL_SSM`): Lambda's REST-JSON
 * GetAccountSettings, CloudFormation's and SNS's query protocol (form body in, XML out),
 * CloudWatch's JSON 1.0, SSM's JSON 1.1. One server serves every region: the endpoint's path is
 * `/<region>`. The state is a plain object the test sets and reads.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeStack {
  status: string;
  outputs?: Record<string, string>;
  /** The deployed template, as GetTemplate returns it. */
  template?: unknown;
}

export interface FakeAlarm {
  name: string;
  state: 'OK' | 'ALARM' | 'INSUFFICIENT_DATA';
  actions: string[];
  history: Array<{ time: Date; type: string; summary: string; data: string }>;
}

export interface FakeRegion {
  lambda?: { limit: number; unreserved: number };
  stacks: Record<string, FakeStack>;
  alarms: FakeAlarm[];
  /** Topic ARN → subscription ARNs ('PendingConfirmation' for an unconfirmed one). */
  subscriptions: Record<string, string[]>;
  /** Topics whose policy lets CloudWatch publish (an ALARM then records a successful action). */
  publishable: Set<string>;
  /** Parameter Store: String parameters by name, each with the version PutParameter would give it. */
  parameters?: Record<string, { value: string; version: number }>;
  /** How many GetParameter calls to come are refused with ThrottlingException (the account's throughput met). */
  throttleParameterReads?: number;
}

export interface AwsFake {
  readonly endpoint: (region: string) => string;
  readonly regions: Record<string, FakeRegion>;
  /** Every call, `region Service.Operation`. */
  readonly calls: string[];
  close(): Promise<void>;
}

export const emptyRegion = (): FakeRegion => ({ stacks: {}, alarms: [], subscriptions: {}, publishable: new Set() });

const xmlEscape = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

function queryXml(action: string, ns: string, result: string): string {
  return `<${action}Response xmlns="${ns}"><${action}Result>${result}</${action}Result><ResponseMetadata><RequestId>fake</RequestId></ResponseMetadata></${action}Response>`;
}

function queryError(res: ServerResponse, ns: string, code: string, message: string) {
  res.writeHead(400, { 'content-type': 'text/xml' });
  res.end(
    `<ErrorResponse xmlns="${ns}"><Error><Type>Sender</Type><Code>${code}</Code><Message>${xmlEscape(message)}</Message></Error><RequestId>fake</RequestId></ErrorResponse>`,
  );
}

const CFN_NS = 'http://cloudformation.amazonaws.com/doc/2010-05-15/';
const SNS_NS = 'http://sns.amazonaws.com/doc/2010-03-31/';

function cloudformation(r: FakeRegion, form: URLSearchParams, res: ServerResponse) {
  const action = form.get('Action') ?? '';
  const name = form.get('StackName') ?? '';
  const stack = r.stacks[name];
  if (!stack) return queryError(res, CFN_NS, 'ValidationError', `Stack with id ${name} does not exist`);
  res.writeHead(200, { 'content-type': 'text/xml' });
  if (action === 'DescribeStacks') {
    const outputs = Object.entries(stack.outputs ?? {})
      .map(([k, v]) => `<member><OutputKey>${xmlEscape(k)}</OutputKey><OutputValue>${xmlEscape(v)}</OutputValue></member>`)
      .join('');
    const member = `<member><StackName>${xmlEscape(name)}</StackName><StackId>arn:aws:cloudformation:fake:stack/${xmlEscape(name)}/1</StackId><CreationTime>2026-01-01T00:00:00Z</CreationTime><StackStatus>${stack.status}</StackStatus><Outputs>${outputs}</Outputs></member>`;
    return void res.end(queryXml(action, CFN_NS, `<Stacks>${member}</Stacks>`));
  }
  if (action === 'GetTemplate')
    return void res.end(queryXml(action, CFN_NS, `<TemplateBody>${xmlEscape(JSON.stringify(stack.template ?? {}))}</TemplateBody>`));
  queryError(res, CFN_NS, 'InvalidAction', action);
}

function sns(r: FakeRegion, form: URLSearchParams, res: ServerResponse) {
  const action = form.get('Action') ?? '';
  if (action !== 'ListSubscriptionsByTopic') return queryError(res, SNS_NS, 'InvalidAction', action);
  const topic = form.get('TopicArn') ?? '';
  const members = (r.subscriptions[topic] ?? [])
    .map(
      (arn) =>
        `<member><TopicArn>${xmlEscape(topic)}</TopicArn><Protocol>email</Protocol><SubscriptionArn>${xmlEscape(arn)}</SubscriptionArn><Endpoint>oncall@example.com</Endpoint></member>`,
    )
    .join('');
  res.writeHead(200, { 'content-type': 'text/xml' });
  res.end(queryXml(action, SNS_NS, `<Subscriptions>${members}</Subscriptions>`));
}

// biome-ignore lint/suspicious/noExplicitAny: a JSON request body, read field by field.
function cloudwatch(r: FakeRegion, op: string, input: any, res: ServerResponse) {
  const send = (status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/x-amz-json-1.0' });
    res.end(JSON.stringify(body));
  };
  const alarm = r.alarms.find((a) => a.name === input.AlarmName);
  if (op === 'DescribeAlarms') {
    const found = r.alarms.filter((a) => a.name.startsWith(input.AlarmNamePrefix ?? ''));
    return send(200, {
      MetricAlarms: found.map((a) => ({ AlarmName: a.name, StateValue: a.state, AlarmActions: a.actions, OKActions: a.actions, ActionsEnabled: true })),
    });
  }
  if (!alarm) return send(400, { __type: 'ResourceNotFound', message: `no alarm ${input.AlarmName}` });
  if (op === 'SetAlarmState') {
    const from = alarm.state;
    alarm.state = input.StateValue;
    alarm.history.push({ time: new Date(), type: 'StateUpdate', summary: `Alarm updated from ${from} to ${alarm.state}`, data: '{}' });
    // As CloudWatch: the alarm's actions run a moment later, and the history says how each went.
    setTimeout(() => {
      if (from === alarm.state) return;
      for (const topic of alarm.actions) {
        const ok = r.publishable.has(topic);
        alarm.history.push({
          time: new Date(),
          type: 'Action',
          summary: ok
            ? `Successfully executed action ${topic}`
            : `Failed to execute action ${topic}. Received error: "CloudWatch Alarms does not have authorization to access the SNS topic encryption key or topic policy"`,
          data: JSON.stringify({ actionState: ok ? 'Succeeded' : 'Failed', notificationResource: topic }),
        });
      }
    }, 30);
    return send(200, {});
  }
  if (op === 'DescribeAlarmHistory') {
    const since = input.StartDate === undefined ? 0 : Number(input.StartDate) * 1000;
    const items = alarm.history
      .filter((h) => (!input.HistoryItemType || h.type === input.HistoryItemType) && h.time.getTime() >= since)
      .reverse()
      .map((h) => ({
        AlarmName: alarm.name,
        AlarmType: 'MetricAlarm',
        Timestamp: h.time.getTime() / 1000,
        HistoryItemType: h.type,
        HistorySummary: h.summary,
        HistoryData: h.data,
      }));
    return send(200, { AlarmHistoryItems: items });
  }
  send(400, { __type: 'InvalidAction', message: op });
}

/** SSM's JSON 1.1: GetParameter of a String parameter, signed for `ssm` in the endpoint's region as SigV4 requires. */
// biome-ignore lint/suspicious/noExplicitAny: a JSON request body, read field by field.
function ssm(r: FakeRegion, region: string, op: string, input: any, req: IncomingMessage, res: ServerResponse) {
  const send = (status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/x-amz-json-1.1' });
    res.end(JSON.stringify(body));
  };
  if (!String(req.headers.authorization ?? '').includes(`/${region}/ssm/aws4_request`))
    return send(400, { __type: 'InvalidSignatureException', message: `not signed for ssm in ${region}` });
  if (op !== 'GetParameter') return send(400, { __type: 'InvalidAction', message: op });
  if (r.throttleParameterReads) {
    r.throttleParameterReads--;
    return send(400, { __type: 'ThrottlingException', message: 'Rate exceeded' });
  }
  const p = r.parameters?.[input.Name];
  if (!p) return send(400, { __type: 'ParameterNotFound' });
  const arn = `arn:aws:ssm:${region}:123456789012:parameter/${String(input.Name).replace(/^\//, '')}`;
  send(200, { Parameter: { Name: input.Name, Type: 'String', Value: p.value, Version: p.version, ARN: arn, DataType: 'text', LastModifiedDate: 1767225600 } });
}

function route(regions: Record<string, FakeRegion>, calls: string[], req: IncomingMessage, body: string, res: ServerResponse) {
  const [, region, ...rest] = (req.url ?? '/').split('?')[0].split('/');
  const r = regions[region];
  if (!r) return void res.writeHead(404).end();
  const target = String(req.headers['x-amz-target'] ?? '');
  if (target.startsWith('GraniteServiceVersion20100801.')) {
    const op = target.split('.')[1];
    calls.push(`${region} CloudWatch.${op}`);
    return cloudwatch(r, op, JSON.parse(body || '{}'), res);
  }
  if (target.startsWith('AmazonSSM.')) {
    const op = target.split('.')[1];
    calls.push(`${region} SSM.${op}`);
    return ssm(r, region, op, JSON.parse(body || '{}'), req, res);
  }
  if (`/${rest.join('/')}` === '/2016-08-19/account-settings') {
    calls.push(`${region} Lambda.GetAccountSettings`);
    if (!r.lambda) return void res.writeHead(500).end();
    res.writeHead(200, { 'content-type': 'application/json' });
    return void res.end(
      JSON.stringify({
        AccountLimit: { ConcurrentExecutions: r.lambda.limit, UnreservedConcurrentExecutions: r.lambda.unreserved },
        AccountUsage: { FunctionCount: 0 },
      }),
    );
  }
  const form = new URLSearchParams(body);
  if (form.get('Version') === '2010-05-15') {
    calls.push(`${region} CloudFormation.${form.get('Action')}`);
    return cloudformation(r, form, res);
  }
  if (form.get('Version') === '2010-03-31') {
    calls.push(`${region} SNS.${form.get('Action')}`);
    return sns(r, form, res);
  }
  res.writeHead(400).end();
}

export async function startAwsFake(regions: Record<string, FakeRegion>): Promise<AwsFake> {
  const calls: string[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => route(regions, calls, req, body, res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    endpoint: (region) => `http://127.0.0.1:${port}/${region}`,
    regions,
    calls,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** What every SDK client of a test gets: the fake's endpoint for its region, fixed credentials. */
export const fakeClientConfig = (fake: AwsFake, region: string) => ({
  region,
  endpoint: fake.endpoint(region),
  credentials: { accessKeyId: 'AKIDFAKE', secretAccessKey: 'fake' },
  maxAttempts: 1,
});
