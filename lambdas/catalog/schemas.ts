import * as z from 'zod';
import '../shared/zod-openapi';
import { API_SORTS, CATEGORIES, filterParams, intParam, VIEWS } from '../catalog-core';
import { DescriptionReportOut, HealthSummary } from './trust-schemas';

/**
 * The catalog contract, written once: these schemas validate requests, type the handlers and
 * generate `/openapi.json` (see `openapi.ts`). The filter, slug and paging parameters every surface
 * shares are the core's (`lambdas/catalog-core/query.ts`).
 */
// ---------- parameters ----------

function trimmed(min: number, max: number, description: string) {
  return z
    .string({ error: 'must be a string' })
    .trim()
    .min(min, { error: min === 1 ? 'must not be empty' : `must be at least ${min} characters` })
    .max(max, { error: `must be at most ${max} characters` })
    .openapi({ description });
}

const view = z
  .enum(VIEWS, { error: `must be one of ${VIEWS.join(', ')}` })
  .default('card')
  .openapi({
    description:
      '`card` (default): exactly the CatalogServer fields. `full`: CatalogServer plus the enrichment fields (downloads, grades, health, popularity, trending, iconUrl, repository, websiteUrl).',
  });

const page = intParam(1, Number.MAX_SAFE_INTEGER, 1, 'Page number, from 1.');
const pageLimit = intParam(1, 100, 24, 'Items per page.');

export const ListQuerySchema = z.object({
  page,
  limit: pageLimit,
  ...filterParams,
  sort: z
    .enum(API_SORTS, { error: `must be one of ${API_SORTS.join(', ')}` })
    .default('popularity')
    .openapi({
      description:
        "popularity (desc, default), name (asc), stars, updated (the catalog entry's last change), downloads, trending (desc), uptime (the 30-day uptime, desc; servers without check history last); ties broken by slug ascending. In popularity and trending, deprecated servers and test entries come after the others.",
    }),
  view,
});

export const SearchQuerySchema = z.object({
  q: trimmed(1, 100, 'Full-text query over name, title, description, tools and README. `sort` is ignored here.'),
  page,
  limit: pageLimit,
  ...filterParams,
  view,
});

export const AutocompleteQuerySchema = z.object({
  q: trimmed(1, 100, 'Case-insensitive prefix of the name, of the part after `/`, or of the title.'),
  limit: intParam(1, 20, 8, 'Number of suggestions.'),
});

export const RegistryQuerySchema = z.object({
  cursor: z
    .string()
    .min(1, { error: 'must not be empty' })
    .max(200, { error: 'must be at most 200 characters' })
    .optional()
    .openapi({ description: 'Opaque; pass the previous `metadata.nextCursor` back verbatim.' }),
  limit: intParam(1, 100, 50, 'Servers per page.'),
  updated_since: z
    .string()
    .refine((s) => RFC3339.test(s) && !Number.isNaN(Date.parse(s)), { error: 'must be an RFC 3339 date-time' })
    .optional()
    .openapi({ format: 'date-time', description: 'Only servers updated at or after this instant.' }),
  search: trimmed(1, 100, 'Case-insensitive substring of the server name.').optional(),
  version: z
    .string()
    .min(1, { error: 'must not be empty' })
    .max(100, { error: 'must be at most 100 characters' })
    .optional()
    .openapi({ description: 'Accepted for compatibility and ignored: the latest version is always returned.' }),
});

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

// ---------- responses ----------

// The enum lists null too: JSON Schema checks `enum` whatever `type` allows, so without it a null
// grade (no repository, or an unknown push date) would not validate against the document.
const Grade = z
  .enum(['A', 'B', 'C', 'D', 'F'])
  .nullable()
  .openapi({ enum: ['A', 'B', 'C', 'D', 'F', null] });

export const CatalogPackage = z.object({ registryType: z.string(), identifier: z.string(), version: z.string().optional() }).openapi('CatalogPackage');
export const CatalogRemote = z.object({ type: z.string(), url: z.url() }).openapi('CatalogRemote');
export const CatalogGithub = z
  .object({ language: z.string().optional(), license: z.string().optional(), stars: z.number().int().optional() })
  .openapi('CatalogGithub');
export const TrustGrades = z
  .object({
    license: Grade,
    maintenance: Grade,
    quality: z.literal('untested'),
    descriptions: Grade.optional().openapi({ description: 'How well the captured tools are described for a model; absent without captured tools.' }),
  })
  .openapi('TrustGrades');
export const CatalogHealth = z
  .object({
    live: z.boolean(),
    checkedAt: z.iso.datetime(),
    authRequired: z.boolean().optional(),
    toolCount: z.number().int().optional(),
    history: HealthSummary.optional().openapi({ description: 'view=full: uptime, latency and the last failure from the check schedule.' }),
  })
  .openapi('CatalogHealth');

export const CatalogServer = z
  .object({
    slug: z.string(),
    name: z.string(),
    title: z.string().optional(),
    description: z.string(),
    version: z.string(),
    status: z.enum(['active', 'deprecated']).openapi({ description: '`active` or `deprecated`; deleted servers leave the catalog.' }),
    repositoryUrl: z.url().optional(),
    packages: z.array(CatalogPackage),
    remotes: z.array(CatalogRemote),
    isOfficial: z.boolean(),
    crawledAt: z.iso.datetime(),
    updatedAt: z.iso.datetime().optional(),
    category: z.array(z.enum(CATEGORIES)).optional(),
    github: CatalogGithub.optional(),
    toolCount: z.number().int().optional(),
    uptime: z.number().min(0).max(100).optional().openapi({ description: 'Uptime over 30 days, percent (servers with check history).' }),
    down: z.literal(true).optional().openapi({ description: 'Present when the last checks (3 by default) all failed.' }),
    // view=full only (additions to CatalogServer):
    downloads: z.number().int().optional().openapi({ description: 'view=full: package downloads last month.' }),
    grades: TrustGrades.optional().openapi({ description: 'view=full.' }),
    health: CatalogHealth.optional().openapi({ description: 'view=full: omitted for servers without remotes.' }),
    popularity: z.number().optional().openapi({ description: 'view=full: composite rank in [0,1].' }),
    trending: z.number().int().optional().openapi({ description: 'view=full: stars gained in the last 7 days.' }),
    iconUrl: z.string().optional().openapi({ description: 'view=full: path of the icon, when one is cached.' }),
    websiteUrl: z.url().optional().openapi({ description: 'view=full.' }),
    publishedAt: z.iso
      .datetime()
      .optional()
      .openapi({ description: "view=full: the registry's publish time of this (the latest) version. `updatedAt` is the catalog entry's own last change." }),
    registryUpdatedAt: z.iso
      .datetime()
      .optional()
      .openapi({ description: "view=full: the registry's `updatedAt` of this version (its status changed, for example)." }),
    demo: z
      .literal(true)
      .optional()
      .openapi({ description: 'view=full: a synthetic demo server of the local stack (`npm start`), not a registry entry. Absent on real servers.' }),
  })
  .openapi('CatalogServer');

export const ReadmeContent = z
  .object({ content: z.string(), path: z.string(), size: z.number().int(), sha: z.string(), truncated: z.boolean().optional() })
  .openapi('ReadmeContent');
export const CatalogTool = z
  .object({
    name: z.string(),
    title: z.string().optional(),
    description: z.string().optional(),
    inputSchema: z.record(z.string(), z.unknown()).optional(),
    annotations: z
      .object({
        title: z.string().optional(),
        readOnlyHint: z.boolean().optional(),
        destructiveHint: z.boolean().optional(),
        idempotentHint: z.boolean().optional(),
        openWorldHint: z.boolean().optional(),
      })
      .optional()
      .openapi({ description: 'The behaviour hints the server declared (MCP 2025-11-25 ToolAnnotations; untrusted).' }),
  })
  .openapi('CatalogTool');
export const CatalogServerDetail = CatalogServer.extend({
  readme: ReadmeContent.optional(),
  tools: z.array(CatalogTool).optional(),
  toolDescriptions: DescriptionReportOut.optional().openapi({ description: 'The description grade of the captured tools with its findings.' }),
}).openapi('CatalogServerDetail');

export const Pagination = z
  .object({ page: z.number().int(), limit: z.number().int(), total: z.number().int(), totalPages: z.number().int(), hasMore: z.boolean() })
  .openapi('Pagination');
export const CategoryCount = z.object({ name: z.string(), count: z.number().int() }).openapi('CategoryCount');
export const FacetCount = z.object({ name: z.string(), count: z.number().int() }).openapi('FacetCount');
export const FacetsData = z.object({ categories: z.array(CategoryCount), languages: z.array(FacetCount), licenses: z.array(FacetCount) }).openapi('FacetsData');
export const SlugEntry = z.object({ slug: z.string(), updatedAt: z.iso.datetime() }).openapi('SlugEntry');
export const AutocompleteItem = z.object({ slug: z.string(), name: z.string(), title: z.string(), description: z.string() }).openapi('AutocompleteItem');

export const ApiError = z
  .object({
    code: z.enum(['INVALID_QUERY', 'UNAUTHORIZED', 'NOT_FOUND', 'METHOD_NOT_ALLOWED', 'RATE_LIMITED', 'AUTH_UNAVAILABLE', 'INTERNAL_ERROR']),
    message: z.string(),
    details: z.array(z.object({ field: z.string(), message: z.string() })).optional(),
  })
  .openapi('ApiError');
export const ErrorEnvelope = z.object({ success: z.literal(false), error: ApiError }).openapi('ErrorEnvelope');

export function envelope<T extends z.ZodType>(data: T, meta?: z.ZodType) {
  return z.object({ success: z.literal(true), data, ...(meta ? { meta } : {}) });
}

export const FacetCounts = z
  .object({
    categories: z.array(CategoryCount),
    types: z.array(FacetCount),
    languages: z.array(FacetCount),
    licenses: z.array(FacetCount),
    missing: z
      .object({ types: z.number().int(), languages: z.number().int(), licenses: z.number().int() })
      .openapi({ description: 'Servers of the counted set without a value in the group (no package or remote, no GitHub language, no license known).' }),
  })
  .openapi('FacetCounts', {
    description:
      "Facet counts of this query and its filters: each group counted over the servers the query and every filter but the group's own keep. A group without a selected value counts the results: its counts plus `missing` sum to `pagination.total` (categories: a server counts once per label, 1-3 labels, so the sum is at least the total). With selected values, their counts sum to the total (language, license) or cover it (category, type: a server may have several).",
  });

export const ListMeta = z.object({ pagination: Pagination, facets: FacetCounts.optional() });
export const SearchMeta = z.object({ pagination: Pagination, search: z.object({ query: z.string() }), facets: FacetCounts.optional() });

// Registry-compatible feed (no envelope).
export const CatalogMeta = z
  .object({
    slug: z.string(),
    grades: TrustGrades,
    categories: z.array(z.string()).optional(),
    toolCount: z.number().int().optional(),
    health: CatalogHealth.optional(),
    downloads: z.number().int().optional(),
    updatedAt: z.iso.datetime().optional(),
    url: z.url().optional(),
    publishedAt: z.iso.datetime().optional().openapi({ description: "The registry's publish time of this version." }),
    registryUpdatedAt: z.iso.datetime().optional().openapi({ description: "The registry's `updatedAt` of this version." }),
  })
  .openapi('CatalogMeta');
export const RegistryServerRecord = z
  .looseObject({
    name: z.string(),
    title: z.string().optional(),
    description: z.string(),
    version: z.string(),
    status: z.string(),
    repository: z.object({ url: z.url(), source: z.string().optional(), subfolder: z.string().optional() }).optional(),
    packages: z.array(z.looseObject({ registryType: z.string(), identifier: z.string(), version: z.string().optional() })),
    remotes: z.array(z.looseObject({ type: z.string(), url: z.url() })),
  })
  .openapi('RegistryServerRecord', {
    description: 'The 2025-12-11 server.json shape (a retained subset of the upstream record, reconstructed).',
  });
export const RegistryEntry = z
  .object({
    server: RegistryServerRecord,
    _meta: z.looseObject({
      'io.example.catalog/v0': CatalogMeta.optional().openapi({
        description: "This catalog's metadata. The key carries the operator's brand (`CATALOG_BRAND`) in place of `example`.",
      }),
    }),
  })
  .openapi('RegistryEntry');
export const RegistryServerParams = z.object({
  serverName: z.string().openapi({ description: 'The registry name, URL-encoded (`io.github.acme%2Fweather`).' }),
});
export const RegistryListResponse = z
  .object({
    servers: z.array(RegistryEntry),
    metadata: z.object({ count: z.number().int(), nextCursor: z.string().optional() }),
  })
  .openapi('RegistryListResponse');

export type ListQueryInput = z.output<typeof ListQuerySchema>;
export type SearchQueryInput = z.output<typeof SearchQuerySchema>;
export type CatalogServerOut = z.infer<typeof CatalogServer>;
export type CatalogServerDetailOut = z.infer<typeof CatalogServerDetail>;
