/**
 * The keyword lists of the rule classifier (`classify.ts`) are data: `category-keywords.json`
 * beside this file, one array of keywords per label, bundled into the crawler with its code (a
 * JSON import), so a list can be reviewed and changed without reading the rules. This module
 * checks the file's shape once, at load.
 *
 * Keywords are matched case-insensitively on word boundaries; a trailing `*` matches any word
 * continuation (`databas*` matches database, databases). Multi-word keywords match with any run
 * of spaces, `-` or `_` between the words. A leading `~` marks a weak keyword: it adds to a
 * category only when a strong one of the same category matched too (`automate`, `search` or
 * `cloud` say something only beside a word that names the domain).
 */
import { CATEGORIES, type Category } from '../../catalog-core';
import lists from './category-keywords.json';

export type Labelled = Exclude<Category, 'Other'>;

/** An optional `~`, words without `~` or `*` and without outer spaces, an optional trailing `*`. */
const KEYWORD = /^~?(?! )[^~*]*[^ ~*]\*?$/u;

/** The lists, checked: every label but `Other` once, each keyword a well-formed entry, no repeats. */
export function checkedKeywords(data: unknown): Readonly<Record<Labelled, readonly string[]>> {
  if (typeof data !== 'object' || data === null || Array.isArray(data)) throw new Error('category keywords: not an object of lists');
  const labels = CATEGORIES.filter((c): c is Labelled => c !== 'Other');
  const entries = data as Record<string, unknown>;
  const unknown = Object.keys(entries).filter((k) => !(labels as readonly string[]).includes(k));
  if (unknown.length > 0) throw new Error(`category keywords: unknown labels ${unknown.join(', ')}`);
  const out = {} as Record<Labelled, readonly string[]>;
  for (const label of labels) {
    const list = entries[label];
    if (!Array.isArray(list) || list.length === 0) throw new Error(`category keywords: no list for ${label}`);
    const bad = list.filter((k) => typeof k !== 'string' || !KEYWORD.test(k));
    if (bad.length > 0) throw new Error(`category keywords: malformed in ${label}: ${bad.map((b) => JSON.stringify(b)).join(', ')}`);
    const seen = new Set<string>();
    for (const k of list as string[]) {
      const key = k.toLowerCase().replace(/^~/, '');
      if (seen.has(key)) throw new Error(`category keywords: ${label} lists ${k} twice`);
      seen.add(key);
    }
    out[label] = list as string[];
  }
  return out;
}

export const CATEGORY_KEYWORDS: Readonly<Record<Labelled, readonly string[]>> = checkedKeywords(lists);
