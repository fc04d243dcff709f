/**
 * The relevance search request of the OpenSearch adapter: the rules of `ranking.ts` as query DSL
 * (README.md beside it shows the shape), and the reading of the counts that decide the fuzzy
 * fallback. Pure builders, shape-tested without a server; `opensearch.ts` sends them.
 */
import { SearchWindowError, type TextQuery } from '../domain/ports';
import { queryWords, synonymsOf } from './analysis';
import { BY_SLUG, buildFilterClauses, type Clause, DEMOTED_LAST, SEARCH_WINDOW, type SearchRequestBody, withFacets } from './opensearch-requests';
import {
  ALL_TERMS_BONUS,
  FIELD_BOOSTS,
  FIELDS,
  type Field,
  FUZZINESS,
  FUZZY_FIELDS,
  FUZZY_MAX_EXPANSIONS,
  FUZZY_MIN_LENGTH,
  FUZZY_PREFIX_LENGTH,
  FUZZY_RATIO,
  DEMOTED_WEIGHT,
  FUZZY_WEIGHT,
  ORIGINAL_BOOST,
  PHRASE_BOOST,
  PHRASE_FIELDS,
  PREFIX_FIELDS,
  PREFIX_MAX_EXPANSIONS,
  PREFIX_MIN_LENGTH,
  PREFIX_WEIGHT,
  SYNONYM_WEIGHT,
  TIE_BREAKER,
} from './ranking';

/** The index field each ranking field is stored in. */
const INDEX_FIELD: Readonly<Record<Field, string>> = {
  name: 'nameWords',
  title: 'title',
  description: 'description',
  tools: 'toolText',
  readme: 'readmeText',
  publisher: 'publisher',
};
const boosted = (fields: readonly Field[]): string[] => fields.map((f) => `${INDEX_FIELD[f]}^${FIELD_BOOSTS[f]}`);
/** Every searchable field with its boost (`ranking.ts`). */
export const SEARCH_FIELDS = boosted(FIELDS);

/** A query word's exact and prefix matches: what decides whether it needs the fuzzy fallback. */
function exactClauses(raw: string): Clause[] {
  const out: Clause[] = [{ multi_match: { query: raw, fields: SEARCH_FIELDS, type: 'best_fields', tie_breaker: TIE_BREAKER } }];
  if (raw.length >= PREFIX_MIN_LENGTH) {
    out.push({
      dis_max: {
        queries: PREFIX_FIELDS.map((f) => ({
          prefix: { [INDEX_FIELD[f]]: { value: raw, rewrite: `top_terms_${PREFIX_MAX_EXPANSIONS}`, boost: FIELD_BOOSTS[f] } },
        })),
        tie_breaker: TIE_BREAKER,
        boost: PREFIX_WEIGHT,
      },
    });
  }
  return out;
}

function fuzzyClause(raw: string): Clause {
  return {
    multi_match: {
      query: raw,
      fields: boosted(FUZZY_FIELDS),
      type: 'best_fields',
      tie_breaker: TIE_BREAKER,
      fuzziness: FUZZINESS,
      prefix_length: FUZZY_PREFIX_LENGTH,
      max_expansions: FUZZY_MAX_EXPANSIONS,
      boost: FUZZY_WEIGHT,
    },
  };
}

/** Name of the aggregation that counts a word's exact (`e<i>`) or fuzzy (`f<i>`) matches. */
const FUZZY_CHECK = 'fuzzy_check';

export interface SearchOptions {
  /** Stems of the query words to widen with fuzzy matching (from `fuzzyWordsFrom`). */
  fuzzy?: ReadonlySet<string>;
}

/**
 * The relevance search (the rules of `ranking.ts`): per query word, a clause of its exact,
 * prefix, synonym and (when `options.fuzzy` names it) fuzzy matches; a server must match one
 * clause, gets ALL_TERMS_BONUS × their sum more when it matches all, and a phrase score for every
 * pair of adjacent query words. Without `options.fuzzy` the body also asks for the counts that
 * decide the fuzzy fallback (`fuzzyWordsFrom`); the adapter sends a second request only when a
 * word needs it. Originals' scores are multiplied by ORIGINAL_BOOST and demoted servers' by
 * DEMOTED_WEIGHT (a `function_score` with a `weight` function on each flag); equal scores put
 * demoted servers last, then popularity, slug.
 * With `q.facets` the filters go to `post_filter` and the facet aggregations ride along
 * (`withFacets`).
 */
export function buildSearchRequest(q: TextQuery, options: SearchOptions = {}): SearchRequestBody {
  const { offset, limit } = q.page;
  if (offset + limit > SEARCH_WINDOW) throw new SearchWindowError(SEARCH_WINDOW);
  const { words, pairs } = queryWords(q.q);
  const body: SearchRequestBody = {
    query: { match_none: {} },
    sort: [{ _score: 'desc' }, DEMOTED_LAST, { popularity: 'desc' }, BY_SLUG],
    from: offset,
    size: limit,
    track_total_hits: true,
    _source: ['record'],
  };
  if (words.length === 0) return body;
  const clauses = words.map((w): Clause => {
    const should = exactClauses(w.raw);
    if (options.fuzzy?.has(w.term) === true) should.push(fuzzyClause(w.raw));
    const synonyms = synonymsOf(w.term);
    if (synonyms.length > 0) {
      should.push({ multi_match: { query: synonyms.join(' '), fields: SEARCH_FIELDS, type: 'best_fields', tie_breaker: TIE_BREAKER, boost: SYNONYM_WEIGHT } });
    }
    return { bool: { should } };
  });
  const bonus: Clause[] = [];
  if (words.length > 1) bonus.push({ bool: { must: clauses, boost: ALL_TERMS_BONUS } });
  for (const [a, b] of pairs) {
    bonus.push({ multi_match: { query: `${a.raw} ${b.raw}`, fields: boosted(PHRASE_FIELDS), type: 'phrase', tie_breaker: TIE_BREAKER, boost: PHRASE_BOOST } });
  }
  const text: Clause = {
    bool: {
      must: [{ bool: { should: clauses, minimum_should_match: 1 } }],
      ...(bonus.length > 0 && { should: bonus }),
      filter: q.facets === true ? [] : buildFilterClauses(q.filters),
    },
  };
  body.query = {
    function_score: {
      query: text,
      functions: [
        { filter: { term: { original: true } }, weight: ORIGINAL_BOOST },
        { filter: { term: { demoted: 1 } }, weight: DEMOTED_WEIGHT },
      ],
      score_mode: 'multiply',
      boost_mode: 'multiply',
    },
  };
  if (options.fuzzy === undefined) {
    const checks: Record<string, Clause> = {};
    words.forEach((w, i) => {
      if (w.term.length < FUZZY_MIN_LENGTH) return;
      checks[`e${i}`] = { filter: { bool: { should: exactClauses(w.raw) } } };
      checks[`f${i}`] = { filter: fuzzyClause(w.raw) };
    });
    if (Object.keys(checks).length > 0) body.aggs = { [FUZZY_CHECK]: { global: {}, aggs: checks } };
  }
  if (q.facets === true) withFacets(body, q.filters);
  return body;
}

/**
 * The words of the query the fuzzy fallback applies to, from the counts a first response carries:
 * those whose fuzzy matches reach FUZZY_RATIO times the servers their exact and prefix matches do
 * (over the whole catalog, whatever the filters). Empty when no word needs it.
 */
export function fuzzyWordsFrom(q: string, response: unknown): Set<string> {
  const out = new Set<string>();
  const aggs = (response as { aggregations?: Record<string, Record<string, { doc_count?: number } | undefined> | undefined> } | undefined)?.aggregations?.[
    FUZZY_CHECK
  ];
  if (aggs === undefined) return out;
  queryWords(q).words.forEach((w, i) => {
    const exact = aggs[`e${i}`]?.doc_count;
    const fuzzy = aggs[`f${i}`]?.doc_count;
    if (typeof exact === 'number' && typeof fuzzy === 'number' && exact * FUZZY_RATIO < fuzzy) out.add(w.term);
  });
  return out;
}
