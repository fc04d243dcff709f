import { ENCODED_BODY, type HttpResult } from '../shared/http/types';

/**
 * Whole 200 responses of index-backed reads, per operation and raw query, valid for one content
 * generation of the search index. The catalog changes only when a crawl or seed writes it, while
 * the same pages (the default list, popular searches, facets) are asked for again and again; a hit
 * skips validation, the query and serialisation. Rate limiting and per-caller headers still run on
 * every request. Entries of an old generation are never served: the generation is part of the check.
 *
 * Bounded by entries and by bytes (bodies are 12 KB on average, a registry page up to about
 * 100 KB): a count alone would let a few thousand large pages take hundreds of MB. Least recently
 * used entries go first.
 */
export class ResponseCache {
  private readonly entries = new Map<string, { generation: object; result: HttpResult; bytes: number }>();
  private bytes = 0;

  constructor(
    private readonly maxEntries = 4096,
    private readonly maxBytes = 32 * 1024 * 1024,
  ) {}

  get(key: string, generation: object): HttpResult | undefined {
    const hit = this.entries.get(key);
    if (!hit) return undefined;
    this.entries.delete(key);
    if (hit.generation !== generation) {
      this.bytes -= hit.bytes;
      return undefined;
    }
    // Refresh its place in the LRU order.
    this.entries.set(key, hit);
    return { ...hit.result, headers: { ...hit.result.headers } };
  }

  set(key: string, generation: object, result: HttpResult): void {
    if (result.statusCode !== 200) return;
    // UTF-16 code units × 2: what the string holds in memory at most, without encoding it to count.
    const bytes = key.length * 2 + (result.body?.length ?? 0) * 2 + 256;
    if (bytes > this.maxBytes) return;
    const old = this.entries.get(key);
    if (old) {
      this.entries.delete(key);
      this.bytes -= old.bytes;
    }
    while (this.entries.size > 0 && (this.entries.size >= this.maxEntries || this.bytes + bytes > this.maxBytes)) {
      const [oldestKey, oldest] = this.entries.entries().next().value as [string, { bytes: number }];
      this.entries.delete(oldestKey);
      this.bytes -= oldest.bytes;
    }
    this.entries.set(key, { generation, result: { ...result, headers: { ...result.headers }, [ENCODED_BODY]: {} }, bytes });
    this.bytes += bytes;
  }

  /** Entries and their estimated bytes (tests, metrics). */
  get size(): { entries: number; bytes: number } {
    return { entries: this.entries.size, bytes: this.bytes };
  }
}
