/**
 * From a normalised upstream server plus its enrichment to the stored catalog entry, and the
 * change detection that keeps unchanged servers from being written.
 *
 * - `crawledAt` is the time the stored record was last written. It does not move when nothing
 *   changed (that is what "an unchanged server causes no write" means).
 * - `updatedAt` moves only when the upstream part of the record (its server.json projection,
 *   status and publish time) or the README changes; star, download, health or grade changes
 *   are written but leave it alone (DECISIONS). The registry's own `updatedAt` of the version
 *   (`registryUpdatedAt`) is kept as it says, written when it changes, and does not move it either:
 *   it is the registry's time, shown as such.
 * - Grades and popularity are computed against the start of the crawl's UTC day, so derived
 *   numbers change at most once a day and two crawls on one day agree.
 * - A step that failed (or was skipped) this time keeps the previous value of its fields, so a
 *   transient outage never wipes stars, downloads, health or tools.
 * - The content hash leaves out `crawledAt` and `health.checkedAt`: a health check that finds
 *   the same state is not a change.
 */

import {
  toServerJson,
  isOfficialNamespace,
  licenseGrade,
  lintTools,
  maintenanceGrade,
  popularityScore,
  type CatalogDetail,
  type CatalogHealth,
  type CatalogRecord,
  type CatalogTool,
  type Category,
  type GithubInfo,
  type ReadmeContent,
} from '../../catalog-core';
import { createHash } from 'node:crypto';
import type { Enrichment, NormalisedServer } from './types';

/** JSON with object keys sorted and `undefined` dropped, so equal values hash equally. */
export function stableStringify(v: unknown): string {
  if (v === undefined) return 'null';
  if (v === null || typeof v !== 'object') return JSON.stringify(v) ?? 'null';
  if (Array.isArray(v)) return `[${v.map(stableStringify).join(',')}]`;
  const entries = Object.entries(v as Record<string, unknown>)
    .filter(([, x]) => x !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, x]) => `${JSON.stringify(k)}:${stableStringify(x)}`).join(',')}}`;
}

export function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** The upstream part of a record: what `updatedAt` tracks. */
export function upstreamHash(r: CatalogRecord): string {
  return sha256(stableStringify({ server: toServerJson(r), publishedAt: r.publishedAt }));
}

function readmeKey(readme: ReadmeContent | undefined): string {
  return readme === undefined ? '' : `${readme.sha}:${readme.size}:${readme.truncated === true}`;
}

/** Everything a write would change, minus the volatile timestamps. */
export function contentHash(d: { record: CatalogRecord; readme?: ReadmeContent; tools?: CatalogTool[] }): string {
  const { crawledAt: _crawledAt, health, ...rest } = d.record;
  const record = health === undefined ? rest : { ...rest, health: { ...health, checkedAt: undefined } };
  return sha256(stableStringify({ record, readme: readmeKey(d.readme), tools: d.tools ?? null }));
}

export function scoringDate(now: Date): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
}

export interface BuildInput {
  server: NormalisedServer;
  slug: string;
  existing?: CatalogDetail;
  enrichment: Enrichment;
  categories: Category[];
  trending: number;
  now: Date;
}

export type Change = 'added' | 'updated' | 'unchanged';

export interface BuiltEntry {
  change: Change;
  record: CatalogRecord;
  /** For `CatalogStore.put`: a new README, `null` to delete it, `undefined` to leave it. */
  readme: ReadmeContent | null | undefined;
  tools: CatalogTool[] | null | undefined;
  /** README and tools as they stand after the write (for the search document). */
  currentReadme?: ReadmeContent;
  currentTools?: CatalogTool[];
}

function sameRepository(a: CatalogRecord | undefined, s: NormalisedServer): boolean {
  return a !== undefined && a.repository?.url !== undefined && a.repository.url === s.repository?.url;
}

function githubOf(input: BuildInput): GithubInfo | undefined {
  const { enrichment, existing, server } = input;
  if (server.repository === undefined) return undefined;
  if (enrichment.repo !== undefined) {
    if (!enrichment.repo.exists) return undefined;
    const { exists: _exists, defaultBranch: _branch, ...info } = enrichment.repo;
    return info;
  }
  return sameRepository(existing?.record, server) ? existing?.record.github : undefined;
}

function hasDownloadablePackage(s: NormalisedServer): boolean {
  return s.packages.some((p) => p.registryType === 'npm' || p.registryType === 'pypi');
}

export function buildEntry(input: BuildInput): BuiltEntry {
  const { server, slug, existing, enrichment, now } = input;
  const prev = existing?.record;
  const nowIso = now.toISOString();
  const day = scoringDate(now);

  const github = githubOf(input);
  const downloads = hasDownloadablePackage(server) ? (enrichment.downloads ?? prev?.downloads) : undefined;
  let health: CatalogHealth | undefined;
  if (server.remotes.length > 0) health = enrichment.health ?? prev?.health;

  let readme: ReadmeContent | null | undefined;
  let currentReadme: ReadmeContent | undefined;
  if (enrichment.readme === null) {
    readme = existing?.readme === undefined ? undefined : null;
  } else if (enrichment.readme === undefined || enrichment.readme === 'unchanged' || server.repository === undefined) {
    // Unknown this time (or no repository any more): the stored README stays as it is, unless
    // the repository itself went away.
    readme = server.repository === undefined && existing?.readme !== undefined ? null : undefined;
    currentReadme = readme === null ? undefined : existing?.readme;
  } else {
    currentReadme = enrichment.readme;
    // The same README is not rewritten (it may be 256 KB) when only other fields changed.
    readme = readmeKey(enrichment.readme) === readmeKey(existing?.readme) ? undefined : enrichment.readme;
  }

  let tools: CatalogTool[] | null | undefined;
  let currentTools: CatalogTool[] | undefined;
  if (server.remotes.length === 0) {
    tools = existing?.tools === undefined ? undefined : null;
  } else if (enrichment.tools !== undefined) {
    currentTools = enrichment.tools;
    tools = stableStringify(enrichment.tools) === stableStringify(existing?.tools) ? undefined : enrichment.tools;
  } else {
    currentTools = existing?.tools;
  }

  const isOfficial = isOfficialNamespace(server.name);
  const licenseText = github === undefined ? undefined : (github.licenseSpdx ?? github.license);
  const record: CatalogRecord = {
    slug,
    name: server.name,
    ...(server.title !== undefined && { title: server.title }),
    description: server.description,
    version: server.version,
    status: server.status === 'deprecated' ? 'deprecated' : 'active',
    ...(server.websiteUrl !== undefined && { websiteUrl: server.websiteUrl }),
    ...(server.repository !== undefined && { repository: server.repository }),
    packages: server.packages,
    remotes: server.remotes,
    ...(server.icons !== undefined && { icons: server.icons }),
    isOfficial,
    crawledAt: prev?.crawledAt ?? nowIso,
    ...(server.publishedAt !== undefined && { publishedAt: server.publishedAt }),
    ...(server.upstreamUpdatedAt !== undefined && { registryUpdatedAt: server.upstreamUpdatedAt }),
    categories: input.categories,
    ...(github !== undefined && { github }),
    ...(downloads !== undefined && { downloads }),
    ...(health !== undefined && { health }),
    // The check schedule's summary of the history: the crawl keeps it as the schedule left it.
    ...(server.remotes.length > 0 && prev?.healthHistory !== undefined && { healthHistory: prev.healthHistory }),
    ...(currentTools !== undefined && { toolCount: currentTools.length }),
    grades: {
      license: github === undefined ? null : licenseGrade(licenseText, true),
      maintenance: maintenanceGrade(github?.pushedAt, day),
      quality: 'untested',
      ...(currentTools !== undefined && { descriptions: lintTools(currentTools).grade }),
    },
    popularity: popularityScore({ stars: github?.stars, downloads, live: health?.live, pushedAt: github?.pushedAt, isOfficial }, day),
    trending: input.trending,
    hasIcon: enrichment.hasIcon ?? prev?.hasIcon ?? false,
  };

  const readmeChanged = readmeKey(currentReadme) !== readmeKey(existing?.readme);
  const upstreamChanged = prev === undefined || upstreamHash(record) !== upstreamHash(prev);
  const updatedAt = upstreamChanged || readmeChanged ? nowIso : (prev?.updatedAt ?? prev?.crawledAt ?? nowIso);
  record.updatedAt = updatedAt;

  if (prev !== undefined && existing !== undefined) {
    const before = contentHash(existing);
    const after = contentHash({ record, readme: currentReadme, tools: currentTools });
    if (before === after) {
      return { change: 'unchanged', record: prev, readme: undefined, tools: undefined, currentReadme: existing.readme, currentTools: existing.tools };
    }
  }
  record.crawledAt = nowIso;
  return { change: prev === undefined ? 'added' : 'updated', record, readme, tools, currentReadme, currentTools };
}
