import { ENCODED_BODY, type HttpResult } from '../shared/http/types';

/**
 * Whole 200 responses of index-backed reads, per operation and raw query, valid for one content
 * generation of the search index. The catalog changes only when a crawl or seed writes it, while
 * the same pages (the default list, popular searches, facets) are asked for again and again; a hit
 * skips validation, the query and serialisation. Rate limiting and per-caller headers still run on
 * every request. Entries of an old generation are never served: the generation is part of the check.
 *
 * Bounded by entries and by bytes (a list page is 17 KB on average, a registry page up to about
 * 100 KB): a count alone would let a few thousand large pages take hundreds of MB. Least recently
 * used entries go first. The bytes are what the entry holds: V8 keeps a string whose characters
 * are all Latin-1 (every list page of the benchmark's catalog) at one byte per character, any
 * other at two; and a writer that keeps the encoded bytes of a hit beside it (the local server,
 * `ENCODED_BODY`) adds that copy, counted when the entry is next read. Counting every page at two
 * bytes per character, as this cache once did, charged 34 KB for a 17 KB page in Lambda (which keeps
 * no encoded copy), so 1,200 list pages overflowed 32 MB and a round over them missed every time.
 */
interface Entry {
  generation: object;
  result: HttpResult;
  bytes: number;
  /** The writer's encoded copy once counted (0: not yet, or none). */
  encoded: number;
}

/** The entry's map slot, its result and headers objects: a fixed allowance beside its strings. */
const ENTRY_OVERHEAD = 512;
/** Any character outside Latin-1 makes V8 keep the whole string at two bytes per character. */
const WIDE = /[^\u0000-\u00ff]/;

/** What V8 holds for a string: one byte per character when all are Latin-1, else two (a test that costs well under a µs on a Latin-1 string). */
export function stringBytes(s: string): number {
  return WIDE.test(s) ? s.length * 2 : s.length;
}

export class ResponseCache {
  private readonly entries = new Map<string, Entry>();
  private bytes = 0;

  constructor(
    private readonly maxEntries = 50_000,
    private readonly maxBytes = 256 * 1024 * 1024,
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
    const encoded = hit.encoded === 0 ? hit.result[ENCODED_BODY]?.bytes?.length : undefined;
    if (encoded !== undefined) {
      hit.encoded = encoded;
      hit.bytes += encoded;
      this.bytes += encoded;
      this.evict(0, key);
    }
    return { ...hit.result, headers: { ...hit.result.headers } };
  }

  set(key: string, generation: object, result: HttpResult): void {
    if (result.statusCode !== 200) return;
    const bytes = stringBytes(key) + stringBytes(result.body ?? '') + ENTRY_OVERHEAD;
    if (bytes > this.maxBytes) return;
    const old = this.entries.get(key);
    if (old) {
      this.entries.delete(key);
      this.bytes -= old.bytes;
    }
    this.evict(bytes);
    this.entries.set(key, { generation, result: { ...result, headers: { ...result.headers }, [ENCODED_BODY]: {} }, bytes, encoded: 0 });
    this.bytes += bytes;
  }

  /** Drops the least recently used entries (never `keep`) until `incoming` more bytes and one more entry fit. */
  private evict(incoming: number, keep?: string): void {
    for (const [k, e] of this.entries) {
      const over = incoming > 0 ? this.entries.size >= this.maxEntries || this.bytes + incoming > this.maxBytes : this.bytes > this.maxBytes;
      if (!over) return;
      if (k === keep) continue;
      this.entries.delete(k);
      this.bytes -= e.bytes;
    }
  }

  /** Entries and their estimated bytes (tests, metrics). */
  get size(): { entries: number; bytes: number } {
    return { entries: this.entries.size, bytes: this.bytes };
  }
}
