import { OpenAPIRegistry, OpenApiGeneratorV31, type RouteConfig } from '@asteasolutions/zod-to-openapi';
import * as z from 'zod';
import { BEARER_SECURITY_SCHEME, FAVORITES_ERROR_TEXT, FAVORITES_OPENAPI } from './favorites/schemas';
import type { RouteDef } from '../shared/http/route-table';
import { CATALOG_API } from './routes';
import { SlugParamSchema } from '../catalog-core';
import * as S from './schemas';
import * as T from './trust-schemas';

/**
 * `/openapi.json`, generated from the zod schemas that validate requests and the route table
 * that declares the routes: there is no second, hand-kept copy of the contract. The favorites
 * routes (fn `favorites`) are described by `FAVORITES_OPENAPI`, next to their own schemas.
 */
type Op = {
  summary: string;
  description?: string;
  query?: z.ZodObject;
  params?: z.ZodObject;
  ok: { description: string; schema?: z.ZodType; content?: string };
  errors: number[];
};

const ERROR_TEXT: Record<number, string> = {
  400: 'INVALID_QUERY: a parameter failed validation (`details` names each field).',
  404: 'NOT_FOUND.',
  405: 'METHOD_NOT_ALLOWED: the response carries `Allow: GET`.',
  429: 'RATE_LIMITED: the response carries `Retry-After`.',
  500: 'INTERNAL_ERROR.',
};

const listEnvelope = S.envelope(z.array(S.CatalogServer), S.ListMeta);

const OPS: Record<string, Op> = {
  listServers: {
    summary: 'List servers',
    description: 'Filtered, sorted, paginated list. Filters AND-combine; values of one filter OR-combine.',
    query: S.ListQuerySchema,
    ok: { description: 'A page of servers', schema: listEnvelope },
    errors: [400],
  },
  getServer: {
    summary: 'One server with README and tools',
    params: SlugParamSchema,
    ok: { description: 'The server', schema: S.envelope(S.CatalogServerDetail) },
    errors: [400, 404],
  },
  getServerHealth: {
    summary: "A server's health checks over a window",
    description:
      'The live checks of the window (`24h`, `7d` default, `30d`), oldest first, and the summary as of now: uptime per window, latency p50/p95, the last failure. Checks are kept 90 days.',
    params: SlugParamSchema,
    query: T.HealthQuerySchema,
    ok: { description: 'The series', schema: S.envelope(T.HealthSeries) },
    errors: [400, 404],
  },
  listServerChanges: {
    summary: "A server's changelog",
    description:
      'Newest first: changes of its captured tools (added, removed, renamed, input schema changed; `breaking` when a caller that worked may fail now) and registry version bumps. Paged with `meta.nextCursor`.',
    params: SlugParamSchema,
    query: T.ChangesQuerySchema,
    ok: { description: 'A page of entries', schema: S.envelope(z.array(T.ChangeEntryOut), T.ChangesMeta) },
    errors: [400, 404],
  },
  searchServers: {
    summary: 'Full-text search',
    description: 'Relevance-ranked over name, title, description, tool names and descriptions and README; popularity breaks ties. `sort` is ignored.',
    query: S.SearchQuerySchema,
    ok: { description: 'A page of matches', schema: S.envelope(z.array(S.CatalogServer), S.SearchMeta) },
    errors: [400],
  },
  autocomplete: {
    summary: 'Typeahead',
    description:
      'Anchored, case-insensitive prefix of the name, of the part after `/`, or of the title; popularity order. A missing title is returned as the name.',
    query: S.AutocompleteQuerySchema,
    ok: { description: 'Suggestions', schema: S.envelope(z.array(S.AutocompleteItem)) },
    errors: [400],
  },
  listCategories: { summary: 'Category counts', ok: { description: 'Most-used first', schema: S.envelope(z.array(S.CategoryCount)) }, errors: [] },
  listLanguages: { summary: 'Language counts', ok: { description: 'Most-used first', schema: S.envelope(z.array(S.FacetCount)) }, errors: [] },
  listLicenses: { summary: 'License counts', ok: { description: 'Most-used first', schema: S.envelope(z.array(S.FacetCount)) }, errors: [] },
  getFacets: { summary: 'All facet counts', ok: { description: 'Facets', schema: S.envelope(S.FacetsData) }, errors: [] },
  listSlugs: { summary: 'Every slug with its last-modified time', ok: { description: 'Slugs', schema: S.envelope(z.array(S.SlugEntry)) }, errors: [] },
  getIcon: {
    summary: 'Server icon',
    description: '128x128 webp, immutable and cached for a year; exempt from rate limits.',
    params: SlugParamSchema,
    ok: { description: 'The icon', content: 'image/webp' },
    errors: [400, 404],
  },
  listRegistryServers: {
    summary: 'Registry-compatible server list',
    description: 'Compatible with the official MCP registry list (not wrapped in the envelope), ordered by name. Errors use the envelope.',
    query: S.RegistryQuerySchema,
    ok: { description: 'A page of servers', schema: S.RegistryListResponse },
    errors: [400],
  },
  listRegistryServerVersions: {
    summary: "Registry-compatible: a server's versions",
    description:
      "As the official registry's route; `serverName` is the registry name, URL-encoded (`io.github.acme%2Fweather`). The catalog mirrors each server's latest version only: the list holds that one. Errors use the envelope.",
    params: S.RegistryServerParams,
    ok: { description: 'The versions (one)', schema: S.RegistryListResponse },
    errors: [404],
  },
  getRegistryServerVersion: {
    summary: 'Registry-compatible: one version of a server',
    description:
      "`version` is `latest` or the version the catalog holds (URL-encoded); any other version is 404. The entry carries the registry's `io.modelcontextprotocol.registry/official` metadata beside the catalog's. Errors use the envelope.",
    params: S.RegistryServerParams.extend({ version: z.string().openapi({ description: '`latest`, or the version.' }) }),
    ok: { description: 'The server at that version', schema: S.RegistryEntry },
    errors: [404],
  },
  getOpenApi: { summary: 'This document', ok: { description: 'OpenAPI 3.1 document', schema: z.record(z.string(), z.unknown()) }, errors: [] },
};

const rateHeaders = {
  'X-RateLimit-Limit': { description: 'Bucket size (the burst).', schema: { type: 'integer' as const } },
  'X-RateLimit-Remaining': { description: 'Requests left in the bucket.', schema: { type: 'integer' as const } },
  'X-RateLimit-Reset': { description: 'Seconds until the bucket is full again.', schema: { type: 'integer' as const } },
};

const retryAfter = { description: 'Seconds to wait.', schema: { type: 'integer' as const } };
const allow = (verbs: string) => ({ description: `The verbs of this path: \`${verbs}\`.`, schema: { type: 'string' as const } });
/** The verbs a path answers, as its 405 names them in `Allow`. */
const verbsOf = (route: RouteDef) =>
  CATALOG_API.routes
    .filter((r) => r.path === route.path)
    .map((r) => r.method)
    .join(', ');

type Responses = NonNullable<RouteConfig['responses']>;
type Request = NonNullable<RouteConfig['request']>;

interface Described {
  summary: string;
  description?: string;
  request: Request;
  security?: Array<Record<string, string[]>>;
  responses: Responses;
}

function describeCatalog(route: RouteDef, error: z.ZodType): Described {
  const op = OPS[route.operationId];
  if (!op) throw new Error(`no OpenAPI description for ${route.operationId}`);
  const exempt = route.operationId === 'getIcon';
  const headers = exempt ? undefined : rateHeaders;
  const responses: Responses = {
    200: {
      description: op.ok.description,
      headers,
      content: op.ok.content
        ? { [op.ok.content]: { schema: { type: 'string', format: 'binary' } } }
        : { 'application/json': { schema: op.ok.schema as z.ZodType } },
    },
  };
  for (const code of [...op.errors, 405, ...(exempt ? [] : [429]), 500]) {
    responses[code] = {
      description: ERROR_TEXT[code],
      headers: code === 429 ? { ...rateHeaders, 'Retry-After': retryAfter } : code === 405 ? { ...headers, Allow: allow(verbsOf(route)) } : headers,
      content: { 'application/json': { schema: error } },
    };
  }
  return {
    summary: op.summary,
    description: op.description,
    request: { ...(op.query && { query: op.query }), ...(op.params && { params: op.params }) },
    responses,
  };
}

/** A favorites operation: bearer security, a JSON body on POST, and the favorites error texts. */
function describeFavorites(route: RouteDef, error: z.ZodType): Described {
  const op = FAVORITES_OPENAPI[route.operationId];
  if (!op) throw new Error(`no OpenAPI description for ${route.operationId}`);
  const responses: Responses = {
    200: { description: op.ok.description, headers: rateHeaders, content: { 'application/json': { schema: op.ok.schema } } },
  };
  for (const code of [...new Set([...op.errors, 405, 429, 500])].sort((a, b) => a - b)) {
    const extra: Record<string, { description: string; schema: { type: 'string' | 'integer' } }> = {};
    if (code === 401) {
      extra['WWW-Authenticate'] = { description: '`Bearer`, or `Bearer error="invalid_token"` for a token that was refused.', schema: { type: 'string' } };
    }
    if (code === 429 || code === 503) extra['Retry-After'] = retryAfter;
    if (code === 405) extra.Allow = allow(verbsOf(route));
    responses[code] = {
      description: FAVORITES_ERROR_TEXT[code] ?? ERROR_TEXT[code],
      headers: { ...rateHeaders, ...extra },
      content: { 'application/json': { schema: error } },
    };
  }
  return {
    summary: op.summary,
    description: op.description,
    request: {
      ...(op.query && { query: op.query }),
      ...(op.params && { params: op.params }),
      ...(op.body && { body: { required: true, content: { 'application/json': { schema: op.body } } } }),
    },
    security: op.security,
    responses,
  };
}

export function buildOpenApiDocument(): Record<string, unknown> {
  const registry = new OpenAPIRegistry();
  registry.registerComponent('securitySchemes', 'bearerAuth', BEARER_SECURITY_SCHEME);
  const error = registry.register('ErrorEnvelope', S.ErrorEnvelope);
  for (const route of CATALOG_API.routes) {
    const described = route.fn === 'favorites' ? describeFavorites(route, error) : describeCatalog(route, error);
    registry.registerPath({
      method: route.method.toLowerCase() as RouteConfig['method'],
      path: route.path.replace(/\{(\w+)\+?\}/g, '{$1}'),
      operationId: route.operationId,
      ...described,
    });
  }
  const doc = new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'MCP server catalog API',
      version: '1.0.0',
      description:
        "Read-only catalog of MCP servers, plus each signed-in user's favorites. Every JSON response uses `{ success, data, meta }` / `{ success: false, error }`, except `/v0.1/servers`, the icon and this document. Anonymous callers: 30 requests/s, burst 60, per IP; a valid bearer token (optional outside /favorites, never a 401 there) raises the limit to 100 requests/s, burst 200, per user. Only /favorites requires the bearer. Unknown query parameters are ignored; a single-valued parameter given twice is 400.",
    },
    servers: [{ url: '/' }],
  });
  return doc as unknown as Record<string, unknown>;
}
