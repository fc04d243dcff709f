import { CATALOG_TABLE, TRUST_TABLE } from '../../lambdas/catalog-core';
import {
  CreateTableCommand,
  DeleteTableCommand,
  DescribeTableCommand,
  ResourceInUseException,
  UpdateTimeToLiveCommand,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import { CreateBucketCommand, type S3Client } from '@aws-sdk/client-s3';
import { FAVORITES_TABLE } from '../../lambdas/catalog/favorites/tables';
import { CLIENT_TABLE, TOKEN_TABLE, type AuthTableNames } from '../../lambdas/identity/tables';
import { tableDefinition, type TableDefinition } from '../../lambdas/shared/aws/table-schema';
import { RATE_LIMIT_TABLE } from '../../lambdas/shared/rate-limit/tables';

/**
 * The catalog side's tables for the local stack, from the same schemas the CDK stack reads
 * (`lib/tables.ts`). `ensureTables` and `ensureBuckets` create what is missing; idempotent.
 */
export interface TableNames {
  catalog: string;
  rateLimits: string;
  /** The trust table (health checks, tool changes); left out by callers that never read history. */
  trust?: string;
}

export function tableDefinitions(names: TableNames, auth?: AuthTableNames | false): TableDefinition[] {
  return [
    tableDefinition(names.catalog, CATALOG_TABLE),
    ...(names.trust ? [tableDefinition(names.trust, TRUST_TABLE)] : []),
    tableDefinition(names.rateLimits, RATE_LIMIT_TABLE),
    ...(auth ? authTableDefinitions(auth) : []),
  ];
}

/** Tokens, OAuth clients and favorites. */
export function authTableDefinitions(names: AuthTableNames): TableDefinition[] {
  return [tableDefinition(names.tokens, TOKEN_TABLE), tableDefinition(names.clients, CLIENT_TABLE), tableDefinition(names.favorites, FAVORITES_TABLE)];
}

export async function ensureTables(ddb: DynamoDBClient, defs: TableDefinition[]): Promise<void> {
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
      await ddb.send(new UpdateTimeToLiveCommand({ TableName: name, TimeToLiveSpecification: { AttributeName: def.ttl, Enabled: true } }));
    }
  }
}

/** Deletes a table when it exists (the next `ensureTables` creates it empty). */
export async function dropTable(ddb: DynamoDBClient, name: string): Promise<void> {
  try {
    await ddb.send(new DeleteTableCommand({ TableName: name }));
  } catch (err) {
    if ((err as { name?: string }).name !== 'ResourceNotFoundException') throw err;
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
