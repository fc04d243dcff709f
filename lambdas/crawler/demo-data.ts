import { describeError } from './http/http-client';
import { chunk, mapLimit } from '../shared/concurrency';

import type { CrawlContext } from './settings';

/**
 * Demo data is for an empty catalog only (DECISIONS): the synthetic servers `npm start` seeds into
 * an empty catalog (`demo: true` on the record) leave it when a real crawl starts, so a crawled
 * catalog never holds them beside real ones.
 *
 * The look costs a read or two per run: some one record of the catalog table (`anyRecord`). A
 * catalog with demo servers holds nothing else (the seed replaces the whole catalog, and this
 * removal runs before a crawl writes anything), so when that record is real there is nothing to
 * remove; when it is a demo server, the table is scanned and every demo server leaves the store,
 * the search index, the icon bucket and the trust table (its checks and changelog). An icon that cannot be deleted is a warning of the run,
 * not a failed crawl. The deployed crawler never looks (`removeDemoData: false`): only the local
 * stack writes demo data.
 */
export async function removeDemoData(ctx: CrawlContext): Promise<{ removed: number; warnings: string[] }> {
  const { store, index, icons, trust } = ctx.deps;
  if ((await store.anyRecord())?.demo !== true) return { removed: 0, warnings: [] };
  const slugs: string[] = [];
  for await (const d of store.scanAll()) if (d.record.demo === true) slugs.push(d.record.slug);
  const warnings: string[] = [];
  for (const batch of chunk(slugs, 100)) {
    await store.delete(batch);
    await index.remove(batch);
    // Their history too (checks, changelog, the breaking-changes feed): the trust table is not the catalog's to prune later.
    if (trust) await mapLimit(batch, 8, (slug) => trust.deleteAll(slug));
    try {
      await icons.remove(batch);
    } catch (err) {
      warnings.push(`could not delete the icons of ${batch.length} demo servers: ${describeError(err)}`);
    }
  }
  return { removed: slugs.length, warnings };
}
