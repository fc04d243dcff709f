/** In-process stand-ins for the crawler's unit tests (no sockets, no DynamoDB). */

import type { CatalogStore, CatalogWrite, IconStore, CatalogDetail, CatalogRecord } from '../../lambdas/catalog-core';
import type { UpstreamPage, UpstreamRegistry } from '../../lambdas/crawler/domain/ports';

export class MemoryCatalogStore implements CatalogStore {
  readonly items = new Map<string, CatalogDetail>();
  writes = 0;
  deletes = 0;

  async get(slug: string): Promise<CatalogDetail | undefined> {
    const d = this.items.get(slug);
    return d && structuredClone(d);
  }
  async getRecord(slug: string): Promise<CatalogRecord | undefined> {
    return (await this.get(slug))?.record;
  }
  async put(entries: CatalogWrite[]): Promise<void> {
    for (const e of entries) {
      this.writes++;
      const prev = this.items.get(e.record.slug);
      const d: CatalogDetail = { record: structuredClone(e.record) };
      const readme = e.readme === undefined ? prev?.readme : (e.readme ?? undefined);
      const tools = e.tools === undefined ? prev?.tools : (e.tools ?? undefined);
      if (readme) d.readme = structuredClone(readme);
      if (tools) d.tools = structuredClone(tools);
      this.items.set(e.record.slug, d);
    }
  }
  async delete(slugs: string[]): Promise<void> {
    for (const s of slugs) if (this.items.delete(s)) this.deletes++;
  }
  async *scanAll(): AsyncIterable<CatalogDetail> {
    for (const d of [...this.items.values()]) yield structuredClone(d);
  }
  async anyRecord() {
    const first = this.items.values().next();
    return first.done ? undefined : structuredClone(first.value.record);
  }
}

export class MemoryIconStore implements IconStore {
  readonly icons = new Map<string, Uint8Array>();
  async get(slug: string) {
    return this.icons.get(slug);
  }
  async has(slug: string) {
    return this.icons.has(slug);
  }
  async putIfAbsent(slug: string, webp: Uint8Array) {
    if (this.icons.has(slug)) return false;
    this.icons.set(slug, webp);
    return true;
  }
  async remove(slugs: string[]) {
    for (const s of slugs) this.icons.delete(s);
  }
}

/** Upstream pages from an array (cursor = offset), with `updated_since` and one-shot failures. */
export class ArrayUpstream implements UpstreamRegistry {
  calls: Array<{ cursor?: string; updatedSince?: string }> = [];
  failNext = 0;

  constructor(
    public rows: unknown[],
    private readonly pageSize = 10,
  ) {}

  async fetchPage(q: { cursor?: string; updatedSince?: string }): Promise<UpstreamPage> {
    this.calls.push(q);
    if (this.failNext > 0) {
      this.failNext--;
      throw new Error('injected upstream failure');
    }
    const since = q.updatedSince === undefined ? undefined : Date.parse(q.updatedSince);
    const list =
      since === undefined
        ? this.rows
        : this.rows.filter((r) => {
            const at = (r as { _meta?: Record<string, { updatedAt?: string }> })._meta?.['io.modelcontextprotocol.registry/official']?.updatedAt;
            return at !== undefined && Date.parse(at) >= since;
          });
    const offset = q.cursor === undefined ? 0 : Number(q.cursor);
    const rows = list.slice(offset, offset + this.pageSize);
    const next = offset + this.pageSize < list.length ? String(offset + this.pageSize) : undefined;
    return { rows, ...(next !== undefined && { nextCursor: next }), serverDate: '2025-10-22T12:00:00.000Z' };
  }
}

/** A registry row in the API's ServerResponse shape. */
export function row(
  name: string,
  version: string,
  o: {
    status?: 'active' | 'deprecated' | 'deleted';
    isLatest?: boolean;
    publishedAt?: string;
    updatedAt?: string;
    description?: string;
    repository?: string;
    remotes?: Array<{ type: 'streamable-http' | 'sse'; url: string }>;
    packages?: Array<{ registryType: string; identifier: string }>;
  } = {},
): unknown {
  const publishedAt = o.publishedAt ?? '2025-10-01T00:00:00Z';
  return {
    server: {
      $schema: 'https://static.modelcontextprotocol.io/schemas/2025-09-29/server.schema.json',
      name,
      description: o.description ?? `The ${name} server`,
      version,
      ...(o.repository !== undefined && { repository: { url: o.repository, source: 'github' } }),
      ...(o.packages && { packages: o.packages.map((p) => ({ ...p, version, transport: { type: 'stdio' } })) }),
      ...(o.remotes && { remotes: o.remotes }),
    },
    _meta: {
      'io.modelcontextprotocol.registry/official': {
        status: o.status ?? 'active',
        publishedAt,
        updatedAt: o.updatedAt ?? publishedAt,
        isLatest: o.isLatest ?? true,
      },
    },
  };
}
