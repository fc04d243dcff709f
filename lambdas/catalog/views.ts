import { iconPath, lintTools, type CatalogDetail, type CatalogRecord, type FacetCounts, type View } from '../catalog-core';
import type { CatalogServerDetailOut, CatalogServerOut } from './schemas';

/** Projections of the stored record onto the API shapes of spec document 1 (the registry entry is the core's, `toRegistryEntry`). */

export function toCatalogServer(r: CatalogRecord, view: View): CatalogServerOut {
  const out: CatalogServerOut = {
    slug: r.slug,
    name: r.name,
    ...(r.title !== undefined && { title: r.title }),
    description: r.description,
    version: r.version,
    status: r.status,
    ...(r.repository?.url && { repositoryUrl: r.repository.url }),
    packages: r.packages.map((p) => ({
      registryType: p.registryType,
      identifier: p.identifier,
      ...(p.version !== undefined && { version: p.version }),
    })),
    remotes: r.remotes.map((m) => ({ type: m.type, url: m.url })),
    isOfficial: r.isOfficial,
    crawledAt: r.crawledAt,
    ...(r.updatedAt !== undefined && { updatedAt: r.updatedAt }),
    ...(r.categories.length > 0 && { category: [...r.categories] }),
    ...(r.github &&
      hasGithubCard(r) && {
        github: {
          ...(r.github.language !== undefined && { language: r.github.language }),
          ...((r.github.license ?? r.github.licenseSpdx) !== undefined && { license: r.github.license ?? r.github.licenseSpdx }),
          ...(r.github.stars !== undefined && { stars: r.github.stars }),
        },
      }),
    ...(r.toolCount !== undefined && { toolCount: r.toolCount }),
    ...(r.healthHistory?.uptime['30d'] != null && { uptime: r.healthHistory.uptime['30d'] }),
    ...(r.healthHistory?.down === true && { down: true as const }),
  };
  if (view === 'full') {
    if (r.downloads !== undefined) out.downloads = r.downloads;
    out.grades = r.grades;
    if (r.health) out.health = r.healthHistory ? { ...r.health, history: r.healthHistory } : r.health;
    out.popularity = r.popularity;
    out.trending = r.trending;
    if (r.hasIcon) out.iconUrl = iconPath(r.slug);
    if (r.websiteUrl) out.websiteUrl = r.websiteUrl;
    if (r.publishedAt !== undefined) out.publishedAt = r.publishedAt;
    if (r.registryUpdatedAt !== undefined) out.registryUpdatedAt = r.registryUpdatedAt;
    if (r.demo === true) out.demo = true;
  }
  return out;
}

/**
 * The serialised view of a record, memoised per record object. The embedded index hands out the
 * same immutable record objects on every request, so list and search responses are assembled from
 * ready JSON instead of re-projecting and re-serialising 24 servers per call (measured: those two
 * steps were 38% of the local server's CPU). Records from OpenSearch are fresh objects per request
 * and simply miss the cache.
 */
const serialised: Record<View, WeakMap<CatalogRecord, string>> = { card: new WeakMap(), full: new WeakMap() };

export function catalogServerJson(r: CatalogRecord, view: View): string {
  const cache = serialised[view];
  let s = cache.get(r);
  if (s === undefined) {
    s = JSON.stringify(toCatalogServer(r, view));
    cache.set(r, s);
  }
  return s;
}

/**
 * `{ success: true, data: [...], meta }` from already-serialised items, with `facets` as the last
 * key of `meta` when given. The embedded index answers the same facets object for a filter set
 * until its content changes, so its JSON is made once per object (OpenSearch's are fresh per
 * request and simply miss).
 */
export function listEnvelopeJson(items: string[], meta: Record<string, unknown>, facets?: FacetCounts): string {
  const head = JSON.stringify(meta);
  const metaJson = facets === undefined ? head : `${head.slice(0, -1)}${head.length > 2 ? ',' : ''}"facets":${facetsJson(facets)}}`;
  return `{"success":true,"data":[${items.join(',')}],"meta":${metaJson}}`;
}

const serialisedFacets = new WeakMap<FacetCounts, string>();

function facetsJson(facets: FacetCounts): string {
  let s = serialisedFacets.get(facets);
  if (s === undefined) {
    s = JSON.stringify(facets);
    serialisedFacets.set(facets, s);
  }
  return s;
}

function hasGithubCard(r: CatalogRecord): boolean {
  const g = r.github;
  return !!g && (g.language !== undefined || g.license !== undefined || g.licenseSpdx !== undefined || g.stars !== undefined);
}

export function toDetail(d: CatalogDetail): CatalogServerDetailOut {
  return {
    ...toCatalogServer(d.record, 'full'),
    ...(d.readme && { readme: d.readme }),
    ...(d.tools && d.tools.length > 0 && { tools: d.tools, toolDescriptions: lintTools(d.tools) }),
  };
}

export function toAutocompleteItem(r: CatalogRecord) {
  return { slug: r.slug, name: r.name, title: r.title ?? r.name, description: r.description };
}
