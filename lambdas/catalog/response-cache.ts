import { ENCODED_BODY, type EncodedBody, type HttpResult } from '../shared/http/types';

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
  /** The result as set, without its holder (a copy is made per hit). */
  result: HttpResult;
  /** Shared by every copy of this entry's result: where a writer keeps the encoded body. */
  holder: EncodedBody;
  bytes: number;
  /** The writer's encoded copy once counted (0: not yet, or none). */
  encoded: number;
  /** Read since the eviction scan last passed it (second chance). */
  used: boolean;
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
    if (hit.generation !== generation) {
      this.entries.delete(key);
      this.bytes -= hit.bytes;
      return undefined;
    }
    // Marked, not moved: moving the entry to the end of the map on every hit cost more than the
    // rest of a hit; the eviction scan gives a marked entry a second chance instead.
    hit.used = true;
    if (hit.encoded === 0 && hit.holder.bytes !== undefined) {
      hit.encoded = hit.holder.bytes.length;
      hit.bytes += hit.encoded;
      this.bytes += hit.encoded;
      this.evict(0, key);
    }
    // A copy of the result (built by assignment: spreading it into a literal was a third of a hit's
    // CPU), sharing the entry's frozen headers: the pipeline answers with a new headers object.
    const out: HttpResult = Object.assign({}, hit.result);
    out[ENCODED_BODY] = hit.holder;
    return out;
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
    const kept: HttpResult = Object.assign({}, result);
    kept.headers = Object.freeze(Object.assign({}, result.headers));
    delete kept[ENCODED_BODY];
    this.entries.set(key, { generation, result: kept, holder: {}, bytes, encoded: 0, used: false });
    this.bytes += bytes;
  }

  /**
   * Drops entries, oldest first, until `incoming` more bytes and one more entry fit; never `keep`.
   * An entry read since the scan last passed it is moved to the end instead, once (the "clock"
   * approximation of least recently used: a page read again and again stays).
   */
  private evict(incoming: number, keep?: string): void {
    const over = () => (incoming > 0 ? this.entries.size >= this.maxEntries || this.bytes + incoming > this.maxBytes : this.bytes > this.maxBytes);
    for (const [k, e] of this.entries) {
      if (!over()) return;
      if (k === keep) continue;
      this.entries.delete(k);
      if (e.used) {
        // A Map visits entries added while it is iterated: this one comes round again, unmarked.
        e.used = false;
        this.entries.set(k, e);
      } else this.bytes -= e.bytes;
    }
  }

  /** Entries and their estimated bytes (tests, metrics). */
  get size(): { entries: number; bytes: number } {
    return { entries: this.entries.size, bytes: this.bytes };
  }
}
