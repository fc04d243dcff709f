import {
  type CatalogDetail,
  type CatalogRecord,
  type Category,
  type ReadmeContent,
  searchDocumentOf,
  parseGithubRepo,
  toolsEntry,
  versionEntry,
  type ChangeEntry,
} from '../catalog-core';
import { classifyByRules } from './domain/classify';
import { mergeHealth } from './domain/health';
import { isRejection, normaliseRow, rowIdentity } from './domain/normalise';
import type { CachedResponse, GithubSource, NameState, RepoRef, UnitRef } from './domain/ports';
import { buildEntry, type BuiltEntry } from './domain/record';
import { starsGained, utcDay, withStarSnapshot, type StarHistory } from './domain/trending';
import {
  emptyUnitResult,
  type EnrichStep,
  type Enrichment,
  type EnrichmentFailure,
  type NormalisedServer,
  type RemoteHealth,
  type RepoInfo,
} from './domain/types';
import { describeError } from './http/http-client';
import { mapLimit } from '../shared/concurrency';

import { isComplete, type CrawlContext, type UnitOutcome } from './settings';
import { CRAWL_METRICS } from '../shared/observability/metric-names';
import { countMetric } from '../shared/observability/metrics';

/**
 * Phase 2 of a crawl (the state machine's Map over units): normalise a unit's rows, enrich the
 * servers, write what changed, and mark the unit done. Retried units recompute the same records.
 */

interface Work {
  server: NormalisedServer;
  slug: string;
  state: NameState;
  precedence?: string;
  existing?: CatalogDetail;
}

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
    ...(r.registryUpdatedAt !== undefined && { upstreamUpdatedAt: r.registryUpdatedAt }),
    isLatest: true,
    declaredSchema: '',
    repairs: [],
  };
}

/** The changelog entries of a write: a registry version bump, and what changed in the captured tools. */
function changelogOf(w: BuiltEntry & { before?: CatalogDetail }, now: Date): Array<{ slug: string; entry: ChangeEntry }> {
  const prev = w.before;
  if (prev === undefined) return [];
  const slug = w.record.slug;
  const seen = now.toISOString();
  const version = versionEntry(prev.record.version, w.record.version, w.record.publishedAt, seen);
  const tools = w.tools ? toolsEntry(prev.tools, w.tools, seen) : undefined;
  return [version, tools].flatMap((entry) => (entry === undefined ? [] : [{ slug, entry }]));
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

export async function runUnit(ctx: CrawlContext, ref: UnitRef): Promise<UnitOutcome> {
  const { state } = ctx.deps;
  const unit = await state.getUnit(ref);
  if (!unit) throw new Error(`unknown unit ${ref.runId}/${ref.unitId}`);
  if (unit.status === 'done') {
    const run = await state.getRun(ref.runId);
    return { alreadyDone: true, runComplete: run !== undefined && isComplete(run) };
  }
  const now = ctx.clock.now();
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
      for (const reason of norm.server.dropped ?? []) result.dropped?.push({ name: id.name, ...(id.version && { version: id.version }), reason });
      work.push({ server: norm.server, slug: st.slug, state: st, precedence: id.precedence });
    });
  } else {
    const names = unit.names ?? [];
    states = await state.getNames(names);
    await mapLimit(
      names,
      8,
      async (name) => {
        const st = states.get(name);
        if (st?.slug === undefined || st.listed !== true) return;
        const existing = await ctx.deps.store.get(st.slug);
        if (!existing) return;
        work.push({ server: serverFromRecord(existing.record), slug: st.slug, state: st, existing });
      },
      { onError: 'continue' },
    );
    result.rows = work.length;
  }

  const cache = await prefetchCache(ctx, work);
  const writes: Array<BuiltEntry & { before?: CatalogDetail }> = [];
  await mapLimit(
    work,
    ctx.settings.enrichConcurrency,
    async (w) => {
      const existing = w.existing ?? (await ctx.deps.store.get(w.slug));
      const { enrichment, failures, stars, iconStored } = await enrich(ctx, w, existing, now, cache);
      result.failures.push(...failures);
      if (iconStored) result.iconsStored++;
      const categories = await categorise(ctx, w.server, enrichment, existing, result.failures);
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
        writes.push({ ...built, ...(existing && { before: existing }) });
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
    },
    { onError: 'continue' },
  );

  if (writes.length > 0 && ctx.deps.trust !== undefined) {
    // Before the store: a unit retried after a failed store write finds the change again (and
    // writes an entry of the same content once more) rather than losing it.
    const entries = writes.flatMap((w) => changelogOf(w, now));
    if (entries.length > 0) await ctx.deps.trust.putChanges(entries);
  }
  if (writes.length > 0) {
    // Index before store: change detection compares with the store, so a unit retried after a
    // failure between the two writes must still find the change there and write both again.
    await ctx.deps.index.upsert(
      writes.map((w) =>
        searchDocumentOf({ record: w.record, ...(w.currentReadme && { readme: w.currentReadme }), ...(w.currentTools && { tools: w.currentTools }) }),
      ),
    );
    await ctx.deps.store.put(writes.map((w) => ({ record: w.record, readme: w.readme, tools: w.tools })));
  }
  if (removals.length > 0) {
    await ctx.deps.store.delete(removals);
    await ctx.deps.index.remove(removals);
  }
  if (updates.length > 0) await state.saveNames(updates.map((u) => mergeName(states.get(u.name), u)));
  const run = await state.completeUnit(ref, result);
  return { alreadyDone: false, runComplete: isComplete(run), result };
}

async function categorise(
  ctx: CrawlContext,
  server: NormalisedServer,
  e: Enrichment,
  existing: CatalogDetail | undefined,
  failures: EnrichmentFailure[],
): Promise<Category[]> {
  const readme = e.readme !== undefined && e.readme !== null && e.readme !== 'unchanged' ? e.readme.content : existing?.readme?.content;
  const input = {
    name: server.name,
    ...(server.title !== undefined && { title: server.title }),
    description: server.description,
    tools: e.tools ?? existing?.tools ?? [],
    ...(readme !== undefined && { readme }),
  };
  if (!ctx.settings.steps.classifier || ctx.deps.classifier === undefined) return classifyByRules(input);
  try {
    return await ctx.deps.classifier.classify(input);
  } catch (err) {
    failures.push({ name: server.name, step: 'classifier', reason: describeError(err) });
    return classifyByRules(input);
  }
}

async function enrich(
  ctx: CrawlContext,
  w: Work,
  existing: CatalogDetail | undefined,
  now: Date,
  cache: Map<string, CachedResponse<unknown>>,
): Promise<{ enrichment: Enrichment; failures: EnrichmentFailure[]; stars?: StarHistory; iconStored: boolean }> {
  const { server, slug } = w;
  const { state, github, downloads, health, iconFetcher, icons } = ctx.deps;
  const failures: EnrichmentFailure[] = [];
  const enabled = ctx.settings.steps;
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
      enrichment.readme = await step('readme', () => readme(ctx, github, ref, key, cached, server.repository?.subfolder, existing));
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
    const remotes = server.remotes.slice(0, ctx.settings.maxHealthRemotes);
    const checked = await step('health', async () =>
      (await Promise.all(remotes.map((r) => health.check(r)))).filter((r): r is RemoteHealth => r !== undefined),
    );
    if (checked !== undefined) {
      for (const r of checked) {
        countMetric(r.live ? (r.authRequired ? CRAWL_METRICS.healthAuthRequired : CRAWL_METRICS.healthLive) : CRAWL_METRICS.healthDown);
        if (!r.live && r.error) failures.push({ name: server.name, step: 'health', reason: `${r.url} not live: ${r.error}` });
      }
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
async function prefetchCache(ctx: CrawlContext, work: Work[]): Promise<Map<string, CachedResponse<unknown>>> {
  if (ctx.deps.github === undefined || (!ctx.settings.steps.github && !ctx.settings.steps.readme)) return new Map();
  const keys: string[] = [];
  for (const w of work) {
    const ref = w.server.repository === undefined ? undefined : parseGithubRepo(w.server.repository.url);
    if (ref === undefined) continue;
    const repoKey = `${ref.owner}/${ref.repo}`.toLowerCase();
    keys.push(repoCacheKey(repoKey), readmeCacheKey(repoKey, w.server.repository?.subfolder));
  }
  return keys.length === 0 ? new Map() : ctx.deps.state.getCached<unknown>(keys);
}

/** The README, or 'unchanged' when GitHub confirms (304) that the stored one is current. */
async function readme(
  ctx: CrawlContext,
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
  if (cached?.etag !== response.etag || cached?.value?.sha !== value?.sha) await ctx.deps.state.putCached(key, meta);
  return value;
}
