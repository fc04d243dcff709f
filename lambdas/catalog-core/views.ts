import { toServerJson } from './domain/registry-record';
import { lastModified, type CatalogRecord } from './domain/types';

/**
 * Views of a record that every surface shows alike: where its icon is served, and the record as a
 * registry entry (the official server.json under `server`, this catalog's metadata under `_meta`),
 * which the public `/api/v0.1` feed and the organisation registry both answer with.
 */

/** The public path of a server's icon (`/api/icons/{slug}`; CloudFront serves it from the icons bucket). */
export function iconPath(slug: string): string {
  return `/api/icons/${encodeURIComponent(slug)}`;
}

export interface RegistryMetaOptions {
  /** `io.<brand>.catalog/v0`: the key of this catalog's metadata (`CATALOG_BRAND`). */
  brand: string;
  /** `{slug}` is replaced by the server's slug (`SITE_URL_TEMPLATE`); no `url` when unset. */
  siteUrlTemplate?: string;
}

export function toRegistryEntry(r: CatalogRecord, opts: RegistryMetaOptions) {
  const meta = {
    slug: r.slug,
    grades: r.grades,
    ...(r.categories.length > 0 && { categories: [...r.categories] }),
    ...(r.toolCount !== undefined && { toolCount: r.toolCount }),
    ...(r.health && { health: r.health }),
    ...(r.downloads !== undefined && { downloads: r.downloads }),
    updatedAt: lastModified(r),
    ...(r.publishedAt !== undefined && { publishedAt: r.publishedAt }),
    ...(r.registryUpdatedAt !== undefined && { registryUpdatedAt: r.registryUpdatedAt }),
    ...(opts.siteUrlTemplate && { url: opts.siteUrlTemplate.replaceAll('{slug}', encodeURIComponent(r.slug)) }),
  };
  return { server: toServerJson(r), _meta: { [`io.${opts.brand}.catalog/v0`]: meta } };
}
