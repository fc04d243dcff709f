import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { dynamoClient, loadSdkBudget, s3Config } from '../../lambdas/shared/aws/clients';

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
