import { randomUUID } from 'node:crypto';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import { wwwAuthenticate } from '../identity/protected-resource';
import { AuthError, type Principal } from '../identity/principal';
import type { TokenVerifier } from '../identity/verifier';
import type { MemoryService } from '../memory/service';
import { header, type HttpEvent, type HttpResult, type LambdaContext } from '../shared/http/types';
import { logger } from '../shared/logger';
import { failOpen } from '../shared/rate-limit/fail-open';
import type { RateLimiter, RatePolicy } from '../shared/rate-limit/rate-limiter';
import { normaliseOrigin, type McpConfig } from './config';
import { createMcpServer } from './server';

/** What the MCP function needs; built by `wiring.ts` in AWS and by the local stack locally. */
export interface McpDeps {
  config: McpConfig;
  /** This deployment's audience (`<PUBLIC_URL>/mcp`): the 401 challenge names its metadata. */
  audience: string;
  verifier: TokenVerifier;
  memory: MemoryService;
  limiter: RateLimiter;
}

const LOG_REQUESTS = logger.getLevelName() !== 'SILENT';
const ALLOW = 'POST';
const ALLOWED_HEADERS = 'Authorization, Content-Type, Accept, MCP-Protocol-Version, Mcp-Session-Id, Last-Event-ID';
const EXPOSED_HEADERS = 'WWW-Authenticate, Mcp-Session-Id, Retry-After';

/** The per-user policy: `ratePerMinute` calls in a burst, refilled at the same rate per minute. */
export function mcpRatePolicy(config: McpConfig): RatePolicy {
  return { name: 'mcp', ratePerSecond: config.ratePerMinute / 60, burst: config.ratePerMinute };
}

/** An HTTP-level failure, in the JSON-RPC error shape the SDK's transport uses for its own (400, 406, 415). */
function httpError(status: number, message: string, headers: Record<string, string> = {}, data?: Record<string, unknown>): HttpResult {
  return {
    statusCode: status,
    headers: { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers },
    body: JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message, ...(data && { data }) }, id: null }),
  };
}

function originAllowed(origin: string, config: McpConfig): boolean {
  try {
    return config.allowedOrigins.includes(normaliseOrigin(origin));
  } catch {
    return false; // `null` (sandboxed frames, file://) and anything malformed
  }
}

function corsHeaders(origin: string | undefined): Record<string, string> {
  if (origin === undefined) return {};
  return { 'access-control-allow-origin': origin, 'access-control-expose-headers': EXPOSED_HEADERS, vary: 'Origin' };
}

function bodyText(event: HttpEvent): string {
  if (event.body === undefined) return '';
  return event.isBase64Encoded ? Buffer.from(event.body, 'base64').toString('utf8') : event.body;
}

/** JSON-RPC requests in a message or batch (notifications and responses cost nothing on their own). */
function requestsIn(parsed: unknown): { count: number; methods: string[] } {
  const messages = Array.isArray(parsed) ? parsed : [parsed];
  const methods: string[] = [];
  let count = 0;
  for (const m of messages) {
    if (!m || typeof m !== 'object') continue;
    const msg = m as { method?: unknown; id?: unknown; params?: { name?: unknown } };
    if (typeof msg.method !== 'string') continue;
    methods.push(msg.method === 'tools/call' && typeof msg.params?.name === 'string' ? `tools/call:${msg.params.name}` : msg.method);
    if (msg.id !== undefined) count++;
  }
  return { count, methods };
}

/**
 * `POST /mcp` (Streamable HTTP, stateless, JSON responses). In order: CORS preflight and Origin
 * (a browser origin must be allowed; native clients send none), the verb (GET and DELETE are 405:
 * no server-initiated stream, no session to end), the `MCP-Protocol-Version` header, the bearer
 * token (401 with the challenge that leads to the OAuth metadata, 503 if it cannot be checked),
 * the per-user rate limit (429), then the SDK transport with a fresh server.
 */
export async function handleMcpRequest(event: HttpEvent, deps: McpDeps, requestId: string): Promise<HttpResult> {
  const method = event.requestContext.http.method.toUpperCase();
  const origin = header(event, 'origin');
  if (origin !== undefined && !originAllowed(origin, deps.config)) {
    return httpError(403, 'Forbidden: this Origin may not call the MCP endpoint');
  }
  const cors = corsHeaders(origin);
  if (method === 'OPTIONS') {
    return {
      statusCode: 204,
      headers: {
        ...cors,
        'access-control-allow-methods': `${ALLOW}, OPTIONS`,
        'access-control-allow-headers': ALLOWED_HEADERS,
        'access-control-max-age': '86400',
      },
      body: '',
    };
  }
  if (method !== 'POST') {
    return httpError(405, `Method not allowed: ${method}; this MCP endpoint is stateless and answers POST only`, { ...cors, allow: ALLOW });
  }
  const version = header(event, 'mcp-protocol-version');
  if (version !== undefined && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) {
    return httpError(400, `Bad Request: unsupported MCP-Protocol-Version "${version}" (supported: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')})`, cors);
  }

  let principal: Principal;
  try {
    principal = await deps.verifier.verify(header(event, 'authorization'));
  } catch (err) {
    if (err instanceof AuthError && err.kind === 'unauthenticated') {
      // RFC 6750 §3.1: no error code when no bearer token was presented (no header, or another
      // scheme such as Basic); invalid_token only for a bearer token that is bad.
      const presented = /^\s*bearer(\s|$)/i.test(header(event, 'authorization') ?? '');
      const challenge = wwwAuthenticate({ audience: deps.audience }, presented ? { error: 'invalid_token' } : {});
      return httpError(401, 'Unauthorized: a valid bearer token for this MCP endpoint is required', { ...cors, 'www-authenticate': challenge });
    }
    logger.warn('token verification unavailable', { requestId, err: err instanceof Error ? err.message : String(err) });
    return httpError(503, 'Service Unavailable: the token could not be verified; retry shortly', { ...cors, 'retry-after': '1' }, { code: 'unavailable' });
  }

  const raw = bodyText(event);
  if (Buffer.byteLength(raw, 'utf8') > deps.config.maxBodyBytes) {
    return httpError(413, `Payload Too Large: at most ${deps.config.maxBodyBytes} bytes`, cors);
  }
  let parsed: unknown;
  try {
    parsed = raw === '' ? undefined : JSON.parse(raw);
  } catch {
    parsed = undefined; // the transport answers the JSON-RPC parse error
  }
  const { count, methods } = requestsIn(parsed);

  const limited = await rateLimit(deps, principal, Math.max(1, count), requestId);
  if (limited !== undefined) {
    return httpError(429, 'Too Many Requests: retry after the delay in Retry-After', { ...cors, 'retry-after': String(limited) }, { code: 'rate_limited', retryAfterSeconds: limited });
  }

  const server = createMcpServer({
    service: deps.memory,
    principal,
    caller: { account: principal.sub, ...(principal.memories !== undefined && { grants: principal.memories }) },
    config: deps.config,
    requestId,
  });
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  try {
    await server.connect(transport);
    const url = `https://${event.requestContext.domainName || 'localhost'}${event.rawPath}`;
    const headers = new Headers();
    for (const [k, v] of Object.entries(event.headers ?? {})) if (v !== undefined) headers.set(k, v);
    const request = new Request(url, { method: 'POST', headers, body: raw });
    const response = await transport.handleRequest(request, parsed === undefined ? {} : { parsedBody: parsed });
    const out: Record<string, string> = {};
    response.headers.forEach((v, k) => {
      out[k] = v;
    });
    const text = response.body === null ? '' : await response.text();
    if (LOG_REQUESTS) logger.info('mcp request', { requestId, sub: principal.sub, methods, status: response.status });
    return { statusCode: response.status, headers: { ...out, 'cache-control': 'no-store', ...cors }, body: text };
  } finally {
    await server.close();
  }
}

/** Takes `n` calls from the user's bucket; the seconds to wait when denied. A failing table opens the gate (logged). */
async function rateLimit(deps: McpDeps, principal: Principal, n: number, requestId: string): Promise<number | undefined> {
  const policy = mcpRatePolicy(deps.config);
  return failOpen(requestId, async () => {
    for (let i = 0; i < n; i++) {
      const d = await deps.limiter.consume(`user:${principal.sub}`, policy);
      if (!d.allowed) return d.retryAfterSeconds;
    }
    return undefined;
  });
}

/**
 * The function's entry: a function URL (or API Gateway v2) event in, a result out. `getDeps` builds
 * the dependencies once per instance (and keeps them fresh, see `mcpDepsSource`); a failed
 * initialisation is a 503 the client retries, and the next request tries again.
 */
export function createMcpHandler(getDeps: () => Promise<McpDeps>) {
  return async (event: HttpEvent, context?: Partial<LambdaContext>): Promise<HttpResult> => {
    const requestId = event.requestContext?.requestId ?? context?.awsRequestId ?? randomUUID();
    let deps: McpDeps;
    try {
      deps = await getDeps();
    } catch (err) {
      logger.error('mcp initialisation failed', { requestId, err: err instanceof Error ? err.message : String(err) });
      return httpError(503, 'Service Unavailable: starting; retry shortly', { 'retry-after': '1' }, { code: 'unavailable' });
    }
    try {
      return await handleMcpRequest(event, deps, requestId);
    } catch (err) {
      logger.error('mcp request failed', { requestId, err: err instanceof Error ? { name: err.name, message: err.message, stack: err.stack } : String(err) });
      return httpError(500, 'Internal error; retry later');
    }
  };
}
