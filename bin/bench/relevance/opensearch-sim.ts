/**
 * Evaluates the OpenSearch adapter's request bodies on a corpus without an OpenSearch: an
 * interpreter of the part of the query DSL `opensearch-requests.ts` and `opensearch-search.ts`
 * emit, scoring as Lucene does
 * (BM25 with k1 1.2 and b 0.75, per-field statistics, lossy length norms), over documents analysed
 * as the index definition says. It exists for the relevance benchmark only; it shares no code with
 * the embedded engine, so agreement between the two is evidence, not construction.
 *
 * Faithful: analysis chains built from the definition (pattern tokenizer, lowercase, stop,
 * keyword_marker, porter_stem), BM25 and its norm encoding (SmallFloat.intToByte4), term,
 * phrase (slop 0) and multi-phrase (phrase_prefix) scoring, bool/dis_max/multi_match semantics,
 * `prefix` with a `top_terms_N` rewrite, `function_score` with `filter` + `weight` functions
 * (multiplied), `term`/`terms` on keyword, boolean and numeric fields, `post_filter`, `global`, `filter`,
 * `terms` and `missing` aggregations, sort with tie-breaks (a missing sort value as 0).
 * Approximated: the built-in `english` analyzer's standard tokenizer (UAX#29 word segmentation by
 * `Intl.Segmenter`), fuzzy rewriting (blended document frequency = the largest of the expanded
 * terms', boost 1 - edits/length), float32 rounding (scores are doubles here). Anything else in a
 * request is refused, so an unsupported clause cannot be silently ignored. Analysis and Lucene's
 * arithmetic are in `sim-analysis.ts`; this file is over 400 lines because the interpreter is one
 * class over one in-memory index, a case per query type.
 */
import { type Analyzer, analyzersOf, bm25Idf, type Json, luceneLength, obj, type Token } from './sim-analysis';

export { bm25Idf, luceneLength } from './sim-analysis';

const K1 = 1.2;
const B = 0.75;

// ------------------------------------------------------------------ the index

interface TextField {
  analyzer: Analyzer;
  /** Per document: term -> positions. */
  docs: Array<Map<string, number[]> | undefined>;
  lengths: number[];
  docCount: number;
  sumLength: number;
  df: Map<string, number>;
  sortedTerms: string[];
}

type Scores = Map<number, number>;

export interface SimHit {
  id: string;
  score: number;
  source: Json;
}

export interface SimResult {
  total: number;
  hits: SimHit[];
  aggregations: Json;
}

function valuesAt(doc: Json, path: string): unknown[] {
  const v = doc[path];
  if (v === undefined || v === null) return [];
  return Array.isArray(v) ? v : [v];
}

/** Field path → boost, from `"name^3"`. */
function parseField(spec: string): [string, number] {
  const at = spec.lastIndexOf('^');
  return at < 0 ? [spec, 1] : [spec.slice(0, at), Number(spec.slice(at + 1))];
}

function levenshteinAtMost(a: string, b: string, max: number): number {
  // Damerau (optimal string alignment) distance, as Lucene's fuzzy automata with transpositions.
  if (Math.abs(a.length - b.length) > max) return max + 1;
  const prev2 = new Array<number>(b.length + 1).fill(0);
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, prev2[j - 2] + 1);
      cur.push(v);
      rowMin = Math.min(rowMin, v);
    }
    prev2.splice(0, prev2.length, ...prev);
    prev = cur;
    if (rowMin > max) return max + 1;
  }
  return prev[b.length];
}

function fuzzyEdits(fuzziness: unknown, term: string): number {
  if (fuzziness === undefined) return 0;
  if (typeof fuzziness === 'number') return fuzziness;
  const s = String(fuzziness);
  const auto = /^AUTO(?::(\d+),(\d+))?$/.exec(s);
  if (auto === null) return Number(s);
  const low = Number(auto[1] ?? 3);
  const high = Number(auto[2] ?? 6);
  const len = [...term].length;
  return len < low ? 0 : len < high ? 1 : 2;
}

export class OpenSearchSimulator {
  private readonly text = new Map<string, TextField>();
  private readonly keywords = new Map<string, Array<Set<string>>>();
  private readonly sources: Json[];
  private readonly ids: string[];

  constructor(definition: Json, docs: ReadonlyArray<{ id: string; source: Json }>) {
    this.sources = docs.map((d) => d.source);
    this.ids = docs.map((d) => d.id);
    const analyzerNamed = analyzersOf(definition);
    const props = obj(obj(definition.mappings, 'mappings').properties, 'properties');
    const addText = (path: string, source: string, analyzerName: string): void => {
      const analyzer = analyzerNamed(analyzerName);
      const field: TextField = { analyzer, docs: [], lengths: [], docCount: 0, sumLength: 0, df: new Map(), sortedTerms: [] };
      this.sources.forEach((doc) => {
        const values = valuesAt(doc, source).map(String);
        if (values.length === 0) {
          field.docs.push(undefined);
          field.lengths.push(0);
          return;
        }
        const positions = new Map<string, number[]>();
        let length = 0;
        let offset = 0;
        for (const v of values) {
          const tokens = analyzer(v);
          for (const t of tokens) {
            const list = positions.get(t.term) ?? [];
            list.push(offset + t.position);
            positions.set(t.term, list);
          }
          length += tokens.length;
          // Values of an array field are separated by a position gap (position_increment_gap 100).
          offset += (tokens.length === 0 ? 0 : tokens[tokens.length - 1].position + 1) + 100;
        }
        field.docs.push(positions.size === 0 ? undefined : positions);
        field.lengths.push(length);
        if (positions.size > 0) {
          field.docCount += 1;
          field.sumLength += length;
          for (const term of positions.keys()) field.df.set(term, (field.df.get(term) ?? 0) + 1);
        }
      });
      field.sortedTerms = [...field.df.keys()].sort();
      this.text.set(path, field);
    };
    for (const [name, rawSpec] of Object.entries(props)) {
      const spec = obj(rawSpec, name);
      if (spec.type === 'text') addText(name, name, String(spec.analyzer ?? 'standard'));
      if (['keyword', 'boolean', 'byte', 'short', 'integer', 'long', 'float', 'double'].includes(String(spec.type)))
        this.keywords.set(
          name,
          this.sources.map((d) => new Set(valuesAt(d, name).map(String))),
        );
      for (const [sub, rawSubSpec] of Object.entries(obj(spec.fields ?? {}, `${name}.fields`))) {
        const subSpec = obj(rawSubSpec, `${name}.${sub}`);
        if (subSpec.type === 'text') addText(`${name}.${sub}`, name, String(subSpec.analyzer ?? 'standard'));
      }
    }
  }

  search(body: Json): SimResult {
    const scores = this.evaluate(obj(body.query ?? { match_all: {} }, 'query'));
    // `post_filter` narrows the hits after the aggregations saw every match.
    const post = body.post_filter === undefined ? undefined : this.evaluate(obj(body.post_filter, 'post_filter'));
    const order = [...scores.entries()].filter(([i]) => post === undefined || post.has(i));
    const sort = (body.sort as Json[] | undefined) ?? [{ _score: 'desc' }];
    order.sort((a, b) => {
      for (const clause of sort) {
        const [field, how] = Object.entries(clause)[0];
        const dir = (typeof how === 'string' ? how : String((how as Json).order)) === 'asc' ? 1 : -1;
        const va = field === '_score' ? a[1] : this.sortValue(a[0], field);
        const vb = field === '_score' ? b[1] : this.sortValue(b[0], field);
        if (va < vb) return -dir;
        if (va > vb) return dir;
      }
      return 0;
    });
    const from = Number(body.from ?? 0);
    const size = Number(body.size ?? 10);
    return {
      total: order.length,
      hits: order.slice(from, from + size).map(([i, score]) => ({ id: this.ids[i], score, source: this.sources[i] })),
      aggregations: this.aggregate(obj(body.aggs ?? {}, 'aggs'), new Set(scores.keys())),
    };
  }

  // --- aggregations: `global` and `filter` with doc counts

  private aggregate(aggs: Json, matching: Set<number>): Json {
    const out: Json = {};
    for (const [name, raw] of Object.entries(aggs)) {
      const spec = obj(raw, `aggregation ${name}`);
      const sub = obj(spec.aggs ?? spec.aggregations ?? {}, `${name}.aggs`);
      let docs: Set<number>;
      if (spec.global !== undefined) docs = new Set(this.sources.keys());
      else if (spec.filter !== undefined) {
        const hits = this.evaluate(obj(spec.filter, `${name}.filter`));
        docs = new Set([...matching].filter((i) => hits.has(i)));
      } else if (spec.missing !== undefined) {
        const field = String(obj(spec.missing, `${name}.missing`).field);
        docs = new Set([...matching].filter((i) => valuesAt(this.sources[i], field).length === 0));
      } else if (spec.terms !== undefined) {
        const field = String(obj(spec.terms, `${name}.terms`).field);
        const counts = new Map<string, number>();
        for (const i of matching) for (const v of new Set(valuesAt(this.sources[i], field).map(String))) counts.set(v, (counts.get(v) ?? 0) + 1);
        const buckets = [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)).map(([key, doc_count]) => ({ key, doc_count }));
        out[name] = { buckets };
        continue;
      } else throw new Error(`simulator: unsupported aggregation ${name}`);
      out[name] = { doc_count: docs.size, ...this.aggregate(sub, docs) };
    }
    return out;
  }

  private sortValue(i: number, field: string): number | string {
    const v = this.sources[i][field];
    return typeof v === 'number' || typeof v === 'string' ? v : typeof v === 'boolean' ? Number(v) : 0;
  }

  // --- queries

  private evaluate(q: Json): Scores {
    const [kind, raw] = Object.entries(q)[0] ?? [];
    const spec = obj(raw ?? {}, kind ?? 'query');
    switch (kind) {
      case 'match_none':
        return new Map();
      case 'match_all':
        return new Map([...this.sources.keys()].map((i) => [i, Number(spec.boost ?? 1)]));
      case 'bool':
        return this.bool(spec);
      case 'dis_max':
        return this.disMax(
          (spec.queries as Json[]).map((c) => this.evaluate(c)),
          Number(spec.tie_breaker ?? 0),
          Number(spec.boost ?? 1),
        );
      case 'multi_match':
        return this.multiMatch(spec);
      case 'match':
      case 'match_phrase':
      case 'match_phrase_prefix': {
        const [field, v] = Object.entries(spec)[0];
        const inner = typeof v === 'object' && v !== null ? (v as Json) : { query: v };
        const type = kind === 'match' ? 'best_fields' : kind === 'match_phrase' ? 'phrase' : 'phrase_prefix';
        return this.multiMatch({ ...inner, fields: [field], type });
      }
      case 'prefix':
        return this.prefix(spec);
      case 'function_score':
        return this.functionScore(spec);
      case 'term':
      case 'terms': {
        const [field, raw] = Object.entries(spec).find(([k]) => k !== 'boost') ?? [];
        const values = kind === 'term' ? [typeof raw === 'object' && raw !== null && 'value' in raw ? (raw as Json).value : raw] : (raw as unknown[]);
        const wanted = new Set(values.map(String));
        const column = this.keywords.get(String(field));
        if (column === undefined) throw new Error(`simulator: terms on unmapped keyword ${String(field)}`);
        const out: Scores = new Map();
        column.forEach((vals, i) => {
          if ([...vals].some((v) => wanted.has(v))) out.set(i, 1);
        });
        return out;
      }
      default:
        throw new Error(`simulator: unsupported query ${String(kind)}`);
    }
  }

  /** Each matching `filter` function's `weight`, multiplied (score_mode and boost_mode `multiply`, the only ones emitted). */
  private functionScore(spec: Json): Scores {
    if ((spec.score_mode ?? 'multiply') !== 'multiply' || (spec.boost_mode ?? 'multiply') !== 'multiply')
      throw new Error('simulator: function_score supports multiply only');
    const scores = this.evaluate(obj(spec.query ?? { match_all: {} }, 'function_score.query'));
    for (const raw of (spec.functions as Json[] | undefined) ?? []) {
      const fn = obj(raw, 'function');
      if (Object.keys(fn).some((k) => k !== 'filter' && k !== 'weight')) throw new Error('simulator: function_score functions support filter and weight only');
      const hits = this.evaluate(obj(fn.filter ?? { match_all: {} }, 'function.filter'));
      for (const [i, score] of scores) if (hits.has(i)) scores.set(i, score * Number(fn.weight ?? 1));
    }
    return scores;
  }

  private bool(spec: Json): Scores {
    const list = (k: string): Json[] => (spec[k] === undefined ? [] : Array.isArray(spec[k]) ? (spec[k] as Json[]) : [spec[k] as Json]);
    const must = list('must').map((c) => this.evaluate(c));
    const filter = list('filter').map((c) => this.evaluate(c));
    const should = list('should').map((c) => this.evaluate(c));
    const mustNot = list('must_not').map((c) => this.evaluate(c));
    const msm = spec.minimum_should_match !== undefined ? Number(spec.minimum_should_match) : must.length + filter.length === 0 ? 1 : 0;
    const boost = Number(spec.boost ?? 1);
    let candidates: number[];
    const required = [...must, ...filter];
    if (required.length > 0) {
      candidates = [...required[0].keys()].filter((i) => required.every((s) => s.has(i)));
    } else {
      const all = new Set<number>();
      for (const s of should) for (const i of s.keys()) all.add(i);
      candidates = [...all];
    }
    const out: Scores = new Map();
    for (const i of candidates) {
      if (mustNot.some((s) => s.has(i))) continue;
      let matched = 0;
      let score = 0;
      for (const s of must) score += s.get(i) ?? 0;
      for (const s of should) {
        const v = s.get(i);
        if (v !== undefined) {
          matched++;
          score += v;
        }
      }
      if (matched < msm) continue;
      out.set(i, score * boost);
    }
    return out;
  }

  private disMax(parts: Scores[], tie: number, boost: number): Scores {
    const out: Scores = new Map();
    const seen = new Set<number>();
    for (const p of parts) for (const i of p.keys()) seen.add(i);
    for (const i of seen) {
      let max = 0;
      let sum = 0;
      for (const p of parts) {
        const v = p.get(i);
        if (v === undefined) continue;
        sum += v;
        if (v > max) max = v;
      }
      out.set(i, (max + tie * (sum - max)) * boost);
    }
    return out;
  }

  private field(path: string): TextField {
    const f = this.text.get(path);
    if (f === undefined) throw new Error(`simulator: ${path} is not a text field`);
    return f;
  }

  private multiMatch(spec: Json): Scores {
    const type = String(spec.type ?? 'best_fields');
    const query = String(spec.query);
    const boost = Number(spec.boost ?? 1);
    const fields = (spec.fields as string[]).map(parseField);
    const perField = fields.map(([path, fieldBoost]) => {
      const field = this.field(path);
      const terms = field.analyzer(query);
      let s: Scores;
      if (type === 'phrase') s = this.phrase(field, terms);
      else if (type === 'phrase_prefix') s = this.phrasePrefix(field, terms, Number(spec.max_expansions ?? 50));
      else if (type === 'best_fields' || type === 'most_fields') {
        const parts = terms.map((t) => this.termOrFuzzy(field, t.term, spec));
        s = spec.operator === 'and' ? this.sumAll(parts) : this.sumAny(parts);
      } else throw new Error(`simulator: unsupported multi_match type ${type}`);
      const scaled: Scores = new Map();
      for (const [i, v] of s) scaled.set(i, v * fieldBoost);
      return scaled;
    });
    if (type === 'most_fields') {
      const out = this.sumAny(perField);
      for (const [i, v] of out) out.set(i, v * boost);
      return out;
    }
    return this.disMax(perField, Number(spec.tie_breaker ?? 0), boost);
  }

  private sumAny(parts: Scores[]): Scores {
    const out: Scores = new Map();
    for (const p of parts) for (const [i, v] of p) out.set(i, (out.get(i) ?? 0) + v);
    return out;
  }

  private sumAll(parts: Scores[]): Scores {
    const out = this.sumAny(parts);
    for (const i of [...out.keys()]) if (!parts.every((p) => p.has(i))) out.delete(i);
    return out;
  }

  private tfNorm(field: TextField, i: number, freq: number): number {
    const avg = field.sumLength / field.docCount;
    return freq / (freq + K1 * (1 - B + (B * luceneLength(field.lengths[i])) / avg));
  }

  /** A TermQuery: BM25 with the term's own statistics, or the given (blended) document frequency. */
  private termScores(field: TextField, term: string, boost: number, dfOverride?: number): Scores {
    const out: Scores = new Map();
    const df = dfOverride ?? field.df.get(term) ?? 0;
    if ((field.df.get(term) ?? 0) === 0) return out;
    const idf = bm25Idf(df, field.docCount);
    field.docs.forEach((positions, i) => {
      const freq = positions?.get(term)?.length ?? 0;
      if (freq > 0) out.set(i, boost * idf * this.tfNorm(field, i, freq));
    });
    return out;
  }

  private termOrFuzzy(field: TextField, term: string, spec: Json): Scores {
    const edits = fuzzyEdits(spec.fuzziness, term);
    if (edits === 0) return this.termScores(field, term, 1);
    const prefixLength = Number(spec.prefix_length ?? 0);
    const maxExpansions = Number(spec.max_expansions ?? 50);
    const head = term.slice(0, prefixLength);
    const expansions: Array<{ term: string; boost: number }> = [];
    for (const candidate of field.sortedTerms) {
      if (!candidate.startsWith(head)) continue;
      const ed = levenshteinAtMost(term, candidate, edits);
      if (ed > edits) continue;
      expansions.push({ term: candidate, boost: ed === 0 ? 1 : 1 - ed / Math.min([...candidate].length, [...term].length) });
    }
    // Lucene keeps the best-boosted expansions (ties by term order), then blends their statistics.
    expansions.sort((a, b) => b.boost - a.boost || (a.term < b.term ? -1 : 1));
    const kept = expansions.slice(0, maxExpansions);
    const blendedDf = Math.max(0, ...kept.map((e) => field.df.get(e.term) ?? 0));
    return this.sumAny(kept.map((e) => this.termScores(field, e.term, e.boost, blendedDf)));
  }

  private phrase(field: TextField, tokens: Token[]): Scores {
    if (tokens.length === 0) return new Map();
    if (tokens.length === 1) return this.termScores(field, tokens[0].term, 1);
    const idf = tokens.reduce((sum, t) => sum + bm25Idf(field.df.get(t.term) ?? 0, field.docCount), 0);
    const out: Scores = new Map();
    if (tokens.some((t) => (field.df.get(t.term) ?? 0) === 0)) return out;
    const base = tokens[0].position;
    field.docs.forEach((positions, i) => {
      if (positions === undefined) return;
      const first = positions.get(tokens[0].term);
      if (first === undefined) return;
      let freq = 0;
      for (const p of first) {
        if (tokens.every((t) => positions.get(t.term)?.includes(p + t.position - base) === true)) freq++;
      }
      if (freq > 0) out.set(i, idf * this.tfNorm(field, i, freq));
    });
    return out;
  }

  /** One word: a MultiPhraseQuery over its expansions (the sum of their idfs, any of them counts). */
  private phrasePrefix(field: TextField, tokens: Token[], maxExpansions: number): Scores {
    if (tokens.length !== 1) throw new Error('simulator: phrase_prefix of more than one word is not modelled');
    const prefix = tokens[0].term;
    const expansions = field.sortedTerms.filter((t) => t.startsWith(prefix)).slice(0, maxExpansions);
    const out: Scores = new Map();
    if (expansions.length === 0) return out;
    const idf = expansions.reduce((sum, t) => sum + bm25Idf(field.df.get(t) ?? 0, field.docCount), 0);
    field.docs.forEach((positions, i) => {
      if (positions === undefined) return;
      let freq = 0;
      for (const t of expansions) freq += positions.get(t)?.length ?? 0;
      if (freq > 0) out.set(i, idf * this.tfNorm(field, i, freq));
    });
    return out;
  }

  private prefix(spec: Json): Scores {
    const [path, raw] = Object.entries(spec)[0];
    const inner = typeof raw === 'object' && raw !== null ? (raw as Json) : { value: raw };
    const value = String(inner.value);
    const boost = Number(inner.boost ?? 1);
    const rewrite = String(inner.rewrite ?? 'constant_score');
    const keyword = this.keywords.get(path);
    if (keyword !== undefined) {
      const out: Scores = new Map();
      keyword.forEach((vals, i) => {
        if ([...vals].some((v) => v.startsWith(value))) out.set(i, boost);
      });
      return out;
    }
    const field = this.field(path);
    const top = /^top_terms_(\d+)$/.exec(rewrite);
    const expansions = field.sortedTerms.filter((t) => t.startsWith(value));
    if (top === null) {
      if (rewrite !== 'constant_score') throw new Error(`simulator: unsupported rewrite ${rewrite}`);
      const out: Scores = new Map();
      field.docs.forEach((positions, i) => {
        if (positions !== undefined && expansions.some((t) => positions.has(t))) out.set(i, boost);
      });
      return out;
    }
    return this.sumAny(expansions.slice(0, Number(top[1])).map((t) => this.termScores(field, t, boost)));
  }
}
