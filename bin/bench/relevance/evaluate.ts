/**
 * Runs the judged queries through a ranker and scores the rankings: the embedded engine as it
 * runs in the local stack, and the OpenSearch adapter's requests as built for a real domain,
 * evaluated by the simulator (`opensearch-sim.ts`) over the same corpus.
 */
import { type SearchDocument, embeddedSearchIndex } from '../../../lambdas/catalog-core';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { indexDefinition, toIndexedDocument } from '../../../lambdas/catalog-core/search/opensearch-requests';
import { buildSearchRequest, fuzzyWordsFrom } from '../../../lambdas/catalog-core/search/opensearch-search';
import { FIXTURE_DIR } from './corpus';
import { type Grades, mean, type RankingScores, scoreRanking } from './metrics';
import { OpenSearchSimulator } from './opensearch-sim';

export interface JudgedQuery {
  id: string;
  query: string;
  /** What the person means, written before judging: the rubric's reference. */
  intent: string;
  /** Extra words that fed the judging pool only (never a ranker), written with the intent. */
  poolTerms?: string[];
  /** Server name → grade 0-3; servers not listed count as 0. */
  grades: Grades;
}

export function loadJudgedQueries(): JudgedQuery[] {
  return (JSON.parse(readFileSync(join(FIXTURE_DIR, 'queries.json'), 'utf8')) as { queries: JudgedQuery[] }).queries;
}

/**
 * The held-out half of the judged queries: the even ids (`q02`, `q04`, …), fixed by this rule
 * before any change was tuned. Ranking changes are tuned on the other half only; the benchmark
 * reports both, so a gain that holds only where it was tuned shows.
 */
export function isHeldOutQuery(q: Pick<JudgedQuery, 'id'>): boolean {
  return Number(q.id.replace(/\D/g, '')) % 2 === 0;
}

export interface JudgedCategories {
  name: string;
  /** 1-3 labels, best first, or `Other` alone. */
  expected: string[];
  /** `sample` (hash-ordered sample of the corpus) or `issue` (named in the issue). */
  source: string;
}

export function loadJudgedCategories(): JudgedCategories[] {
  return (JSON.parse(readFileSync(join(FIXTURE_DIR, 'categories.json'), 'utf8')) as { servers: JudgedCategories[] }).servers;
}

/**
 * The held-out half of the judged categories: servers whose `sha256("holdout:" + name)` starts
 * with an odd byte, fixed by this rule before any change was tuned; keyword changes never look at
 * their expected labels.
 */
export function isHeldOutServer(j: Pick<JudgedCategories, 'name'>): boolean {
  return createHash('sha256').update(`holdout:${j.name}`).digest()[0] % 2 === 1;
}

/** Server names in ranked order, at most `depth`. */
export type Ranker = (query: string, depth: number) => Promise<string[]>;

export async function embeddedRanker(docs: SearchDocument[]): Promise<Ranker> {
  const index = embeddedSearchIndex();
  await index.replaceAll(docs);
  return async (q, depth) => (await index.search({ q, filters: {}, page: { offset: 0, limit: depth } })).items.map((r) => r.name);
}

export function openSearchRanker(docs: SearchDocument[]): Ranker {
  const sim = new OpenSearchSimulator(
    indexDefinition() as Record<string, unknown>,
    docs.map((d) => ({ id: d.record.slug, source: toIndexedDocument(d) as unknown as Record<string, unknown> })),
  );
  // The adapter's two steps (opensearch.ts `search`): the request, then the fuzzy fallback when its counts ask for it.
  return async (q, depth) => {
    const query = { q, filters: {}, page: { offset: 0, limit: depth } };
    let result = sim.search(buildSearchRequest(query) as unknown as Record<string, unknown>);
    const fuzzy = fuzzyWordsFrom(q, result);
    if (fuzzy.size > 0) result = sim.search(buildSearchRequest(query, { fuzzy }) as unknown as Record<string, unknown>);
    return result.hits.map((h) => String(h.source.name));
  };
}

export interface QueryResult extends RankingScores {
  id: string;
  query: string;
  ranking: string[];
}

export interface Evaluation extends RankingScores {
  perQuery: QueryResult[];
}

export async function evaluate(rank: Ranker, queries: JudgedQuery[]): Promise<Evaluation> {
  const perQuery: QueryResult[] = [];
  for (const q of queries) {
    const ranking = await rank(q.query, 10);
    perQuery.push({ id: q.id, query: q.query, ranking, ...scoreRanking(ranking, q.grades) });
  }
  return {
    perQuery,
    ndcg10: mean(perQuery.map((r) => r.ndcg10)),
    mrr: mean(perQuery.map((r) => r.mrr)),
    p5: mean(perQuery.map((r) => r.p5)),
  };
}
