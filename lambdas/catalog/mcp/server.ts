import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { createToolServer, type ToolServerSpec } from '../../shared/mcp/server';
import { ICONS } from './icons';
import { TOOLS, type CatalogToolContext } from './tools';

/** The catalog endpoint's server (one per request, `shared/mcp/server.ts`): who it is, how to use it, its four tools. */
export const SERVER_INFO = { name: 'mcp-catalog', title: 'MCP server catalog', version: '1.0.0', icons: ICONS.server };

export const INSTRUCTIONS = [
  'A catalog of MCP servers: the official MCP registry, with license and maintenance grades, the health of hosted endpoints and the tools each server offers.',
  'To find and install a server for a need, three calls: search_servers with a few words of what it should do (e.g. "postgres", "jira issues");',
  'get_server with the slug of the best match, to check its tools, packages and health; install_server with that slug and the client',
  '(claude-desktop, claude-code, vscode, cursor or generic) for the snippet and where it goes.',
  'Prefer active servers with good grades and, for a hosted endpoint, live ones. Inputs marked secret are credentials: ask the user for them, never invent or store them.',
  'list_categories gives the category names search_servers filters on. Every tool only reads; no account is needed.',
].join(' ');

const SPEC: ToolServerSpec<CatalogToolContext> = { info: SERVER_INFO, instructions: INSTRUCTIONS, tools: TOOLS };

export function createCatalogMcpServer(ctx: CatalogToolContext): Server {
  return createToolServer(SPEC, ctx);
}
