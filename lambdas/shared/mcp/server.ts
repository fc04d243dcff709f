import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  isJSONRPCRequest,
  ListToolsRequestSchema,
  McpError,
  type JSONRPCMessage,
  type RequestId,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { TOOLS, TOOLS_BY_NAME, type ToolContext } from '../../mcp/tools';

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

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The SDK checks every `tools/call` against its own schema before any handler runs, and answers an
 * `arguments` that is present but not an object (`null`, a string, an array, a number) with a
 * JSON-RPC error carrying zod's raw issue dump. Spec 3 wants bad arguments to be the tool error
 * `invalid_argument`, so such an `arguments` is set aside on its way from the transport to the SDK
 * (the request goes on without it) and handed to the tool, whose own validation reports it. A
 * missing `arguments` is left alone: the tool takes it as `{}`.
 */
class MemoryMcpServer extends Server {
  private readonly setAside = new Map<RequestId, unknown>();

  override async connect(transport: Transport): Promise<void> {
    await super.connect(transport);
    const deliver = transport.onmessage;
    transport.onmessage = (message, extra) => deliver?.(this.setAsideArguments(message), extra);
  }

  /** The arguments a call was sent with: those set aside for its request id, else the request's own. */
  argumentsOf(requestId: RequestId, fromRequest: unknown): unknown {
    if (!this.setAside.has(requestId)) return fromRequest;
    const raw = this.setAside.get(requestId);
    this.setAside.delete(requestId);
    return raw;
  }

  private setAsideArguments<T extends JSONRPCMessage>(message: T): T {
    if (!isJSONRPCRequest(message) || message.method !== 'tools/call' || !isPlainObject(message.params)) return message;
    const { arguments: args, ...params } = message.params;
    if (args === undefined || isPlainObject(args)) return message;
    this.setAside.set(message.id, args);
    return { ...message, params };
  }
}

export function createMcpServer(ctx: ToolContext): Server {
  const server = new MemoryMcpServer(SERVER_INFO, { capabilities: { tools: { listChanged: false } }, instructions: INSTRUCTIONS });
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: toolList() }));
  server.setRequestHandler(CallToolRequestSchema, (request, extra) => {
    const args = server.argumentsOf(extra.requestId, request.params.arguments);
    const tool = TOOLS_BY_NAME.get(request.params.name);
    // An unknown tool is a protocol error (the client asked for something tools/list never offered).
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `unknown tool "${request.params.name}"; the tools are ${TOOLS.map((t) => t.name).join(', ')}`);
    return tool.call(args, ctx);
  });
  return server;
}
