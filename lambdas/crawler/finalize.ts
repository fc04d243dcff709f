import type { NameState, RunMeta } from './domain/ports';
import { buildReport } from './domain/report';
import type { CrawlReport } from './domain/types';
import { chunk } from '../shared/concurrency';

import { isComplete, RunIncompleteError, type CrawlContext } from './settings';

/**
 * Phase 3 of a crawl (the state machine's `finalize` state): once every unit is done, sweep names no
 * longer listed (full runs), commit the high-water mark, assemble the report.
 */

export function computeHighWater(run: RunMeta, previous: string | undefined, marginMs: number): string | undefined {
  if (run.maxUpdatedAt === undefined) return previous;
  let hw = run.maxUpdatedAt;
  if (run.upstreamStartedAt !== undefined) {
    // A server updated while we paged may sit on a page already read; stay behind the upstream
    // clock at the start so the next run asks for it again (re-reading is cheap: no write).
    const cap = new Date(Date.parse(run.upstreamStartedAt) - marginMs).toISOString();
    if (cap < hw) hw = cap;
  }
  return previous !== undefined && previous > hw ? previous : hw;
}

export async function finalizeRun(ctx: CrawlContext, runId: string): Promise<CrawlReport> {
  const { state } = ctx.deps;
  const run = await state.getRun(runId);
  if (!run) throw new Error(`unknown run ${runId}`);
  const units = await state.listUnits(runId);
  if (run.status === 'done') {
    const summary = run.summary ? (JSON.parse(run.summary) as { swept?: string[]; warnings?: string[]; highWater?: string }) : {};
    return buildReport(run, units, summary);
  }
  if (!isComplete(run)) throw new RunIncompleteError(run);
  const warnings: string[] = [];
  const swept = run.mode === 'full' ? await sweep(ctx, run, warnings) : [];
  const pointer = await state.getPointer();
  const highWater = computeHighWater(run, pointer.highWater, ctx.settings.highWaterMarginMs);
  const finishedAt = ctx.clock.now().toISOString();
  await state.finishRun(runId, JSON.stringify({ swept: swept.slice(0, 1000), warnings, highWater }), highWater);
  return buildReport(run, units, { swept, warnings, ...(highWater !== undefined && { highWater }), finishedAt });
}

/** Full runs: listed names that upstream did not list this time leave the catalog. */
async function sweep(ctx: CrawlContext, run: RunMeta, warnings: string[]): Promise<string[]> {
  const gone: NameState[] = [];
  let listed = 0;
  for await (const s of ctx.deps.state.scanNames()) {
    if (s.listed !== true) continue;
    listed++;
    if (s.runBest?.runId !== run.runId) gone.push(s);
  }
  if (gone.length === 0) return [];
  if (listed > 0 && (listed - gone.length) / listed < ctx.settings.sweepMinShare) {
    warnings.push(`upstream listed only ${listed - gone.length} of ${listed} known servers; not removing the other ${gone.length} (a truncated listing?)`);
    return [];
  }
  for (const batch of chunk(gone, 100)) {
    const slugs = batch.flatMap((s) => (s.slug === undefined ? [] : [s.slug]));
    await ctx.deps.store.delete(slugs);
    await ctx.deps.index.remove(slugs);
    await ctx.deps.state.saveNames(batch.map((s) => ({ ...s, listed: false, reason: 'no longer listed upstream' })));
  }
  return gone.map((s) => s.name);
}
