/**
 * The catalog's domain model. `CatalogRecord` is what the crawler (or the synthetic
 * generator) writes and what every read endpoint projects from; the API shapes of
 * spec document 1 are derived from it in `views.ts`.
 */

import type { HealthSummary } from './health-history';

export const REGISTRY_TYPES = ['npm', 'pypi', 'oci', 'mcpb', 'nuget', 'remote'] as const;
export type RegistryTypeFilter = (typeof REGISTRY_TYPES)[number];

export const CATEGORIES = [
  'Development & Coding',
  'Data & Databases',
  'Search & Web',
  'AI & Machine Learning',
  'Productivity & Docs',
  'Communication & Messaging',
  'Cloud & DevOps',
  'Finance & Crypto',
  'Security',
  'Media & Design',
  'Browser & Automation',
  'Knowledge & Memory',
  'Commerce & Marketing',
  'Other',
] as const;
export type Category = (typeof CATEGORIES)[number];

/**
 * The orders `/api/mcps` accepts (spec 1): `updated` is the catalog's own change time (`lastModified`);
 * `uptime` (an addition to the spec's) is the 30-day uptime of the check schedule (`healthHistory`),
 * highest first, servers without check history last.
 */
export const API_SORTS = ['popularity', 'name', 'stars', 'updated', 'downloads', 'trending', 'uptime'] as const;
/**
 * The orders the index keeps: the API's, and `published`, the registry's time of the latest version
 * (`registryTime`), newest first, which the site's "Recently added or updated" and feeds use (the
 * API's sort enum is the spec's).
 */
export const SORTS = [...API_SORTS, 'published'] as const;
export type SortKey = (typeof SORTS)[number];

/** A server's 30-day uptime (percent) for sorting and filtering; undefined without check history. */
export function uptimeOf(r: CatalogRecord): number | undefined {
  return r.healthHistory?.uptime['30d'] ?? undefined;
}

export const VIEWS = ['card', 'full'] as const;
export type View = (typeof VIEWS)[number];

export type Grade = 'A' | 'B' | 'C' | 'D' | 'F';
export type ServerStatus = 'active' | 'deprecated';

export interface TrustGrades {
  license: Grade | null;
  maintenance: Grade | null;
  quality: 'untested';
  /** How well the captured tools are described for a model (`domain/tool-lint.ts`); absent without captured tools. */
  descriptions?: Grade | null;
}

/** A package as kept for the registry feed: the 2025-12-11 server.json shape (a retained subset). */
export interface RegistryPackage {
  registryType: string;
  identifier: string;
  version?: string;
  registryBaseUrl?: string;
  runtimeHint?: string;
  fileSha256?: string;
  /** `url` is a template: its `{names}` are the package's argument value hints, argument names and variable names. */
  transport: { type: 'stdio' | 'streamable-http' | 'sse'; url?: string; headers?: unknown[] };
  // Arguments, env vars and headers of upstream packages, kept verbatim (already validated upstream-shaped).
  packageArguments?: unknown[];
  runtimeArguments?: unknown[];
  environmentVariables?: unknown[];
}

export interface RegistryRemote {
  type: 'streamable-http' | 'sse';
  /** A template: its `{names}` are the keys of `variables`. */
  url: string;
  headers?: unknown[];
  /** The URL template's variables (server.json `RemoteTransport.variables`: name → Input), kept verbatim. */
  variables?: Record<string, unknown>;
}

export interface RegistryRepository {
  url: string;
  source: string;
  subfolder?: string;
  id?: string;
}

export interface RegistryIcon {
  src: string;
  mimeType?: string;
  sizes?: string[];
  theme?: 'light' | 'dark';
}

export interface GithubInfo {
  stars?: number;
  language?: string;
  /** GitHub's license name, e.g. "MIT License". */
  license?: string;
  /** SPDX id, e.g. "MIT". */
  licenseSpdx?: string;
  pushedAt?: string;
  ownerAvatarUrl?: string;
}

export interface CatalogHealth {
  live: boolean;
  checkedAt: string;
  authRequired?: boolean;
  toolCount?: number;
}

export interface ReadmeContent {
  content: string;
  path: string;
  size: number;
  sha: string;
  /** true when the stored content was cut at the README cap. */
  truncated?: boolean;
}

/** The behaviour hints of MCP 2025-11-25 `ToolAnnotations`, as the server declared them (untrusted). */
export interface ToolAnnotations {
  title?: string;
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

export interface CatalogTool {
  name: string;
  title?: string;
  description?: string;
  inputSchema?: Record<string, unknown>;
  annotations?: ToolAnnotations;
}

/** The stored catalog entry (DynamoDB item `SERVER`, and the search index's document source). */
export interface CatalogRecord {
  slug: string;
  name: string;
  title?: string;
  description: string;
  version: string;
  status: ServerStatus;
  websiteUrl?: string;
  repository?: RegistryRepository;
  packages: RegistryPackage[];
  remotes: RegistryRemote[];
  icons?: RegistryIcon[];
  isOfficial: boolean;
  crawledAt: string;
  /** When this catalog's entry last changed (upstream record or README): the catalog's time, not the registry's. */
  updatedAt?: string;
  /** The registry's `publishedAt` of the latest version (`_meta["io.modelcontextprotocol.registry/official"]`). */
  publishedAt?: string;
  /** The registry's `updatedAt` of the latest version (same `_meta`): moves on a status change, for example. */
  registryUpdatedAt?: string;
  /** Set on the synthetic servers `npm start` and `npm run seed` write: never on a crawled server. */
  demo?: true;
  categories: Category[];
  github?: GithubInfo;
  /** Package-registry downloads in the last month (npm + PyPI), omitted when unknown. */
  downloads?: number;
  health?: CatalogHealth;
  /** Health over time from the check schedule's history (`domain/health-history.ts`); servers with remotes only. */
  healthHistory?: HealthSummary;
  toolCount?: number;
  grades: TrustGrades;
  popularity: number;
  /** Stars gained in the last 7 days (0 without history). */
  trending: number;
  hasIcon: boolean;
}

/**
 * README characters the search engines index per server (both adapters, so they rank on the same
 * text): the head carries the description; the rest mostly bloats the index.
 */
export const README_INDEX_CHARS = 8192;

/** What the search index stores per server: the record plus the text it searches. */
export interface SearchDocument {
  record: CatalogRecord;
  /** Tool names and descriptions, joined. */
  toolText: string;
  /** README text (capped for indexing). */
  readmeText: string;
}

/** Full detail: the record plus README and captured tools (DynamoDB items `README` and `TOOLS`). */
export interface CatalogDetail {
  record: CatalogRecord;
  readme?: ReadmeContent;
  tools?: CatalogTool[];
}

export interface NameCount {
  name: string;
  count: number;
}

export interface Facets {
  categories: NameCount[];
  languages: NameCount[];
  licenses: NameCount[];
}

/** The facet groups counted for a query (`FacetCounts`), each the name of its filter's values. */
export const FACET_GROUPS = ['categories', 'types', 'languages', 'licenses'] as const;
export type FacetGroup = (typeof FACET_GROUPS)[number];

/**
 * Facet counts of one query and its filters, the usual disjunctive way: each group is counted over
 * the servers the query and every filter but the group's own keep (so a reader sees how many a
 * further value of the same filter would add). `missing` counts the servers of that set without a
 * value in the group (no GitHub language, no license known, neither a package nor a remote);
 * every server has a category. Values most used first, ties by name.
 */
export interface FacetCounts {
  categories: NameCount[];
  types: NameCount[];
  languages: NameCount[];
  licenses: NameCount[];
  missing: { types: number; languages: number; licenses: number };
}

export interface SlugEntry {
  slug: string;
  updatedAt: string;
}

/** Effective last-modified time: `updatedAt`, falling back to `crawledAt` (DECISIONS). */
export function lastModified(r: CatalogRecord): string {
  return r.updatedAt ?? r.crawledAt;
}

/**
 * The registry's own time of the latest version: its `updatedAt`, else its `publishedAt`;
 * undefined when the registry gave neither (never the catalog's time: a crawl is not news).
 */
export function registryTime(r: Pick<CatalogRecord, 'registryUpdatedAt' | 'publishedAt'>): string | undefined {
  return r.registryUpdatedAt ?? r.publishedAt;
}
