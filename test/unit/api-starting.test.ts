import { createCatalogHandler } from '../../lambdas/catalog/api';
import { createFavoritesHandler } from '../../lambdas/catalog/favorites/api';
import { createMcpHandler } from '../../lambdas/mcp/api';
import { createMemoryApiHandler } from '../../lambdas/memory-api/api';
import { createOAuthHandler } from '../../lambdas/oauth/api';
import type { HttpEvent, HttpResult, LambdaContext } from '../../lambdas/shared/http/types';

/**
 * While a function's dependencies cannot be built (a secret or table not reachable yet, the local
 * stack's backends still starting), every API answers 503 with Retry-After in its own envelope, so
 * clients retry instead of treating it as a server bug; the next request tries the build again.
 */
const event = (method: string, path: string, routeKey = `${method} ${path}`): HttpEvent =>
  ({
    version: '2.0',
    routeKey,
    rawPath: path,
    rawQueryString: '',
    headers: { 'content-type': 'application/json' },
    body: method === 'POST' ? '{}' : undefined,
    isBase64Encoded: false,
    requestContext: { http: { method, path, sourceIp: '203.0.113.9' }, requestId: 'r-starting' },
  }) as unknown as HttpEvent;

const context = { awsRequestId: 'aws-1' } as LambdaContext;
const failing = async (): Promise<never> => {
  throw new Error('backend not up yet');
};

const cases: Array<[string, (e: HttpEvent, c: LambdaContext) => Promise<HttpResult>, HttpEvent, (body: unknown) => void]> = [
  ['catalog', createCatalogHandler(failing), event('GET', '/api/mcps'), (b) => expect(b).toMatchObject({ success: false, error: { code: 'INTERNAL_ERROR' } })],
  [
    'favorites',
    createFavoritesHandler(failing),
    event('GET', '/api/favorites'),
    (b) => expect(b).toMatchObject({ success: false, error: { code: 'INTERNAL_ERROR' } }),
  ],
  ['/v1', createMemoryApiHandler(failing), event('GET', '/v1/memories'), (b) => expect(b).toMatchObject({ error: { code: 'UPSTREAM_UNAVAILABLE' } })],
  [
    'OAuth',
    createOAuthHandler(failing),
    event('GET', '/.well-known/oauth-authorization-server'),
    (b) => expect(b).toMatchObject({ error: 'temporarily_unavailable' }),
  ],
  ['MCP', createMcpHandler(failing), event('POST', '/mcp'), (b) => expect(b).toMatchObject({ error: { data: { code: 'unavailable' } } })],
  // The catalog function words it for the endpoint the request was for: the catalog over MCP in the JSON-RPC shape.
  [
    'catalog MCP',
    createCatalogHandler(failing),
    event('POST', '/api/mcp'),
    (b) => expect(b).toMatchObject({ jsonrpc: '2.0', error: { code: -32000, data: { code: 'unavailable' } }, id: null }),
  ],
];

it.each(cases)('%s answers 503 with Retry-After in its own envelope while it cannot start', async (_name, handler, e, envelope) => {
  const res = await handler(e, context);
  expect(res.statusCode).toBe(503);
  expect(res.headers['retry-after']).toBe('1');
  envelope(JSON.parse(res.body as string));
});
