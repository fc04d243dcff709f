import { serveStateless } from '../../shared/mcp/http';
import type { JsonRpcBody } from '../../shared/mcp/json-rpc';
import type { HttpEvent, HttpResult } from '../../shared/http/types';
import { createCatalogMcpServer } from './server';
import type { CatalogToolContext } from './tools';

/**
 * The part of `/api/mcp` that needs the MCP SDK: the transport, the server and the four tools. In
 * AWS it is a file of its own beside the catalog function's `index.js` (`mcp-endpoint.js`,
 * lib/catalog-api.ts), required by the first MCP request of an instance (`api.ts`): the SDK and its
 * JSON Schema validator stay out of the JSON API's bundle (the 1 MB budget) and its cold start.
 * From source (tests, the local stack) the same require finds this file.
 */
export { unsupportedProtocolVersion } from '../../shared/mcp/http';

export function serveCatalogMcp(event: HttpEvent, body: JsonRpcBody, maxBytes: number, ctx: CatalogToolContext): Promise<HttpResult> {
  return serveStateless(event, body, maxBytes, () => createCatalogMcpServer(ctx));
}
