import type { CreateTableCommandInput } from '@aws-sdk/client-dynamodb';

/**
 * A DynamoDB table's keys and TTL attribute, declared once beside the code that reads the table.
 * The CDK constructs (`lib/tables.ts`) and the local stack's provisioning both derive from it, so
 * the two cannot drift. Every key this product uses is a string.
 */
export interface TableSchema {
  partitionKey: string;
  sortKey?: string;
  /** The attribute DynamoDB's TTL reads (epoch seconds). */
  ttl?: string;
}

/** What the local stack creates: a CreateTable input plus the TTL attribute to turn on. */
export interface TableDefinition {
  input: CreateTableCommandInput;
  ttl?: string;
}

export function tableDefinition(tableName: string, schema: TableSchema): TableDefinition {
  const keys = [{ name: schema.partitionKey, type: 'HASH' as const }, ...(schema.sortKey ? [{ name: schema.sortKey, type: 'RANGE' as const }] : [])];
  return {
    input: {
      TableName: tableName,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: keys.map((k) => ({ AttributeName: k.name, AttributeType: 'S' })),
      KeySchema: keys.map((k) => ({ AttributeName: k.name, KeyType: k.type })),
    },
    ...(schema.ttl ? { ttl: schema.ttl } : {}),
  };
}
