import { createMcpHandler } from './api';
import { mcpDepsSource } from './wiring';

/** The MCP Lambda (AWS): `POST /mcp` through its function URL. */
export const handler = createMcpHandler(mcpDepsSource());
