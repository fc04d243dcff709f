/**
 * Catalog records from registry rows, made by the crawler's own code (normaliseRow, then
 * buildEntry with no enrichment), so a test sees what the site renders after `npm run crawl`
 * without running a crawl. Install snippets depend only on the registry's part of a record.
 */
import type { CatalogRecord } from '../../lambdas/catalog-core';
import { isRejection, normaliseRow, rowIdentity } from '../../lambdas/crawler/domain/normalise';
import { buildEntry } from '../../lambdas/crawler/domain/record';
import { baseSlug } from '../../lambdas/crawler/domain/slug';

const NOW = new Date('2026-11-01T00:00:00.000Z');

export interface SampleRecord {
  record: CatalogRecord;
  /** The version the crawler keeps for its name (the site shows only that one). */
  latest: boolean;
}

/**
 * Every row the crawler accepts, as a record, marked `latest` where it is the version the crawler
 * keeps for its name (isLatest, then publishedAt, then version: `precedenceKey`). Deleted servers
 * and rejected rows are left out, as the crawler leaves them out of the catalog.
 */
export function sampleRecords(rows: unknown[]): SampleRecord[] {
  const best = new Map<string, string>();
  for (const row of rows) {
    const id = rowIdentity(row);
    if (isRejection(id)) continue;
    if ((best.get(id.name) ?? '') < id.precedence) best.set(id.name, id.precedence);
  }
  const out: SampleRecord[] = [];
  for (const row of rows) {
    const id = rowIdentity(row);
    const r = normaliseRow(row);
    if (isRejection(id) || !r.ok || r.server.status === 'deleted') continue;
    const built = buildEntry({ server: r.server, slug: baseSlug(r.server.name), enrichment: {}, categories: ['Other'], trending: 0, now: NOW });
    out.push({ record: built.record, latest: best.get(id.name) === id.precedence });
  }
  return out;
}
