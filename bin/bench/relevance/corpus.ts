/**
 * The judged corpus: the latest row of every server of the real registry sample (675 servers,
 * `test/fixtures/relevance/corpus.json`), turned into catalog records the way the crawler turns
 * them (normalise, classify by the rules, build the entry) and then into search documents. The
 * sample is server.json only: no README, tools, stars or downloads, so popularity is the
 * `isOfficial` bonus alone.
 */
import { type CatalogRecord, type SearchDocument, searchDocumentOf, slugFromName } from '../../../lambdas/catalog-core';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { classifyByRules } from '../../../lambdas/crawler/domain/classify';
import { normaliseRow } from '../../../lambdas/crawler/domain/normalise';
import { buildEntry } from '../../../lambdas/crawler/domain/record';
import type { NormalisedServer } from '../../../lambdas/crawler/domain/types';

export const FIXTURE_DIR = join(__dirname, '..', '..', '..', 'test', 'fixtures', 'relevance');
export const CORPUS_PATH = join(FIXTURE_DIR, 'corpus.json');

/** The crawl instant the records are built at (the sample's date). */
const NOW = new Date('2025-10-21T21:00:00Z');

export function loadCorpusServers(): NormalisedServer[] {
  const { rows } = JSON.parse(readFileSync(CORPUS_PATH, 'utf8')) as { rows: unknown[] };
  const out: NormalisedServer[] = [];
  for (const row of rows) {
    const r = normaliseRow(row);
    if (!r.ok) throw new Error(`corpus row rejected: ${r.rejection.reason}`);
    out.push(r.server);
  }
  return out;
}

export function classifierInput(s: NormalisedServer): Parameters<typeof classifyByRules>[0] {
  return { name: s.name, description: s.description, ...(s.title !== undefined && { title: s.title }) };
}

export function toRecord(s: NormalisedServer): CatalogRecord {
  return buildEntry({ server: s, slug: slugFromName(s.name), enrichment: {}, categories: classifyByRules(classifierInput(s)), trending: 0, now: NOW }).record;
}

/** Search documents of the whole corpus, categorised by the current rules. */
export function loadCorpusDocuments(): SearchDocument[] {
  return loadCorpusServers().map((s) => searchDocumentOf({ record: toRecord(s) }));
}
