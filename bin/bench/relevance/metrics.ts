/**
 * Ranking and classification measures over graded judgments (grades 0-3; unjudged counts as 0).
 *
 * - nDCG@k: gain 2^grade - 1, discount log2(rank + 1), normalised by the ideal ordering of every
 *   judged server of the query (not only the retrieved ones), so missing a relevant server costs.
 * - MRR: 1 / rank of the first server graded 2 or 3 (0 when none is in the ranking).
 * - P@k: share of the first k places holding a server graded 2 or 3.
 */

export type Grades = Readonly<Record<string, number>>;

/** A grade at or above this counts as relevant for MRR and P@k. */
export const RELEVANT = 2;

function dcg(grades: readonly number[], k: number): number {
  let sum = 0;
  for (let i = 0; i < Math.min(k, grades.length); i++) sum += (2 ** grades[i] - 1) / Math.log2(i + 2);
  return sum;
}

export function ndcgAt(ranking: readonly string[], judged: Grades, k: number): number {
  const ideal = dcg(
    Object.values(judged).sort((a, b) => b - a),
    k,
  );
  if (ideal === 0) return 0;
  return (
    dcg(
      ranking.map((id) => judged[id] ?? 0),
      k,
    ) / ideal
  );
}

export function reciprocalRank(ranking: readonly string[], judged: Grades): number {
  const i = ranking.findIndex((id) => (judged[id] ?? 0) >= RELEVANT);
  return i < 0 ? 0 : 1 / (i + 1);
}

export function precisionAt(ranking: readonly string[], judged: Grades, k: number): number {
  let hits = 0;
  for (const id of ranking.slice(0, k)) if ((judged[id] ?? 0) >= RELEVANT) hits++;
  return hits / k;
}

export interface RankingScores {
  ndcg10: number;
  mrr: number;
  p5: number;
}

export function scoreRanking(ranking: readonly string[], judged: Grades): RankingScores {
  return { ndcg10: ndcgAt(ranking, judged, 10), mrr: reciprocalRank(ranking, judged), p5: precisionAt(ranking, judged, 5) };
}

export function mean(values: readonly number[]): number {
  return values.length === 0 ? 0 : values.reduce((a, b) => a + b, 0) / values.length;
}

export interface LabelScores {
  /** Micro-averaged over servers: predicted labels that are expected / predicted labels. */
  precision: number;
  /** Expected labels that were predicted / expected labels. */
  recall: number;
  /** Servers labelled exactly `Other`. */
  other: number;
  /** Servers labelled `Other` that have a label (clearly classifiable servers left out). */
  wronglyOther: number;
  /** Servers whose first predicted label is one of the expected ones. */
  firstCorrect: number;
}

export function scoreLabels(cases: ReadonlyArray<{ expected: readonly string[]; predicted: readonly string[] }>): LabelScores {
  let predicted = 0;
  let expected = 0;
  let agreed = 0;
  let other = 0;
  let wronglyOther = 0;
  let first = 0;
  for (const c of cases) {
    const want = new Set(c.expected);
    predicted += c.predicted.length;
    expected += want.size;
    for (const p of c.predicted) if (want.has(p)) agreed++;
    if (c.predicted.length === 1 && c.predicted[0] === 'Other') {
      other++;
      if (!want.has('Other')) wronglyOther++;
    }
    if (c.predicted.length > 0 && want.has(c.predicted[0])) first++;
  }
  return {
    precision: predicted === 0 ? 0 : agreed / predicted,
    recall: expected === 0 ? 0 : agreed / expected,
    other,
    wronglyOther,
    firstCorrect: first,
  };
}
