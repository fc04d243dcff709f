import { QueryCommand, GetCommand, ScanCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { batchWriteAll, type WriteRequest } from '../../shared/aws/dynamo-batch';
import type { CatalogStore, CatalogWrite } from '../domain/ports';
import type { CatalogDetail, CatalogRecord, CatalogTool, ReadmeContent } from '../domain/types';

/**
 * The catalog's source of truth. One partition per server (`slug`), with up to three items:
 * `SERVER` (the record), `README` and `TOOLS`, kept apart so the record stays small and the
 * README (capped at 256 KB) stays far from DynamoDB's 400 KB item limit. The detail endpoint reads
 * the whole partition with one Query.
 */
const SK = { server: 'SERVER', readme: 'README', tools: 'TOOLS' } as const;

interface ServerItem {
  slug: string;
  sk: string;
  record?: CatalogRecord;
  readme?: ReadmeContent;
  tools?: CatalogTool[];
}

export class DynamoCatalogStore implements CatalogStore {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  async get(slug: string): Promise<CatalogDetail | undefined> {
    const out = await this.doc.send(
      new QueryCommand({ TableName: this.table, KeyConditionExpression: 'slug = :s', ExpressionAttributeValues: { ':s': slug } }),
    );
    return assemble((out.Items ?? []) as ServerItem[]);
  }

  async getRecord(slug: string): Promise<CatalogRecord | undefined> {
    const out = await this.doc.send(new GetCommand({ TableName: this.table, Key: { slug, sk: SK.server } }));
    return (out.Item as ServerItem | undefined)?.record;
  }

  async put(entries: CatalogWrite[]): Promise<void> {
    const requests: WriteRequest[] = [];
    for (const e of entries) {
      const slug = e.record.slug;
      requests.push({ PutRequest: { Item: { slug, sk: SK.server, record: e.record } } });
      if (e.readme === null) requests.push({ DeleteRequest: { Key: { slug, sk: SK.readme } } });
      else if (e.readme) requests.push({ PutRequest: { Item: { slug, sk: SK.readme, readme: e.readme } } });
      if (e.tools === null) requests.push({ DeleteRequest: { Key: { slug, sk: SK.tools } } });
      else if (e.tools) requests.push({ PutRequest: { Item: { slug, sk: SK.tools, tools: e.tools } } });
    }
    await batchWriteAll(this.doc, this.table, requests);
  }

  async delete(slugs: string[]): Promise<void> {
    const requests = slugs.flatMap((slug): WriteRequest[] => Object.values(SK).map((sk) => ({ DeleteRequest: { Key: { slug, sk } } })));
    await batchWriteAll(this.doc, this.table, requests);
  }

  async *scanAll(): AsyncIterable<CatalogDetail> {
    // Items of one partition may arrive across pages; group by slug and emit when complete.
    const pending = new Map<string, ServerItem[]>();
    let startKey: Record<string, unknown> | undefined;
    do {
      const out = await this.doc.send(new ScanCommand({ TableName: this.table, ExclusiveStartKey: startKey }));
      for (const item of (out.Items ?? []) as ServerItem[]) {
        const list = pending.get(item.slug);
        if (list) list.push(item);
        else pending.set(item.slug, [item]);
      }
      startKey = out.LastEvaluatedKey;
      // Scan returns a partition's items contiguously, so every slug but the last one seen is complete.
      const slugs = [...pending.keys()];
      const keepLast = startKey ? slugs[slugs.length - 1] : undefined;
      for (const slug of slugs) {
        if (slug === keepLast) continue;
        const d = assemble(pending.get(slug) ?? []);
        pending.delete(slug);
        if (d) yield d;
      }
    } while (startKey);
  }
}

function assemble(items: ServerItem[]): CatalogDetail | undefined {
  const server = items.find((i) => i.sk === SK.server);
  if (!server?.record) return undefined;
  const readme = items.find((i) => i.sk === SK.readme)?.readme;
  const tools = items.find((i) => i.sk === SK.tools)?.tools;
  return { record: server.record, ...(readme && { readme }), ...(tools && { tools }) };
}
