import { createMcpHandler, type McpDeps } from './http';
import { createMcpDeps } from './wiring';

/** The MCP Lambda (AWS): `POST /mcp` through its function URL. */
let deps: Promise<McpDeps> | undefined;

export const handler = createMcpHandler(() => {
  deps ??= createMcpDeps().catch((err: unknown) => {
    deps = undefined; // a failed init (e.g. Secrets Manager throttled) is retried by the next request
    throw err;
  });
  return deps;
});
