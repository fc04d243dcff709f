import { QueryCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { batchWriteAll, type WriteRequest } from '../../shared/aws/dynamo-batch';
import type { HealthCheck } from '../domain/health-history';
import type { TrustStore } from '../domain/ports';

/**
 * A server's history in the trust table (`TRUST_TABLE`): partition `slug`, sort key
 * `check#<ISO time>` per live check. ISO times of one format sort as text, so a window is one
 * Query between two keys. Checks expire (`expiresAt`, epoch seconds) after the retention.
 */
const CHECK = 'check#';

interface CheckItem extends HealthCheck {
  slug: string;
  sk: string;
  expiresAt?: number;
}

export const DEFAULT_CHECK_RETENTION_DAYS = 90;

export class DynamoTrustStore implements TrustStore {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly table: string,
    private readonly retentionDays = DEFAULT_CHECK_RETENTION_DAYS,
  ) {}

  async putChecks(entries: Array<{ slug: string; check: HealthCheck }>): Promise<void> {
    const requests: WriteRequest[] = entries.map(({ slug, check }) => ({
      PutRequest: { Item: { ...check, slug, sk: `${CHECK}${check.at}`, expiresAt: Math.floor(Date.parse(check.at) / 1000) + this.retentionDays * 86_400 } },
    }));
    await batchWriteAll(this.doc, this.table, requests);
  }

  async checks(slug: string, since: string, until?: string): Promise<HealthCheck[]> {
    const out: HealthCheck[] = [];
    let startKey: Record<string, unknown> | undefined;
    do {
      const res = await this.doc.send(
        new QueryCommand({
          TableName: this.table,
          KeyConditionExpression: 'slug = :s AND sk BETWEEN :a AND :b',
          ExpressionAttributeValues: { ':s': slug, ':a': `${CHECK}${since}`, ':b': `${CHECK}${until ?? '~'}` },
          ExclusiveStartKey: startKey,
        }),
      );
      for (const item of (res.Items ?? []) as CheckItem[]) out.push(checkOf(item));
      startKey = res.LastEvaluatedKey;
    } while (startKey);
    return out;
  }

  /** Removes a server's whole history (its partition), e.g. when it leaves the catalog or demo data is replaced. */
  async deleteAll(slug: string): Promise<void> {
    let startKey: Record<string, unknown> | undefined;
    do {
      const res = await this.doc.send(
        new QueryCommand({
          TableName: this.table,
          KeyConditionExpression: 'slug = :s',
          ExpressionAttributeValues: { ':s': slug },
          ProjectionExpression: 'slug, sk',
          ExclusiveStartKey: startKey,
        }),
      );
      const keys = (res.Items ?? []) as Array<{ slug: string; sk: string }>;
      if (keys.length > 0)
        await batchWriteAll(
          this.doc,
          this.table,
          keys.map((Key) => ({ DeleteRequest: { Key } })),
        );
      startKey = res.LastEvaluatedKey;
    } while (startKey);
  }
}

function checkOf(item: CheckItem): HealthCheck {
  const { slug: _slug, sk: _sk, expiresAt: _ttl, ...check } = item;
  return check;
}
