import { MemoryError } from '../memory';
import { IdempotencyUnavailable } from '../shared/idempotency/store';
import { ToolError } from '../shared/mcp/tool-error';

/**
 * The memory tools' errors, in the shared MCP error model (`shared/mcp/tool-error.ts`, DECISIONS):
 * every code of its vocabulary, `refused_content` included (spec 3).
 */

/** How the memory a call addressed reads in messages: the default memory or `@<vault>`. */
export interface ErrorContext {
  /** `the default memory` or `vault "@work"`. */
  label: string;
  /** `@work/` when addressed through a vault, `''` for the default memory. */
  prefix?: string;
  /** The note path as the caller wrote it (`@work/a.md` or `a.md`), when the call names one. */
  display?: string;
}

/**
 * The one mapping from the memory core's errors to tool errors. The core's `code` decides; its
 * `reason` only separates refused content (spec 3 has its own code for it) and lets messages speak
 * in the caller's addressing (`@work/a.md`, not the core's bare path in memory `work`).
 */
export function toToolError(err: unknown, ctx: ErrorContext): ToolError {
  if (err instanceof ToolError) return err;
  if (err instanceof IdempotencyUnavailable)
    return new ToolError('unavailable', 'the record of this idempotencyKey cannot be read or written; retry shortly (nothing was written)');
  if (!(err instanceof MemoryError)) {
    // A bug, not the caller's fault: say so without leaking internals; the caller logs it.
    return new ToolError('unavailable', 'internal error; retry later');
  }
  switch (err.code) {
    case 'BAD_REQUEST':
      return new ToolError(err.reason === 'refused_content' ? 'refused_content' : 'invalid_argument', inToolTerms(err));
    case 'FORBIDDEN':
      return new ToolError('forbidden', `${ctx.label} is not granted to this token`);
    case 'NOT_FOUND':
      if (err.reason === 'note_not_found' && ctx.display !== undefined) return new ToolError('not_found', `note "${ctx.display}" does not exist`);
      if (err.reason === 'memory_not_found') {
        // The default memory is created on first write: before it, a note in it simply does not exist.
        if (ctx.display !== undefined)
          return new ToolError('not_found', `note "${ctx.display}" does not exist${ctx.prefix ? ` (${ctx.label} does not exist)` : ''}`);
        return new ToolError('not_found', `${ctx.label} does not exist`);
      }
      return new ToolError('not_found', err.message);
    case 'CONFLICT':
      return new ToolError('conflict', err.message);
    case 'UPSTREAM_UNAVAILABLE':
      return new ToolError('unavailable', err.message);
    case 'INTERNAL_ERROR':
      return new ToolError('unavailable', 'internal error; retry later');
  }
}

/** The core's names of arguments that MCP names otherwise (the core speaks `/v1`'s query parameters). */
const ARGUMENT_NAMES: Readonly<Record<string, string>> = { q: 'query' };

/**
 * A core message about a bad argument, in the tools' vocabulary: the argument named as the tool
 * names it (`query`, not `/v1`'s `q`), and no advice only `/v1` can follow (sending raw
 * text/markdown). The core's `field` says which argument it is about; messages about an argument
 * start with its name.
 */
function inToolTerms(err: MemoryError): string {
  const field = err.extra.field;
  if (field === undefined) return err.message;
  if (field === 'body' && err.reason === 'invalid_argument' && err.message.startsWith('body may not start with a front-matter fence')) {
    return 'body may not start with a front-matter fence (---); pass the front matter as the frontmatter argument (an object) and the rest as body';
  }
  const name = ARGUMENT_NAMES[field];
  if (name !== undefined && err.message.startsWith(`${field} `)) return `${name}${err.message.slice(field.length)}`;
  return err.message;
}

export function isUnexpected(err: unknown): boolean {
  return !(err instanceof ToolError) && !(err instanceof MemoryError) && !(err instanceof IdempotencyUnavailable);
}
