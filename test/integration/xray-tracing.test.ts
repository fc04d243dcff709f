/**
 * Tracing as it runs in a deployed function: Lambda's environment (AWS_EXECUTION_ENV, the trace
 * header in _X_AMZN_TRACE_ID, the X-Ray daemon's address) and CDK's POWERTOOLS_TRACE_ENABLED. The
 * daemon is a UDP socket on loopback that collects what the X-Ray SDK sends: the invocation's
 * annotated `## <api>` subsegment and one subsegment per AWS SDK call, here a real call to the test
 * run's DynamoDB Local through the shared client factory.
 */
import { createSocket, type Socket } from 'node:dgram';
import type { ListTablesCommand as ListTablesCommandType } from '@aws-sdk/client-dynamodb';
import type * as Clients from '../../lambdas/shared/aws/clients';
import type * as Pipeline from '../../lambdas/shared/http/pipeline';
import type { HttpEvent, HttpResult } from '../../lambdas/shared/http/types';
import { apiEvent } from '../support/auth-harness';

interface XraySubsegment {
  name: string;
  id: string;
  parent_id?: string;
  trace_id?: string;
  namespace?: string;
  annotations?: Record<string, unknown>;
  aws?: { operation?: string };
}

const ROOT = '1-5759e988-bd862e3fe1be46a994272793';
const PARENT = '53995c3f42cd8ad8';
const ENV: Record<string, string> = {
  AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs24.x',
  LAMBDA_TASK_ROOT: '/var/task',
  AWS_LAMBDA_INITIALIZATION_TYPE: 'on-demand',
  POWERTOOLS_TRACE_ENABLED: 'true',
  POWERTOOLS_SERVICE_NAME: 'tracing-test',
  AWS_XRAY_CONTEXT_MISSING: 'IGNORE_ERROR',
  _X_AMZN_TRACE_ID: `Root=${ROOT};Parent=${PARENT};Sampled=1`,
};

let daemon: Socket;
const received: XraySubsegment[] = [];
const saved: Record<string, string | undefined> = {};

beforeAll(async () => {
  daemon = createSocket('udp4');
  daemon.on('message', (msg) => {
    // Each datagram: a header line, then one segment document.
    const [, doc] = msg.toString('utf8').split('\n');
    if (doc) received.push(JSON.parse(doc) as XraySubsegment);
  });
  await new Promise<void>((resolve) => daemon.bind(0, '127.0.0.1', resolve));
  const env = { ...ENV, AWS_XRAY_DAEMON_ADDRESS: `127.0.0.1:${daemon.address().port}` };
  for (const [k, v] of Object.entries(env)) {
    saved[k] = process.env[k];
    process.env[k] = v;
  }
});

afterAll(() => {
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  daemon.close();
});

function event(path: string): HttpEvent {
  return apiEvent('GET', path, { routeKey: `GET ${path}`, requestId: 'req-xray' });
}

it('an invocation is an annotated subsegment of the function segment, and its DynamoDB call a subsegment of it', async () => {
  const endpoint = process.env.TEST_DYNAMODB_ENDPOINT;
  if (!endpoint) throw new Error('DynamoDB Local is not running (jest globalSetup)');
  let handler: ReturnType<typeof Pipeline.lambdaEntry<Record<string, never>, unknown>> | undefined;
  jest.isolateModules(() => {
    const { dynamoClient } = require('../../lambdas/shared/aws/clients') as typeof Clients;
    const { lambdaEntry } = require('../../lambdas/shared/http/pipeline') as typeof Pipeline;
    const { ListTablesCommand } = require('@aws-sdk/client-dynamodb') as { ListTablesCommand: typeof ListTablesCommandType };
    const client = dynamoClient({ region: 'us-east-1', dynamoEndpoint: endpoint });
    handler = lambdaEntry<Record<string, never>, unknown>(
      {
        name: 'traced-api',
        fn: 'test',
        routes: [{ method: 'GET', path: '/tables', operationId: 'listTables', fn: 'test' }],
        operations: {
          listTables: async () => ({ kind: 'json', body: { tables: (await client.send(new ListTablesCommand({}))).TableNames?.length ?? 0 } }),
        },
        preflight: () => ({ statusCode: 204, headers: {}, body: '' }),
        problem: () => ({ statusCode: 500, headers: {}, body: '' }),
        error: () => undefined,
      },
      async () => ({}),
    );
  });
  const out = (await handler?.(event('/tables'), {} as never)) as HttpResult;
  expect(out.statusCode).toBe(200);

  // Waits on the daemon's datagrams (the test's own budget bounds it), not on a deadline of its own.
  while (!(received.some((s) => s.name === '## traced-api') && received.some((s) => s.name === 'DynamoDB'))) {
    await new Promise((r) => daemon.once('message', r));
  }
  const handlerSegment = received.find((s) => s.name === '## traced-api');
  expect(handlerSegment).toMatchObject({
    trace_id: ROOT,
    parent_id: PARENT,
    annotations: { ColdStart: true, Service: 'tracing-test', route: 'GET /tables', status: 200 },
  });
  const sdkCall = received.find((s) => s.name === 'DynamoDB');
  expect(sdkCall).toMatchObject({ namespace: 'aws', aws: { operation: 'ListTables' }, trace_id: ROOT, parent_id: handlerSegment?.id });
});
