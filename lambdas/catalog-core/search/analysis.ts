/**
 * Text analysis of the embedded engine, the same chain the OpenSearch index definition declares
 * (`opensearch-requests.ts`, analyzer `words`): runs of letters and digits, lowercased, English
 * stop words dropped (their positions kept, so `tools for github` is not the phrase `tools
 * github`), Porter stems (the `stemmer` package, the algorithm of OpenSearch's `porter_stem`)
 * except for a few protected words. README text loses its URLs first: a link to
 * `github.com/...` says nothing about what the server does.
 */
import { stemmer } from 'stemmer';
import { identifierWords, isOriginal } from '../domain/standing';
import type { SearchDocument } from '../domain/types';
import { README_INDEX_CHARS } from '../domain/types';
import { type Field, HOSTING_LABELS, PROTECTED_WORDS, STOP_WORDS, SYNONYMS } from './ranking';

const NON_WORD = /[^\p{L}\p{N}]+/u;
const URL = /\b(?:https?|ftp):\/\/\S+/giu;
const STOP = new Set(STOP_WORDS);
const PROTECTED = new Set(PROTECTED_WORDS);
const HOSTING = new Set(HOSTING_LABELS);

export interface Token {
  /** The indexed form (stem). */
  term: string;
  /** The lowercased word as written (prefix matching starts from it). */
  raw: string;
  /** Position among all words, stop words included. */
  position: number;
}

/** Stems are cached: a catalog has tens of thousands of distinct words and stemming is regex work. */
const stems = new Map<string, string>();
const STEM_CACHE_MAX = 200_000;

function stem(word: string): string {
  if (PROTECTED.has(word)) return word;
  let s = stems.get(word);
  if (s === undefined) {
    s = stemmer(word);
    if (stems.size >= STEM_CACHE_MAX) stems.clear();
    stems.set(word, s);
  }
  return s;
}

/** Between the values of a multi-valued field, as OpenSearch's `position_increment_gap`: no phrase spans two values. */
const VALUE_GAP = 100;

export function analyze(text: string | readonly string[]): Token[] {
  const out: Token[] = [];
  let position = 0;
  for (const value of typeof text === 'string' ? [text] : text) {
    if (position > 0) position += VALUE_GAP;
    for (const part of value.split(NON_WORD)) {
      if (part === '') continue;
      const raw = part.toLowerCase();
      if (!STOP.has(raw)) out.push({ term: stem(raw), raw, position });
      position++;
    }
  }
  return out;
}

export interface QueryWords {
  /** Distinct words (by stem), in query order, with the first spelling seen. */
  words: Array<{ term: string; raw: string }>;
  /** Adjacent words of the query (no word, not even a stop word, between them), distinct. */
  pairs: Array<[Token, Token]>;
}

/** How both engines read a query: its words and the pairs that score as phrases. */
export function queryWords(query: string): QueryWords {
  const tokens = analyze(query);
  const words: QueryWords['words'] = [];
  for (const t of tokens) if (!words.some((w) => w.term === t.term)) words.push({ term: t.term, raw: t.raw });
  const pairs: QueryWords['pairs'] = [];
  for (let i = 1; i < tokens.length; i++) {
    const [a, b] = [tokens[i - 1], tokens[i]];
    if (b.position === a.position + 1 && !pairs.some(([x, y]) => x.term === a.term && y.term === b.term)) pairs.push([a, b]);
  }
  return { words, pairs };
}

let synonymsByStem: Map<string, readonly string[]> | undefined;

/** The synonyms (words as written) of a query word, looked up by its stem. */
export function synonymsOf(term: string): readonly string[] {
  synonymsByStem ??= new Map(Object.entries(SYNONYMS).map(([word, synonyms]) => [stem(word), synonyms]));
  return synonymsByStem.get(term) ?? [];
}

export function stripUrls(text: string): string {
  return text.replace(URL, ' ');
}

/** The part of a server name after the first `/` (the whole name when there is none). */
export function nameTail(name: string): string {
  const slash = name.indexOf('/');
  return slash < 0 ? name : name.slice(slash + 1);
}

/**
 * The namespace labels that identify a publisher: `com.stripe/x` → `stripe`,
 * `io.github.alice/x` → `alice`, `ai.smithery/x` → nothing (the owner is in the name).
 */
export function publisherWords(name: string): string {
  const slash = name.indexOf('/');
  if (slash < 0) return '';
  const labels = name.slice(0, slash).split('.').slice(1);
  if (labels.length > 0 && HOSTING.has(labels[0].toLowerCase())) labels.shift();
  return labels.join(' ');
}

/** Words a server name says when it says nothing of its own: `com.notion/mcp`, `io.github.mapbox/mcp-server`. */
const GENERIC_NAME_WORDS = new Set(['mcp', 'server', 'mcpserver', 'remote']);

/**
 * The name a server is searched by: the part after `/`; when that says only `mcp` or
 * `mcp-server` and the publisher is the owner of the code (`isOriginal`), the publisher's words
 * come first: `com.notion/mcp` is Notion's server, as `io.github.mapbox/mcp-server` is Mapbox's.
 */
export function nameText(r: SearchDocument['record']): string {
  const tail = nameTail(r.name);
  if (!identifierWords(tail).every((w) => GENERIC_NAME_WORDS.has(w)) || !isOriginal(r)) return tail;
  const publisher = publisherWords(r.name);
  return publisher === '' ? tail : `${publisher} ${tail}`;
}

/** The texts of a server's searchable fields, in `FIELDS` order (what both engines index). */
export function fieldTexts(doc: SearchDocument): Record<Field, string> {
  const r = doc.record;
  const readme = doc.readmeText.length > README_INDEX_CHARS ? doc.readmeText.slice(0, README_INDEX_CHARS) : doc.readmeText;
  return {
    name: nameText(r),
    title: r.title ?? '',
    description: r.description,
    tools: doc.toolText,
    readme: stripUrls(readme),
    publisher: publisherWords(r.name),
  };
}
