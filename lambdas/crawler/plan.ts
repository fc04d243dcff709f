import { randomBytes } from 'node:crypto';
import { isRejection, rowIdentity, type RowIdentity } from './domain/normalise';
import type { NameState, RunMeta, UnitItem } from './domain/ports';
import { baseSlug, slugCandidates } from './domain/slug';
import type { CrawlMode, Rejection } from './domain/types';
import { chunk, mapLimit } from '../shared/concurrency';

import { removeDemoData } from './demo-data';
import type { CrawlContext, PlanOptions, PlanResult } from './settings';

/**
 * Phase 1 of a crawl (the state machine's `plan` state): page through the upstream registry into
 * idempotent units, claim slugs for new names, and in an incremental run add refresh units.
 */

const pad = (n: number, w: number) => String(n).padStart(w, '0');

export async function planCrawl(ctx: CrawlContext, opts: PlanOptions = {}): Promise<PlanResult> {
  const { state } = ctx.deps;
  let pointer = await state.getPointer();
  let run = pointer.currentRun === undefined ? undefined : await state.getRun(pointer.currentRun);
  let resumed = run !== undefined && run.status !== 'done';
  if (!resumed) {
    // Before this run writes anything: a catalog of demo servers is emptied, and mirrored in full.
    const demo = ctx.settings.removeDemoData ? await removeDemoData(ctx) : { removed: 0, warnings: [] };
    const wanted = opts.mode ?? 'auto';
    const mode: CrawlMode = wanted === 'full' || pointer.highWater === undefined || demo.removed > 0 ? 'full' : 'incremental';
    const now = ctx.clock.now();
    const fresh: RunMeta = {
      runId: `${now.toISOString().replace(/[-:.]/g, '').slice(0, 15)}Z-${randomBytes(3).toString('hex')}`,
      mode,
      ...(mode === 'incremental' && pointer.highWater !== undefined && { since: pointer.highWater }),
      startedAt: now.toISOString(),
      status: 'planning',
      steps: 0,
      unitsCreated: 0,
      unitsDone: 0,
      rowsSeen: 0,
      ...((demo.removed > 0 || demo.warnings.length > 0) && { demo }),
    };
    if (await state.startRun(fresh, pointer.currentRun)) {
      run = fresh;
    } else {
      // Another planner started a run meanwhile: continue that one instead of racing it.
      pointer = await state.getPointer();
      run = pointer.currentRun === undefined ? undefined : await state.getRun(pointer.currentRun);
      if (!run) throw new Error('could not start a crawl run');
      resumed = true;
    }
  }
  let current: RunMeta = run as RunMeta;
  let steps = 0;
  while (current.status === 'planning') {
    if (opts.maxSteps !== undefined && steps >= opts.maxSteps) break;
    const stepped = current.steps > 0 && current.cursor === undefined ? await refreshStep(ctx, current) : await pageStep(ctx, current);
    opts.onStep?.({ runId: current.runId, step: current.steps + 1, rows: stepped.rows, units: stepped.units });
    steps++;
    const next = await state.getRun(current.runId);
    if (!next) throw new Error(`run ${current.runId} vanished`);
    current = next;
  }
  const pending = (await state.listUnits(current.runId)).filter((u) => u.status === 'pending').map((u) => ({ runId: u.runId, unitId: u.unitId }));
  const last = pointer.lastRun === undefined || pointer.lastRun === current.runId ? undefined : await state.getRun(pointer.lastRun);
  return {
    runId: current.runId,
    mode: current.mode,
    resumed,
    planned: current.status !== 'planning',
    units: pending,
    ...(last?.finishedAt !== undefined && { lastFinishedAt: last.finishedAt }),
  };
}

function wantsRefresh(ctx: CrawlContext, run: RunMeta): boolean {
  return run.mode === 'incremental' && ctx.settings.refreshBatch > 0;
}

async function pageStep(ctx: CrawlContext, run: RunMeta): Promise<{ rows: number; units: number }> {
  const { state, upstream } = ctx.deps;
  const stepNo = run.steps + 1;
  const page = await upstream.fetchPage({
    ...(run.cursor !== undefined && { cursor: run.cursor }),
    ...(run.since !== undefined && { updatedSince: run.since }),
  });
  const planRejects: Rejection[] = [];
  // Sizes in UTF-8 bytes, as DynamoDB counts them (a CJK description is 3 bytes a character).
  const kept: Array<{ row: unknown; id: RowIdentity; json: string; bytes: number }> = [];
  let maxUpdatedAt = run.maxUpdatedAt;
  for (const row of page.rows) {
    const id = rowIdentity(row);
    if (isRejection(id)) {
      planRejects.push(id);
      continue;
    }
    if (id.meta.updatedAt !== undefined && (maxUpdatedAt === undefined || id.meta.updatedAt > maxUpdatedAt)) maxUpdatedAt = id.meta.updatedAt;
    const json = JSON.stringify(row);
    const bytes = Buffer.byteLength(json);
    if (bytes > ctx.settings.unitMaxBytes) {
      planRejects.push({ name: id.name, version: id.version, code: 'row_too_large', reason: `row is ${bytes} bytes (limit ${ctx.settings.unitMaxBytes})` });
      continue;
    }
    kept.push({ row, id, json, bytes });
  }

  // Rows → units of bounded size; the index of a row within its unit identifies it.
  const parts: Array<typeof kept> = [];
  let size = 0;
  for (const k of kept) {
    if (parts.length === 0 || size + k.bytes + 1 > ctx.settings.unitMaxBytes) {
      parts.push([]);
      size = 2;
    }
    parts[parts.length - 1].push(k);
    size += k.bytes + 1;
  }
  if (parts.length === 0 && planRejects.length > 0) parts.push([]);
  const units: UnitItem[] = parts.map((p, i) => ({
    runId: run.runId,
    unitId: `p${pad(stepNo, 5)}-${i}`,
    kind: 'page',
    status: 'pending',
    rows: `[${p.map((k) => k.json).join(',')}]`,
    ...(i === 0 && planRejects.length > 0 && { planRejects }),
  }));

  // This page's best row per name (first wins on equal precedence), in upstream order.
  const best = new Map<string, { precedence: string; unitId: string; index: number }>();
  for (const [ui, p] of parts.entries()) {
    for (const [index, k] of p.entries()) {
      const b = best.get(k.id.name);
      if (b === undefined || k.id.precedence > b.precedence) best.set(k.id.name, { precedence: k.id.precedence, unitId: units[ui].unitId, index });
    }
  }
  const names = [...best.keys()];
  const states = await state.getNames(names);
  const slugs = await assignSlugs(
    ctx,
    names.filter((n) => states.get(n)?.slug === undefined),
  );
  const marked: NameState[] = [];
  for (const name of names) {
    const b = best.get(name);
    const st: NameState = states.get(name) ?? { name };
    const slug = st.slug ?? slugs.get(name);
    if (b === undefined || slug === undefined) continue;
    const rb = st.runBest;
    // An earlier page of this run already holds a better (or equally good, first wins) row.
    const sameRow = rb?.unitId === b.unitId && rb.index === b.index;
    if (rb !== undefined && rb.runId === run.runId && !sameRow && rb.precedence >= b.precedence) continue;
    marked.push({ ...st, name, slug, runBest: { runId: run.runId, ...b } });
  }
  await state.saveNames(marked);

  const last = page.nextCursor === undefined;
  await state.commitPlanStep(run.runId, {
    step: stepNo,
    units,
    ...(page.nextCursor !== undefined && { cursor: page.nextCursor }),
    planned: last && !wantsRefresh(ctx, run),
    rows: page.rows.length,
    ...(maxUpdatedAt !== undefined && { maxUpdatedAt }),
    ...(stepNo === 1 && { upstreamStartedAt: page.serverDate ?? ctx.clock.now().toISOString() }),
  });
  return { rows: page.rows.length, units: units.length };
}

/** Slugs for names that have none; names sharing a base slug claim in upstream order. */
async function assignSlugs(ctx: CrawlContext, names: string[]): Promise<Map<string, string>> {
  const groups = new Map<string, string[]>();
  for (const n of names) {
    const b = baseSlug(n);
    const g = groups.get(b);
    if (g) g.push(n);
    else groups.set(b, [n]);
  }
  const out = new Map<string, string>();
  await mapLimit(
    [...groups.values()],
    16,
    async (group) => {
      for (const name of group) {
        for (const candidate of slugCandidates(name)) {
          if (await ctx.deps.state.claimSlug(candidate, name)) {
            out.set(name, candidate);
            break;
          }
        }
        if (!out.has(name)) throw new Error(`no free slug for ${name}`);
      }
    },
    { onError: 'continue' },
  );
  return out;
}

async function refreshStep(ctx: CrawlContext, run: RunMeta): Promise<{ rows: number; units: number }> {
  const cutoff = new Date(ctx.clock.now().getTime() - ctx.settings.refreshAfterHours * 3_600_000).toISOString();
  const due: Array<{ name: string; enrichedAt: string }> = [];
  for await (const s of ctx.deps.state.scanNames()) {
    if (s.listed !== true || s.runBest?.runId === run.runId) continue;
    const at = s.enrichedAt ?? '';
    if (at <= cutoff) due.push({ name: s.name, enrichedAt: at });
  }
  due.sort((a, b) => (a.enrichedAt < b.enrichedAt ? -1 : a.enrichedAt > b.enrichedAt ? 1 : a.name < b.name ? -1 : 1));
  const batches = chunk(
    due.slice(0, ctx.settings.refreshBatch).map((d) => d.name),
    ctx.settings.refreshUnitSize,
  ).slice(0, 90); // one transaction holds at most 100 items
  const stepNo = run.steps + 1;
  const units: UnitItem[] = batches.map((names, i) => ({
    runId: run.runId,
    unitId: `r${pad(stepNo, 5)}-${i}`,
    kind: 'refresh',
    status: 'pending',
    names,
  }));
  await ctx.deps.state.commitPlanStep(run.runId, { step: stepNo, units, planned: true, rows: 0 });
  return { rows: 0, units: units.length };
}
