import type { ApiTable } from '../shared/http/route-table';

/**
 * `/mcp`. In AWS the function sits behind a function URL (every verb reaches it) and CloudFront's
 * `/mcp` behaviour; locally every verb reaches it through the catch-all. Only POST is a route:
 * the pipeline answers GET and DELETE 405 (no server-initiated stream, no session to end).
 */
export const MCP_API: ApiTable = {
  catchAllFn: 'mcp',
  prefix: '/mcp',
  routes: [{ method: 'POST', path: '/mcp', fn: 'mcp', operationId: 'mcpPost' }],
};
