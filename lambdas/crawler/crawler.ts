/**
 * The crawler service: plan a run, run its units, finalise it.
 *
 * A run is split into idempotent units so that the AWS deployment can fan them out (one Lambda
 * invocation per unit) and any crash or timeout resumes without losing or duplicating servers:
 *
 * 1. `planCrawl()` pages through the upstream registry (sequentially: cursors are chained). Each
 *    page becomes one step committed atomically to the crawl state: its rows are stored as one or
 *    more `page` units (split to stay below the DynamoDB item limit), the run's cursor advances.
 *    While paging, the planner claims slugs for new names (in upstream order, so slugs are
 *    deterministic) and records for each name which row of this run carries its latest version.
 *    In an incremental run, a last step adds `refresh` units that re-enrich the servers whose
 *    stars, downloads and health are oldest (upstream does not report those changing).
 *    A plan interrupted after step k resumes at step k+1 with the stored cursor.
 * 2. `runUnit(ref)` normalises the unit's rows, skips versions superseded by a newer row, removes
 *    deleted and rejected servers, enriches the rest (each step optional and failure-recorded),
 *    writes only what changed to the CatalogStore and SearchIndex in bulk, then marks the unit
 *    done and counts it on the run in one transaction. A unit that crashes is simply run again:
 *    it recomputes the same records, and what was already written compares as unchanged.
 * 3. `finalizeRun(runId)`, once every unit is done: in a full run, names not seen any more leave
 *    the catalog (guarded against a truncated listing); the high-water mark for the next
 *    incremental run is committed; the report is assembled from the units' results.
 */

import { randomBytes } from 'node:crypto';
import type { CatalogStore, SearchIndex, IconStore } from '../catalog/domain/ports';
import type { CatalogDetail, CatalogHealth, CatalogRecord, CatalogTool, Category, ReadmeContent } from '../catalog/domain/types';
import { searchDocumentOf } from '../catalog/reindex';
import { classifyByRules, type CategoryClassifier } from './domain/classify';
import { isRejection, normaliseRow, rowIdentity, type RowIdentity } from './domain/normalise';
import type {
  CachedResponse,
  Clock,
  CrawlStateStore,
  DownloadsSource,
  GithubSource,
  HealthChecker,
  IconFetcher,
  NameState,
  RepoRef,
  RunMeta,
  UnitItem,
  UnitRef,
  UpstreamRegistry,
} from './domain/ports';
import { buildEntry, type BuiltEntry } from './domain/record';
import { buildReport } from './domain/report';
import { parseGithubRepo } from './domain/repo-ref';
import { baseSlug, slugCandidates } from './domain/slug';
import { starsGained, utcDay, withStarSnapshot, type StarHistory } from './domain/trending';
import {
  emptyUnitResult,
  type CrawlMode,
  type CrawlReport,
  type EnrichStep,
  type Enrichment,
  type EnrichmentFailure,
  type NormalisedServer,
  type Rejection,
  type RemoteHealth,
  type RepoInfo,
  type UnitResult,
} from './domain/types';
import { describeError } from './http/http-client';
import { chunk, mapLimit } from './util';

export interface CrawlerSettings {
  /** Upper bound of the JSON rows stored on one unit item (DynamoDB items are at most 400 KB). */
  unitMaxBytes: number;
  /** Servers enriched in parallel within one unit. */
  enrichConcurrency: number;
  /** Enrichment steps that run (all by default). */
  steps: Record<EnrichStep, boolean>;
  /** Incremental runs re-enrich servers last enriched longer ago than this. */
  refreshAfterHours: number;
  /** At most this many servers re-enriched per incremental run (0 disables refresh units). */
  refreshBatch: number;
  refreshUnitSize: number;
  /** A full run removes unseen names only when it saw at least this share of the listed ones. */
  sweepMinShare: number;
  /** The high-water mark stays this far behind the upstream clock at the run's start. */
  highWaterMarginMs: number;
  /** Remotes health-checked per server. */
  maxHealthRemotes: number;
}

export const DEFAULT_CRAWLER_SETTINGS: CrawlerSettings = {
  unitMaxBytes: 300 * 1024,
  enrichConcurrency: 8,
  steps: { github: true, readme: true, downloads: true, health: true, icon: true, classifier: true },
  refreshAfterHours: 24,
  refreshBatch: 500,
  refreshUnitSize: 50,
  sweepMinShare: 0.5,
  highWaterMarginMs: 60_000,
  maxHealthRemotes: 3,
};

export interface CrawlerDeps {
  state: CrawlStateStore;
  upstream: UpstreamRegistry;
  store: CatalogStore;
  index: SearchIndex;
  icons: IconStore;
  github?: GithubSource;
  downloads?: DownloadsSource;
  health?: HealthChecker;
  iconFetcher?: IconFetcher;
  classifier?: CategoryClassifier;
  clock?: Clock;
}

export type PlanMode = 'auto' | 'full' | 'incremental';

export interface PlanOptions {
  /** `auto` (default): incremental when a high-water mark exists, else full. */
  mode?: PlanMode;
  /** Stop after this many plan steps in this call (a Lambda with a time budget); resumable. */
  maxSteps?: number;
  onStep?: (p: { runId: string; step: number; rows: number; units: number }) => void;
}

export interface PlanResult {
  runId: string;
  mode: CrawlMode;
  resumed: boolean;
  /** false when planning stopped at `maxSteps` and must be continued. */
  planned: boolean;
  /** Units not done yet (all of them once planned). */
  units: UnitRef[];
}

export interface UnitOutcome {
  alreadyDone: boolean;
  /** True when this was the last unit of a fully planned run: call `finalizeRun`. */
  runComplete: boolean;
  result?: UnitResult;
}

export class RunIncompleteError extends Error {
  constructor(readonly run: RunMeta) {
    super(`run ${run.runId} is not complete (${run.status}, ${run.unitsDone}/${run.unitsCreated} units done)`);
    this.name = 'RunIncompleteError';
  }
}

interface Work {
  server: NormalisedServer;
  slug: string;
  state: NameState;
  precedence?: string;
  existing?: CatalogDetail;
}

const pad = (n: number, w: number) => String(n).padStart(w, '0');

/** Registry icons in order of preference: raster before SVG, light/any theme before dark. */
function iconCandidates(record: { icons?: NormalisedServer['icons'] }, avatar: string | undefined): string[] {
  const icons = [...(record.icons ?? [])].sort((a, b) => {
    const svg = (i: typeof a) => (i.mimeType === 'image/svg+xml' || /\.svg(\?|$)/i.test(i.src) ? 1 : 0);
    const dark = (i: typeof a) => (i.theme === 'dark' ? 1 : 0);
    return svg(a) - svg(b) || dark(a) - dark(b);
  });
  const out = icons.map((i) => i.src);
  if (avatar !== undefined) out.push(avatar);
  return out;
}

function serverFromRecord(r: CatalogRecord): NormalisedServer {
  return {
    name: r.name,
    ...(r.title !== undefined && { title: r.title }),
    description: r.description,
    version: r.version,
    status: r.status,
    ...(r.websiteUrl !== undefined && { websiteUrl: r.websiteUrl }),
    ...(r.repository !== undefined && { repository: r.repository }),
    packages: r.packages,
    remotes: r.remotes,
    ...(r.icons !== undefined && { icons: r.icons }),
    ...(r.publishedAt !== undefined && { publishedAt: r.publishedAt }),
    isLatest: true,
    declaredSchema: '',
    repairs: [],
  };
}

/** Several remotes: live if any is live, the latest check time, tools of the best live check. */
export function mergeHealth(results: RemoteHealth[]): { health?: CatalogHealth; tools?: CatalogTool[] } {
  if (results.length === 0) return {};
  const live = results.filter((r) => r.live);
  const open = live.filter((r) => r.authRequired !== true);
  const checkedAt = results.map((r) => r.checkedAt).sort().at(-1) ?? results[0].checkedAt;
  const best = open.reduce<RemoteHealth | undefined>((b, r) => ((r.toolCount ?? 0) > (b?.toolCount ?? -1) ? r : b), undefined);
  const health: CatalogHealth = { live: live.length > 0, checkedAt };
  if (live.length > 0 && open.length === 0) health.authRequired = true;
  if (best?.toolCount !== undefined) health.toolCount = best.toolCount;
  return { health, ...(best?.tools !== undefined && { tools: best.tools }) };
}

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

export class Crawler {
  readonly settings: CrawlerSettings;
  private readonly clock: Clock;

  constructor(
    private readonly deps: CrawlerDeps,
    settings: Partial<CrawlerSettings> = {},
  ) {
    this.settings = { ...DEFAULT_CRAWLER_SETTINGS, ...settings, steps: { ...DEFAULT_CRAWLER_SETTINGS.steps, ...settings.steps } };
    this.clock = deps.clock ?? { now: () => new Date() };
  }

  // -------------------------------------------------------------------------------------------
  // Plan
  // -------------------------------------------------------------------------------------------

  async planCrawl(opts: PlanOptions = {}): Promise<PlanResult> {
    const { state } = this.deps;
    let pointer = await state.getPointer();
    let run = pointer.currentRun === undefined ? undefined : await state.getRun(pointer.currentRun);
    let resumed = run !== undefined && run.status !== 'done';
    if (!resumed) {
      const wanted = opts.mode ?? 'auto';
      const mode: CrawlMode = wanted === 'full' || pointer.highWater === undefined ? 'full' : 'incremental';
      const now = this.clock.now();
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
      const stepped = current.steps > 0 && current.cursor === undefined ? await this.refreshStep(current) : await this.pageStep(current);
      opts.onStep?.({ runId: current.runId, step: current.steps + 1, rows: stepped.rows, units: stepped.units });
      steps++;
      const next = await state.getRun(current.runId);
      if (!next) throw new Error(`run ${current.runId} vanished`);
      current = next;
    }
    const pending = (await state.listUnits(current.runId)).filter((u) => u.status === 'pending').map((u) => ({ runId: u.runId, unitId: u.unitId }));
    return { runId: current.runId, mode: current.mode, resumed, planned: current.status !== 'planning', units: pending };
  }

  private wantsRefresh(run: RunMeta): boolean {
    return run.mode === 'incremental' && this.settings.refreshBatch > 0;
  }

  private async pageStep(run: RunMeta): Promise<{ rows: number; units: number }> {
    const { state, upstream } = this.deps;
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
      if (bytes > this.settings.unitMaxBytes) {
        planRejects.push({ name: id.name, version: id.version, code: 'row_too_large', reason: `row is ${bytes} bytes (limit ${this.settings.unitMaxBytes})` });
        continue;
      }
      kept.push({ row, id, json, bytes });
    }

    // Rows → units of bounded size; the index of a row within its unit identifies it.
    const parts: Array<typeof kept> = [];
    let size = 0;
    for (const k of kept) {
      if (parts.length === 0 || size + k.bytes + 1 > this.settings.unitMaxBytes) {
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
    parts.forEach((p, ui) =>
      p.forEach((k, index) => {
        const b = best.get(k.id.name);
        if (b === undefined || k.id.precedence > b.precedence) best.set(k.id.name, { precedence: k.id.precedence, unitId: units[ui].unitId, index });
      }),
    );
    const names = [...best.keys()];
    const states = await state.getNames(names);
    const slugs = await this.assignSlugs(names.filter((n) => states.get(n)?.slug === undefined));
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
      planned: last && !this.wantsRefresh(run),
      rows: page.rows.length,
      ...(maxUpdatedAt !== undefined && { maxUpdatedAt }),
      ...(stepNo === 1 && { upstreamStartedAt: page.serverDate ?? this.clock.now().toISOString() }),
    });
    return { rows: page.rows.length, units: units.length };
  }

  /** Slugs for names that have none; names sharing a base slug claim in upstream order. */
  private async assignSlugs(names: string[]): Promise<Map<string, string>> {
    const groups = new Map<string, string[]>();
    for (const n of names) {
      const b = baseSlug(n);
      const g = groups.get(b);
      if (g) g.push(n);
      else groups.set(b, [n]);
    }
    const out = new Map<string, string>();
    await mapLimit([...groups.values()], 16, async (group) => {
      for (const name of group) {
        for (const candidate of slugCandidates(name)) {
          if (await this.deps.state.claimSlug(candidate, name)) {
            out.set(name, candidate);
            break;
          }
        }
        if (!out.has(name)) throw new Error(`no free slug for ${name}`);
      }
    });
    return out;
  }

  private async refreshStep(run: RunMeta): Promise<{ rows: number; units: number }> {
    const cutoff = new Date(this.clock.now().getTime() - this.settings.refreshAfterHours * 3_600_000).toISOString();
    const due: Array<{ name: string; enrichedAt: string }> = [];
    for await (const s of this.deps.state.scanNames()) {
      if (s.listed !== true || s.runBest?.runId === run.runId) continue;
      const at = s.enrichedAt ?? '';
      if (at <= cutoff) due.push({ name: s.name, enrichedAt: at });
    }
    due.sort((a, b) => (a.enrichedAt < b.enrichedAt ? -1 : a.enrichedAt > b.enrichedAt ? 1 : a.name < b.name ? -1 : 1));
    const batches = chunk(
      due.slice(0, this.settings.refreshBatch).map((d) => d.name),
      this.settings.refreshUnitSize,
    ).slice(0, 90); // one transaction holds at most 100 items
    const stepNo = run.steps + 1;
    const units: UnitItem[] = batches.map((names, i) => ({
      runId: run.runId,
      unitId: `r${pad(stepNo, 5)}-${i}`,
      kind: 'refresh',
      status: 'pending',
      names,
    }));
    await this.deps.state.commitPlanStep(run.runId, { step: stepNo, units, planned: true, rows: 0 });
    return { rows: 0, units: units.length };
  }

  // -------------------------------------------------------------------------------------------
  // Units
  // -------------------------------------------------------------------------------------------

  async runUnit(ref: UnitRef): Promise<UnitOutcome> {
    const { state } = this.deps;
    const unit = await state.getUnit(ref);
    if (!unit) throw new Error(`unknown unit ${ref.runId}/${ref.unitId}`);
    if (unit.status === 'done') {
      const run = await state.getRun(ref.runId);
      return { alreadyDone: true, runComplete: run !== undefined && isComplete(run) };
    }
    const now = this.clock.now();
    const result = emptyUnitResult();
    if (unit.planRejects) result.rejected.push(...unit.planRejects);
    const updates: NameUpdate[] = [];
    let states = new Map<string, NameState>();
    const removals: string[] = [];
    const work: Work[] = [];

    if (unit.kind === 'page') {
      const rows: unknown[] = JSON.parse(unit.rows ?? '[]') as unknown[];
      result.rows = rows.length;
      const ids = rows.map((row) => rowIdentity(row));
      states = await state.getNames(ids.flatMap((id) => (isRejection(id) ? [] : [id.name])));
      rows.forEach((row, index) => {
        const id = ids[index];
        if (isRejection(id)) {
          result.rejected.push(id);
          return;
        }
        const st = states.get(id.name);
        if (st?.slug === undefined) throw new Error(`${id.name} has no slug (was the unit planned?)`);
        const rb = st.runBest;
        if (rb !== undefined && rb.runId === ref.runId && !(rb.unitId === ref.unitId && rb.index === index)) {
          result.superseded++;
          return;
        }
        if (st.precedence !== undefined && id.precedence < st.precedence) {
          result.superseded++;
          return;
        }
        const norm = normaliseRow(row);
        if (!norm.ok || norm.server.status === 'deleted') {
          if (!norm.ok) result.rejected.push(norm.rejection);
          else result.deleted.push(id.name);
          if (st.listed === true) {
            removals.push(st.slug);
            result.removed.push(id.name);
          }
          updates.push({ name: id.name, precedence: id.precedence, listed: false, reason: norm.ok ? 'deleted upstream' : norm.rejection.reason });
          return;
        }
        work.push({ server: norm.server, slug: st.slug, state: st, precedence: id.precedence });
      });
    } else {
      const names = unit.names ?? [];
      states = await state.getNames(names);
      await mapLimit(names, 8, async (name) => {
        const st = states.get(name);
        if (st?.slug === undefined || st.listed !== true) return;
        const existing = await this.deps.store.get(st.slug);
        if (!existing) return;
        work.push({ server: serverFromRecord(existing.record), slug: st.slug, state: st, existing });
      });
      result.rows = work.length;
    }

    const cache = await this.prefetchCache(work);
    const writes: BuiltEntry[] = [];
    await mapLimit(work, this.settings.enrichConcurrency, async (w) => {
      const existing = w.existing ?? (await this.deps.store.get(w.slug));
      const { enrichment, failures, stars, iconStored } = await this.enrich(w, existing, now, cache);
      result.failures.push(...failures);
      if (iconStored) result.iconsStored++;
      const categories = await this.categorise(w.server, enrichment, existing, result.failures);
      const built = buildEntry({
        server: w.server,
        slug: w.slug,
        existing,
        enrichment,
        categories,
        trending: starsGained(stars, utcDay(now)),
        now,
      });
      if (built.change === 'unchanged') result.unchanged++;
      else {
        writes.push(built);
        (built.change === 'added' ? result.added : result.updated).push(w.server.name);
      }
      updates.push({
        name: w.server.name,
        ...(w.precedence !== undefined && { precedence: w.precedence }),
        listed: true,
        reason: undefined,
        ...(stars !== undefined && { stars }),
        enrichedAt: now.toISOString(),
      });
    });

    if (writes.length > 0) {
      // Index before store: change detection compares with the store, so a unit retried after a
      // failure between the two writes must still find the change there and write both again.
      await this.deps.index.upsert(
        writes.map((w) => searchDocumentOf({ record: w.record, ...(w.currentReadme && { readme: w.currentReadme }), ...(w.currentTools && { tools: w.currentTools }) })),
      );
      await this.deps.store.put(writes.map((w) => ({ record: w.record, readme: w.readme, tools: w.tools })));
    }
    if (removals.length > 0) {
      await this.deps.store.delete(removals);
      await this.deps.index.remove(removals);
    }
    if (updates.length > 0) await state.saveNames(updates.map((u) => mergeName(states.get(u.name), u)));
    const run = await state.completeUnit(ref, result);
    return { alreadyDone: false, runComplete: isComplete(run), result };
  }

  private async categorise(server: NormalisedServer, e: Enrichment, existing: CatalogDetail | undefined, failures: EnrichmentFailure[]): Promise<Category[]> {
    const readme = e.readme !== undefined && e.readme !== null && e.readme !== 'unchanged' ? e.readme.content : existing?.readme?.content;
    const input = {
      name: server.name,
      ...(server.title !== undefined && { title: server.title }),
      description: server.description,
      tools: e.tools ?? existing?.tools ?? [],
      ...(readme !== undefined && { readme }),
    };
    if (!this.settings.steps.classifier || this.deps.classifier === undefined) return classifyByRules(input);
    try {
      return await this.deps.classifier.classify(input);
    } catch (err) {
      failures.push({ name: server.name, step: 'classifier', reason: describeError(err) });
      return classifyByRules(input);
    }
  }

  private async enrich(
    w: Work,
    existing: CatalogDetail | undefined,
    now: Date,
    cache: Map<string, CachedResponse<unknown>>,
  ): Promise<{ enrichment: Enrichment; failures: EnrichmentFailure[]; stars?: StarHistory; iconStored: boolean }> {
    const { server, slug } = w;
    const { state, github, downloads, health, iconFetcher, icons } = this.deps;
    const failures: EnrichmentFailure[] = [];
    const enabled = this.settings.steps;
    const step = async <T>(name: EnrichStep, fn: () => Promise<T>): Promise<T | undefined> => {
      if (!enabled[name]) return undefined;
      try {
        return await fn();
      } catch (err) {
        failures.push({ name: server.name, step: name, reason: describeError(err) });
        return undefined;
      }
    };
    const enrichment: Enrichment = {};

    const ref: RepoRef | undefined = server.repository === undefined ? undefined : parseGithubRepo(server.repository.url);
    const repoKey = ref === undefined ? '' : `${ref.owner}/${ref.repo}`.toLowerCase();
    if (ref !== undefined && github !== undefined) {
      enrichment.repo = await step('github', async () => {
        const key = repoCacheKey(repoKey);
        const cached = cache.get(key) as CachedResponse<RepoInfo> | undefined;
        const res = await github.repository(ref, cached);
        if (cached === undefined || res.etag !== cached.etag) await state.putCached(key, res);
        return res.value;
      });
      if (enrichment.repo?.exists === false) {
        enrichment.readme = null; // the repository is gone, and its README with it
      } else {
        const key = readmeCacheKey(repoKey, server.repository?.subfolder);
        const cached = cache.get(key) as CachedResponse<ReadmeContent | null> | undefined;
        enrichment.readme = await step('readme', () => this.readme(github, ref, key, cached, server.repository?.subfolder, existing));
      }
    }

    const packages = server.packages.filter((p) => p.registryType === 'npm' || p.registryType === 'pypi');
    if (packages.length > 0 && downloads !== undefined) {
      enrichment.downloads = await step('downloads', async () => {
        let total: number | undefined;
        const seen = new Set<string>();
        for (const p of packages) {
          const key = `${p.registryType}:${p.identifier}`;
          if (seen.has(key)) continue;
          seen.add(key);
          const n = p.registryType === 'npm' ? await downloads.npm(p.identifier) : await downloads.pypi(p.identifier);
          if (n !== undefined) total = (total ?? 0) + n;
        }
        return total;
      });
    }

    if (server.remotes.length > 0 && health !== undefined && enabled.health) {
      const remotes = server.remotes.slice(0, this.settings.maxHealthRemotes);
      const checked = await step('health', async () => (await Promise.all(remotes.map((r) => health.check(r)))).filter((r): r is RemoteHealth => r !== undefined));
      if (checked !== undefined) {
        for (const r of checked) if (!r.live && r.error) failures.push({ name: server.name, step: 'health', reason: `${r.url} not live: ${r.error}` });
        const merged = mergeHealth(checked);
        if (merged.health) enrichment.health = merged.health;
        if (merged.tools) enrichment.tools = merged.tools;
      }
    }

    let iconStored = false;
    if (existing?.record.hasIcon === true) {
      enrichment.hasIcon = true;
    } else if (iconFetcher !== undefined && enabled.icon) {
      enrichment.hasIcon = await step('icon', async () => {
        if (await icons.has(slug)) return true;
        const avatar = enrichment.repo?.ownerAvatarUrl ?? existing?.record.github?.ownerAvatarUrl;
        const candidates = iconCandidates(server, avatar);
        if (candidates.length === 0) return false;
        const got = await iconFetcher.fetchIcon(candidates);
        if ('refused' in got) throw new Error(`no usable icon: ${got.refused.join('; ')}`);
        iconStored = await icons.putIfAbsent(slug, got.webp);
        return true;
      });
    }

    const stars = enrichment.repo?.stars !== undefined ? withStarSnapshot(w.state.stars, utcDay(now), enrichment.repo.stars) : w.state.stars;
    return { enrichment, failures, ...(stars !== undefined && { stars }), iconStored };
  }

  /** The conditional-request cache entries of a unit's repositories, in one batch read. */
  private async prefetchCache(work: Work[]): Promise<Map<string, CachedResponse<unknown>>> {
    if (this.deps.github === undefined || (!this.settings.steps.github && !this.settings.steps.readme)) return new Map();
    const keys: string[] = [];
    for (const w of work) {
      const ref = w.server.repository === undefined ? undefined : parseGithubRepo(w.server.repository.url);
      if (ref === undefined) continue;
      const repoKey = `${ref.owner}/${ref.repo}`.toLowerCase();
      keys.push(repoCacheKey(repoKey), readmeCacheKey(repoKey, w.server.repository?.subfolder));
    }
    return keys.length === 0 ? new Map() : this.deps.state.getCached<unknown>(keys);
  }

  /** The README, or 'unchanged' when GitHub confirms (304) that the stored one is current. */
  private async readme(
    github: GithubSource,
    ref: RepoRef,
    key: string,
    cached: CachedResponse<ReadmeContent | null> | undefined,
    subfolder: string | undefined,
    existing: CatalogDetail | undefined,
  ): Promise<ReadmeContent | null | 'unchanged'> {
    // The ETag vouches for what GitHub sent last time; it only saves a download when the stored
    // README is that very version.
    const usable =
      cached !== undefined && (cached.value === null ? existing !== undefined && existing.readme === undefined : cached.value.sha === existing?.readme?.sha);
    const { response, notModified } = await github.readme(ref, subfolder, usable ? cached : undefined);
    if (notModified && cached !== undefined) return cached.value === null ? null : 'unchanged';
    const value = response.value;
    // The cache keeps the ETag and the identity of the README, not its content (that is in the store).
    const meta: CachedResponse<ReadmeContent | null> = { ...response, value: value === null ? null : { ...value, content: '' } };
    if (cached?.etag !== response.etag || cached?.value?.sha !== value?.sha) await this.deps.state.putCached(key, meta);
    return value;
  }

  // -------------------------------------------------------------------------------------------
  // Finalise
  // -------------------------------------------------------------------------------------------

  async finalizeRun(runId: string): Promise<CrawlReport> {
    const { state } = this.deps;
    const run = await state.getRun(runId);
    if (!run) throw new Error(`unknown run ${runId}`);
    const units = await state.listUnits(runId);
    if (run.status === 'done') {
      const summary = run.summary ? (JSON.parse(run.summary) as { swept?: string[]; warnings?: string[]; highWater?: string }) : {};
      return buildReport(run, units, summary);
    }
    if (!isComplete(run)) throw new RunIncompleteError(run);
    const warnings: string[] = [];
    const swept = run.mode === 'full' ? await this.sweep(run, warnings) : [];
    const pointer = await state.getPointer();
    const highWater = computeHighWater(run, pointer.highWater, this.settings.highWaterMarginMs);
    const finishedAt = this.clock.now().toISOString();
    await state.finishRun(runId, JSON.stringify({ swept: swept.slice(0, 1000), warnings, highWater }), highWater);
    return buildReport(run, units, { swept, warnings, ...(highWater !== undefined && { highWater }), finishedAt });
  }

  /** Full runs: listed names that upstream did not list this time leave the catalog. */
  private async sweep(run: RunMeta, warnings: string[]): Promise<string[]> {
    const gone: NameState[] = [];
    let listed = 0;
    for await (const s of this.deps.state.scanNames()) {
      if (s.listed !== true) continue;
      listed++;
      if (s.runBest?.runId !== run.runId) gone.push(s);
    }
    if (gone.length === 0) return [];
    if (listed > 0 && (listed - gone.length) / listed < this.settings.sweepMinShare) {
      warnings.push(
        `upstream listed only ${listed - gone.length} of ${listed} known servers; not removing the other ${gone.length} (a truncated listing?)`,
      );
      return [];
    }
    for (const batch of chunk(gone, 100)) {
      const slugs = batch.flatMap((s) => (s.slug === undefined ? [] : [s.slug]));
      await this.deps.store.delete(slugs);
      await this.deps.index.remove(slugs);
      await this.deps.state.saveNames(batch.map((s) => ({ ...s, listed: false, reason: 'no longer listed upstream' })));
    }
    return gone.map((s) => s.name);
  }
}

/** What a unit changes on a name state (slug and runBest stay as the planner left them). */
type NameUpdate = Pick<NameState, 'name'> & Partial<Pick<NameState, 'precedence' | 'listed' | 'reason' | 'stars' | 'enrichedAt'>>;

function mergeName(current: NameState | undefined, u: NameUpdate): NameState {
  const out: NameState = { ...current, ...u };
  // An explicit undefined clears the field (e.g. the reason of a server listed again).
  for (const [k, v] of Object.entries(u)) if (v === undefined) delete out[k as keyof NameState];
  return out;
}

const repoCacheKey = (repoKey: string) => `gh:repo:${repoKey}`;
const readmeCacheKey = (repoKey: string, subfolder: string | undefined) => `gh:readme:${repoKey}:${(subfolder ?? '').toLowerCase()}`;

function isComplete(run: RunMeta): boolean {
  return run.status === 'running' && run.unitsDone >= run.unitsCreated;
}

// ---------------------------------------------------------------------------------------------
// Local driver (the CLI, tests, benchmarks): plan, run every unit, finalise
// ---------------------------------------------------------------------------------------------

export interface RunCrawlOptions {
  mode?: PlanMode;
  /** Units run in parallel (each enriches `enrichConcurrency` servers at once). */
  unitConcurrency?: number;
  /** Attempts per unit before the run is left for a later resume. */
  unitAttempts?: number;
  /** Stops scheduling units when aborted; the run stays resumable. */
  signal?: AbortSignal;
  onProgress?: (p: { phase: 'plan' | 'units' | 'finalize'; done: number; total: number; runId: string }) => void;
}

export class CrawlAbortedError extends Error {
  constructor(readonly runId: string) {
    super(`crawl ${runId} was stopped; run again to resume it`);
    this.name = 'CrawlAbortedError';
  }
}

export async function runCrawl(crawler: Crawler, o: RunCrawlOptions = {}): Promise<CrawlReport> {
  let pages = 0;
  const plan = await crawler.planCrawl({
    ...(o.mode !== undefined && { mode: o.mode }),
    onStep: (p) => {
      pages++;
      o.onProgress?.({ phase: 'plan', done: pages, total: pages, runId: p.runId });
    },
  });
  const total = plan.units.length;
  let done = 0;
  const failed: Array<{ unit: UnitRef; error: unknown }> = [];
  o.onProgress?.({ phase: 'units', done, total, runId: plan.runId });
  await mapLimit(plan.units, o.unitConcurrency ?? 2, async (unit) => {
    if (o.signal?.aborted) return;
    const attempts = Math.max(1, o.unitAttempts ?? 2);
    for (let attempt = 1; ; attempt++) {
      try {
        await crawler.runUnit(unit);
        break;
      } catch (err) {
        if (attempt >= attempts || o.signal?.aborted) {
          failed.push({ unit, error: err });
          return;
        }
      }
    }
    done++;
    o.onProgress?.({ phase: 'units', done, total, runId: plan.runId });
  });
  if (o.signal?.aborted) throw new CrawlAbortedError(plan.runId);
  if (failed.length > 0) {
    const first = failed[0];
    throw new Error(
      `${failed.length} of ${total} units of crawl ${plan.runId} failed (first: ${first.unit.unitId}: ${describeError(first.error)}); run the crawl again to resume`,
    );
  }
  o.onProgress?.({ phase: 'finalize', done: total, total, runId: plan.runId });
  return crawler.finalizeRun(plan.runId);
}
