import type { AllowList, CatalogStore, SearchIndex } from '../../catalog-core';
import type { CursorCodec } from '../../shared/cursor';
import type { OriginSecretGetter } from '../../shared/http/origin-guard';
import { createPipeline, type ApiPolicy, type Bucket, type RequestContext } from '../../shared/http/pipeline';
import type { HttpEvent, HttpResult } from '../../shared/http/types';
import { logger } from '../../shared/logger';
import { jsonRpcBody, mcpProblem } from '../../shared/mcp/json-rpc';
import type { RateLimiter } from '../../shared/rate-limit/rate-limiter';
import type { CatalogMcpConfig } from './config';
import { CATALOG_MCP_API, CATALOG_MCP_PATH } from './routes';

/** The SDK's part, loaded by the first MCP request (see mcp-endpoint.ts): a computed specifier, so esbuild leaves it out of the bundle. */
type EndpointModule = typeof import('./mcp-endpoint');
let endpointModule: EndpointModule | undefined;
const endpoint = (): EndpointModule => (endpointModule ??= require(['.', 'mcp-endpoint'].join('/')) as EndpointModule);

/**
 * What `/api/mcp` needs: the catalog function's own store, index, cursor keys, limiter and tiers
 * (`lambdas/catalog/api.ts` hands them over), so the endpoint reads the same catalog under the
 * same limits as the JSON API.
 */
export interface CatalogMcpDeps {
  config: CatalogMcpConfig;
  store: Pick<CatalogStore, 'get'>;
  index: Pick<SearchIndex, 'search' | 'list' | 'registryPage'>;
  cursors: CursorCodec;
  /** `SITE_URL_TEMPLATE`: each server's page on the site. */
  siteUrlTemplate?: string;
  /** The organisation's allow-list (`orgOnly`, and each hit's `allowedInOrg`); none: no organisation. */
  allowList?: { current(): Promise<AllowList | undefined> };
  limiter: RateLimiter;
  /** The catalog's rate-limit tiers: per client IP, or per user with a valid bearer token (`lambdas/catalog/callers.ts`). */
  tiers: { resolve(event: HttpEvent): Promise<Bucket> };
  /** CloudFront's origin header secret (AWS). */
  originSecret?: OriginSecretGetter;
}

const LOG_REQUESTS = logger.getLevelName() !== 'SILENT';
const ALLOW = 'POST';
const ALLOWED_HEADERS = 'Authorization, Content-Type, Accept, MCP-Protocol-Version, Mcp-Session-Id, Last-Event-ID';
/** Open CORS, as on the JSON API: the catalog is public, and a bearer only raises the limit. */
const CORS = { 'access-control-allow-origin': '*', 'access-control-expose-headers': 'Retry-After, Mcp-Session-Id' };

async function serve({ event, deps, requestId }: RequestContext<CatalogMcpDeps>): Promise<HttpResult> {
  const max = deps.config.maxBodyBytes;
  const body = jsonRpcBody(event, max);
  const result = await endpoint().serveCatalogMcp(event, body, max, {
    store: deps.store,
    index: deps.index,
    cursors: deps.cursors,
    ...(deps.siteUrlTemplate !== undefined && { siteUrlTemplate: deps.siteUrlTemplate }),
    ...(deps.allowList && { allowList: deps.allowList }),
    requestId,
  });
  if (LOG_REQUESTS && body.raw !== undefined && !body.protoKey)
    logger.info('catalog mcp request', { requestId, methods: body.methods, status: result.statusCode });
  return result;
}

/**
 * `/api/mcp` on the shared pipeline. Anonymous: no token is needed, and a bearer token is read only
 * by the tier resolver, which raises a valid one to the per-user tier and takes a bad one as
 * anonymous (never a 401). Each JSON-RPC request of a POST takes one token from the caller's
 * catalog bucket (the JSON API's, so a caller's reads over both share one limit), decided before
 * the call runs: a batch of searches is work in proportion to its size. Then the protocol version,
 * the stateless transport, and a fresh server with the four tools.
 */
export const CATALOG_MCP_POLICY: ApiPolicy<CatalogMcpDeps> = {
  name: 'catalog-mcp',
  fn: 'catalog',
  routes: CATALOG_MCP_API.routes,
  operations: { catalogMcp: serve },
  limit: {
    limiter: (deps) => deps.limiter,
    bucket: async ({ event, deps }) => ({ ...(await deps.tiers.resolve(event)), cost: Math.max(1, jsonRpcBody(event, deps.config.maxBodyBytes).count) }),
    timing: 'first',
    headers: () => ({}),
  },
  screen: (event, resolution) => (resolution.kind === 'route' ? endpoint().unsupportedProtocolVersion(event) : undefined),
  preflight: () => ({
    statusCode: 204,
    headers: { 'access-control-allow-methods': `${ALLOW}, OPTIONS`, 'access-control-allow-headers': ALLOWED_HEADERS, 'access-control-max-age': '86400' },
    body: '',
  }),
  problem: (problem) => mcpProblem(problem, CATALOG_MCP_PATH, ALLOW),
  error: () => undefined,
  headers: () => CORS,
  originSecret: (deps) => deps.originSecret,
};

export const handleCatalogMcpRequest = createPipeline(CATALOG_MCP_POLICY);
