/**
 * The judging pool (`npx tsx bin/bench/relevance/pool.ts [--all]`): for every judged query, the
 * servers to grade that are not graded yet: the top 10 of each ranker (the embedded engine and
 * the OpenSearch requests, as the code stands when it is run) and every server whose name, title
 * or description contains the query's words or one of its pool terms (written with the intent,
 * before looking at any ranking; capped at the 40 with the most matching terms). Printed sorted by
 * name, with the text a judge reads and nothing a ranker computed (no rank, no score, no label).
 */
import { loadCorpusServers } from './corpus';
import { embeddedRanker, loadJudgedQueries, openSearchRanker } from './evaluate';
import { loadCorpusDocuments } from './corpus';

const POOL_DEPTH = 10;
/** Query words too common to pool on. */
const SKIP = new Set(['a', 'an', 'and', 'for', 'in', 'of', 'on', 'or', 'the', 'to', 'with']);
const KEYWORD_CAP = 40;

async function main(): Promise<void> {
  const all = process.argv.includes('--all');
  const servers = loadCorpusServers();
  const byName = new Map(servers.map((s) => [s.name, s]));
  const docs = loadCorpusDocuments();
  const rankers = [await embeddedRanker(docs), openSearchRanker(docs)];
  let pending = 0;
  for (const q of loadJudgedQueries()) {
    const pool = new Set<string>();
    for (const rank of rankers) for (const name of await rank(q.query, POOL_DEPTH)) pool.add(name);
    const terms = [...new Set([...q.query.toLowerCase().split(/\s+/), ...(q.poolTerms ?? []).map((t) => t.toLowerCase())])].filter(
      (t) => t.length >= 2 && !SKIP.has(t),
    );
    const keyword = servers
      .map((s) => {
        const text = `${s.name.slice(s.name.indexOf('/') + 1)} ${s.title ?? ''} ${s.description}`.toLowerCase();
        return { name: s.name, hits: terms.filter((t) => text.includes(t)).length };
      })
      .filter((x) => x.hits > 0)
      .sort((a, b) => b.hits - a.hits || (a.name < b.name ? -1 : 1))
      .slice(0, KEYWORD_CAP);
    for (const k of keyword) pool.add(k.name);
    const todo = [...pool].filter((n) => all || q.grades[n] === undefined).sort();
    if (todo.length === 0) continue;
    pending += todo.length;
    console.log(`\n### ${q.id} "${q.query}": ${q.intent}`);
    for (const n of todo) {
      const s = byName.get(n);
      console.log(`  ${n} | ${s?.title ?? ''} | ${s?.description ?? ''} | ${s?.repository?.url ?? s?.websiteUrl ?? ''}`);
    }
  }
  console.error(`${pending} servers to grade`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
