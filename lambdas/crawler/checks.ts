import {
  failureKindOf,
  LONGEST_WINDOW_MS,
  searchDocumentOf,
  lintTools,
  summarizeChecks,
  toolsEntry,
  type CatalogDetail,
  type CatalogStore,
  type CatalogWrite,
  type CheckResult,
  type HealthCheck,
  type SearchDocument,
  type SearchIndex,
  type TrustStore,
} from '../catalog-core';
import { isDeepStrictEqual } from 'node:util';
import { mapLimit } from '../shared/concurrency';
import type { Clock, HealthChecker } from './domain/ports';
import type { RemoteHealth } from './domain/types';
import { mergeHealth } from './domain/health';
import type { CheckSettings } from './check-settings';

/**
 * The check schedule's round: every hosted server (a remote without `{variables}`) is checked live,
 * the check is kept in the trust table, and the server's record gets the check's health and the
 * summary of its history (uptime, latency, last failure, a run of failures). In AWS a round is a
 * Step Functions execution (`planChecks` → a Map over batches → `checkBatch`); locally
 * `npm run check-health` runs the same functions in one process (`runCheckRound`).
 *
 * Batches are ranges of the search index's name order over servers with a remote: a plan is a few
 * numbers whatever the catalog's size (the Map's state stays small), and a server that enters or
 * leaves the catalog during a round shifts a range by one: it is checked twice or once less in that
 * round, never wrongly.
 */

export interface CheckDeps {
  store: CatalogStore;
  index: SearchIndex;
  /** Where the checked servers' documents go, when not `index` (the small-catalog mode lists from the snapshot and rebuilds it after the round). */
  indexWrites?: Pick<SearchIndex, 'upsert'>;
  trust: TrustStore;
  health: HealthChecker;
  clock: Clock;
  settings: CheckSettings;
}

export interface CheckBatchRef {
  offset: number;
  limit: number;
}

export interface CheckCounts {
  checked: number;
  up: number;
  auth: number;
  down: number;
  /** Servers whose last `downAfter` checks failed, after this check. */
  markedDown: number;
  /** No checkable remote (templated URLs only) or gone since the plan. */
  skipped: number;
}

const HOSTED = { type: ['remote' as const] };

/** The batches of one round: ranges over the hosted servers in name order. */
export async function planChecks(index: SearchIndex, batchSize: number): Promise<{ total: number; batches: CheckBatchRef[] }> {
  const { total } = await index.list({ filters: HOSTED, sort: 'name', page: { offset: 0, limit: 1 } });
  const batches: CheckBatchRef[] = [];
  for (let offset = 0; offset < total; offset += batchSize) batches.push({ offset, limit: Math.min(batchSize, total - offset) });
  return { total, batches };
}

/** Checks the servers of one batch (a range of the plan, or named slugs) and writes what they found. */
export async function checkBatch(deps: CheckDeps, batch: CheckBatchRef | { slugs: string[] }): Promise<CheckCounts> {
  const slugs =
    'slugs' in batch
      ? batch.slugs
      : (await deps.index.list({ filters: HOSTED, sort: 'name', page: { offset: batch.offset, limit: batch.limit } })).items.map((r) => r.slug);
  const counts: CheckCounts = { checked: 0, up: 0, auth: 0, down: 0, markedDown: 0, skipped: 0 };
  const writes: CatalogWrite[] = [];
  const docs: SearchDocument[] = [];
  await mapLimit(slugs, deps.settings.concurrency, async (slug) => {
    const detail = await deps.store.get(slug);
    const outcome = detail === undefined ? undefined : await checkServer(deps, detail);
    if (detail === undefined || outcome === undefined) {
      counts.skipped++;
      return;
    }
    counts.checked++;
    counts[outcome.check.result]++;
    if (outcome.write.record.healthHistory?.down === true) counts.markedDown++;
    writes.push(outcome.write);
    docs.push(searchDocumentOf({ record: outcome.write.record, readme: detail.readme, tools: outcome.write.tools ?? detail.tools }));
  });
  // The store first: it is the source of truth the index is rebuilt from.
  if (writes.length > 0) {
    await deps.store.put(writes);
    await (deps.indexWrites ?? deps.index).upsert(docs);
  }
  return counts;
}

/** One server: its remotes checked, the check kept, the record's health and summary renewed. */
async function checkServer(deps: CheckDeps, detail: CatalogDetail): Promise<{ check: HealthCheck; write: CatalogWrite } | undefined> {
  const remotes = detail.record.remotes.filter((r) => !/[{}]/.test(r.url)).slice(0, deps.settings.maxRemotes);
  if (remotes.length === 0) return undefined;
  const results = (await Promise.all(remotes.map((r) => deps.health.check(r)))).filter((r): r is RemoteHealth => r !== undefined);
  if (results.length === 0) return undefined;
  const now = deps.clock.now();
  const check = checkOf(results, now);
  const { slug } = detail.record;
  await deps.trust.putChecks([{ slug, check }]);
  const history = await deps.trust.checks(slug, new Date(now.getTime() - LONGEST_WINDOW_MS).toISOString());
  // The check just written is in the history (the table is read after the write); a history read
  // that lags still counts it once.
  if (!history.some((c) => c.at === check.at)) history.push(check);
  const merged = mergeHealth(results);
  const changed = merged.tools === undefined ? undefined : toolsEntry(detail.tools, merged.tools, check.at);
  if (changed !== undefined) await deps.trust.putChanges([{ slug, entry: changed }]);
  const current = merged.tools ?? detail.tools;
  const record = {
    ...detail.record,
    ...(current !== undefined && { grades: { ...detail.record.grades, descriptions: lintTools(current).grade } }),
    ...(merged.health && { health: merged.health }),
    healthHistory: summarizeChecks(history, now, deps.settings.downAfter),
    ...(merged.tools !== undefined && { toolCount: merged.tools.length }),
  };
  // The TOOLS item is rewritten only when the capture differs (a description reworded is no changelog entry, but is kept).
  const tools = merged.tools !== undefined && !isDeepStrictEqual(merged.tools, detail.tools) ? merged.tools : undefined;
  return { check, write: { record, ...(tools !== undefined && { tools }) } };
}

/** A server's check from its remotes' results: up if any remote answered openly, auth if one answered 401/403, else down. */
export function checkOf(results: RemoteHealth[], now: Date): HealthCheck {
  const open = results.filter((r) => r.live && r.authRequired !== true);
  const auth = results.filter((r) => r.live && r.authRequired === true);
  const result: CheckResult = open.length > 0 ? 'up' : auth.length > 0 ? 'auth' : 'down';
  const answered = (result === 'up' ? open : auth).map((r) => r.latencyMs).filter((v): v is number => v !== undefined);
  const check: HealthCheck = { at: now.toISOString(), result };
  if (answered.length > 0) check.latencyMs = Math.min(...answered);
  if (result === 'down') {
    const failed = results[0];
    check.kind = failureKindOf(failed.error ?? '', failed.status);
    if (failed.status !== undefined) check.status = failed.status;
  }
  const listed = open.map((r) => r.toolCount).filter((v): v is number => v !== undefined);
  if (listed.length > 0) check.toolCount = Math.max(...listed);
  return check;
}

export interface CheckRoundReport extends CheckCounts {
  total: number;
  batches: number;
}

/** A whole round in one process (`npm run check-health`, tests, the bench): the plan, then its batches a few at a time. */
export async function runCheckRound(deps: CheckDeps, opts: { slugs?: string[]; batchConcurrency?: number } = {}): Promise<CheckRoundReport> {
  const plan =
    opts.slugs !== undefined ? { total: opts.slugs.length, batches: [{ slugs: opts.slugs }] } : await planChecks(deps.index, deps.settings.batchSize);
  const report: CheckRoundReport = { total: plan.total, batches: plan.batches.length, checked: 0, up: 0, auth: 0, down: 0, markedDown: 0, skipped: 0 };
  const results = await mapLimit<CheckBatchRef | { slugs: string[] }, CheckCounts>(plan.batches, opts.batchConcurrency ?? 2, (b) => checkBatch(deps, b));
  for (const c of results) for (const k of Object.keys(c) as Array<keyof CheckCounts>) report[k] += c[k];
  return report;
}
