/**
 * The catalog core's public face: what the catalog's HTTP API (`lambdas/catalog`, with its MCP
 * endpoint and organisation registry), the site, the crawler and the entry points in `bin/` import.
 * The modules behind it are the core's own; only its tests and the search benches reach past this
 * file (`.dependency-cruiser.cjs` holds the features to it). What each group is for: README.md.
 *
 * The search engines are handed out as functions and types only (`search/engines.ts`): importing
 * this face loads no engine, so a function pays the module init of the one it builds.
 */

// The domain: records, the vocabulary of filters and sorts, grades, standing, registry records.
export * from './domain/types';
export {
  SearchWindowError,
  type CatalogFilters,
  type CatalogStore,
  type CatalogWrite,
  type IconStore,
  type ListQuery,
  type Page,
  type PageResult,
  type RegistryQuery,
  type SearchIndex,
  type TextQuery,
  type ChangePage,
  type TrustStore,
} from './domain/ports';
export {
  gradeOfScore,
  lintTools,
  TOOL_LINT_RULES,
  type DescriptionReport,
  type ToolFinding,
  type ToolLintRule,
} from './domain/tool-lint';
export {
  breakingReasons,
  diffTools,
  toolsEntry,
  versionEntry,
  type ChangeEntry,
  type ToolChange,
  type ToolChangeKind,
} from './domain/tool-changes';
export {
  CHECK_RESULTS,
  DOWN_AFTER,
  FAILURE_KINDS,
  failureKindOf,
  HEALTH_WINDOWS,
  isUp,
  LONGEST_WINDOW_MS,
  percentile,
  summarizeChecks,
  uptimePercent,
  type CheckResult,
  type FailureKind,
  type HealthCheck,
  type HealthSummary,
  type HealthWindow,
} from './domain/health-history';
export { SERVER_SCHEMA_URL, SERVER_TEXT_MAX, toServerJson, type ServerJson } from './domain/registry-record';
export { parseGithubRepo, type GithubRepo } from './domain/repo-ref';
export {
  isOfficialNamespace,
  licenseGrade,
  maintenanceGrade,
  POPULARITY_WEIGHTS,
  popularityScore,
  REPUBLISHER_NAMESPACES,
  type PopularityInput,
} from './domain/scoring';
export { SLUG_MAX, slugFromName } from './domain/slug';
export { isDemoted, isOriginal, isTestEntry, looksLikeDemo } from './domain/standing';

// Reads every surface shares: the query vocabulary, a server by slug or name, the shared views.
export { filterParams, filtersOf, intParam, MULTI_KEYS, SlugParamSchema, validateSlug } from './query';
export { findServer, type ServerRef } from './reads';
export { iconPath, toRegistryEntry, type RegistryMetaOptions } from './views';

// The organisation's allow-list (README "Organisation registry"): the file's format, what it says of a
// server (`orgDecision`: the MCP endpoint's `orgOnly` and the site's badge ask it too), the S3 file
// with its lease-guarded replace, the per-instance cache, and the entries the org registry serves.
export {
  ALLOW_LIST_MAX_BYTES,
  ALLOW_LIST_MAX_RULES,
  AllowListError,
  nextCandidate,
  orgDecision,
  parseAllowList,
  type AllowList,
  type AllowRule,
  type OrgDecision,
} from './org/allow-list';
export {
  AllowListBusy,
  AllowListConflict,
  CachedAllowList,
  S3AllowListStore,
  sameTag,
  type AllowListLeaseOptions,
  type AllowListLocation,
  type ReplaceCondition,
  type StoredAllowList,
} from './org/allow-list-store';
export { orgEntry, registryVersionEntry } from './org/org-entry';

// Install snippets per MCP client (the site renders them; the MCP endpoint's install_server returns them).
export {
  configKey,
  INSTALL_CLIENTS,
  installOptions,
  shellQuote,
  type ClientId,
  type InputNote,
  type InstallClient,
  type InstallOption,
  type Snippet,
} from './install/snippets';

// Configuration, the table, the adapters of the ports.
export { loadCatalogStoreConfig, type CatalogStoreConfig } from './config';
export { CATALOG_TABLE, TRUST_TABLE } from './tables';
export { DynamoCatalogStore } from './adapters/dynamo-catalog-store';
export { DEFAULT_CHECK_RETENTION_DAYS, DynamoTrustStore } from './adapters/dynamo-trust-store';
export { ICON_CACHE_CONTROL, iconKey, S3IconStore } from './adapters/s3-icon-store';
export { ICON_KIND_COUNT, ICON_SIZE, iconSvg, isWebp128, renderIcon } from './icons';

// Search: the engines by configuration (lazily required), and the index derived from the store.
export { embeddedSearchIndex, searchIndexForReads, searchIndexForWrites, snapshotStore } from './search/engines';
export type { EmbeddedSearchIndex, EmbeddedSearchIndexOptions } from './search/embedded';
export type { OpenSearchIndex } from './search/opensearch';
export type { S3SnapshotIndex, S3SnapshotStore, S3SnapshotWriter } from './search/s3-snapshot';
export { rebuildIndex, searchDocumentOf } from './reindex';
