import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import { AuthError, refusalMessage, type Principal } from '../identity/principal';
import { wwwAuthenticate } from '../identity/protected-resource';
import type { TokenVerifier } from '../identity/verifier';
import type { MemoryService } from '../memory';
import { createPipeline, lambdaEntry, withPrincipal, type ApiPolicy, type Problem, type RequestContext } from '../shared/http/pipeline';
import { header, type HttpEvent, type HttpResult } from '../shared/http/types';
import { logger } from '../shared/logger';
import type { RateLimiter, RatePolicy } from '../shared/rate-limit/rate-limiter';
import { normaliseOrigin, type McpConfig } from './config';
import { MCP_API } from './routes';
import { createMcpServer } from '../shared/mcp/server';
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

/** An HTTP-level failure, in the JSON-RPC error shape the SDK's transport uses for its own (400, 406, 415). */
function httpError(status: number, message: string, headers: Record<string, string> = {}, data?: Record<string, unknown>): HttpResult {
  return {
    statusCode: status,
    headers: { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers },
    body: JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message, ...(data && { data }) }, id: null }),
  };
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

interface Message {
  /** The body as text, or `undefined` when it is over the cap. */
  raw?: string;
  parsed: unknown;
  /** A key named `__proto__` somewhere in it (see `messageOf`). */
  protoKey?: boolean;
  /** JSON-RPC requests in the message or batch (notifications and responses cost nothing on their own). */
  count: number;
  methods: string[];
}

/** The request's JSON-RPC message, read once per event (the limiter counts it, the operation serves it). */
const messages = new WeakMap<HttpEvent, Message>();

function messageOf(event: HttpEvent, maxBytes: number): Message {
  let m = messages.get(event);
  if (m) return m;
  const raw = event.body === undefined ? '' : event.isBase64Encoded ? Buffer.from(event.body, 'base64').toString('utf8') : event.body;
  if (Buffer.byteLength(raw, 'utf8') > maxBytes) {
    m = { parsed: undefined, count: 0, methods: [] };
  } else {
    let parsed: unknown;
    let protoKey = false;
    try {
      // JSON.parse keeps `__proto__` as an own key, but code that copies objects key by key (schema
      // validators among them) turns it into a prototype: `params.__proto__.name` would then read as
      // `params.name`, a tool call the log never saw. Such messages are refused whole.
      parsed =
        raw === ''
          ? undefined
          : JSON.parse(raw, (key, value: unknown) => {
              if (key === '__proto__') protoKey = true;
              return value;
            });
    } catch {
      parsed = undefined; // the transport answers the JSON-RPC parse error
    }
    m = protoKey ? { raw, parsed: undefined, protoKey, count: 1, methods: [] } : { raw, parsed, ...requestsIn(parsed) };
  }
  messages.set(event, m);
  return m;
}

function requestsIn(parsed: unknown): { count: number; methods: string[] } {
  const list = Array.isArray(parsed) ? parsed : [parsed];
  const methods: string[] = [];
  let count = 0;
  for (const m of list) {
    if (!m || typeof m !== 'object') continue;
    const msg = m as { method?: unknown; id?: unknown; params?: { name?: unknown } };
    if (typeof msg.method !== 'string') continue;
    methods.push(msg.method === 'tools/call' && typeof msg.params?.name === 'string' ? `tools/call:${msg.params.name}` : msg.method);
    if (msg.id !== undefined) count++;
  }
  return { count, methods };
}

/** `POST /mcp`: the SDK's stateless Streamable HTTP transport (JSON responses) with a fresh server. */
async function serve(ctx: RequestContext<McpDeps, Principal> & { principal: Principal }): Promise<HttpResult> {
  const { event, deps, principal, requestId } = ctx;
  const message = messageOf(event, deps.config.maxBodyBytes);
  if (message.raw === undefined) return httpError(413, `Payload Too Large: at most ${deps.config.maxBodyBytes} bytes`);
  if (message.protoKey) {
    return {
      ...httpError(400, 'Invalid Request: keys named __proto__ are not accepted'),
      body: JSON.stringify({ jsonrpc: '2.0', error: { code: -32600, message: 'Invalid Request: keys named __proto__ are not accepted' }, id: null }),
    };
  }
  const server = createMcpServer({
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
  });
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  try {
    await server.connect(transport);
    const url = `https://${event.requestContext.domainName || 'localhost'}${event.rawPath}`;
    const headers = new Headers();
    for (const [k, v] of Object.entries(event.headers ?? {})) if (v !== undefined) headers.set(k, v);
    const request = new Request(url, { method: 'POST', headers, body: message.raw });
    const response = await transport.handleRequest(request, message.parsed === undefined ? {} : { parsedBody: message.parsed });
    const out: Record<string, string> = {};
    response.headers.forEach((v, k) => {
      out[k] = v;
    });
    const text = response.body === null ? '' : await response.text();
    if (LOG_REQUESTS) logger.info('mcp request', { requestId, sub: principal.sub, methods: message.methods, status: response.status });
    return { statusCode: response.status, headers: { ...out, 'cache-control': 'no-store' }, body: text };
  } finally {
    await server.close();
  }
}

function mcpProblem(problem: Problem): HttpResult {
  switch (problem.kind) {
    case 'not_found':
      return httpError(404, 'Not Found: the MCP endpoint is /mcp');
    case 'method_not_allowed':
      return httpError(405, `Method not allowed: ${problem.method}; this MCP endpoint is stateless and answers POST only`, { allow: ALLOW });
    case 'rate_limited':
      return httpError(
        429,
        'Too Many Requests: retry after the delay in Retry-After',
        { 'retry-after': String(problem.retryAfterSeconds) },
        {
          code: 'rate_limited',
          retryAfterSeconds: problem.retryAfterSeconds,
        },
      );
    case 'internal':
      return httpError(500, 'Internal error; retry later');
    case 'starting':
      return httpError(503, 'Service Unavailable: starting; retry shortly', { 'retry-after': '1' }, { code: 'unavailable' });
    case 'too_large':
      return httpError(413, `Payload Too Large: the request body is larger than ${problem.maxBytes} bytes`);
    case 'forbidden_origin':
      return httpError(403, 'Forbidden: this origin answers requests through the public URL only');
  }
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
      principal && { key: `user:${principal.sub}`, policy: mcpRatePolicy(deps.config), cost: Math.max(1, messageOf(event, deps.config.maxBodyBytes).count) },
    timing: 'first',
    headers: () => ({}),
  },
  screen: (event, resolution, deps) => {
    const origin = header(event, 'origin');
    if (origin !== undefined && !originAllowed(origin, deps)) return httpError(403, 'Forbidden: this Origin may not call the MCP endpoint');
    if (event.requestContext.http.method.toUpperCase() === 'OPTIONS') return MCP_POLICY.preflight([ALLOW], event);
    const version = header(event, 'mcp-protocol-version');
    if (resolution.kind === 'route' && version !== undefined && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) {
      return httpError(400, `Bad Request: unsupported MCP-Protocol-Version "${version}" (supported: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')})`);
    }
    return undefined;
  },
  preflight: () => ({
    statusCode: 204,
    headers: { 'access-control-allow-methods': `${ALLOW}, OPTIONS`, 'access-control-allow-headers': ALLOWED_HEADERS, 'access-control-max-age': '86400' },
    body: '',
  }),
  problem: mcpProblem,
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
