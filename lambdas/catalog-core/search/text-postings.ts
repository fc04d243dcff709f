import SearchableMap from 'minisearch/SearchableMap';
import { analyze } from './analysis';
import { FIELDS, PHRASE_FIELDS, PREFIX_MAX_EXPANSIONS } from './ranking';

/**
 * The embedded engine's postings: what is indexed and how it is kept. Per term, the documents
 * holding it and, packed in one integer per posting, the term frequency and the field; document
 * frequencies per field; each document's token count per field; MiniSearch's radix tree
 * (`SearchableMap`) as the dictionary for prefix and fuzzy expansion; the snapshot form. The
 * scoring over them is `text-index.ts` (`TextIndex` extends this class: the hot loops read the
 * postings as their own fields, not through accessors).
 */

export const FIELD_COUNT = FIELDS.length;
export const maskOf = (fields: readonly string[]): number => fields.reduce((m, f) => m | (1 << FIELDS.indexOf(f as (typeof FIELDS)[number])), 0);
const PHRASE_MASK = maskOf(PHRASE_FIELDS);
/** A posting packs the term frequency and the field id into one integer. */
export const FIELD_BITS = 3;
export const FIELD_MASK = (1 << FIELD_BITS) - 1;
/** Word pairs are dictionary terms `a b` (a word never holds a space), kept out of the radix tree. */
export const PAIR = ' ';

export interface SerializedText {
  terms: string[];
  /** Per term: [docDelta, packed, docDelta, packed, …] with ordinals ascending. */
  postings: number[][];
  /** FIELD_COUNT token counts per document, in ordinal order. */
  fieldLengths: number[];
}

/**
 * An inverted index over the searchable fields of each document. Documents get increasing
 * ordinals, so every posting list stays sorted. Removal only marks the ordinal dead; statistics
 * (document counts, average lengths, document frequencies) always count live documents only, so
 * scores do not depend on the history of writes, and dead postings are dropped by `compact()`.
 */
export class TextPostings<T> {
  protected readonly termIds = new Map<string, number>();
  protected readonly tree = new SearchableMap<number>();
  protected readonly postingDocs: number[][] = [];
  protected readonly postingPacked: number[][] = [];
  /** Documents per (term, field), counted on add; exact while nothing is dead. */
  protected readonly docFreq: number[] = [];

  protected payloads: (T | undefined)[] = [];
  protected keys: (string | undefined)[] = [];
  protected readonly ordinals = new Map<string, number>();
  protected fieldLengths: number[] = [];
  protected readonly fieldLengthSums = new Array<number>(FIELD_COUNT).fill(0);
  protected readonly fieldDocCounts = new Array<number>(FIELD_COUNT).fill(0);
  protected live = 0;
  protected dead = 0;

  get deadCount(): number {
    return this.dead;
  }

  /** Ordinals run from 0 to this (dead ones included until `compact()`). */
  get ordinalCount(): number {
    return this.payloads.length;
  }

  /** The payload of an ordinal; undefined once its document is removed. */
  payloadAt(ordinal: number): T | undefined {
    return this.payloads[ordinal];
  }

  /** `fields` holds one text (or several values) per entry of `FIELDS`, in that order. */
  add(key: string, fields: ReadonlyArray<string | readonly string[]>, payload: T): void {
    if (this.ordinals.has(key)) this.remove(key);
    const ordinal = this.payloads.length;
    this.payloads.push(payload);
    this.keys.push(key);
    this.ordinals.set(key, ordinal);
    this.live += 1;
    for (let f = 0; f < FIELD_COUNT; f++) {
      const tokens = analyze(fields[f] ?? '');
      this.fieldLengths.push(tokens.length);
      this.fieldLengthSums[f] += tokens.length;
      if (tokens.length > 0) this.fieldDocCounts[f] += 1;
      const counts = new Map<string, number>();
      for (const t of tokens) counts.set(t.term, (counts.get(t.term) ?? 0) + 1);
      if (PHRASE_MASK & (1 << f)) {
        for (let i = 1; i < tokens.length; i++) {
          if (tokens[i].position !== tokens[i - 1].position + 1) continue;
          const pair = tokens[i - 1].term + PAIR + tokens[i].term;
          counts.set(pair, (counts.get(pair) ?? 0) + 1);
        }
      }
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
    for (let f = 0; f < FIELD_COUNT; f++) {
      const length = this.fieldLengths[ordinal * FIELD_COUNT + f];
      this.fieldLengthSums[f] -= length;
      if (length > 0) this.fieldDocCounts[f] -= 1;
    }
    this.live -= 1;
    this.dead += 1;
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

  /** Takes the content of a snapshot (`toJSON`) into this empty index: ordinal i is `payloads[i]`. */
  protected load(data: SerializedText, payloads: T[], keyOf: (p: T) => string): void {
    if (data.fieldLengths.length !== payloads.length * FIELD_COUNT || data.postings.length !== data.terms.length) {
      throw new Error('search snapshot is inconsistent (documents and text index differ)');
    }
    this.payloads = payloads.slice();
    const keys = payloads.map(keyOf);
    for (const [o, key] of keys.entries()) this.ordinals.set(key, o);
    this.keys = keys;
    this.live = payloads.length;
    this.fieldLengths = data.fieldLengths;
    for (let o = 0; o < payloads.length; o++) {
      for (let f = 0; f < FIELD_COUNT; f++) {
        const length = data.fieldLengths[o * FIELD_COUNT + f];
        this.fieldLengthSums[f] += length;
        if (length > 0) this.fieldDocCounts[f] += 1;
      }
    }
    data.terms.forEach((term, i) => {
      const id = this.termId(term);
      const encoded = data.postings[i];
      const docs = this.postingDocs[id];
      const packed = this.postingPacked[id];
      let doc = 0;
      for (let j = 0; j < encoded.length; j += 2) {
        doc += encoded[j];
        docs.push(doc);
        packed.push(encoded[j + 1]);
        this.docFreq[id * FIELD_COUNT + (encoded[j + 1] & FIELD_MASK)] += 1;
      }
    });
  }

  // --- the dictionary and the live statistics, for the scoring

  protected termId(term: string): number {
    let id = this.termIds.get(term);
    if (id === undefined) {
      id = this.postingDocs.length;
      this.termIds.set(term, id);
      if (!term.includes(PAIR)) this.tree.set(term, id);
      this.postingDocs.push([]);
      this.postingPacked.push([]);
      for (let f = 0; f < FIELD_COUNT; f++) this.docFreq.push(0);
    }
    return id;
  }

  /** The dictionary words starting with `raw` (the word itself included), first ones in term order. */
  protected prefixTerms(raw: string): number[] {
    const found: Array<[string, number]> = [];
    for (const [term, id] of this.tree.atPrefix(raw)) found.push([term, id]);
    found.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    return found.slice(0, PREFIX_MAX_EXPANSIONS).map(([, id]) => id);
  }

  /**
   * The dictionary words within `edits` of `term`, counting a swap of two adjacent letters as one
   * edit as OpenSearch's fuzzy matching does (`slakc` → `slack`); the radix tree's own search
   * counts it as two.
   */
  protected neighbours(term: string, edits: number): Map<string, [number, number]> {
    const out = new Map<string, [number, number]>();
    const keep = (candidate: string, id: number, distance: number): void => {
      const seen = out.get(candidate);
      if (seen === undefined || distance < seen[1]) out.set(candidate, [id, distance]);
    };
    for (const [candidate, [id, distance]] of this.tree.fuzzyGet(term, edits)) keep(candidate, id, distance);
    for (let i = 0; i + 1 < term.length; i++) {
      if (term[i] === term[i + 1]) continue;
      const swapped = term.slice(0, i) + term[i + 1] + term[i] + term.slice(i + 2);
      if (edits === 1) {
        const id = this.tree.get(swapped);
        if (id !== undefined) keep(swapped, id, 1);
      } else {
        for (const [candidate, [id, distance]] of this.tree.fuzzyGet(swapped, edits - 1)) keep(candidate, id, distance + 1);
      }
    }
    return out;
  }

  protected liveDocFreq(id: number): number[] {
    const df = this.docFreq.slice(id * FIELD_COUNT, (id + 1) * FIELD_COUNT);
    if (this.dead === 0) return df;
    // Dead postings are still in the list until the next compaction: count live ones only.
    df.fill(0);
    const docs = this.postingDocs[id];
    const packed = this.postingPacked[id];
    for (let j = 0; j < docs.length; j++) if (this.payloads[docs[j]] !== undefined) df[packed[j] & FIELD_MASK] += 1;
    return df;
  }
}
