import SearchableMap from 'minisearch/SearchableMap';

/**
 * The embedded engine's full text: BM25 over compact per-term postings, with MiniSearch's radix
 * tree (`SearchableMap`) as the term dictionary for prefix and fuzzy expansion, and MiniSearch's
 * scoring model (BM25+ with its default parameters, its prefix and fuzzy weights, and its bonus for
 * documents matching more of the query's words). MiniSearch's own `search()` allocates several
 * objects per matching document: on the synthetic 10,000-server catalog a broad query ("mcp
 * server", ~9,800 hits) took 30-40 ms against a 5 ms budget; accumulating scores in typed arrays
 * takes about 1 ms.
 */
/** Indexed fields, in posting order, and their boosts: name/title > description > tools > README. */
const FIELD_BOOSTS = [5, 4, 2, 1.5, 0.5] as const; // name, title, description, toolText, readmeText
const FIELD_COUNT = FIELD_BOOSTS.length;
/** A posting packs the term frequency and the field id into one integer. */
const FIELD_BITS = 3;
const FIELD_MASK = (1 << FIELD_BITS) - 1;

// MiniSearch's default BM25+ parameters and expansion weights.
const BM25_K = 1.2;
const BM25_B = 0.7;
const BM25_D = 0.5;
const PREFIX_WEIGHT = 0.375;
const FUZZY_WEIGHT = 0.45;
/** Prefix and one-edit fuzzy matching start at this length: shorter words would match half the vocabulary. */
const EXPAND_MIN_LENGTH = 4;

/** Words are runs of letters and digits (markdown punctuation, `snake_case` and `a/b` all split). */
const NON_WORD = /[^\p{L}\p{N}]+/u;

export function tokenize(text: string): string[] {
  const out: string[] = [];
  for (const t of text.split(NON_WORD)) if (t !== '') out.push(t.toLowerCase());
  return out;
}

export interface SerializedText {
  terms: string[];
  /** Per term: [docDelta, packed, docDelta, packed, …] with ordinals ascending. */
  postings: number[][];
  /** FIELD_COUNT token counts per document, in ordinal order. */
  fieldLengths: number[];
}

/**
 * An inverted index over the five searchable fields of each document. Documents get increasing
 * ordinals, so every posting list stays sorted. Removal only marks the ordinal dead; statistics
 * (document count, average lengths, document frequencies) always count live documents only, so
 * scores do not depend on the history of writes, and dead postings are dropped by `compact()`.
 */
export class TextIndex<T> {
  private readonly termIds = new Map<string, number>();
  private readonly tree = new SearchableMap<number>();
  private readonly postingDocs: number[][] = [];
  private readonly postingPacked: number[][] = [];
  /** Documents per (term, field), counted on add; exact while nothing is dead. */
  private readonly docFreq: number[] = [];

  private payloads: (T | undefined)[] = [];
  private keys: (string | undefined)[] = [];
  private readonly ordinals = new Map<string, number>();
  private fieldLengths: number[] = [];
  private readonly fieldLengthSums = new Array<number>(FIELD_COUNT).fill(0);
  private live = 0;
  private dead = 0;

  // Scratch buffers for scoring, reused across queries.
  private scores = new Float64Array(0);
  private matchedTerms = new Uint16Array(0);
  private lastQueryTerm = new Int32Array(0);
  private touchedBy = new Int32Array(0);
  private queryCounter = 0;

  get deadCount(): number {
    return this.dead;
  }

  add(key: string, fields: readonly string[], payload: T): void {
    if (this.ordinals.has(key)) this.remove(key);
    const ordinal = this.payloads.length;
    this.payloads.push(payload);
    this.keys.push(key);
    this.ordinals.set(key, ordinal);
    this.live += 1;
    for (let f = 0; f < FIELD_COUNT; f++) {
      const tokens = tokenize(fields[f] ?? '');
      this.fieldLengths.push(tokens.length);
      this.fieldLengthSums[f] += tokens.length;
      const counts = new Map<string, number>();
      for (const t of tokens) counts.set(t, (counts.get(t) ?? 0) + 1);
      for (const [term, tf] of counts) {
        const id = this.termId(term);
        this.postingDocs[id].push(ordinal);
        this.postingPacked[id].push((tf << FIELD_BITS) | f);
        this.docFreq[id * FIELD_COUNT + f] += 1;
      }
    }
  }

  remove(key: string): void {
    const ordinal = this.ordinals.get(key);
    if (ordinal === undefined) return;
    this.ordinals.delete(key);
    this.payloads[ordinal] = undefined;
    this.keys[ordinal] = undefined;
    for (let f = 0; f < FIELD_COUNT; f++) this.fieldLengthSums[f] -= this.fieldLengths[ordinal * FIELD_COUNT + f];
    this.live -= 1;
    this.dead += 1;
  }

  /** Calls `visit` once per matching document with its score (higher is better). */
  search(query: string, visit: (payload: T, score: number) => void): void {
    const terms = [...new Set(tokenize(query))];
    if (terms.length === 0 || this.live === 0) return;
    this.ensureScratch();
    if (this.queryCounter >= 0x7fffffff) {
      // `touchedBy` holds query ids in an Int32Array: start over before they would wrap.
      this.touchedBy.fill(0);
      this.queryCounter = 0;
    }
    const qid = ++this.queryCounter;
    const touched: number[] = [];
    const avgLengths = this.fieldLengthSums.map((sum) => sum / this.live);
    for (let qi = 0; qi < terms.length; qi++) {
      for (const [id, weight] of this.expand(terms[qi])) this.scoreTerm(id, weight, qi, qid, avgLengths, touched);
    }
    for (const o of touched) {
      const payload = this.payloads[o];
      if (payload !== undefined) visit(payload, this.scores[o] * this.matchedTerms[o]);
    }
  }

  /** Drops dead documents and renumbers ordinals; returns the payloads in their new ordinal order. */
  compact(): (T | undefined)[] {
    if (this.dead === 0) return this.payloads;
    const remap = new Int32Array(this.payloads.length).fill(-1);
    let next = 0;
    for (let o = 0; o < this.payloads.length; o++) if (this.payloads[o] !== undefined) remap[o] = next++;
    const payloads: (T | undefined)[] = [];
    const keys: (string | undefined)[] = [];
    const lengths: number[] = [];
    this.ordinals.clear();
    for (let o = 0; o < this.payloads.length; o++) {
      const key = this.keys[o];
      if (remap[o] < 0 || key === undefined) continue;
      this.ordinals.set(key, payloads.length);
      payloads.push(this.payloads[o]);
      keys.push(key);
      for (let f = 0; f < FIELD_COUNT; f++) lengths.push(this.fieldLengths[o * FIELD_COUNT + f]);
    }
    const oldTerms = [...this.termIds.keys()];
    const oldDocs = this.postingDocs.splice(0);
    const oldPacked = this.postingPacked.splice(0);
    this.termIds.clear();
    this.tree.clear();
    this.docFreq.length = 0;
    oldTerms.forEach((term, id) => {
      const docs = oldDocs[id];
      const packed = oldPacked[id];
      let newId = -1;
      for (let j = 0; j < docs.length; j++) {
        const o = remap[docs[j]];
        if (o < 0) continue;
        if (newId < 0) newId = this.termId(term);
        this.postingDocs[newId].push(o);
        this.postingPacked[newId].push(packed[j]);
        this.docFreq[newId * FIELD_COUNT + (packed[j] & FIELD_MASK)] += 1;
      }
    });
    this.payloads = payloads;
    this.keys = keys;
    this.fieldLengths = lengths;
    this.dead = 0;
    return this.payloads;
  }

  /** Serialises a compacted copy; ordinal i is the i-th payload of `compact()`. */
  toJSON(): SerializedText {
    this.compact();
    const postings = this.postingDocs.map((docs, id) => {
      const packed = this.postingPacked[id];
      const out = new Array<number>(docs.length * 2);
      let prev = 0;
      for (let j = 0; j < docs.length; j++) {
        out[2 * j] = docs[j] - prev;
        out[2 * j + 1] = packed[j];
        prev = docs[j];
      }
      return out;
    });
    return { terms: [...this.termIds.keys()], postings, fieldLengths: this.fieldLengths.slice() };
  }

  static fromJSON<T>(data: SerializedText, payloads: T[], keyOf: (p: T) => string): TextIndex<T> {
    const index = new TextIndex<T>();
    if (data.fieldLengths.length !== payloads.length * FIELD_COUNT || data.postings.length !== data.terms.length) {
      throw new Error('search snapshot is inconsistent (documents and text index differ)');
    }
    index.payloads = payloads.slice();
    const keys = payloads.map(keyOf);
    for (const [o, key] of keys.entries()) index.ordinals.set(key, o);
    index.keys = keys;
    index.live = payloads.length;
    index.fieldLengths = data.fieldLengths;
    for (let o = 0; o < payloads.length; o++) {
      for (let f = 0; f < FIELD_COUNT; f++) index.fieldLengthSums[f] += data.fieldLengths[o * FIELD_COUNT + f];
    }
    data.terms.forEach((term, i) => {
      const id = index.termId(term);
      const encoded = data.postings[i];
      const docs = index.postingDocs[id];
      const packed = index.postingPacked[id];
      let doc = 0;
      for (let j = 0; j < encoded.length; j += 2) {
        doc += encoded[j];
        docs.push(doc);
        packed.push(encoded[j + 1]);
        index.docFreq[id * FIELD_COUNT + (encoded[j + 1] & FIELD_MASK)] += 1;
      }
    });
    return index;
  }

  // --- internals

  private termId(term: string): number {
    let id = this.termIds.get(term);
    if (id === undefined) {
      id = this.postingDocs.length;
      this.termIds.set(term, id);
      this.tree.set(term, id);
      this.postingDocs.push([]);
      this.postingPacked.push([]);
      for (let f = 0; f < FIELD_COUNT; f++) this.docFreq.push(0);
    }
    return id;
  }

  /** The dictionary terms a query term stands for, with MiniSearch's weights (exact 1, prefix, fuzzy). */
  private expand(term: string): Map<number, number> {
    const out = new Map<number, number>();
    const exact = this.termIds.get(term);
    if (exact !== undefined) out.set(exact, 1);
    if (term.length < EXPAND_MIN_LENGTH) return out;
    for (const [candidate, id] of this.tree.atPrefix(term)) {
      const distance = candidate.length - term.length;
      if (distance === 0) continue;
      out.set(id, (PREFIX_WEIGHT * term.length) / (term.length + 0.3 * distance));
    }
    for (const [candidate, [id, distance]] of this.tree.fuzzyGet(term, 1)) {
      if (distance === 0 || candidate.startsWith(term)) continue;
      out.set(id, (FUZZY_WEIGHT * term.length) / (term.length + distance));
    }
    return out;
  }

  private scoreTerm(id: number, weight: number, qi: number, qid: number, avgLengths: number[], touched: number[]): void {
    const docs = this.postingDocs[id];
    const packed = this.postingPacked[id];
    const df = this.liveDocFreq(id);
    const factor = new Array<number>(FIELD_COUNT);
    for (let f = 0; f < FIELD_COUNT; f++) {
      const idf = df[f] === 0 ? 0 : Math.log(1 + (this.live - df[f] + 0.5) / (df[f] + 0.5));
      factor[f] = weight * FIELD_BOOSTS[f] * idf;
    }
    const { scores, matchedTerms, lastQueryTerm, touchedBy, payloads, fieldLengths } = this;
    for (let j = 0; j < docs.length; j++) {
      const o = docs[j];
      if (payloads[o] === undefined) continue;
      const f = packed[j] & FIELD_MASK;
      const tf = packed[j] >>> FIELD_BITS;
      const norm = 1 - BM25_B + (BM25_B * fieldLengths[o * FIELD_COUNT + f]) / (avgLengths[f] || 1);
      const s = factor[f] * (BM25_D + (tf * (BM25_K + 1)) / (tf + BM25_K * norm));
      if (touchedBy[o] !== qid) {
        touchedBy[o] = qid;
        scores[o] = 0;
        matchedTerms[o] = 0;
        lastQueryTerm[o] = -1;
        touched.push(o);
      }
      scores[o] += s;
      if (lastQueryTerm[o] !== qi) {
        lastQueryTerm[o] = qi;
        matchedTerms[o] += 1;
      }
    }
  }

  private liveDocFreq(id: number): number[] {
    const df = this.docFreq.slice(id * FIELD_COUNT, (id + 1) * FIELD_COUNT);
    if (this.dead === 0) return df;
    // Dead postings are still in the list until the next compaction: count live ones only.
    df.fill(0);
    const docs = this.postingDocs[id];
    const packed = this.postingPacked[id];
    for (let j = 0; j < docs.length; j++) if (this.payloads[docs[j]] !== undefined) df[packed[j] & FIELD_MASK] += 1;
    return df;
  }

  private ensureScratch(): void {
    const n = this.payloads.length;
    if (this.scores.length >= n) return;
    const size = Math.max(n, this.scores.length * 2, 1024);
    this.scores = new Float64Array(size);
    this.matchedTerms = new Uint16Array(size);
    this.lastQueryTerm = new Int32Array(size);
    this.touchedBy = new Int32Array(size);
    this.queryCounter = 0;
  }
}
