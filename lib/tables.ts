import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as iam from 'aws-cdk-lib/aws-iam';
import type { TableSchema } from '../lambdas/shared/aws/table-schema';

/**
 * A table's keys and TTL attribute for `new dynamodb.Table`, from the schema its code declares
 * (`lambdas/<feature>/tables.ts`); the local stack provisions from the same schema.
 */
export function tableKeys(schema: TableSchema): Pick<dynamodb.TableProps, 'partitionKey' | 'sortKey' | 'timeToLiveAttribute'> {
  const key = (name: string): dynamodb.Attribute => ({ name, type: dynamodb.AttributeType.STRING });
  return {
    partitionKey: key(schema.partitionKey),
    ...(schema.sortKey ? { sortKey: key(schema.sortKey) } : {}),
    ...(schema.ttl ? { timeToLiveAttribute: schema.ttl } : {}),
  };
}

/**
 * Grants exactly `actions` on a table, and the use of its customer-managed key when it has one
 * (`Table.grant` leaves the key out): decrypt to read, encrypt too when any action writes.
 */
export function grantTable(table: dynamodb.ITable, grantee: iam.IGrantable, actions: string[]): void {
  table.grant(grantee, ...actions);
  const writes = actions.some((a) => /:(Put|Update|Delete|BatchWrite)Item$/.test(a));
  table.encryptionKey?.grant(grantee, 'kms:Decrypt', 'kms:DescribeKey', ...(writes ? ['kms:Encrypt', 'kms:GenerateDataKey'] : []));
}
