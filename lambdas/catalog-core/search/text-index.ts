import { analyze, queryWords, synonymsOf, type Token } from './analysis';
import {
  ALL_TERMS_BONUS,
  FIELD_BOOSTS,
  FIELDS,
  FUZZY_FIELDS,
  FUZZY_MAX_EXPANSIONS,
  FUZZY_MIN_LENGTH,
  FUZZY_PREFIX_LENGTH,
  FUZZY_RATIO,
  FUZZY_WEIGHT,
  fuzzyEdits,
  PHRASE_BOOST,
  PREFIX_FIELDS,
  PREFIX_MIN_LENGTH,
  PREFIX_WEIGHT,
  SYNONYM_WEIGHT,
  TIE_BREAKER,
} from './ranking';
import { FIELD_BITS as POSTING_FIELD_BITS, maskOf, PAIR as PAIR_SEPARATOR, type SerializedText, TextPostings } from './text-postings';

export type { SerializedText };

/**
 * The embedded engine's full text: Lucene's BM25 (k1 1.2, b 0.75, statistics per field) over
 * compact per-term postings, with MiniSearch's radix tree (`SearchableMap`) as the dictionary for
 * prefix and fuzzy expansion, scoring by the rules of `ranking.ts` exactly as the OpenSearch
 * adapter's requests ask a domain to: per query word, its best field plus a share of the others
 * (exact, prefix and, as a fallback for typos, fuzzy matches); a bonus for servers matching every
 * word; a phrase score for query words that stand next to each other in a field (word pairs are
 * indexed for the short fields). Scores accumulate in typed arrays: allocating per matching
 * document (as MiniSearch's own `search()` does) took 30-40 ms on broad queries at 10,000 servers.
 * The postings, the dictionary and the snapshot form are `text-postings.ts`; this class adds the
 * scoring and its typed scratch buffers.
 */

// Imported bindings can compile to getters (esbuild, tsx): the hot loops read plain local copies.
const FIELD_COUNT = FIELDS.length;
const TIE = TIE_BREAKER;
const ALL_BONUS = ALL_TERMS_BONUS;
const BOOSTS = FIELDS.map((f) => FIELD_BOOSTS[f]);
const ALL_FIELDS = (1 << FIELD_COUNT) - 1;
const PREFIX_MASK = maskOf(PREFIX_FIELDS);
const FUZZY_MASK = maskOf(FUZZY_FIELDS);
const FIELD_BITS = POSTING_FIELD_BITS;
const FIELD_MASK = (1 << FIELD_BITS) - 1;
const PAIR = PAIR_SEPARATOR;

const BM25_K1 = 1.2;
const BM25_B = 0.75;

interface Expansion {
  id: number;
  weight: number;
}

/** Field statistics of one query: BM25 needs the documents holding the field and their mean length. */
interface Stats {
  docCount: number[];
  avgLength: number[];
}

/** The postings with Lucene's BM25 scoring by the rules of `ranking.ts` (see above). */
export class TextIndex<T> extends TextPostings<T> {
  // Scratch buffers for scoring, reused across queries.
  private scores = new Float64Array(0);
  private clause = new Float64Array(0);
  private fieldScratch = new Float64Array(0);
  private matchedTerms = new Uint16Array(0);
  private touchedBy = new Int32Array(0);
  /** Documents a query, a word's clause and a component touched, as lists with their lengths. */
  private touchedList = new Int32Array(0);
  private touchedCount = 0;
  private clauseList = new Int32Array(0);
  private clauseCount = 0;
  private componentList = new Int32Array(0);
  private componentCount = 0;
  private clauseMark = new Int32Array(0);
  private componentMark = new Int32Array(0);
  private markCounter = 0;

  static fromJSON<T>(data: SerializedText, payloads: T[], keyOf: (p: T) => string): TextIndex<T> {
    const index = new TextIndex<T>();
    index.load(data, payloads, keyOf);
    return index;
  }

  /**
   * Calls `visit` once per matching document with its ordinal (`payloadAt`) and score (higher is
   * better). Ordinals, not payloads: reading every match's payload object cost a cache miss per
   * match on broad queries; the caller keeps what it needs per ordinal in typed arrays.
   */
  search(query: string, visit: (ordinal: number, score: number) => void): void {
    const { words, pairs } = queryWords(query);
    if (words.length === 0 || this.live === 0) return;
    this.ensureScratch();
    if (this.markCounter >= 0x7ff00000) {
      // Marks live in Int32Arrays and a query takes a few hundred: start over well before they would wrap.
      this.touchedBy.fill(0);
      this.clauseMark.fill(0);
      this.componentMark.fill(0);
      this.markCounter = 0;
    }
    const queryMark = this.nextMark();
    this.touchedCount = 0;
    const stats: Stats = { docCount: this.fieldDocCounts.slice(), avgLength: this.fieldLengthSums.map((sum, f) => sum / (this.fieldDocCounts[f] || 1)) };
    const { scores, clause, matchedTerms, touchedBy, touchedList, clauseList } = this;

    for (const word of words) {
      this.clauseCount = 0;
      const clauseMark = this.nextMark();
      const exact = this.termIds.get(word.term);
      if (exact !== undefined) this.component([{ id: exact, weight: 1 }], ALL_FIELDS, undefined, stats);
      this.combineFields(1, clauseMark);
      if (word.raw.length >= PREFIX_MIN_LENGTH) {
        this.component(
          this.prefixTerms(word.raw).map((id) => ({ id, weight: 1 })),
          PREFIX_MASK,
          undefined,
          stats,
        );
        this.combineFields(PREFIX_WEIGHT, clauseMark);
      }
      if (this.fuzzyFallback(word.term, this.clauseCount, stats)) this.combineFields(FUZZY_WEIGHT, clauseMark);
      const synonyms: Expansion[] = [];
      for (const synonym of synonymsOf(word.term)) {
        for (const t of analyze(synonym)) {
          const id = this.termIds.get(t.term);
          if (id !== undefined && !synonyms.some((e) => e.id === id)) synonyms.push({ id, weight: 1 });
        }
      }
      if (synonyms.length > 0) {
        this.component(synonyms, ALL_FIELDS, undefined, stats);
        this.combineFields(SYNONYM_WEIGHT, clauseMark);
      }
      for (let i = 0; i < this.clauseCount; i++) {
        const o = clauseList[i];
        if (touchedBy[o] !== queryMark) {
          touchedBy[o] = queryMark;
          scores[o] = 0;
          matchedTerms[o] = 0;
          touchedList[this.touchedCount++] = o;
        }
        scores[o] += clause[o];
        matchedTerms[o] += 1;
      }
    }
    if (words.length > 1) {
      for (let i = 0; i < this.touchedCount; i++) {
        const o = touchedList[i];
        if (matchedTerms[o] === words.length) scores[o] *= 1 + ALL_BONUS;
      }
    }
    this.addPhrases(pairs, stats, queryMark);
    for (let i = 0; i < this.touchedCount; i++) {
      const o = touchedList[i];
      if (this.payloads[o] !== undefined) visit(o, scores[o]);
    }
  }

  // --- scoring

  private nextMark(): number {
    return ++this.markCounter;
  }

  /**
   * Scores into the component the one-edit (two from 8 characters) neighbours of `term` when they
   * reach FUZZY_RATIO times the documents the word itself did; false when they do not. Scored as
   * OpenSearch scores a fuzzy `match`: each neighbour weighted by 1 - edits/length, with the
   * largest document frequency of the neighbours (Lucene's blended frequencies).
   */
  private fuzzyFallback(term: string, exactDocs: number, stats: Stats): boolean {
    if (term.length < FUZZY_MIN_LENGTH || exactDocs * FUZZY_RATIO >= this.live) return false;
    const edits = fuzzyEdits(term.length);
    const candidates: Array<{ term: string; id: number; boost: number }> = [];
    for (const [candidate, [id, distance]] of this.neighbours(term, edits)) {
      if (candidate.slice(0, FUZZY_PREFIX_LENGTH) !== term.slice(0, FUZZY_PREFIX_LENGTH)) continue;
      candidates.push({ term: candidate, id, boost: distance === 0 ? 1 : 1 - distance / Math.min(candidate.length, term.length) });
    }
    candidates.sort((a, b) => b.boost - a.boost || (a.term < b.term ? -1 : 1));
    const kept = candidates.slice(0, FUZZY_MAX_EXPANSIONS);
    if (kept.length === 0) return false;
    const mark = this.nextMark();
    let fuzzyDocs = 0;
    for (const c of kept) {
      const docs = this.postingDocs[c.id];
      const packed = this.postingPacked[c.id];
      for (let j = 0; j < docs.length; j++) {
        const o = docs[j];
        if (this.payloads[o] === undefined || !(FUZZY_MASK & (1 << (packed[j] & FIELD_MASK))) || this.componentMark[o] === mark) continue;
        this.componentMark[o] = mark;
        fuzzyDocs++;
      }
    }
    if (exactDocs * FUZZY_RATIO >= fuzzyDocs) return false;
    const blended = new Array<number>(FIELD_COUNT).fill(0);
    for (const c of kept) {
      const df = this.liveDocFreq(c.id);
      for (let f = 0; f < FIELD_COUNT; f++) blended[f] = Math.max(blended[f], df[f]);
    }
    this.component(
      kept.map((c) => ({ id: c.id, weight: c.boost })),
      FUZZY_MASK,
      blended,
      stats,
    );
    return true;
  }

  /**
   * One scored part of a word's clause: the expansions' BM25 per field, times the field boost,
   * into the field scratch of the documents it lists in `componentList` (`combineFields` turns
   * them into clause scores). `blendedDf`, when given, replaces each term's document frequency.
   */
  private component(expansions: readonly Expansion[], fieldMask: number, blendedDf: readonly number[] | undefined, stats: Stats): void {
    this.componentCount = 0;
    if (expansions.length === 0) return;
    const mark = this.nextMark();
    const { fieldScratch, componentMark, componentList, fieldLengths, payloads } = this;
    // BM25's length normalisation, k1 × (1 - b + b × length / average), as a + c × length.
    const normA = stats.avgLength.map(() => BM25_K1 * (1 - BM25_B));
    const normC = stats.avgLength.map((avg) => (BM25_K1 * BM25_B) / (avg || 1));
    const anyField = fieldMask === ALL_FIELDS;
    const noneDead = this.dead === 0;
    let count = 0;
    for (const e of expansions) {
      const docs = this.postingDocs[e.id];
      const packed = this.postingPacked[e.id];
      const df = blendedDf ?? this.liveDocFreq(e.id);
      const factor = new Array<number>(FIELD_COUNT);
      for (let f = 0; f < FIELD_COUNT; f++) factor[f] = df[f] === 0 ? 0 : e.weight * BOOSTS[f] * idf(df[f], stats.docCount[f]);
      for (let j = 0; j < docs.length; j++) {
        const o = docs[j];
        const p = packed[j];
        const f = p & FIELD_MASK;
        if ((!anyField && !(fieldMask & (1 << f))) || (!noneDead && payloads[o] === undefined)) continue;
        const tf = p >>> FIELD_BITS;
        if (componentMark[o] !== mark) {
          componentMark[o] = mark;
          componentList[count++] = o;
        }
        fieldScratch[o * FIELD_COUNT + f] += (factor[f] * tf) / (tf + normA[f] + normC[f] * fieldLengths[o * FIELD_COUNT + f]);
      }
    }
    this.componentCount = count;
  }

  /**
   * The component's documents: best field + TIE_BREAKER × the rest, times `weight`, added to the
   * word's clause (`clauseMark`) or, without one, straight to the query scores. Clears the scratch.
   */
  private combineFields(weight: number, clauseMark: number | undefined): void {
    const { fieldScratch, clause, scores, componentList, clauseList } = this;
    for (let i = 0; i < this.componentCount; i++) {
      const o = componentList[i];
      let max = 0;
      let sum = 0;
      for (let f = 0; f < FIELD_COUNT; f++) {
        const v = fieldScratch[o * FIELD_COUNT + f];
        if (v === 0) continue;
        fieldScratch[o * FIELD_COUNT + f] = 0;
        sum += v;
        if (v > max) max = v;
      }
      const score = weight * (max + TIE * (sum - max));
      if (clauseMark === undefined) {
        scores[o] += score;
        continue;
      }
      if (this.clauseMark[o] !== clauseMark) {
        this.clauseMark[o] = clauseMark;
        clause[o] = 0;
        clauseList[this.clauseCount++] = o;
      }
      clause[o] += score;
    }
    this.componentCount = 0;
  }

  /**
   * Query words next to each other (no word between, stop words included) that stand next to each
   * other in a short field: Lucene's phrase score (the sum of the two words' idf, the pair's
   * frequency), best field plus TIE_BREAKER × the others, times PHRASE_BOOST.
   */
  private addPhrases(pairs: ReadonlyArray<readonly [Token, Token]>, stats: Stats, queryMark: number): void {
    for (const [a, b] of pairs) {
      const id = this.termIds.get(a.term + PAIR + b.term);
      const ida = this.termIds.get(a.term);
      const idb = this.termIds.get(b.term);
      if (id === undefined || ida === undefined || idb === undefined) continue;
      const dfa = this.liveDocFreq(ida);
      const dfb = this.liveDocFreq(idb);
      const mark = this.nextMark();
      this.componentCount = 0;
      const docs = this.postingDocs[id];
      const packed = this.postingPacked[id];
      const { fieldScratch, componentMark, componentList, fieldLengths, payloads, touchedBy } = this;
      const factor = new Array<number>(FIELD_COUNT);
      for (let f = 0; f < FIELD_COUNT; f++) factor[f] = BOOSTS[f] * (idf(dfa[f], stats.docCount[f]) + idf(dfb[f], stats.docCount[f]));
      for (let j = 0; j < docs.length; j++) {
        const o = docs[j];
        const f = packed[j] & FIELD_MASK;
        if (payloads[o] === undefined || touchedBy[o] !== queryMark) continue;
        const tf = packed[j] >>> FIELD_BITS;
        const norm = 1 - BM25_B + (BM25_B * fieldLengths[o * FIELD_COUNT + f]) / (stats.avgLength[f] || 1);
        if (componentMark[o] !== mark) {
          componentMark[o] = mark;
          componentList[this.componentCount++] = o;
        }
        fieldScratch[o * FIELD_COUNT + f] += factor[f] * (tf / (tf + BM25_K1 * norm));
      }
      this.combineFields(PHRASE_BOOST, undefined);
    }
  }

  private ensureScratch(): void {
    const n = this.payloads.length;
    if (this.scores.length >= n) return;
    const size = Math.max(n, this.scores.length * 2, 1024);
    this.scores = new Float64Array(size);
    this.clause = new Float64Array(size);
    this.fieldScratch = new Float64Array(size * FIELD_COUNT);
    this.matchedTerms = new Uint16Array(size);
    this.touchedBy = new Int32Array(size);
    this.touchedList = new Int32Array(size);
    this.clauseList = new Int32Array(size);
    this.componentList = new Int32Array(size);
    this.clauseMark = new Int32Array(size);
    this.componentMark = new Int32Array(size);
    this.markCounter = 0;
  }
}

/** BM25's idf, as Lucene computes it. */
function idf(df: number, docCount: number): number {
  return df === 0 ? 0 : Math.log(1 + (docCount - df + 0.5) / (df + 0.5));
}
