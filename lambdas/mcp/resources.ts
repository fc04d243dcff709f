import {
  ErrorCode,
  type ListResourcesResult,
  type ListResourceTemplatesResult,
  type ReadResourceResult,
  type Resource,
} from '@modelcontextprotocol/sdk/types.js';
import { hasScope } from '../identity/principal';
import { isValidMemoryName, MemoryError } from '../memory';
import { logger } from '../shared/logger';
import type { ToolContext } from './define-tool';
import { DEFAULT_MEMORY } from './vault';

/**
 * Notes as MCP resources: `memory://{memory}/{path}` is the note `{path}` of the REST memory
 * `{memory}` (`default` is the memory of bare tool paths). `resources/list` pages through the
 * notes of every memory the token may see, memory by memory; `resources/read` returns the note as
 * stored (`text/markdown`) with its rev in `_meta`. The endpoint is stateless (no session, no
 * stream), so there are no subscriptions and no list-changed notifications: `capabilities.resources`
 * says `subscribe: false, listChanged: false`. Every method needs `memory:read`.
 */
export const RESOURCE_TEMPLATE = 'memory://{memory}/{path}';
export const RESOURCES_PAGE = 100;
/** JSON-RPC error code of the MCP specification for a resource that does not exist. */
export const RESOURCE_NOT_FOUND = -32002;

const MIME = 'text/markdown';

/**
 * A JSON-RPC error as the SDK sends it (`code`, `message`, `data`). Not the SDK's `McpError`, whose
 * message carries an `MCP error <code>:` prefix that its client adds again.
 */
class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'RpcError';
  }
}

function needRead(ctx: ToolContext): void {
  if (!hasScope(ctx.principal, 'memory:read')) {
    const held = ctx.principal.scopes.length ? ctx.principal.scopes.join(' ') : 'no memory scope';
    throw new RpcError(ErrorCode.InvalidRequest, `resources need the memory:read scope; this token has ${held}`);
  }
}

/** The URI of a note: its path's segments percent-encoded, `/` kept. */
export function noteUri(memory: string, path: string): string {
  return `memory://${memory}/${path.split('/').map(encodeURIComponent).join('/')}`;
}

/** A URI as memory and path, or undefined when it is not `memory://{memory}/{path}`. */
export function parseNoteUri(uri: string): { memory: string; path: string } | undefined {
  const m = /^memory:\/\/([^/?#]+)\/([^?#]+)$/.exec(uri);
  if (!m) return undefined;
  try {
    // `{path}` expands with `/` percent-encoded (RFC 6570); taken literally or encoded alike.
    return { memory: decodeURIComponent(m[1]), path: decodeURIComponent(m[2]) };
  } catch {
    return undefined;
  }
}

/** The cursor of `resources/list`: the memory the next page starts in and, inside it, the core's listing cursor. */
interface Position {
  m: string;
  c?: string;
}

const encodeCursor = (p: Position): string => Buffer.from(JSON.stringify(p), 'utf8').toString('base64url');

function decodeCursor(cursor: string): Position {
  try {
    const p = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as Position;
    if (typeof p?.m === 'string' && (p.c === undefined || typeof p.c === 'string')) return p;
  } catch {
    // refused below
  }
  throw new RpcError(ErrorCode.InvalidParams, 'cursor is not a nextCursor of resources/list; start again without one');
}

/** A failure in protocol terms: a storage outage is retryable, a bad cursor a bad parameter; anything else a bug (logged, not described). */
function protocolError(err: unknown, ctx: ToolContext, method: string): RpcError {
  if (err instanceof RpcError) return err;
  if (err instanceof MemoryError && err.code === 'UPSTREAM_UNAVAILABLE')
    return new RpcError(ErrorCode.InternalError, 'memory storage is unavailable; retry shortly');
  if (err instanceof MemoryError && err.reason === 'invalid_cursor') {
    return new RpcError(ErrorCode.InvalidParams, 'cursor is not a nextCursor of resources/list; start again without one');
  }
  logger.error('resource method failed unexpectedly', {
    requestId: ctx.requestId,
    method,
    err: err instanceof Error ? { name: err.name, message: err.message, stack: err.stack } : String(err),
  });
  return new RpcError(ErrorCode.InternalError, 'internal error; retry later');
}

/** How the tools address a note of `memory` (`@<vault>/…` but for the default memory): the resource's name. */
const toolAddress = (memory: string, path: string): string => (memory === DEFAULT_MEMORY ? path : `@${memory}/${path}`);

export async function listResources(ctx: ToolContext, cursor: string | undefined): Promise<ListResourcesResult> {
  needRead(ctx);
  try {
    const names = (await ctx.service.listMemories(ctx.caller)).map((m) => m.name).sort();
    const from = cursor === undefined ? undefined : decodeCursor(cursor);
    // A memory retired between two pages: the list goes on with the next name.
    const start = from === undefined ? 0 : names.findIndex((n) => n >= from.m);
    for (let i = Math.max(0, start); start >= 0 && i < names.length; i++) {
      const memory = names[i];
      const inner = from !== undefined && memory === from.m ? from.c : undefined;
      const page = await ctx.service.listNotes(ctx.caller, memory, {
        depth: 'all',
        type: 'file',
        limit: RESOURCES_PAGE,
        ...(inner !== undefined && { cursor: inner }),
      });
      const resources: Resource[] = page.entries.flatMap((e) =>
        e.type === 'file'
          ? [
              {
                uri: noteUri(memory, e.path),
                name: toolAddress(memory, e.path),
                ...(e.title !== undefined && { title: e.title }),
                mimeType: MIME,
                ...(e.sizeBytes !== undefined && { size: e.sizeBytes }),
                ...(e.updated && { annotations: { lastModified: e.updated } }),
              },
            ]
          : [],
      );
      const next: Position | undefined =
        page.nextCursor !== undefined ? { m: memory, c: page.nextCursor } : i + 1 < names.length ? { m: names[i + 1] } : undefined;
      // An empty memory gives no page of its own: the next one is read at once.
      if (resources.length === 0 && next !== undefined) continue;
      return { resources, ...(next !== undefined && { nextCursor: encodeCursor(next) }) };
    }
    return { resources: [] };
  } catch (err) {
    throw protocolError(err, ctx, 'resources/list');
  }
}

export function resourceTemplates(ctx: ToolContext): ListResourceTemplatesResult {
  needRead(ctx);
  return {
    resourceTemplates: [
      {
        uriTemplate: RESOURCE_TEMPLATE,
        name: 'note',
        title: 'A note of a memory',
        description:
          'The note {path} (a POSIX path ending in .md, e.g. projects/plan.md; "/" may be percent-encoded) of the memory {memory} ("default" is the memory of bare tool paths, any other name a vault), as stored: markdown with its front matter.',
        mimeType: MIME,
      },
    ],
  };
}

export async function readResource(ctx: ToolContext, uri: string): Promise<ReadResourceResult> {
  needRead(ctx);
  const at = parseNoteUri(uri);
  if (!at)
    throw new RpcError(ErrorCode.InvalidParams, `"${uri.slice(0, 200)}" is not a note URI: use ${RESOURCE_TEMPLATE}, e.g. memory://default/projects/plan.md`);
  const missing = new RpcError(RESOURCE_NOT_FOUND, `Resource not found: ${uri.slice(0, 200)}`, { uri });
  if (!isValidMemoryName(at.memory)) throw missing;
  try {
    const note = await ctx.service.readNote(ctx.caller, at.memory, at.path);
    return { contents: [{ uri, mimeType: MIME, text: note.markdown, _meta: { rev: note.rev } }] };
  } catch (err) {
    // No such memory or note, a path no note can have, or a memory outside the token's grant: all
    // alike "not found", so that a token learns nothing of memories it may not read.
    if (err instanceof MemoryError && (err.code === 'NOT_FOUND' || err.code === 'FORBIDDEN' || err.code === 'BAD_REQUEST')) throw missing;
    throw protocolError(err, ctx, 'resources/read');
  }
}
