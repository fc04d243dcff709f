import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import { header, type HttpEvent, type HttpResult } from '../http/types';
import { httpError, type JsonRpcBody } from './json-rpc';

// The SDK-free half (the JSON-RPC body, HTTP failures) is json-rpc.ts: an endpoint whose SDK part is
// loaded late (the catalog's) imports only that one up front.
export { httpError, jsonRpcBody, mcpProblem, type JsonRpcBody } from './json-rpc';

/**
 * The HTTP side of a stateless MCP endpoint, shared by every one the deployment serves: the request
 * body read once as JSON-RPC (what the limiter counts, what the transport serves), the SDK's
 * Streamable HTTP transport with JSON responses around a fresh server per request, and HTTP-level
 * failures in the JSON-RPC error shape. Each endpoint keeps its own policy (who may call, limits,
 * CORS) on the shared request pipeline.
 */

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
