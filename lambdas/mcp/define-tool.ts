/**
 * What the memory tools add to the shared tool machinery (`shared/mcp/define-tool.ts`): the scope
 * check, the `idempotencyKey` protocol of the write tools, and the mapping of the memory core's
 * errors. The six tools themselves are in `tools.ts`.
 */
import { hasScope, type MemoryScope, type Principal } from '../identity/principal';
import { MemoryError, type Caller, type MemoryService } from '../memory';
import { fingerprintOf, runOnce, scopedKey, type IdempotencyStore, type KeyedWrite } from '../shared/idempotency/store';
import { toolDefiner, type McpTool as SharedMcpTool } from '../shared/mcp/define-tool';
import { ToolError } from '../shared/mcp/tool-error';
import type { McpConfig } from './config';
import { isUnexpected, toToolError, type ErrorContext } from './errors';
import { errorOutput } from './schemas';

/** What a tool call runs with: the verified principal as the core's caller, and the core. */
export interface ToolContext {
  service: MemoryService;
  principal: Principal;
  caller: Caller;
  config: McpConfig;
  requestId: string;
  /** Remembers the results of write calls that carry an `idempotencyKey`. */
  idempotency?: IdempotencyStore;
  /** The call's claimed `idempotencyKey`, for the core to record with the commit (`keyed` in tools.ts). */
  once?: KeyedWrite;
}

/** A memory tool: the shared tool, and the scope it needs. */
export type McpTool = SharedMcpTool<ToolContext> & { scope: MemoryScope };

/** Runs `fn` against one addressed memory, turning core errors into tool errors in its terms. */
export async function against<T>(ctx: ErrorContext, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (isUnexpected(err)) throw err;
    throw toToolError(err, ctx);
  }
}

export const isMissingMemory = (err: unknown): boolean => err instanceof MemoryError && err.reason === 'memory_not_found';

/**
 * A write tool's `idempotencyKey` (the MCP twin of /v1's Idempotency-Key, same store and rules): the
 * first call with a key runs and its result is remembered for a day, per user; the core records the
 * key with the commit itself, so a retry after a result that never arrived (the instance died
 * between the commit and the answer) gets it too. A retry with the same key and arguments gets that
 * result again and changes nothing; other arguments under the same key are `invalid_argument`, a
 * retry while the first still runs `conflict`. A failed call remembers nothing. Calls without a
 * key run as they are.
 */
async function onceByKey(
  tool: string,
  args: unknown,
  ctx: ToolContext,
  run: (ctx: ToolContext) => Promise<Record<string, unknown>>,
): Promise<Record<string, unknown>> {
  const { idempotencyKey, ...rest } = (args ?? {}) as { idempotencyKey?: unknown };
  if (typeof idempotencyKey !== 'string' || !ctx.idempotency) return run(ctx);
  const once = await runOnce(
    ctx.idempotency,
    scopedKey('mcp', ctx.principal.sub, idempotencyKey),
    fingerprintOf([tool, JSON.stringify(rest)]),
    (held) => run({ ...ctx, once: held }),
    (result) => ({
      status: 200,
      body: JSON.stringify(result),
      headers: {},
    }),
  );
  switch (once.kind) {
    case 'ran':
      return once.value;
    case 'replay':
      return JSON.parse(once.answer.body) as Record<string, unknown>;
    case 'mismatch':
      throw new ToolError('invalid_argument', 'idempotencyKey was already used with other arguments; use a new key for a new change');
    case 'in_progress':
      throw new ToolError('conflict', 'a call with this idempotencyKey is still running; retry in a second');
  }
}

export const defineTool = toolDefiner<ToolContext, { scope: MemoryScope }>({
  errorOutput,
  guard(spec, ctx) {
    if (!hasScope(ctx.principal, spec.scope)) {
      const held = ctx.principal.scopes.length ? ctx.principal.scopes.join(' ') : 'no memory scope';
      throw new ToolError('forbidden', `${spec.name} needs the ${spec.scope} scope; this token has ${held}`);
    }
  },
  around: onceByKey,
  toolError: (err) => (isUnexpected(err) ? undefined : toToolError(err, { label: 'the memory' })),
  requestId: (ctx) => ctx.requestId,
});
