import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { S3Client, S3ClientConfig } from '@aws-sdk/client-s3';

/**
 * AWS SDK clients. Locally the endpoints point at DynamoDB Local and the S3-protocol server on
 * loopback; in AWS they are unset and the SDK's defaults apply. The code that runs is the same.
 */
export interface ClientOptions {
  region: string;
  dynamoEndpoint?: string;
  s3Endpoint?: string;
}

const LOCAL_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' };

export function dynamoClient(o: ClientOptions): DynamoDBClient {
  return new DynamoDBClient({
    region: o.region,
    ...(o.dynamoEndpoint && { endpoint: o.dynamoEndpoint, credentials: LOCAL_CREDENTIALS }),
    maxAttempts: 3,
  });
}

export function documentClient(client: DynamoDBClient): DynamoDBDocumentClient {
  return DynamoDBDocumentClient.from(client, {
    marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: false },
  });
}

/** S3 client options (the S3 SDK module is passed in so callers can load it lazily). */
export function s3Config(o: ClientOptions): S3ClientConfig {
  return {
    region: o.region,
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

export function s3Client(o: ClientOptions): S3Client {
  // Loaded here, not at the top: only CLIs and the local stack call this eagerly.
  const { S3Client: Client } = require('@aws-sdk/client-s3') as typeof import('@aws-sdk/client-s3');
  return new Client(s3Config(o));
}
