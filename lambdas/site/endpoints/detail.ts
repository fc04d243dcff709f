import { validateSlug, type CatalogDetail } from '../../catalog-core';
import type { HandlerResponse } from '../../shared/http/types';
import type { SiteDeps } from '../deps';
import { pageNotFound } from '../errors';
import { detailPage } from '../render/detail';
import { renderReadme, type RenderedReadme } from '../render/markdown';
import type { SiteCtx } from './pages';
import { orgOf } from './org';
import { htmlPage } from './respond';

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
  const detail = await deps.store.get(slug);
  if (!detail)
    throw pageNotFound(`There is no server “${slug.length > 80 ? `${slug.slice(0, 80)}…` : slug}” in the catalog. It may have been removed from the registry.`);
  return htmlPage(
    deps.config,
    detailPage(deps.config, { detail, readme: await readmeOf(deps, detail), now: deps.now(), org: await orgOf(deps, detail.record.name) }),
  );
}
