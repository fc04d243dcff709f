/**
 * The Lambda@Edge log retention sweep against a loopback fake of CloudWatch Logs' JSON API (the
 * service cannot run here): one region per endpoint path, the real SDK client, its real requests.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CloudWatchLogsClient } from '@aws-sdk/client-cloudwatch-logs';
import { sweepRetention } from '../../lambdas/ops/edge-log-retention';

interface Group {
  logGroupName: string;
  retentionInDays?: number;
}

/** Regions → log groups; `broken` regions answer 500. Records every call as `region Target`. */
function fakeLogs(groups: Record<string, Group[]>, broken: string[] = []) {
  const calls: string[] = [];
  const server: Server = createServer((req, res) => {
    const region = (req.url ?? '/').replace(/^\/+|\/+$/g, '');
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const target = String(req.headers['x-amz-target'] ?? '').split('.')[1];
      calls.push(`${region} ${target}`);
      const send = (status: number, json: unknown) => {
        res.writeHead(status, { 'content-type': 'application/x-amz-json-1.1' });
        res.end(JSON.stringify(json));
      };
      if (broken.includes(region)) return send(500, { __type: 'ServiceUnavailableException', message: 'down' });
      const input = JSON.parse(body || '{}') as { logGroupNamePrefix?: string; logGroupName?: string; retentionInDays?: number };
      const list = groups[region] ?? [];
      if (target === 'DescribeLogGroups') return send(200, { logGroups: list.filter((g) => g.logGroupName.startsWith(input.logGroupNamePrefix ?? '')) });
      if (target === 'PutRetentionPolicy') {
        const g = list.find((x) => x.logGroupName === input.logGroupName);
        if (!g) return send(400, { __type: 'ResourceNotFoundException', message: 'no such group' });
        g.retentionInDays = input.retentionInDays;
        return send(200, {});
      }
      send(400, { __type: 'UnknownOperationException' });
    });
  });
  return { server, calls };
}

it('sets the retention where the group exists without it, keeps it where it is right, skips regions without the group, and reports a failing region', async () => {
  const name = '/mcp-catalog/prod-eu-west-1/icon-not-found';
  const groups: Record<string, Group[]> = {
    'us-east-1': [{ logGroupName: name, retentionInDays: 30 }],
    'eu-west-1': [{ logGroupName: name }, { logGroupName: `${name}-other` }],
    'ap-south-1': [],
  };
  const { server, calls } = fakeLogs(groups, ['sa-east-1']);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  try {
    const outcomes = await sweepRetention({
      logGroupName: name,
      retentionDays: 30,
      regions: ['us-east-1', 'eu-west-1', 'ap-south-1', 'sa-east-1'],
      client: (region) =>
        new CloudWatchLogsClient({
          region,
          endpoint: `http://127.0.0.1:${port}/${region}`,
          credentials: { accessKeyId: 'x', secretAccessKey: 'x' },
          maxAttempts: 1,
        }),
    });
    expect(outcomes).toEqual([
      { region: 'us-east-1', result: 'kept', previous: 30 },
      { region: 'eu-west-1', result: 'set' },
      { region: 'ap-south-1', result: 'absent' },
      { region: 'sa-east-1', result: 'failed', error: expect.stringContaining('ServiceUnavailable') },
    ]);
    expect(groups['eu-west-1']).toEqual([{ logGroupName: name, retentionInDays: 30 }, { logGroupName: `${name}-other` }]);
    expect(calls.filter((c) => c.endsWith('PutRetentionPolicy'))).toEqual(['eu-west-1 PutRetentionPolicy']);
  } finally {
    server.close();
  }
});
