import type { ApiTable } from '../shared/http/route-table';

/**
 * `/mcp` for the local server. In AWS the function sits behind a function URL (every verb reaches
 * it) and CloudFront's `/mcp` behaviour; locally the same verbs reach it through this table, and
 * OPTIONS through the catch-all. GET and DELETE exist only to be answered 405 by the function.
 */
export const MCP_API: ApiTable = {
  catchAllFn: 'mcp',
  prefix: '/mcp',
  routes: [
    { method: 'POST', path: '/mcp', fn: 'mcp', operationId: 'mcpPost' },
    { method: 'GET', path: '/mcp', fn: 'mcp', operationId: 'mcpGet' },
    { method: 'DELETE', path: '/mcp', fn: 'mcp', operationId: 'mcpDelete' },
  ],
};
