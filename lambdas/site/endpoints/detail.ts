import { LONGEST_WINDOW_MS, validateSlug, type CatalogDetail } from '../../catalog-core';
import type { HandlerResponse } from '../../shared/http/types';
import type { SiteDeps } from '../deps';
import { pageNotFound } from '../errors';
import { detailPage, type DetailView } from '../render/detail';
import { serverChangesFeed } from '../render/trust';
import { renderReadme, type RenderedReadme } from '../render/markdown';
import type { SiteCtx } from './pages';
import { orgOf } from './org';
import { htmlPage, textResponse } from './respond';

/** Changes shown on a page; the feed carries more. */
const PAGE_CHANGES = 10;
const FEED_CHANGES = 50;

/** 30 days of checks and the newest changes, read in parallel; none where the site has no trust table. */
async function historyOf(deps: SiteDeps, slug: string): Promise<DetailView['history']> {
  if (!deps.trust) return undefined;
  const since = new Date(deps.now() - LONGEST_WINDOW_MS).toISOString();
  const [checks, changes] = await Promise.all([deps.trust.checks(slug, since), deps.trust.changes(slug, { limit: PAGE_CHANGES })]);
  return { checks, changes: changes.items, moreChanges: changes.next !== undefined };
}

async function found(deps: SiteDeps, slug: string): Promise<CatalogDetail> {
  const detail = await deps.store.get(slug);
  if (!detail)
    throw pageNotFound(`There is no server “${slug.length > 80 ? `${slug.slice(0, 80)}…` : slug}” in the catalog. It may have been removed from the registry.`);
  return detail;
}

/**
 * Rendered READMEs per instance, keyed by slug and content hash: rendering and sanitising a long
 * README costs milliseconds, and the same popular pages are asked for again and again between crawls.
 */
class ReadmeCache {
  private readonly entries = new Map<string, RenderedReadme>();

  constructor(private readonly max: number) {}

  async get(key: string, make: () => Promise<RenderedReadme>): Promise<RenderedReadme> {
    const hit = this.entries.get(key);
    if (hit) {
      this.entries.delete(key);
      this.entries.set(key, hit);
      return hit;
    }
    const value = await make();
    if (this.max > 0) {
      if (this.entries.size >= this.max) this.entries.delete(this.entries.keys().next().value as string);
      this.entries.set(key, value);
    }
    return value;
  }
}

const caches = new WeakMap<SiteDeps, ReadmeCache>();

async function readmeOf(deps: SiteDeps, d: CatalogDetail): Promise<RenderedReadme | undefined> {
  const readme = d.readme;
  if (!readme || readme.content.trim() === '') return undefined;
  let cache = caches.get(deps);
  if (!cache) {
    cache = new ReadmeCache(deps.config.readmeCacheEntries);
    caches.set(deps, cache);
  }
  const key = `${d.record.slug}\0${readme.sha}\0${readme.content.length}`;
  return cache.get(key, () =>
    renderReadme(readme.content, { repository: d.record.repository, path: readme.path }, deps.config.readmeMaxChars, readme.truncated === true),
  );
}

/** GET /servers/{slug} */
export async function server(ctx: SiteCtx): Promise<HandlerResponse> {
  const { deps } = ctx;
  const { slug } = validateSlug(ctx.params);
  const detail = await found(deps, slug);
  const [readme, history, org] = await Promise.all([readmeOf(deps, detail), historyOf(deps, slug), orgOf(deps, detail.record.name)]);
  return htmlPage(deps.config, detailPage(deps.config, { detail, readme, now: deps.now(), org, ...(history && { history }) }));
}

/** GET /servers/{slug}/feed.xml: the server's changes as Atom, newest first (empty where the site has no trust table). */
export async function serverFeed(ctx: SiteCtx): Promise<HandlerResponse> {
  const { deps } = ctx;
  const { slug } = validateSlug(ctx.params);
  const detail = await found(deps, slug);
  const entries = deps.trust ? (await deps.trust.changes(slug, { limit: FEED_CHANGES })).items : [];
  return textResponse(deps.config, serverChangesFeed(deps.config, detail.record, entries, deps.now()), 'application/atom+xml; charset=utf-8');
}
