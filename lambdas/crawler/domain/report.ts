import type { CrawlReport, EnrichStep, ReportCounts, UnitResult } from './types';
import type { RunMeta, UnitItem } from './ports';

/** The crawl report from the run and its units' results (plus names removed by the final sweep). */
export function buildReport(
  run: RunMeta,
  units: UnitItem[],
  extra: { swept?: string[]; warnings?: string[]; highWater?: string; finishedAt?: string } = {},
): CrawlReport {
  const results: UnitResult[] = units.flatMap((u) => (u.result ? [u.result] : []));
  const added = results.flatMap((r) => r.added);
  const updated = results.flatMap((r) => r.updated);
  const removed = [...results.flatMap((r) => r.removed), ...(extra.swept ?? [])];
  const deleted = results.flatMap((r) => r.deleted ?? []);
  const rejected = results.flatMap((r) => r.rejected);
  // Rows the planner rejected live on units that may never have produced a result yet.
  for (const u of units) if (!u.result && u.planRejects) rejected.push(...u.planRejects);
  const dropped = results.flatMap((r) => r.dropped ?? []);
  const failures = results.flatMap((r) => r.failures);
  const failuresByStep: Partial<Record<EnrichStep, number>> = {};
  for (const f of failures) failuresByStep[f.step] = (failuresByStep[f.step] ?? 0) + 1;
  const counts: ReportCounts = {
    rows: run.rowsSeen,
    added: added.length,
    updated: updated.length,
    unchanged: results.reduce((n, r) => n + r.unchanged, 0),
    removed: removed.length,
    rejected: rejected.length,
    droppedUrls: dropped.length,
    superseded: results.reduce((n, r) => n + r.superseded, 0),
    enrichmentFailures: failures.length,
    iconsStored: results.reduce((n, r) => n + r.iconsStored, 0),
  };
  return {
    runId: run.runId,
    mode: run.mode,
    ...(run.since !== undefined && { since: run.since }),
    startedAt: run.startedAt,
    ...((extra.finishedAt ?? run.finishedAt) !== undefined && { finishedAt: extra.finishedAt ?? run.finishedAt }),
    units: units.length,
    counts,
    added,
    updated,
    removed,
    deleted,
    rejected,
    dropped,
    failures,
    failuresByStep,
    ...(extra.highWater !== undefined && { highWater: extra.highWater }),
    demoRemoved: run.demo?.removed ?? 0,
    warnings: [...(run.demo?.warnings ?? []), ...(extra.warnings ?? [])],
  };
}

/** One line per fact, for the CLI and logs. */
export function formatSummary(r: CrawlReport): string {
  const c = r.counts;
  const lines = [
    `crawl ${r.runId} (${r.mode}${r.since ? ` since ${r.since}` : ''}): ${c.rows} upstream rows in ${r.units} units`,
    ...(r.demoRemoved > 0 ? [`  removed ${r.demoRemoved} demo servers first: demo data is for an empty catalog only`] : []),
    `  added ${c.added}, updated ${c.updated}, unchanged ${c.unchanged}, removed ${c.removed}, rejected ${c.rejected}, superseded versions ${c.superseded}`,
    `  icons stored ${c.iconsStored}; enrichment failures ${c.enrichmentFailures}${
      Object.keys(r.failuresByStep).length
        ? ` (${Object.entries(r.failuresByStep)
            .map(([s, n]) => `${s} ${n}`)
            .join(', ')})`
        : ''
    }`,
  ];
  if (r.deleted.length > 0) lines.push(`  deleted upstream: ${r.deleted.length} (${r.deleted.slice(0, 5).join(', ')}${r.deleted.length > 5 ? ', …' : ''})`);
  if (r.rejected.length > 0) {
    const byCode = new Map<string, number>();
    for (const x of r.rejected) byCode.set(x.code, (byCode.get(x.code) ?? 0) + 1);
    lines.push(`  rejected by reason: ${[...byCode].map(([k, n]) => `${k} ${n}`).join(', ')}`);
    for (const x of r.rejected.slice(0, 20)) lines.push(`    - ${x.name ?? '(no name)'}${x.version ? `@${x.version}` : ''}: ${x.reason}`);
    if (r.rejected.length > 20) lines.push(`    … and ${r.rejected.length - 20} more`);
  }
  if (r.dropped.length > 0) {
    lines.push(`  URLs dropped (not http or https): ${r.dropped.length}`);
    for (const d of r.dropped.slice(0, 20)) lines.push(`    - ${d.name}${d.version ? `@${d.version}` : ''}: ${d.reason}`);
    if (r.dropped.length > 20) lines.push(`    … and ${r.dropped.length - 20} more`);
  }
  if (r.failures.length > 0) {
    for (const f of r.failures.slice(0, 10)) lines.push(`    ! ${f.name} [${f.step}]: ${f.reason}`);
    if (r.failures.length > 10) lines.push(`    … and ${r.failures.length - 10} more enrichment failures`);
  }
  for (const w of r.warnings) lines.push(`  warning: ${w}`);
  if (r.highWater) lines.push(`  next incremental crawl from ${r.highWater}`);
  return lines.join('\n');
}
