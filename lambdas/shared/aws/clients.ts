import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { S3Client, S3ClientConfig } from '@aws-sdk/client-s3';
import { envInt, envString, type Env } from '../env';
import { traced } from '../observability/tracing';
import { CallPool } from './call-pool';

/**
 * AWS SDK clients. Locally the endpoints point at DynamoDB Local and the S3-protocol server on
 * loopback; in AWS they are unset and the SDK's defaults apply. The code that runs is the same.
 */
export interface ClientOptions {
  region: string;
  dynamoEndpoint?: string;
  s3Endpoint?: string;
}

/** Region and endpoints from `AWS_REGION`, `DYNAMODB_ENDPOINT` and `S3_ENDPOINT` (the last two local only). */
export function loadClientOptions(env: Env = process.env): ClientOptions {
  return {
    region: envString(env, 'AWS_REGION') ?? 'us-east-1',
    dynamoEndpoint: envString(env, 'DYNAMODB_ENDPOINT'),
    s3Endpoint: envString(env, 'S3_ENDPOINT'),
  };
}

const LOCAL_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' };

/**
 * Time budgets of the SDK clients. Without them a hung backend (a stalled connection, a paused
 * DynamoDB Local) holds a request until the function's own timeout and API Gateway's 30 s: with
 * them it is a prompt 503 the client retries. `requestTimeout` runs from the moment a call is
 * handed to the HTTP handler until the answer's headers arrive (the body of a large S3 read then
 * streams on), and so does the connection timeout until a socket is connected: time spent waiting
 * for a free socket of the pool counts against both. Worst case per call: attempts × timeout plus
 * the SDK's backoff: about 3.5 s for DynamoDB and 16 s for S3 at the defaults, inside the API
 * functions' 10 s and the memory functions' 25 s (lib/); a memory write bounds every call but its
 * head move by its own budget (`MEMORY_WRITE_BUDGET_MS`).
 *
 * `maxCalls` bounds the calls a client has in flight (`CallPool`); more wait their turn, at most
 * `queueTimeoutMs`, and their timeouts count from when they are sent. A Lambda instance serves one
 * request at a time and never fills it; the local server serves every request in one process, and
 * with the SDK's bare pool of 50 sockets a burst of 300 keyed writes queued long enough to time
 * out calls DynamoDB would have answered, then overloaded DynamoDB Local with all of them at once
 * (measured: 161 of 300 answered 500; at a load of 15, 300 concurrent PutItems took 7.8 s each).
 */
export interface SdkBudget {
  connectTimeoutMs: number;
  dynamoRequestTimeoutMs: number;
  dynamoMaxAttempts: number;
  s3RequestTimeoutMs: number;
  s3MaxAttempts: number;
  maxCalls: number;
  queueTimeoutMs: number;
}

export function loadSdkBudget(env: Env = process.env): SdkBudget {
  return {
    connectTimeoutMs: envInt(env, 'AWS_CONNECT_TIMEOUT_MS', 1000, { min: 1 }),
    dynamoRequestTimeoutMs: envInt(env, 'AWS_DYNAMODB_TIMEOUT_MS', 1500, { min: 1 }),
    dynamoMaxAttempts: envInt(env, 'AWS_DYNAMODB_MAX_ATTEMPTS', 2, { min: 1 }),
    s3RequestTimeoutMs: envInt(env, 'AWS_S3_TIMEOUT_MS', 5000, { min: 1 }),
    s3MaxAttempts: envInt(env, 'AWS_S3_MAX_ATTEMPTS', 3, { min: 1 }),
    maxCalls: envInt(env, 'AWS_MAX_CALLS', 32, { min: 1 }),
    queueTimeoutMs: envInt(env, 'AWS_QUEUE_TIMEOUT_MS', 2000, { min: 1 }),
  };
}

/**
 * The budget of bulk work with no caller waiting on it: the crawler's tasks (15 minutes each),
 * provisioning, seeding, reindexing. A slow batch write there should be waited for, not turned
 * into a failed run: a loaded DynamoDB Local answered a 100-item batch in more than 1.5 s twice
 * in a row on a busy CI machine, and the whole local stack failed to start. `AWS_BATCH_TIMEOUT_MS`
 * and `AWS_BATCH_MAX_ATTEMPTS` set it (for DynamoDB and S3 alike).
 */
export function loadBatchSdkBudget(env: Env = process.env): SdkBudget {
  const timeout = envInt(env, 'AWS_BATCH_TIMEOUT_MS', 30000, { min: 1 });
  const attempts = envInt(env, 'AWS_BATCH_MAX_ATTEMPTS', 5, { min: 1 });
  return {
    connectTimeoutMs: envInt(env, 'AWS_CONNECT_TIMEOUT_MS', 3000, { min: 1 }),
    dynamoRequestTimeoutMs: timeout,
    dynamoMaxAttempts: attempts,
    s3RequestTimeoutMs: timeout,
    s3MaxAttempts: attempts,
    maxCalls: envInt(env, 'AWS_MAX_CALLS', 50, { min: 1 }),
    queueTimeoutMs: timeout,
  };
}

function handlerOptions(budget: SdkBudget, requestTimeout: number) {
  // As many sockets as calls in flight: a call sent by the pool never queues for a socket.
  const agent = { maxSockets: budget.maxCalls };
  return { connectionTimeout: budget.connectTimeoutMs, requestTimeout, throwOnRequestTimeout: true, httpAgent: agent, httpsAgent: agent };
}

/** Each client's calls are X-Ray subsegments in a traced Lambda (`traced`: the client as it is elsewhere). */
export function dynamoClient(o: ClientOptions, budget: SdkBudget = loadSdkBudget()): DynamoDBClient {
  const client = new DynamoDBClient({
    region: o.region,
    ...(o.dynamoEndpoint && { endpoint: o.dynamoEndpoint, credentials: LOCAL_CREDENTIALS }),
    maxAttempts: budget.dynamoMaxAttempts,
    requestHandler: handlerOptions(budget, budget.dynamoRequestTimeoutMs),
  });
  new CallPool(budget.maxCalls, budget.queueTimeoutMs).attach(client.middlewareStack);
  return traced(client);
}

export function documentClient(client: DynamoDBClient): DynamoDBDocumentClient {
  return DynamoDBDocumentClient.from(client, {
    marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: false },
  });
}

/** S3 client options (the S3 SDK module is passed in so callers can load it lazily). */
export function s3Config(o: ClientOptions, budget: SdkBudget = loadSdkBudget()): S3ClientConfig {
  return {
    region: o.region,
    maxAttempts: budget.s3MaxAttempts,
    requestHandler: handlerOptions(budget, budget.s3RequestTimeoutMs),
    ...(o.s3Endpoint && {
      endpoint: o.s3Endpoint,
      forcePathStyle: true,
      credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
      // The loopback S3 server stores streamed, checksummed uploads corrupted (measured): send
      // checksums only where the API requires them.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    }),
  };
}

export function s3Client(o: ClientOptions, budget: SdkBudget = loadSdkBudget()): S3Client {
  // Loaded here, not at the top: only CLIs and the local stack call this eagerly.
  const { S3Client: Client } = require('@aws-sdk/client-s3') as typeof import('@aws-sdk/client-s3');
  const client = new Client(s3Config(o, budget));
  new CallPool(budget.maxCalls, budget.queueTimeoutMs).attach(client.middlewareStack);
  return traced(client);
}
