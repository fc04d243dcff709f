import type { Problem } from '../http/pipeline';
import type { HttpEvent, HttpResult } from '../http/types';

/**
 * The JSON-RPC side of a stateless MCP endpoint that needs no SDK: the request body read once (what
 * the limiter counts, what the transport serves) and HTTP-level failures in the JSON-RPC error shape.
 * The transport and the protocol-version check are `http.ts`.
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
