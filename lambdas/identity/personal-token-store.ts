import { ConditionalCheckFailedException, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { GetCommand, TransactWriteCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { batchGetAll } from '../shared/aws/dynamo-batch';
import { mintPersonalToken } from './personal-tokens';
import type { MemoryScope } from './principal';
import { PERSONAL_TOKEN_KEYS as PK } from './tables';

/** What a personal access token grants, as its owner chose it (checked by `personal-token-service.ts`). */
export interface PersonalTokenGrant {
  sub: string;
  name: string;
  scopes: MemoryScope[];
  /** Undefined: every memory of the account. */
  memories?: string[];
  /** Undefined: whole memories. */
  pathPrefix?: string;
  /** Epoch seconds. */
  expiresAt: number;
}

export interface PersonalTokenRecord extends PersonalTokenGrant {
  id: string;
  /** Hex SHA-256 of the token: the only form of the secret ever stored. */
  hash: string;
  /** Epoch seconds. */
  createdAt: number;
  /** Epoch seconds, to within the recording interval (`AUTH_PAT_LAST_USED_SECONDS`). */
  lastUsedAt?: number;
  revoked?: boolean;
}

export type CreateOutcome = { status: 'created'; token: string; record: PersonalTokenRecord } | { status: 'ceiling' };

/** The personal access tokens: the `/v1/tokens` endpoints write them, every verifier that accepts them reads them. */
export interface PersonalTokenStore {
  /** Stores a new token unless its owner already holds `maxPerUser` active ones; the secret is returned here only. */
  create(grant: PersonalTokenGrant, maxPerUser: number): Promise<CreateOutcome>;
  /** The owner's active tokens (unrevoked, unexpired), newest first. */
  list(sub: string): Promise<PersonalTokenRecord[]>;
  /** One strongly consistent read, whatever the token's state. */
  find(id: string): Promise<PersonalTokenRecord | undefined>;
  /** False when the owner holds no active token of that id (unknown, another user's, revoked, expired). */
  revoke(sub: string, id: string): Promise<boolean>;
  /** Records a use unless one was recorded within the last `intervalSeconds` (a conditional write, so instances do not all write). */
  touch(id: string, intervalSeconds: number): Promise<void>;
}

/**
 * Items in the token table (key `pk`, TTL `expiresAt`; `PERSONAL_TOKEN_KEYS`):
 *   `pat#<id>`         the token: sub, hash, name, scopes, memories?, pathPrefix?, createdAt,
 *                      expiresAt (TTL), lastUsedAt?, revoked? (kept until it expires, so a revoked
 *                      token is refused as revoked rather than unknown)
 *   `pat-owner#<sub>`  the owner's active tokens as a map id → expiry, with a version every change
 *                      moves: creations are checked against the ceiling on it, and the list reads it
 *                      first, then the tokens in one batch (the table has no index on `sub`)
 */
interface TokenItem extends PersonalTokenRecord {
  pk: string;
  kind: 'pat';
  revokedAt?: number;
}

interface OwnerItem {
  pk: string;
  kind: 'pat-owner';
  tokens: Record<string, number>;
  version: number;
  expiresAt: number;
}

/** Lost races with another create or revoke of the same owner before giving up (each re-reads the owner item). */
const CREATE_ATTEMPTS = 5;

export class DynamoPersonalTokenStore implements PersonalTokenStore {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly table: string,
    /** Milliseconds since the epoch. */
    private readonly clock: () => number = Date.now,
  ) {}

  private now(): number {
    return Math.floor(this.clock() / 1000);
  }

  async create(grant: PersonalTokenGrant, maxPerUser: number): Promise<CreateOutcome> {
    for (let attempt = 0; attempt < CREATE_ATTEMPTS; attempt++) {
      const now = this.now();
      const owner = await this.owner(grant.sub);
      const live = Object.entries(owner?.tokens ?? {}).filter(([, exp]) => exp > now);
      if (live.length >= maxPerUser) return { status: 'ceiling' };
      const { id, token, hash } = mintPersonalToken();
      const record: PersonalTokenRecord = { ...grant, id, hash, createdAt: now };
      const tokens = Object.fromEntries([...live, [id, grant.expiresAt]]);
      const next: OwnerItem = {
        pk: PK.owner + grant.sub,
        kind: 'pat-owner',
        tokens,
        version: (owner?.version ?? 0) + 1,
        expiresAt: Math.max(...Object.values(tokens)),
      };
      try {
        await this.doc.send(
          new TransactWriteCommand({
            TransactItems: [
              { Put: { TableName: this.table, Item: { pk: PK.token + id, kind: 'pat', ...record }, ConditionExpression: 'attribute_not_exists(pk)' } },
              {
                Put: {
                  TableName: this.table,
                  Item: next,
                  ...(owner
                    ? { ConditionExpression: 'version = :v', ExpressionAttributeValues: { ':v': owner.version } }
                    : { ConditionExpression: 'attribute_not_exists(pk)' }),
                },
              },
            ],
          }),
        );
        return { status: 'created', token, record };
      } catch (err) {
        // Another create or revoke of this owner moved the version (or, never in practice, the id collided): again.
        if (!(err instanceof TransactionCanceledException)) throw err;
      }
    }
    throw new Error(`personal tokens of one owner kept changing during ${CREATE_ATTEMPTS} attempts to create one`);
  }

  async list(sub: string): Promise<PersonalTokenRecord[]> {
    const now = this.now();
    const owner = await this.owner(sub);
    const ids = Object.entries(owner?.tokens ?? {})
      .filter(([, exp]) => exp > now)
      .map(([id]) => id);
    if (ids.length === 0) return [];
    const items = (await batchGetAll(
      this.doc,
      this.table,
      ids.map((id) => ({ pk: PK.token + id })),
      { consistent: true, attempts: 3, exhausted: 'token table kept returning unprocessed keys' },
    )) as unknown as TokenItem[];
    return items
      .filter((i) => i.kind === 'pat' && i.sub === sub && !i.revoked && i.expiresAt > now)
      .map(recordOf)
      .sort((a, b) => b.createdAt - a.createdAt || a.id.localeCompare(b.id));
  }

  async find(id: string): Promise<PersonalTokenRecord | undefined> {
    const out = await this.doc.send(new GetCommand({ TableName: this.table, Key: { pk: PK.token + id }, ConsistentRead: true }));
    const item = out.Item as TokenItem | undefined;
    return item?.kind === 'pat' ? recordOf(item) : undefined;
  }

  async revoke(sub: string, id: string): Promise<boolean> {
    const now = this.now();
    try {
      await this.doc.send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Update: {
                TableName: this.table,
                Key: { pk: PK.token + id },
                UpdateExpression: 'SET revoked = :t, revokedAt = :now',
                ConditionExpression: 'attribute_exists(pk) AND kind = :pat AND #sub = :sub AND attribute_not_exists(revoked) AND expiresAt > :now',
                ExpressionAttributeNames: { '#sub': 'sub' },
                ExpressionAttributeValues: { ':t': true, ':now': now, ':pat': 'pat', ':sub': sub },
              },
            },
            {
              // The version moves too, so a create that read the list before this cannot put the id back.
              Update: {
                TableName: this.table,
                Key: { pk: PK.owner + sub },
                UpdateExpression: 'REMOVE tokens.#id SET version = version + :one',
                ConditionExpression: 'attribute_exists(pk)',
                ExpressionAttributeNames: { '#id': id },
                ExpressionAttributeValues: { ':one': 1 },
              },
            },
          ],
        }),
      );
      return true;
    } catch (err) {
      if (err instanceof TransactionCanceledException) return false;
      throw err;
    }
  }

  async touch(id: string, intervalSeconds: number): Promise<void> {
    const now = this.now();
    try {
      await this.doc.send(
        new UpdateCommand({
          TableName: this.table,
          Key: { pk: PK.token + id },
          UpdateExpression: 'SET lastUsedAt = :now',
          ConditionExpression: 'attribute_exists(pk) AND (attribute_not_exists(lastUsedAt) OR lastUsedAt <= :stale)',
          ExpressionAttributeValues: { ':now': now, ':stale': now - intervalSeconds },
        }),
      );
    } catch (err) {
      // Another instance recorded a use within the interval: nothing to do.
      if (!(err instanceof ConditionalCheckFailedException)) throw err;
    }
  }

  private async owner(sub: string): Promise<OwnerItem | undefined> {
    const out = await this.doc.send(new GetCommand({ TableName: this.table, Key: { pk: PK.owner + sub }, ConsistentRead: true }));
    return out.Item as OwnerItem | undefined;
  }
}

function recordOf(item: TokenItem): PersonalTokenRecord {
  return {
    id: item.id,
    sub: item.sub,
    hash: item.hash,
    name: item.name,
    scopes: [...item.scopes],
    ...(item.memories !== undefined && { memories: [...item.memories] }),
    ...(item.pathPrefix !== undefined && { pathPrefix: item.pathPrefix }),
    createdAt: item.createdAt,
    expiresAt: item.expiresAt,
    ...(item.lastUsedAt !== undefined && { lastUsedAt: item.lastUsedAt }),
    ...(item.revoked === true && { revoked: true }),
  };
}
