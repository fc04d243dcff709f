import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { createServer as createHttpServer } from 'node:http';
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { dynamoClient, loadBatchSdkBudget, loadSdkBudget, s3Config } from '../../lambdas/shared/aws/clients';

/** A backend that accepts connections and never answers: what a frozen DynamoDB Local or S3 server looks like. */
function hungServer(): Promise<{ url: string; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        url: `http://127.0.0.1:${port}`,
        close: () =>
          new Promise<void>((r) => {
            for (const s of sockets) s.destroy();
            server.close(() => r());
          }),
      });
    });
  });
}

describe('SDK clients give up on a hung backend within their budget', () => {
  it('reads the budget from the environment, with defaults that fit the functions’ timeouts', () => {
    expect(loadSdkBudget({})).toEqual({
      connectTimeoutMs: 1000,
      dynamoRequestTimeoutMs: 1500,
      dynamoMaxAttempts: 2,
      s3RequestTimeoutMs: 5000,
      s3MaxAttempts: 3,
      maxCalls: 32,
      queueTimeoutMs: 2000,
    });
    expect(loadSdkBudget({ AWS_DYNAMODB_TIMEOUT_MS: '300', AWS_DYNAMODB_MAX_ATTEMPTS: '1' })).toMatchObject({
      dynamoRequestTimeoutMs: 300,
      dynamoMaxAttempts: 1,
    });
    expect(() => loadSdkBudget({ AWS_S3_TIMEOUT_MS: '0' })).toThrow('AWS_S3_TIMEOUT_MS must be a positive integer, got "0"');
  });

  it('DynamoDB: a request to a backend that never answers fails after attempts × timeout, not never', async () => {
    const hung = await hungServer();
    try {
      const budget = { ...loadSdkBudget({}), dynamoRequestTimeoutMs: 200, dynamoMaxAttempts: 2 };
      const client = dynamoClient({ region: 'us-east-1', dynamoEndpoint: hung.url }, budget);
      const started = Date.now();
      await expect(client.send(new GetItemCommand({ TableName: 't', Key: { pk: { S: 'x' } } }))).rejects.toThrow(
        /exceeded the configured 200 ms requestTimeout/,
      );
      // Two attempts of 200 ms plus the SDK's backoff; without a timeout the call would still be waiting.
      expect(Date.now() - started).toBeLessThan(10_000);
      client.destroy();
    } finally {
      await hung.close();
    }
  });

  it('S3: the same for object reads', async () => {
    const hung = await hungServer();
    try {
      const budget = { ...loadSdkBudget({}), s3RequestTimeoutMs: 200, s3MaxAttempts: 1 };
      const client = new S3Client(s3Config({ region: 'us-east-1', s3Endpoint: hung.url }, budget));
      await expect(client.send(new GetObjectCommand({ Bucket: 'b', Key: 'k' }))).rejects.toThrow(/exceeded the configured 200 ms requestTimeout/);
      client.destroy();
    } finally {
      await hung.close();
    }
  });
});

/** A DynamoDB that answers every call, but only after `delayMs`: a loaded DynamoDB Local. */
function slowDynamo(delayMs: number): Promise<{ url: string; calls: () => number; close(): Promise<void> }> {
  let calls = 0;
  const server = createHttpServer((req, res) => {
    calls++;
    req.resume();
    setTimeout(() => {
      res.writeHead(200, { 'content-type': 'application/x-amz-json-1.0' });
      res.end('{}');
    }, delayMs);
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve({ url: `http://127.0.0.1:${port}`, calls: () => calls, close: () => new Promise<void>((r) => server.close(() => r())) });
    });
  });
}

describe('bulk work (crawler, seed, provisioning, reindex) waits for a slow backend instead of failing', () => {
  it('has its own, longer budget, read from the environment', () => {
    expect(loadBatchSdkBudget({})).toEqual({
      connectTimeoutMs: 3000,
      dynamoRequestTimeoutMs: 30000,
      dynamoMaxAttempts: 5,
      s3RequestTimeoutMs: 30000,
      s3MaxAttempts: 5,
      maxCalls: 50,
      queueTimeoutMs: 30000,
    });
    expect(loadBatchSdkBudget({ AWS_BATCH_TIMEOUT_MS: '4000', AWS_BATCH_MAX_ATTEMPTS: '2' })).toMatchObject({
      dynamoRequestTimeoutMs: 4000,
      s3RequestTimeoutMs: 4000,
      dynamoMaxAttempts: 2,
      s3MaxAttempts: 2,
    });
  });

  it('a call the request budget gives up on (slower than its timeout) completes with the batch budget', async () => {
    const slow = await slowDynamo(600);
    try {
      const get = new GetItemCommand({ TableName: 't', Key: { pk: { S: 'x' } } });
      const request = dynamoClient({ region: 'us-east-1', dynamoEndpoint: slow.url }, { ...loadSdkBudget({}), dynamoRequestTimeoutMs: 300 });
      await expect(request.send(get)).rejects.toThrow(/exceeded the configured 300 ms requestTimeout/);
      request.destroy();
      const batch = dynamoClient({ region: 'us-east-1', dynamoEndpoint: slow.url }, loadBatchSdkBudget({}));
      const before = slow.calls();
      await expect(batch.send(get)).resolves.toMatchObject({ $metadata: { httpStatusCode: 200 } });
      expect(slow.calls() - before).toBe(1);
      batch.destroy();
    } finally {
      await slow.close();
    }
  });
});

/** A DynamoDB that answers one call at a time, each after `eachMs`: throughput-bound, as DynamoDB Local under load. */
function serialDynamo(eachMs: number): Promise<{ url: string; close(): Promise<void> }> {
  let busyUntil = 0;
  const server = createHttpServer((req, res) => {
    req.resume();
    busyUntil = Math.max(busyUntil, Date.now()) + eachMs;
    setTimeout(() => {
      res.writeHead(200, { 'content-type': 'application/x-amz-json-1.0' });
      res.end('{}');
    }, busyUntil - Date.now());
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        url: `http://127.0.0.1:${port}`,
        close: () =>
          new Promise<void>((r) => {
            server.closeAllConnections();
            server.close(() => r());
          }),
      });
    });
  });
}

describe('a burst larger than what the backend answers at once (the local server serves every request in one process)', () => {
  it('waits for a call slot instead of timing out: 200 calls to a backend that answers one per 10 ms, each with a 600 ms timeout, all answered', async () => {
    const serial = await serialDynamo(10);
    try {
      // Sent all at once, the last would wait 2 s for its answer; 32 at a time, none waits 600 ms.
      const client = dynamoClient(
        { region: 'us-east-1', dynamoEndpoint: serial.url },
        { ...loadSdkBudget({}), dynamoRequestTimeoutMs: 600, queueTimeoutMs: 60_000 },
      );
      const get = () =>
        client.send(new GetItemCommand({ TableName: 't', Key: { pk: { S: 'x' } } })).then(
          () => 'ok',
          (e: Error) => e.name,
        );
      const out = await Promise.all(Array.from({ length: 200 }, get));
      expect(out.filter((o) => o !== 'ok')).toEqual([]);
      client.destroy();
    } finally {
      await serial.close();
    }
  });

  it('a call that finds no slot within the queue budget fails at once, without the SDK retrying it', async () => {
    const hung = await hungServer();
    try {
      const budget = { ...loadSdkBudget({}), maxCalls: 1, queueTimeoutMs: 100, dynamoRequestTimeoutMs: 60_000 };
      const client = dynamoClient({ region: 'us-east-1', dynamoEndpoint: hung.url }, budget);
      const first = client.send(new GetItemCommand({ TableName: 't', Key: { pk: { S: 'x' } } })).catch(() => undefined);
      const second = await client
        .send(new GetItemCommand({ TableName: 't', Key: { pk: { S: 'y' } } }))
        .catch((e: Error & { $metadata?: { attempts?: number } }) => e);
      expect(second).toMatchObject({ name: 'CallQueueTimeout' });
      client.destroy();
      await hung.close();
      await first;
    } finally {
      await hung.close();
    }
  });
});
