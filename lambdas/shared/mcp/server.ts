import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  type Implementation,
  isJSONRPCRequest,
  ListToolsRequestSchema,
  McpError,
  type JSONRPCMessage,
  type RequestId,
  type ServerCapabilities,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import type { McpTool } from './define-tool';

/**
 * One MCP server per request (stateless Streamable HTTP: every POST stands alone, so any Lambda
 * instance can answer any call), for any set of tools. The SDK's low-level `Server` is used rather
 * than `McpServer`: `McpServer.registerTool` validates arguments itself and answers a failure as
 * plain text without an error code, and its `tools/list` cannot carry an output schema that also
 * admits the `{ error }` of a failed call. Here the tools validate their own arguments
 * (`define-tool.ts`), so a bad argument is always the `invalid_argument` tool error, never a
 * protocol error.
 */

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The SDK checks every `tools/call` against its own schema before any handler runs, and answers an
 * `arguments` that is present but not an object (`null`, a string, an array, a number) with a
 * JSON-RPC error carrying zod's raw issue dump. A bad argument must be the tool error
 * `invalid_argument`, so such an `arguments` is set aside on its way from the transport to the SDK
 * (the request goes on without it) and handed to the tool, whose own validation reports it. A
 * missing `arguments` is left alone: the tool takes it as `{}`.
 */
class ToolServer extends Server {
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

/** What an endpoint serves: who it is, how an agent should use it, its tools, and what else it offers. */
export interface ToolServerSpec<Ctx> {
  info: Implementation;
  instructions: string;
  tools: readonly McpTool<Ctx>[];
  /** Capabilities beside `tools` (the memory endpoint's `resources`), each served by `extend`. */
  capabilities?: Omit<ServerCapabilities, 'tools'>;
  /** Registers the handlers of those capabilities on the request's server. */
  extend?(server: Server, ctx: Ctx): void;
}

/** `tools/list` is the same for every caller and request: built once per instance and tool set, when first asked for. */
const toolLists = new WeakMap<readonly McpTool<never>[], Tool[]>();
const toolsByName = new WeakMap<readonly McpTool<never>[], ReadonlyMap<string, McpTool<never>>>();

export function toolListOf<Ctx>(tools: readonly McpTool<Ctx>[]): Tool[] {
  let list = toolLists.get(tools);
  if (!list) {
    list = tools.map((t) => t.definition);
    toolLists.set(tools, list);
  }
  return list;
}

/**
 * The JSON Schema validator a server is given. The SDK's server uses one only to check an answer to
 * `elicitInput`, which these servers never send, but by default builds its own Ajv instance with
 * every server: about 15 ms on an instance's first request and 1 ms on each later one, for nothing.
 * This one loads and builds Ajv (once per instance) only if a schema is ever asked for.
 */
type AjvValidatorModule = typeof import('./ajv-validator');
let ajv: InstanceType<AjvValidatorModule['AjvJsonSchemaValidator']> | undefined;
export const lazyValidator: jsonSchemaValidator = {
  getValidator: (schema) => {
    // A computed specifier, so esbuild leaves Ajv out of index.js: in AWS it finds ajv-validator.js
    // beside it, from source (tests, the local stack) ajv-validator.ts.
    ajv ??= new (require(['.', 'ajv-validator'].join('/')) as AjvValidatorModule).AjvJsonSchemaValidator();
    return ajv.getValidator(schema);
  },
};

/** A fresh server for one request: `initialize`, `tools/list`, and `tools/call` with the request's context. */
export function createToolServer<Ctx>(spec: ToolServerSpec<Ctx>, ctx: Ctx): Server {
  let byName = toolsByName.get(spec.tools) as ReadonlyMap<string, McpTool<Ctx>> | undefined;
  if (!byName) {
    byName = new Map(spec.tools.map((t) => [t.name, t]));
    toolsByName.set(spec.tools, byName);
  }
  const server = new ToolServer(spec.info, {
    capabilities: { ...spec.capabilities, tools: { listChanged: false } },
    instructions: spec.instructions,
    jsonSchemaValidator: lazyValidator,
  });
  spec.extend?.(server, ctx);
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: toolListOf(spec.tools) }));
  server.setRequestHandler(CallToolRequestSchema, (request, extra) => {
    const args = server.argumentsOf(extra.requestId, request.params.arguments);
    const tool = byName.get(request.params.name);
    // An unknown tool is a protocol error (the client asked for something tools/list never offered).
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `unknown tool "${request.params.name}"; the tools are ${spec.tools.map((t) => t.name).join(', ')}`);
    return tool.call(args, ctx);
  });
  return server;
}
