import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { TOOLS, TOOLS_BY_NAME, type ToolContext } from './tools';

/**
 * One MCP server per request (stateless Streamable HTTP: every POST stands alone, so any Lambda
 * instance can answer any call). The SDK's low-level `Server` is used rather than `McpServer`:
 * `McpServer.registerTool` validates arguments itself and answers a failure as plain text without
 * an error code, and its `tools/list` cannot carry an output schema that also admits the
 * `{ error }` of a failed call. Here the tools validate their own arguments (tools.ts), so a bad
 * argument is always the `invalid_argument` tool error of spec 3, never a protocol error.
 */
export const SERVER_INFO = { name: 'memory', title: 'Markdown memory', version: '1.0.0' };

export const INSTRUCTIONS = [
  'A markdown memory shared by every MCP client of this account: notes written here are read back by other agents and sessions.',
  'Notes are addressed by POSIX path ending in .md (e.g. "projects/acme/decisions.md"), never by title.',
  'Find notes with memory__search (one literal keyword) or memory__list (a folder tree), then memory__read them by path.',
  'Save with memory__write (whole note) or memory__edit (append, replace, or str_replace part of a note). Deletes are soft.',
  'A bare path is the default memory; "@<vault>/<path>" addresses a named vault. Never store credentials: they are refused.',
].join(' ');

/** `tools/list` is the same for every caller and request: built once per instance, when first asked for. */
let toolListCache: Tool[] | undefined;

export function toolList(): Tool[] {
  toolListCache ??= TOOLS.map((t) => t.definition);
  return toolListCache;
}

export function createMcpServer(ctx: ToolContext): Server {
  const server = new Server(SERVER_INFO, { capabilities: { tools: { listChanged: false } }, instructions: INSTRUCTIONS });
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: toolList() }));
  server.setRequestHandler(CallToolRequestSchema, (request) => {
    const tool = TOOLS_BY_NAME.get(request.params.name);
    // An unknown tool is a protocol error (the client asked for something tools/list never offered).
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `unknown tool "${request.params.name}"; the tools are ${TOOLS.map((t) => t.name).join(', ')}`);
    return tool.call(request.params.arguments, ctx);
  });
  return server;
}
