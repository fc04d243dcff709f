import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { createToolServer, toolListOf, type ToolServerSpec } from '../shared/mcp/server';
import { TOOLS, type ToolContext } from './tools';

/** The memory endpoint's server (one per request, `shared/mcp/server.ts`): its name, its instructions, the six tools. */
export const SERVER_INFO = { name: 'memory', title: 'Markdown memory', version: '1.0.0' };

export const INSTRUCTIONS = [
  'A markdown memory shared by every MCP client of this account: notes written here are read back by other agents and sessions.',
  'Notes are addressed by POSIX path ending in .md (e.g. "projects/acme/decisions.md"), never by title.',
  'Find notes with memory__search (one literal keyword) or memory__list (a folder tree), then memory__read them by path.',
  'Save with memory__write (whole note) or memory__edit (append, replace, or str_replace part of a note). Deletes are soft.',
  'A bare path is the default memory; "@<vault>/<path>" addresses a named vault. Never store credentials: they are refused.',
].join(' ');

const SPEC: ToolServerSpec<ToolContext> = { info: SERVER_INFO, instructions: INSTRUCTIONS, tools: TOOLS };

export function toolList(): Tool[] {
  return toolListOf(TOOLS);
}

export function createMcpServer(ctx: ToolContext): Server {
  return createToolServer(SPEC, ctx);
}
