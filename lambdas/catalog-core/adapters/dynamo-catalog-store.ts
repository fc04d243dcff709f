import { QueryCommand, GetCommand, ScanCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { batchWriteAll, type WriteRequest } from '../../shared/aws/dynamo-batch';
import { mergeLimit } from '../../shared/concurrency';
import type { CatalogStore, CatalogWrite } from '../domain/ports';
import type { CatalogDetail, CatalogRecord, CatalogTool, ReadmeContent } from '../domain/types';

/**
 * The catalog's source of truth. One partition per server (`slug`), with up to three items:
 * `SERVER` (the record), `README` and `TOOLS`, kept apart so the record stays small and the
 * README (capped at 256 KB) stays far from DynamoDB's 400 KB item limit. The detail endpoint reads
 * the whole partition with one Query.
 */
const SK = { server: 'SERVER', readme: 'README', tools: 'TOOLS' } as const;

/** Segments of a full scan and how many are read at once (see `scanAll`). */
const SCAN_SEGMENTS = 64;
const SCAN_CONCURRENCY = 4;

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
    private readonly scanSegments = SCAN_SEGMENTS,
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

  /** The first `SERVER` item a scan meets: a read or two, whatever the table's size. */
  async anyRecord(): Promise<CatalogRecord | undefined> {
    let startKey: Record<string, unknown> | undefined;
    do {
      const out = await this.doc.send(
        new ScanCommand({
          TableName: this.table,
          ExclusiveStartKey: startKey,
          Limit: 25,
          FilterExpression: 'sk = :server',
          ExpressionAttributeValues: { ':server': SK.server },
        }),
      );
      const found = (out.Items as ServerItem[] | undefined)?.find((i) => i.record !== undefined);
      if (found?.record !== undefined) return found.record;
      startKey = out.LastEvaluatedKey;
    } while (startKey);
    return undefined;
  }

  /**
   * The whole table as a parallel scan: `segments` segments, `concurrency` read at once. In AWS
   * that is the documented way to read a large table quickly. DynamoDB Local needs it even more:
   * there a Scan page costs time in proportion to the rest of the table after its start key
   * (measured: at 30,000 servers the first page took 3.9 s and the whole sequential scan 144 s,
   * 64 segments 7.5 s), so one sequential scan of 100,000 servers is quadratic and its first pages
   * pass the request timeout. A segment is a range of partition-key hashes, so a server's items
   * (one partition) are all in one segment, together.
   */
  scanAll(opts: { segments?: number; concurrency?: number } = {}): AsyncIterable<CatalogDetail> {
    const segments = Math.max(1, opts.segments ?? this.scanSegments);
    const sources = Array.from({ length: segments }, (_, segment) => () => this.scanSegment(segment, segments));
    return mergeLimit(sources, opts.concurrency ?? SCAN_CONCURRENCY);
  }

  private async *scanSegment(segment: number, totalSegments: number): AsyncIterable<CatalogDetail> {
    // Items of one partition may arrive across pages; group by slug and emit when complete.
    const pending = new Map<string, ServerItem[]>();
    let startKey: Record<string, unknown> | undefined;
    do {
      const out = await this.doc.send(
        new ScanCommand({
          TableName: this.table,
          ExclusiveStartKey: startKey,
          ...(totalSegments > 1 && { Segment: segment, TotalSegments: totalSegments }),
        }),
      );
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
