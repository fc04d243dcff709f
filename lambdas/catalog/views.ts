import { toServerJson } from './domain/registry-record';
import { lastModified, type CatalogDetail, type CatalogRecord, type View } from './domain/types';
import type { CatalogServerDetailOut, CatalogServerOut } from './schemas';

/** Projections of the stored record onto the API shapes of spec document 1. */

export function iconPath(slug: string): string {
  return `/api/icons/${encodeURIComponent(slug)}`;
}

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
    ...(r.github && hasGithubCard(r) && {
      github: {
        ...(r.github.language !== undefined && { language: r.github.language }),
        ...((r.github.license ?? r.github.licenseSpdx) !== undefined && { license: r.github.license ?? r.github.licenseSpdx }),
        ...(r.github.stars !== undefined && { stars: r.github.stars }),
      },
    }),
    ...(r.toolCount !== undefined && { toolCount: r.toolCount }),
  };
  if (view === 'full') {
    if (r.downloads !== undefined) out.downloads = r.downloads;
    out.grades = r.grades;
    if (r.health) out.health = r.health;
    out.popularity = r.popularity;
    out.trending = r.trending;
    if (r.hasIcon) out.iconUrl = iconPath(r.slug);
    if (r.websiteUrl) out.websiteUrl = r.websiteUrl;
  }
  return out;
}

function hasGithubCard(r: CatalogRecord): boolean {
  const g = r.github;
  return !!g && (g.language !== undefined || g.license !== undefined || g.licenseSpdx !== undefined || g.stars !== undefined);
}

export function toDetail(d: CatalogDetail): CatalogServerDetailOut {
  return {
    ...toCatalogServer(d.record, 'full'),
    ...(d.readme && { readme: d.readme }),
    ...(d.tools && d.tools.length > 0 && { tools: d.tools }),
  };
}

export function toAutocompleteItem(r: CatalogRecord) {
  return { slug: r.slug, name: r.name, title: r.title ?? r.name, description: r.description };
}

export interface RegistryMetaOptions {
  brand: string;
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
    ...(opts.siteUrlTemplate && { url: opts.siteUrlTemplate.replaceAll('{slug}', encodeURIComponent(r.slug)) }),
  };
  return { server: toServerJson(r), _meta: { [`io.${opts.brand}.catalog/v0`]: meta } };
}
