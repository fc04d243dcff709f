import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { GetCommand, TransactWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { queryItems } from '../../shared/aws/dynamo-batch';

export interface Favorite {
  slug: string;
  /** ISO 8601, millisecond precision: the order of GET /favorites (newest first). */
  pinnedAt: string;
}

export type PinResult = 'pinned' | 'already-pinned' | 'full';

/** Each user's pinned servers. */
export interface FavoritesStore {
  /** Newest first (ties by slug). */
  list(sub: string): Promise<Favorite[]>;
  /** Idempotent; refuses a new pin once the user holds `max`. */
  pin(sub: string, slug: string, max: number): Promise<PinResult>;
  /** Idempotent; true when a pin was removed. */
  unpin(sub: string, slug: string): Promise<boolean>;
}

/**
 * One partition per user (`pk` = sub): an item per pin (`sk` = `pin#<slug>`) and a counter item
 * (`sk` = `count`) that each pin and unpin moves in the same transaction as the pin itself, so the
 * per-user cap holds under concurrent requests without reading the whole partition.
 */
const PIN = 'pin#';
const COUNT = 'count';

export class DynamoFavoritesStore implements FavoritesStore {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly table: string,
    private readonly clock: () => number = Date.now,
  ) {}

  async list(sub: string): Promise<Favorite[]> {
    const out: Favorite[] = [];
    const pins = queryItems(this.doc, {
      TableName: this.table,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :pin)',
      ExpressionAttributeValues: { ':pk': sub, ':pin': PIN },
      ProjectionExpression: 'slug, pinnedAt',
    });
    for await (const item of pins) out.push({ slug: String(item.slug), pinnedAt: String(item.pinnedAt) });
    return out.sort((a, b) => (a.pinnedAt === b.pinnedAt ? (a.slug < b.slug ? -1 : 1) : a.pinnedAt < b.pinnedAt ? 1 : -1));
  }

  async pin(sub: string, slug: string, max: number): Promise<PinResult> {
    for (let attempt = 0; ; attempt++) {
      try {
        await this.doc.send(
          new TransactWriteCommand({
            TransactItems: [
              {
                Put: {
                  TableName: this.table,
                  Item: { pk: sub, sk: PIN + slug, slug, pinnedAt: new Date(this.clock()).toISOString() },
                  ConditionExpression: 'attribute_not_exists(sk)',
                },
              },
              {
                Update: {
                  TableName: this.table,
                  Key: { pk: sub, sk: COUNT },
                  UpdateExpression: 'SET n = if_not_exists(n, :zero) + :one',
                  ConditionExpression: 'attribute_not_exists(n) OR n < :max',
                  ExpressionAttributeValues: { ':zero': 0, ':one': 1, ':max': max },
                },
              },
            ],
          }),
        );
        return 'pinned';
      } catch (err) {
        if (!(err instanceof TransactionCanceledException)) throw err;
        const [pinReason, countReason] = (err.CancellationReasons ?? []).map((r) => r.Code);
        if (pinReason === 'ConditionalCheckFailed') return 'already-pinned';
        if (countReason === 'ConditionalCheckFailed') return (await this.isPinned(sub, slug)) ? 'already-pinned' : 'full';
        // A concurrent transaction on the same user's items: try again, a few times.
        if (attempt >= 3) throw err;
      }
    }
  }

  async unpin(sub: string, slug: string): Promise<boolean> {
    for (let attempt = 0; ; attempt++) {
      try {
        await this.doc.send(
          new TransactWriteCommand({
            TransactItems: [
              { Delete: { TableName: this.table, Key: { pk: sub, sk: PIN + slug }, ConditionExpression: 'attribute_exists(sk)' } },
              {
                Update: {
                  TableName: this.table,
                  Key: { pk: sub, sk: COUNT },
                  UpdateExpression: 'ADD n :minusOne',
                  ExpressionAttributeValues: { ':minusOne': -1 },
                },
              },
            ],
          }),
        );
        return true;
      } catch (err) {
        if (!(err instanceof TransactionCanceledException)) throw err;
        if (err.CancellationReasons?.[0]?.Code === 'ConditionalCheckFailed') return false;
        if (attempt >= 3) throw err;
      }
    }
  }

  private async isPinned(sub: string, slug: string): Promise<boolean> {
    const out = await this.doc.send(new GetCommand({ TableName: this.table, Key: { pk: sub, sk: PIN + slug }, ConsistentRead: true }));
    return out.Item !== undefined;
  }
}
