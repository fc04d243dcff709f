import { AuthError, refusalMessage, type Principal } from '../identity/principal';
import { wwwAuthenticate } from '../identity/protected-resource';
import type { TokenVerifier } from '../identity/verifier';
import type { MemoryService } from '../memory';
import { createPipeline, lambdaEntry, withPrincipal, type ApiPolicy, type RequestContext } from '../shared/http/pipeline';
import { header, type HttpResult } from '../shared/http/types';
import { httpError, jsonRpcBody, mcpProblem, serveStateless, unsupportedProtocolVersion } from '../shared/mcp/http';
import { logger } from '../shared/logger';
import type { RateLimiter, RatePolicy } from '../shared/rate-limit/rate-limiter';
import { normaliseOrigin, type McpConfig } from './config';
import { MCP_API } from './routes';
import { createMcpServer } from './server';
import type { IdempotencyStore } from '../shared/idempotency/store';
import type { OriginSecretGetter } from '../shared/http/origin-guard';

/** What the MCP function needs; built by `wiring.ts` in AWS and by the local stack locally. */
export interface McpDeps {
  config: McpConfig;
  /** This deployment's audience (`<PUBLIC_URL>/mcp`): the 401 challenge names its metadata. */
  audience: string;
  verifier: TokenVerifier;
  memory: MemoryService;
  limiter: RateLimiter;
  /** `idempotencyKey` of the write tools (the shared rate-limit table, keys `idem:…`). */
  idempotency?: IdempotencyStore;
  /** CloudFront's origin header secret (AWS): the function URL refuses a request without it. Absent locally. */
  originSecret?: OriginSecretGetter;
}

const LOG_REQUESTS = logger.getLevelName() !== 'SILENT';
const ALLOW = 'POST';
const ALLOWED_HEADERS = 'Authorization, Content-Type, Accept, MCP-Protocol-Version, Mcp-Session-Id, Last-Event-ID';
const EXPOSED_HEADERS = 'WWW-Authenticate, Mcp-Session-Id, Retry-After';

/** The per-user policy: `ratePerMinute` calls in a burst, refilled at the same rate per minute. */
export function mcpRatePolicy(config: McpConfig): RatePolicy {
  return { name: 'mcp', ratePerSecond: config.ratePerMinute / 60, burst: config.ratePerMinute };
}

/** DECISIONS: the deployment's own origin (that of its audience, `<PUBLIC_URL>/mcp`) and the allow-list. */
function originAllowed(origin: string, deps: Pick<McpDeps, 'config' | 'audience'>): boolean {
  try {
    const o = normaliseOrigin(origin);
    return o === new URL(deps.audience).origin.toLowerCase() || deps.config.allowedOrigins.includes(o);
  } catch {
    return false; // `null` (sandboxed frames, file://) and anything malformed
  }
}

function corsHeaders(origin: string | undefined): Record<string, string> {
  if (origin === undefined) return {};
  return { 'access-control-allow-origin': origin, 'access-control-expose-headers': EXPOSED_HEADERS, vary: 'Origin' };
}

/** `POST /mcp`: the SDK's stateless Streamable HTTP transport (JSON responses) with a fresh server. */
async function serve(ctx: RequestContext<McpDeps, Principal> & { principal: Principal }): Promise<HttpResult> {
  const { event, deps, principal, requestId } = ctx;
  const body = jsonRpcBody(event, deps.config.maxBodyBytes);
  const result = await serveStateless(event, body, deps.config.maxBodyBytes, () =>
    createMcpServer({
      service: deps.memory,
      principal,
      caller: {
        account: principal.sub,
        ...(principal.memories !== undefined && { grants: principal.memories }),
        ...(principal.pathPrefix !== undefined && { pathPrefix: principal.pathPrefix }),
      },
      config: deps.config,
      requestId,
      idempotency: deps.idempotency,
    }),
  );
  if (LOG_REQUESTS && body.raw !== undefined && !body.protoKey) {
    logger.info('mcp request', { requestId, sub: principal.sub, methods: body.methods, status: result.statusCode });
  }
  return result;
}

/**
 * The MCP endpoint (spec 3) as a policy of the shared pipeline. In order: Origin (a browser origin
 * must be allowed; native clients send none) and CORS preflight; the verb (GET and DELETE are
 * 405: no server-initiated stream, no session to end); the `MCP-Protocol-Version` header; the
 * bearer token (401 with the challenge that leads to the OAuth metadata, 503 if it cannot be
 * checked); the per-user rate limit, one token per JSON-RPC request (429); then the transport.
 */
export const MCP_POLICY: ApiPolicy<McpDeps, Principal> = {
  name: 'mcp',
  fn: 'mcp',
  routes: MCP_API.routes,
  operations: { mcpPost: (ctx) => serve(withPrincipal(ctx)) },
  auth: { mode: 'required', verify: (deps, authorization) => deps.verifier.verify(authorization) },
  limit: {
    limiter: (deps) => deps.limiter,
    afterVerification: true,
    bucket: ({ event, deps, principal }) =>
      principal && { key: `user:${principal.sub}`, policy: mcpRatePolicy(deps.config), cost: Math.max(1, jsonRpcBody(event, deps.config.maxBodyBytes).count) },
    timing: 'first',
    headers: () => ({}),
  },
  screen: (event, resolution, deps) => {
    const origin = header(event, 'origin');
    if (origin !== undefined && !originAllowed(origin, deps)) return httpError(403, 'Forbidden: this Origin may not call the MCP endpoint');
    if (event.requestContext.http.method.toUpperCase() === 'OPTIONS') return MCP_POLICY.preflight([ALLOW], event);
    return resolution.kind === 'route' ? unsupportedProtocolVersion(event) : undefined;
  },
  preflight: () => ({
    statusCode: 204,
    headers: { 'access-control-allow-methods': `${ALLOW}, OPTIONS`, 'access-control-allow-headers': ALLOWED_HEADERS, 'access-control-max-age': '86400' },
    body: '',
  }),
  problem: (problem) => mcpProblem(problem, '/mcp', ALLOW),
  error: (err, { event, deps, requestId }) => {
    if (!(err instanceof AuthError)) return undefined;
    if (err.kind === 'unauthenticated') {
      // RFC 6750 §3.1: no error code when no bearer token was presented (no header, or another
      // scheme such as Basic); invalid_token only for a bearer token that is bad.
      const presented = /^\s*bearer(\s|$)/i.test(header(event, 'authorization') ?? '');
      const challenge = wwwAuthenticate({ audience: deps.audience }, presented ? { error: 'invalid_token' } : {});
      const why = presented ? ` (${refusalMessage(err)})` : '';
      return httpError(401, `Unauthorized: a valid bearer token for this MCP endpoint is required${why}`, { 'www-authenticate': challenge });
    }
    logger.warn('token verification unavailable', { requestId, err: err.message });
    return httpError(503, 'Service Unavailable: the token could not be verified; retry shortly', { 'retry-after': '1' }, { code: 'unavailable' });
  },
  headers: (event, deps) => {
    const origin = header(event, 'origin');
    return origin !== undefined && deps && originAllowed(origin, deps) ? corsHeaders(origin) : {};
  },
  originSecret: (deps) => deps.originSecret,
};

export const handleMcpRequest = createPipeline(MCP_POLICY);

/**
 * The function's entry: a function URL (or API Gateway v2) event in, a result out. `getDeps` builds
 * the dependencies once per instance (and keeps them fresh, see `mcpDepsSource`); a failed
 * initialisation is a 503 the client retries, and the next request tries again.
 */
export function createMcpHandler(getDeps: () => Promise<McpDeps>) {
  return lambdaEntry(MCP_POLICY, getDeps, handleMcpRequest);
}
