/**
 * The OpenSearch simulator's analysis and Lucene's scoring arithmetic (`opensearch-sim.ts`):
 * analyzers built from an index definition (the built-in `english` and `standard`, custom chains of
 * a pattern tokenizer and the lowercase, stop, keyword_marker and porter_stem filters), BM25's idf
 * and the one-byte field-length encoding BM25 reads back.
 */
import { stemmer } from 'stemmer';

export type Json = Record<string, unknown>;

export function obj(v: unknown, what: string): Json {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new Error(`simulator: ${what} is not an object`);
  return v as Json;
}

// Lucene's EnglishAnalyzer.ENGLISH_STOP_WORDS_SET (the `_english_` stop list).
const ENGLISH_STOP = new Set(
  'a an and are as at be but by for if in into is it no not of on or such that the their then there these they this to was will with'.split(' '),
);

// ------------------------------------------------------------------ analysis

type TokenFilter = (tokens: Token[]) => Token[];
export interface Token {
  term: string;
  position: number;
  keyword?: boolean;
}
export type Analyzer = (text: string) => Token[];

const stemCache = new Map<string, string>();
function porter(term: string): string {
  let s = stemCache.get(term);
  if (s === undefined) {
    s = stemmer(term);
    stemCache.set(term, s);
  }
  return s;
}

function builtinFilter(name: string): TokenFilter {
  switch (name) {
    case 'lowercase':
      return (ts) => ts.map((t) => ({ ...t, term: t.term.toLowerCase() }));
    case 'porter_stem':
      return (ts) => ts.map((t) => (t.keyword ? t : { ...t, term: porter(t.term) }));
    case 'english_possessive':
      return (ts) => ts.map((t) => ({ ...t, term: t.term.replace(/['\u2019\uFF07]s$/i, '') }));
    case 'stop':
      return (ts) => ts.filter((t) => !ENGLISH_STOP.has(t.term));
    default:
      throw new Error(`simulator: unsupported token filter ${name}`);
  }
}

function customFilter(def: Json): TokenFilter {
  switch (def.type) {
    case 'stop': {
      const words = def.stopwords === undefined || def.stopwords === '_english_' ? ENGLISH_STOP : new Set(def.stopwords as string[]);
      return (ts) => ts.filter((t) => !words.has(t.term));
    }
    case 'keyword_marker': {
      const keywords = new Set(def.keywords as string[]);
      return (ts) => ts.map((t) => (keywords.has(t.term) ? { ...t, keyword: true } : t));
    }
    case 'porter_stem':
    case 'lowercase':
      return builtinFilter(def.type);
    default:
      throw new Error(`simulator: unsupported token filter type ${String(def.type)}`);
  }
}

const segmenter = new Intl.Segmenter('en', { granularity: 'word' });
function standardTokens(text: string): Token[] {
  const out: Token[] = [];
  for (const s of segmenter.segment(text)) if (s.isWordLike) out.push({ term: s.segment.slice(0, 255), position: out.length });
  return out;
}

function patternTokens(pattern: RegExp): (text: string) => Token[] {
  return (text) => {
    const out: Token[] = [];
    for (const part of text.split(pattern)) if (part !== '') out.push({ term: part, position: out.length });
    return out;
  };
}

/** Positions survive removed tokens (stop words leave gaps), as Lucene's position increments do. */
function chain(tokenize: (text: string) => Token[], filters: TokenFilter[]): Analyzer {
  return (text) => filters.reduce((ts, f) => f(ts), tokenize(text));
}

export function analyzersOf(definition: Json): (name: string) => Analyzer {
  const analysis = obj(obj(definition.settings ?? {}, 'settings').analysis ?? {}, 'analysis');
  const tokenizers = obj(analysis.tokenizer ?? {}, 'tokenizers');
  const filters = obj(analysis.filter ?? {}, 'filters');
  const analyzers = obj(analysis.analyzer ?? {}, 'analyzers');
  const cache = new Map<string, Analyzer>();
  return (name) => {
    const hit = cache.get(name);
    if (hit !== undefined) return hit;
    let analyzer: Analyzer;
    if (name === 'english' && analyzers.english === undefined) {
      analyzer = chain(standardTokens, ['english_possessive', 'lowercase', 'stop', 'porter_stem'].map(builtinFilter));
    } else if (name === 'standard' && analyzers.standard === undefined) {
      analyzer = chain(standardTokens, [builtinFilter('lowercase')]);
    } else {
      const def = obj(analyzers[name], `analyzer ${name}`);
      if (def.type !== 'custom') throw new Error(`simulator: unsupported analyzer type ${String(def.type)}`);
      const tok = obj(tokenizers[String(def.tokenizer)], `tokenizer ${String(def.tokenizer)}`);
      if (tok.type !== 'pattern' || (tok.group !== undefined && tok.group !== -1)) throw new Error('simulator: only splitting pattern tokenizers');
      const tokenize = patternTokens(new RegExp(String(tok.pattern), 'u'));
      const fs = ((def.filter as string[] | undefined) ?? []).map((f) => (filters[f] === undefined ? builtinFilter(f) : customFilter(obj(filters[f], f))));
      analyzer = chain(tokenize, fs);
    }
    cache.set(name, analyzer);
    return analyzer;
  };
}

// ------------------------------------------------------------------ Lucene's length norm

const NUM_FREE_VALUES = 24;
function longToInt4(i: number): number {
  const numBits = i === 0 ? 0 : Math.floor(Math.log2(i)) + 1;
  if (numBits < 4) return i;
  const shift = numBits - 4;
  return (Math.floor(i / 2 ** shift) & 0x07) | ((shift + 1) << 3);
}
function int4ToLong(i: number): number {
  const bits = i & 0x07;
  const shift = (i >>> 3) - 1;
  return shift === -1 ? bits : (bits | 0x08) * 2 ** shift;
}
/** A field length as BM25 sees it: encoded in one byte at index time, decoded at search time. */
export function luceneLength(length: number): number {
  const encoded = length < NUM_FREE_VALUES ? length : NUM_FREE_VALUES + longToInt4(length - NUM_FREE_VALUES);
  return encoded < NUM_FREE_VALUES ? encoded : NUM_FREE_VALUES + int4ToLong(encoded - NUM_FREE_VALUES);
}

export function bm25Idf(df: number, docCount: number): number {
  return Math.log(1 + (docCount - df + 0.5) / (df + 0.5));
}
