import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { ListResourcesRequestSchema, ListResourceTemplatesRequestSchema, ReadResourceRequestSchema, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { createToolServer, toolListOf, type ToolServerSpec } from '../shared/mcp/server';
import { listResources, readResource, resourceTemplates } from './resources';
import { TOOLS, type ToolContext } from './tools';

/** The memory endpoint's server (one per request, `shared/mcp/server.ts`): its name, its instructions, the six tools. */
export const SERVER_INFO = { name: 'memory', title: 'Markdown memory', version: '1.0.0' };

export const INSTRUCTIONS = [
  'A markdown memory shared by every MCP client of this account: notes written here are read back by other agents and sessions.',
  'Notes are addressed by POSIX path ending in .md (e.g. "projects/acme/decisions.md"), never by title.',
  'Find notes with memory__search (one literal keyword) or memory__list (a folder tree), then memory__read them by path.',
  'Save with memory__write (whole note) or memory__edit (append, replace, or str_replace part of a note). Deletes are soft.',
  'A bare path is the default memory; "@<vault>/<path>" addresses a named vault. Never store credentials: they are refused.',
  'Notes are also resources, memory://<memory>/<path> ("default" for bare paths).',
].join(' ');

export function toolList(): Tool[] {
  return toolListOf(TOOLS);
}

/**
 * What the server offers: the six tools and the notes as resources. Stateless (no session, no
 * stream a notification could travel on): the tool list never changes, resources take no
 * subscriptions and announce no list changes.
 */
export const CAPABILITIES = { tools: { listChanged: false }, resources: { subscribe: false, listChanged: false } };

const SPEC: ToolServerSpec<ToolContext> = {
  info: SERVER_INFO,
  instructions: INSTRUCTIONS,
  tools: TOOLS,
  capabilities: { resources: CAPABILITIES.resources },
  extend(server: Server, ctx: ToolContext) {
    server.setRequestHandler(ListResourcesRequestSchema, (request) => listResources(ctx, request.params?.cursor));
    server.setRequestHandler(ListResourceTemplatesRequestSchema, () => resourceTemplates(ctx));
    server.setRequestHandler(ReadResourceRequestSchema, (request) => readResource(ctx, request.params.uri));
  },
};

export function createMcpServer(ctx: ToolContext): Server {
  return createToolServer(SPEC, ctx);
}
