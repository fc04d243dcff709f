import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import type { Problem } from '../http/pipeline';
import { header, type HttpEvent, type HttpResult } from '../http/types';

/**
 * The HTTP side of a stateless MCP endpoint, shared by every one the deployment serves: the request
 * body read once as JSON-RPC (what the limiter counts, what the transport serves), the SDK's
 * Streamable HTTP transport with JSON responses around a fresh server per request, and HTTP-level
 * failures in the JSON-RPC error shape. Each endpoint keeps its own policy (who may call, limits,
 * CORS) on the shared request pipeline.
 */

/** An HTTP-level failure, in the JSON-RPC error shape the SDK's transport uses for its own (400, 406, 415). */
export function httpError(status: number, message: string, headers: Record<string, string> = {}, data?: Record<string, unknown>): HttpResult {
  return {
    statusCode: status,
    headers: { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers },
    body: JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message, ...(data && { data }) }, id: null }),
  };
}

export interface JsonRpcBody {
  /** The body as text, or `undefined` when it is over the cap. */
  raw?: string;
  parsed: unknown;
  /** A key named `__proto__` somewhere in it (see `jsonRpcBody`). */
  protoKey?: boolean;
  /** JSON-RPC requests in the message or batch (notifications and responses cost nothing on their own). */
  count: number;
  /** The methods called, `tools/call:<name>` for tool calls (for the access log). */
  methods: string[];
}

/** The request's JSON-RPC message, read once per event (the limiter counts it, the operation serves it). */
const bodies = new WeakMap<HttpEvent, JsonRpcBody>();

export function jsonRpcBody(event: HttpEvent, maxBytes: number): JsonRpcBody {
  let m = bodies.get(event);
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
  bodies.set(event, m);
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

/** The 400 of an `MCP-Protocol-Version` header the SDK does not speak; undefined when it is absent or supported. */
export function unsupportedProtocolVersion(event: HttpEvent): HttpResult | undefined {
  const version = header(event, 'mcp-protocol-version');
  if (version === undefined || SUPPORTED_PROTOCOL_VERSIONS.includes(version)) return undefined;
  return httpError(400, `Bad Request: unsupported MCP-Protocol-Version "${version}" (supported: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')})`);
}

/**
 * A POST served by the SDK's stateless Streamable HTTP transport (JSON responses, no session) and
 * a fresh server from `makeServer`, closed when the answer is read. A body over `maxBytes` is 413
 * and one with a `__proto__` key 400, before any server is made.
 */
export async function serveStateless(event: HttpEvent, body: JsonRpcBody, maxBytes: number, makeServer: () => Server): Promise<HttpResult> {
  if (body.raw === undefined) return httpError(413, `Payload Too Large: at most ${maxBytes} bytes`);
  if (body.protoKey) {
    return {
      ...httpError(400, 'Invalid Request: keys named __proto__ are not accepted'),
      body: JSON.stringify({ jsonrpc: '2.0', error: { code: -32600, message: 'Invalid Request: keys named __proto__ are not accepted' }, id: null }),
    };
  }
  const server = makeServer();
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  try {
    await server.connect(transport);
    const url = `https://${event.requestContext.domainName || 'localhost'}${event.rawPath}`;
    const headers = new Headers();
    for (const [k, v] of Object.entries(event.headers ?? {})) if (v !== undefined) headers.set(k, v);
    const request = new Request(url, { method: 'POST', headers, body: body.raw });
    const response = await transport.handleRequest(request, body.parsed === undefined ? {} : { parsedBody: body.parsed });
    const out: Record<string, string> = {};
    response.headers.forEach((v, k) => {
      out[k] = v;
    });
    const text = response.body === null ? '' : await response.text();
    return { statusCode: response.status, headers: { ...out, 'cache-control': 'no-store' }, body: text };
  } finally {
    await server.close();
  }
}

/** The pipeline's problems as an MCP endpoint answers them; `path` is where the endpoint is served (`/mcp`). */
export function mcpProblem(problem: Problem, path: string, allow = 'POST'): HttpResult {
  switch (problem.kind) {
    case 'not_found':
      return httpError(404, `Not Found: the MCP endpoint is ${path}`);
    case 'method_not_allowed':
      return httpError(405, `Method not allowed: ${problem.method}; this MCP endpoint is stateless and answers POST only`, { allow });
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
