import {
  CreateTableCommand,
  DescribeTableCommand,
  ResourceInUseException,
  UpdateTimeToLiveCommand,
  type CreateTableCommandInput,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import { CreateBucketCommand, type S3Client } from '@aws-sdk/client-s3';

/**
 * Creates the tables and buckets the local stack needs, with the same keys as the CDK stack
 * (`lib/catalog-data.ts`). Idempotent.
 */
export interface TableNames {
  catalog: string;
  rateLimits: string;
}

export function tableDefinitions(names: TableNames): Array<{ input: CreateTableCommandInput; ttl?: string }> {
  return [
    {
      input: {
        TableName: names.catalog,
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: [
          { AttributeName: 'slug', AttributeType: 'S' },
          { AttributeName: 'sk', AttributeType: 'S' },
        ],
        KeySchema: [
          { AttributeName: 'slug', KeyType: 'HASH' },
          { AttributeName: 'sk', KeyType: 'RANGE' },
        ],
      },
    },
    {
      input: {
        TableName: names.rateLimits,
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
        KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
      },
      ttl: 'expiresAt',
    },
  ];
}

export async function ensureTables(ddb: DynamoDBClient, defs: Array<{ input: CreateTableCommandInput; ttl?: string }>): Promise<void> {
  for (const def of defs) {
    const name = def.input.TableName as string;
    try {
      await ddb.send(new DescribeTableCommand({ TableName: name }));
      continue;
    } catch (err) {
      if ((err as { name?: string }).name !== 'ResourceNotFoundException') throw err;
    }
    try {
      await ddb.send(new CreateTableCommand(def.input));
    } catch (err) {
      if (!(err instanceof ResourceInUseException)) throw err;
    }
    if (def.ttl) {
      await ddb.send(
        new UpdateTimeToLiveCommand({ TableName: name, TimeToLiveSpecification: { AttributeName: def.ttl, Enabled: true } }),
      );
    }
  }
}

export async function ensureBuckets(s3: S3Client, buckets: string[]): Promise<void> {
  for (const Bucket of buckets) {
    try {
      await s3.send(new CreateBucketCommand({ Bucket }));
    } catch (err) {
      const name = (err as { name?: string }).name;
      if (name !== 'BucketAlreadyOwnedByYou' && name !== 'BucketAlreadyExists') throw err;
    }
  }
}
