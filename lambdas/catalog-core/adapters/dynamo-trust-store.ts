import { QueryCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { batchWriteAll, type WriteRequest } from '../../shared/aws/dynamo-batch';
import { createHash } from 'node:crypto';
import type { HealthCheck } from '../domain/health-history';
import type { ChangePage, TrustStore } from '../domain/ports';
import type { ChangeEntry } from '../domain/tool-changes';

/**
 * A server's history in the trust table (`TRUST_TABLE`): partition `slug`, sort key
 * `check#<ISO time>` per live check and `change#<ISO time>#<id>` per changelog entry (the id a hash
 * of the entry, so a retried write is the same item). ISO times of one format sort as text, so a
 * window is one Query between two keys and the changelog one Query backwards. Checks expire
 * (`expiresAt`, epoch seconds) after the retention; changes are kept. Breaking changes are also
 * written to the partition `#breaking` (no slug starts with `#`), sort key `<time>#<slug>#<id>`,
 * for the site's feed: the newest across all servers is one Query, no index. They expire with the
 * checks' retention (the feed shows recent news).
 */
const CHECK = 'check#';
const CHANGE = 'change#';
const BREAKING = '#breaking';

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

  async putChanges(entries: Array<{ slug: string; entry: ChangeEntry }>): Promise<void> {
    const requests: WriteRequest[] = [];
    for (const { slug, entry } of entries) {
      const id = createHash('sha256').update(JSON.stringify(entry)).digest('hex').slice(0, 12);
      requests.push({ PutRequest: { Item: { slug, sk: `${CHANGE}${entry.at}#${id}`, entry } } });
      if (entry.breaking) {
        const expiresAt = Math.floor(Date.parse(entry.at) / 1000) + this.retentionDays * 86_400;
        requests.push({ PutRequest: { Item: { slug: BREAKING, sk: `${entry.at}#${slug}#${id}`, server: slug, entry, expiresAt } } });
      }
    }
    await batchWriteAll(this.doc, this.table, requests);
  }

  async changes(slug: string, opts: { before?: string; limit: number }): Promise<ChangePage> {
    const res = await this.doc.send(
      new QueryCommand({
        TableName: this.table,
        KeyConditionExpression: opts.before === undefined ? 'slug = :s AND begins_with(sk, :p)' : 'slug = :s AND sk BETWEEN :p AND :b',
        ExpressionAttributeValues: { ':s': slug, ':p': CHANGE, ...(opts.before !== undefined && { ':b': opts.before }) },
        ScanIndexForward: false,
        Limit: opts.limit + 1,
      }),
    );
    const items = ((res.Items ?? []) as Array<{ sk: string; entry: ChangeEntry }>).filter((i) => i.sk !== opts.before);
    const page = items.slice(0, opts.limit);
    return { items: page.map((i) => i.entry), ...(items.length > opts.limit && { next: page[page.length - 1].sk }) };
  }

  async recentBreaking(limit: number): Promise<Array<{ slug: string; entry: ChangeEntry }>> {
    const res = await this.doc.send(
      new QueryCommand({
        TableName: this.table,
        KeyConditionExpression: 'slug = :s',
        ExpressionAttributeValues: { ':s': BREAKING },
        ScanIndexForward: false,
        Limit: limit,
      }),
    );
    return ((res.Items ?? []) as Array<{ server: string; entry: ChangeEntry }>).map((i) => ({ slug: i.server, entry: i.entry }));
  }

  /**
   * Removes a server's whole history, e.g. when it leaves the catalog or demo data is replaced: its
   * partition, and its entries in the cross-server partition of breaking changes (whose keys its
   * breaking change items give: `change#<at>#<id>` there is `<at>#<slug>#<id>` here).
   */
  async deleteAll(slug: string): Promise<void> {
    let startKey: Record<string, unknown> | undefined;
    do {
      const res = await this.doc.send(
        new QueryCommand({
          TableName: this.table,
          KeyConditionExpression: 'slug = :s',
          ExpressionAttributeValues: { ':s': slug },
          ProjectionExpression: 'slug, sk, #e.breaking',
          ExpressionAttributeNames: { '#e': 'entry' },
          ExclusiveStartKey: startKey,
        }),
      );
      const items = (res.Items ?? []) as Array<{ slug: string; sk: string; entry?: { breaking?: boolean } }>;
      const keys = items.map(({ slug: s, sk }) => ({ slug: s, sk }));
      for (const item of items) {
        if (!item.sk.startsWith(CHANGE) || item.entry?.breaking !== true) continue;
        const rest = item.sk.slice(CHANGE.length);
        const cut = rest.lastIndexOf('#');
        keys.push({ slug: BREAKING, sk: `${rest.slice(0, cut)}#${slug}#${rest.slice(cut + 1)}` });
      }
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
