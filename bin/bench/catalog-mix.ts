import { CATEGORIES, REGISTRY_TYPES } from '../../lambdas/catalog-core';
import { LANGUAGES, TOPICS, type SyntheticServer } from '../local-stack/synthetic';

/**
 * The catalog's read traffic as readers send it, for the throughput and latency benchmarks: list
 * pages under every sort, filters alone and combined, full-text searches (some filtered, some past
 * page 1), autocomplete, facets and registry-feed pages, each a distinct URL: the reads the search
 * index answers (a detail page is a DynamoDB read, which the benchmark's catalog does not hold). Requests
 * draw from them with a Zipf law (a few popular pages, a long tail), so a response cache sees
 * what it would in production: hits on the head, misses on the tail. Deterministic: the same
 * catalog gives the same sequence. New kinds go in `kinds` below (the later benchmark at 100,000 servers).
 */
export interface QueryMix {
  /** Distinct request paths with their query strings (`/api/...?...`). */
  urls: string[];
  /** The request sequence: indexes into `urls`, Zipf-distributed. */
  sequence: number[];
  /** How many URLs of each kind. */
  kinds: Record<string, number>;
}

const SORTS = ['popularity', 'name', 'stars', 'updated', 'downloads', 'trending'];

export function catalogQueryMix(servers: readonly SyntheticServer[], o: { length?: number; seed?: number; zipf?: number } = {}): QueryMix {
  const rnd = mulberry32(o.seed ?? 7);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)];
  const kinds: Record<string, string[]> = { list: [], filter: [], search: [], autocomplete: [], facets: [], feed: [] };
  const enc = encodeURIComponent;
  const pages = Math.ceil(servers.length / 24);
  for (const sort of SORTS) for (let p = 1; p <= Math.min(pages, 20); p++) kinds.list.push(`/api/mcps?sort=${sort}&page=${p}`);
  for (let i = 0; i < 240; i++) {
    const parts: string[] = [];
    if (rnd() < 0.6) parts.push(`category=${enc(pick(CATEGORIES))}`);
    if (rnd() < 0.4) parts.push(`type=${pick(REGISTRY_TYPES)}`);
    if (rnd() < 0.3) parts.push(`language=${enc(pick(LANGUAGES.slice(0, 8)))}`);
    if (rnd() < 0.2) parts.push(`license=${pick(['MIT', 'Apache-2.0', 'GPL-3.0', 'MPL-2.0'])}`);
    if (parts.length === 0) parts.push(`category=${enc(pick(CATEGORIES))}`);
    parts.push(`sort=${pick(SORTS)}`);
    if (rnd() < 0.3) parts.push(`page=${2 + Math.floor(rnd() * 4)}`);
    if (rnd() < 0.2) parts.push('view=full');
    kinds.filter.push(`/api/mcps?${parts.join('&')}`);
  }
  const words = TOPICS.flatMap((t) => [t.key, ...t.keywords.filter((k) => !k.includes(' '))]);
  for (let i = 0; i < 300; i++) {
    const q = rnd() < 0.25 ? `${pick(words)} ${pick(words)}` : pick(words);
    const extra = rnd() < 0.3 ? `&category=${enc(pick(CATEGORIES))}` : rnd() < 0.2 ? `&page=${2 + Math.floor(rnd() * 3)}` : '';
    kinds.search.push(`/api/search?q=${enc(q)}${extra}`);
  }
  for (const w of words.slice(0, 150)) kinds.autocomplete.push(`/api/autocomplete?q=${enc(w.slice(0, 2 + Math.floor(rnd() * 3)))}`);
  kinds.facets.push('/api/facets', '/api/categories', '/api/languages', '/api/licenses');
  for (const w of words.slice(0, 40)) kinds.feed.push(`/api/v0.1/servers?limit=50&search=${enc(w)}`);
  kinds.feed.push('/api/v0.1/servers?limit=50');

  // Distinct URLs in a deterministic shuffle, so popularity (the Zipf rank) is spread over the kinds.
  const urls = [...new Set(Object.values(kinds).flat())];
  for (let i = urls.length - 1; i > 0; i--) {
    const j = Math.floor(rnd() * (i + 1));
    [urls[i], urls[j]] = [urls[j], urls[i]];
  }
  const s = o.zipf ?? 1;
  const weights = urls.map((_, i) => 1 / (i + 1) ** s);
  const total = weights.reduce((a, b) => a + b, 0);
  const cumulative: number[] = [];
  let acc = 0;
  for (const w of weights) {
    acc += w / total;
    cumulative.push(acc);
  }
  const sequence = Array.from({ length: o.length ?? 50_000 }, () => {
    const x = rnd();
    let lo = 0;
    let hi = cumulative.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cumulative[mid] < x) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  });
  return { urls, sequence, kinds: Object.fromEntries(Object.entries(kinds).map(([k, v]) => [k, new Set(v).size])) };
}

/**
 * The list pages readers browse: every sort, unfiltered and by each category, pages 1 to 14, in a
 * deterministic shuffle, the first `count` (1,200: the issue's "page/sort/category" mix). The
 * server CPU benchmark (`catalog-cpu.ts`) cycles over them, so each URL is asked as often as the next.
 */
export function catalogListMix(count = 1200, seed = 11): string[] {
  const rnd = mulberry32(seed);
  const urls: string[] = [];
  for (const sort of SORTS)
    for (const category of [undefined, ...CATEGORIES])
      for (let page = 1; page <= 14; page++)
        urls.push(`/api/mcps?${category === undefined ? '' : `category=${encodeURIComponent(category)}&`}sort=${sort}&page=${page}`);
  for (let i = urls.length - 1; i > 0; i--) {
    const j = Math.floor(rnd() * (i + 1));
    [urls[i], urls[j]] = [urls[j], urls[i]];
  }
  return urls.slice(0, count);
}

/** `count` distinct client addresses (198.18.0.0/15, the benchmarking range of RFC 2544). */
export function clientAddresses(count: number): string[] {
  return Array.from({ length: count }, (_, i) => `198.${18 + (i >> 16)}.${(i >> 8) & 255}.${i & 255}`);
}

function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
