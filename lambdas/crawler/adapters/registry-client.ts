import * as z from 'zod';
import type { UpstreamPage, UpstreamRegistry } from '../domain/ports';
import { bodyJson, bodyText, type HttpClient } from '../http/http-client';

/**
 * The upstream registry's list endpoint (official OpenAPI 2025-12-01):
 * `GET {base}/v0.1/servers?version=latest&limit=…&include_deleted=true[&cursor=…][&updated_since=…]`.
 *
 * `include_deleted=true` makes deleted servers show up (with status `deleted`) so they can leave
 * the catalog; upstream already implies it with `updated_since`, older deployments ignore it.
 */

const pageSchema = z.object({
  servers: z.array(z.unknown()),
  metadata: z
    .object({
      nextCursor: z.string().nullish(),
      next_cursor: z.string().nullish(),
      count: z.number().optional(),
    })
    .optional(),
});

export class UpstreamError extends Error {
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = 'UpstreamError';
  }
}

export interface RegistryClientOptions {
  baseUrl: string;
  pageSize: number;
  http: HttpClient;
}

export class RegistryClient implements UpstreamRegistry {
  constructor(private readonly o: RegistryClientOptions) {}

  pageUrl(q: { cursor?: string; updatedSince?: string }): string {
    // A base URL with a path prefix (behind a proxy) keeps it.
    const url = new URL(`${this.o.baseUrl.replace(/\/+$/, '')}/v0.1/servers`);
    url.searchParams.set('version', 'latest');
    url.searchParams.set('limit', String(this.o.pageSize));
    url.searchParams.set('include_deleted', 'true');
    if (q.cursor !== undefined) url.searchParams.set('cursor', q.cursor);
    if (q.updatedSince !== undefined) url.searchParams.set('updated_since', q.updatedSince);
    return url.toString();
  }

  async fetchPage(q: { cursor?: string; updatedSince?: string }): Promise<UpstreamPage> {
    const url = this.pageUrl(q);
    const res = await this.o.http.request(url, { headers: { accept: 'application/json' } });
    if (res.status !== 200) {
      throw new UpstreamError(`upstream answered ${res.status} for ${url}: ${bodyText(res).slice(0, 200)}`, res.status);
    }
    let json: unknown;
    try {
      json = bodyJson(res);
    } catch {
      throw new UpstreamError(`upstream sent invalid JSON for ${url}`);
    }
    const page = pageSchema.safeParse(json);
    if (!page.success) throw new UpstreamError(`upstream page has an unexpected shape (${page.error.issues[0]?.message ?? 'invalid'})`);
    const next = page.data.metadata?.nextCursor ?? page.data.metadata?.next_cursor ?? undefined;
    const date = res.headers.get('date');
    const serverDate = date === null || Number.isNaN(Date.parse(date)) ? undefined : new Date(Date.parse(date)).toISOString();
    return {
      rows: page.data.servers,
      ...(next !== undefined && next !== null && next !== '' && { nextCursor: next }),
      ...(serverDate !== undefined && { serverDate }),
    };
  }
}
