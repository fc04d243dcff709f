import { CATALOG_POLICY } from '../../lambdas/catalog/api';
import { CATALOG_API } from '../../lambdas/catalog/routes';
import { MCP_POLICY } from '../../lambdas/mcp/api';
import { MCP_API } from '../../lambdas/mcp/routes';
import { MEMORY_POLICY } from '../../lambdas/memory-api/api';
import { MEMORY_API } from '../../lambdas/memory-api/routes';
import { oauthPolicy } from '../../lambdas/oauth/api';
import { OAUTH_API } from '../../lambdas/oauth/routes';
import type { HttpResult } from '../../lambdas/shared/http/types';
import { createLocalServer, listen, type LambdaLike, type RunningServer } from '../../bin/local-stack/server';

// A body over the payload cap never reaches a function: the server answers for the API, in its envelope.
let server: RunningServer;
const reached: string[] = [];
const fn =
  (name: string): LambdaLike =>
  async (): Promise<HttpResult> => {
    reached.push(name);
    return { statusCode: 200, headers: {}, body: '{}' };
  };

beforeAll(async () => {
  const all = (table: { routes: ReadonlyArray<{ fn: string }>; catchAllFn: string }) =>
    Object.fromEntries([table.catchAllFn, ...table.routes.map((r) => r.fn)].map((f) => [f, fn(f)]));
  server = await listen(
    createLocalServer({
      apis: [
        { table: CATALOG_API, functions: all(CATALOG_API), problem: CATALOG_POLICY.problem },
        { table: MEMORY_API, functions: all(MEMORY_API), problem: MEMORY_POLICY.problem },
        { table: MCP_API, functions: all(MCP_API), problem: MCP_POLICY.problem },
        { table: OAUTH_API, functions: all(OAUTH_API), problem: oauthPolicy().problem },
      ],
      ready: () => true,
      maxBodyBytes: 100,
    }),
    0,
  );
});
afterAll(() => server.close());

test.each([
  ['/api/favorites/abc', { success: false, error: { code: 'INVALID_QUERY', message: 'The request body is larger than 100 bytes' } }],
  ['/v1/memories', { error: { code: 'BAD_REQUEST', message: 'The request body is larger than 100 bytes' } }],
  ['/mcp', { jsonrpc: '2.0', id: null, error: { code: expect.any(Number), message: expect.stringContaining('larger than 100 bytes') } }],
  ['/oauth/token', { error: 'invalid_request', error_description: 'The request body is larger than 100 bytes' }],
])('%s: 413 in the API envelope', async (path, body) => {
  const res = await fetch(`${server.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: 'x'.repeat(101) });
  expect(res.status).toBe(413);
  expect(await res.json()).toMatchObject(body);
  expect(reached).toEqual([]);
});
