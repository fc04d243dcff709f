import type { HttpResult } from '../shared/http/types';

/**
 * Whole 200 responses of index-backed reads, per operation and raw query, valid for one content
 * generation of the search index. The catalog changes only when a crawl or seed writes it, while
 * the same pages (the default list, popular searches, facets) are asked for again and again; a hit
 * skips validation, the query and serialisation. Rate limiting and per-caller headers still run on
 * every request. Entries of an old generation are never served: the generation is part of the check.
 */
export class ResponseCache {
  private readonly entries = new Map<string, { generation: object; result: HttpResult }>();

  constructor(private readonly maxEntries = 512) {}

  get(key: string, generation: object): HttpResult | undefined {
    const hit = this.entries.get(key);
    if (!hit) return undefined;
    if (hit.generation !== generation) {
      this.entries.delete(key);
      return undefined;
    }
    // Refresh its place in the LRU order.
    this.entries.delete(key);
    this.entries.set(key, hit);
    return { ...hit.result, headers: { ...hit.result.headers } };
  }

  set(key: string, generation: object, result: HttpResult): void {
    if (result.statusCode !== 200) return;
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value as string);
    this.entries.set(key, { generation, result: { ...result, headers: { ...result.headers } } });
  }
}
