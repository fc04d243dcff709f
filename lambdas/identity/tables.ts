import type { CreateTableCommandInput } from '@aws-sdk/client-dynamodb';

/**
 * The auth context's DynamoDB tables, in the shape of `tableDefinitions` of
 * `bin/local-stack/provision.ts` (the local stack creates them with `ensureTables`; the CDK stack
 * declares the same keys and TTL attributes).
 */
export interface AuthTableNames {
  /** Opaque access and refresh tokens, authorization codes, grant families (`token-store.ts`). */
  tokens: string;
  /** OAuth clients (`client-store.ts`). */
  clients: string;
  /** Favorites (`favorites/store.ts`). */
  favorites: string;
}

export function authTableDefinitions(names: AuthTableNames): Array<{ input: CreateTableCommandInput; ttl?: string }> {
  return [
    {
      input: {
        TableName: names.tokens,
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
        KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
      },
      ttl: 'expiresAt',
    },
    {
      input: {
        TableName: names.clients,
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: [{ AttributeName: 'clientId', AttributeType: 'S' }],
        KeySchema: [{ AttributeName: 'clientId', KeyType: 'HASH' }],
      },
      ttl: 'expiresAt',
    },
    {
      input: {
        TableName: names.favorites,
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: [
          { AttributeName: 'pk', AttributeType: 'S' },
          { AttributeName: 'sk', AttributeType: 'S' },
        ],
        KeySchema: [
          { AttributeName: 'pk', KeyType: 'HASH' },
          { AttributeName: 'sk', KeyType: 'RANGE' },
        ],
      },
    },
  ];
}
