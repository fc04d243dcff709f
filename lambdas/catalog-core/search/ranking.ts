/**
 * The ranking rules of catalog search, shared by both engines: the embedded engine
 * (`text-index.ts`) scores with them, the OpenSearch adapter (`opensearch-requests.ts`) builds its
 * requests from them. Each engine implements the scoring on its own; these numbers and lists are
 * the one place where the rules are written; `README.md` beside it says why each is what it is.
 */

/** The searchable fields of a server, in posting order. */
export const FIELDS = ['name', 'title', 'description', 'tools', 'readme', 'publisher'] as const;
export type Field = (typeof FIELDS)[number];

/**
 * Field weights. `name` is the part after the `/` only; the namespace is `publisher`, minus the
 * parts that say nothing about the server (the TLD, `github`, `gitlab`, `smithery`), weighted low:
 * a `com.stripe/…` namespace is worth something, an `io.github.<user>` one is only the author.
 */
export const FIELD_BOOSTS: Readonly<Record<Field, number>> = {
  name: 5,
  title: 4,
  description: 2,
  tools: 1.5,
  readme: 0.5,
  publisher: 1.5,
};

/** A term counts with its best field plus this share of its other fields (a dis_max tie breaker). */
export const TIE_BREAKER = 0.3;

/** Words of at least this length also match longer words they begin (`postg` → `postgresql`). */
export const PREFIX_MIN_LENGTH = 4;
export const PREFIX_WEIGHT = 0.3;
export const PREFIX_MAX_EXPANSIONS = 50;
export const PREFIX_FIELDS: readonly Field[] = ['name', 'title', 'description'];

/**
 * Fuzzy matching is a fallback: a word is widened to the words within `fuzzyEdits` of it only
 * when those reach at least `FUZZY_RATIO` times as many servers as the word itself (and its
 * prefixes) does: a typo (`postgress`, 0 servers, against `postgresql`) is corrected, a real word
 * (`slack`, 2 servers, against `stack`, 5) is left alone.
 */
export const FUZZY_MIN_LENGTH = 4;
export const FUZZY_RATIO = 10;
export const FUZZY_WEIGHT = 0.5;
export const FUZZY_PREFIX_LENGTH = 1;
export const FUZZY_MAX_EXPANSIONS = 50;
export const FUZZY_FIELDS: readonly Field[] = ['name', 'title', 'description', 'tools'];
/** One edit up to 7 characters, two from 8 (OpenSearch `AUTO:4,8`). */
export const FUZZINESS = 'AUTO:4,8';
export function fuzzyEdits(length: number): number {
  return length < 4 ? 0 : length < 8 ? 1 : 2;
}

/**
 * Words a person uses for the same thing, added to a query word (matched by stem) with
 * SYNONYM_WEIGHT: abbreviations and the names of the tools that do what a generic word says
 * (`browser` is what Chrome, Playwright and Puppeteer servers drive). Query-side only, so the list
 * can change without reindexing. Kept short: each entry must be true in every context.
 */
export const SYNONYMS: Readonly<Record<string, readonly string[]>> = {
  browser: ['chrome', 'chromium', 'firefox', 'headless', 'playwright', 'puppeteer', 'selenium', 'webdriver'],
  k8s: ['kubernetes'],
  kubernetes: ['k8s'],
  db: ['database'],
  postgresql: ['postgres'],
  pg: ['postgres', 'postgresql'],
  js: ['javascript'],
  ts: ['typescript'],
  py: ['python'],
  repo: ['repository'],
  docs: ['documentation'],
  documentation: ['docs'],
  email: ['mail', 'gmail'],
  mail: ['email'],
};
export const SYNONYM_WEIGHT = 0.5;

/**
 * An original (`isOriginal`, `lambdas/catalog-core/domain/standing.ts`: published by the owner of its
 * code) scores this many times its text score: a re-publisher's copy of a server (`ai.smithery/…`,
 * someone else's account) says the same words as the original and must not outrank it, whether or
 * not stars are known to tell them apart.
 */
export const ORIGINAL_BOOST = 1.25;

/**
 * A deprecated server or a test entry (`isDemoted`) scores this share of its text score, and comes
 * after the others on equal scores: it stays findable by its own name, but an active server about
 * the same thing ranks first (the demo catalog's `postgres`: a deprecated server led).
 */
export const DEMOTED_WEIGHT = 0.5;

/** A server matching every word of a multi-word query scores this much more (1 + bonus times). */
export const ALL_TERMS_BONUS = 1;
/** Two query words next to each other in a field also score as a phrase, with this weight. */
export const PHRASE_BOOST = 1;
export const PHRASE_FIELDS: readonly Field[] = ['name', 'title', 'description'];

/** Lucene's English stop words (OpenSearch `_english_`): not indexed, not searched. */
export const STOP_WORDS: readonly string[] = [
  'a',
  'an',
  'and',
  'are',
  'as',
  'at',
  'be',
  'but',
  'by',
  'for',
  'if',
  'in',
  'into',
  'is',
  'it',
  'no',
  'not',
  'of',
  'on',
  'or',
  'such',
  'that',
  'the',
  'their',
  'then',
  'there',
  'these',
  'they',
  'this',
  'to',
  'was',
  'will',
  'with',
];

/**
 * Words the Porter stemmer would merge with another word (`news` → `new`, `ios` → `io`,
 * `aws` → `aw`): kept as they are (OpenSearch `keyword_marker`).
 */
export const PROTECTED_WORDS: readonly string[] = ['news', 'ios', 'aws', 'sms', 'dns', 'gis', 'tts', 'ses', 'sns', 'ecs', 'eks', 'kms', 'mms'];

/** Namespace labels that say where a server is hosted or re-published, not who or what it is. */
export const HOSTING_LABELS: readonly string[] = ['github', 'gitlab', 'smithery'];
