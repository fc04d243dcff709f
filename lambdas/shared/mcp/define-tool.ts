/**
 * The machinery every memory tool shares: scope check, argument validation with messages that
 * name the argument, the `idempotencyKey` protocol, results and error results, and the tools/list
 * JSON schemas. The six tools themselves are in `tools.ts`.
 */
import type { CallToolResult, Tool, ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import { toJSONSchema, type core, type input, type output, type ZodType } from 'zod';
import { hasScope, type MemoryScope, type Principal } from '../../identity/principal';
import { MemoryError, type Caller, type MemoryService } from '../../memory';
import { logger } from '../logger';
import { fingerprintOf, runOnce, scopedKey, type IdempotencyStore } from '../idempotency/store';
import type { McpConfig } from '../../mcp/config';
import { isUnexpected, toToolError, ToolError, type ErrorContext } from '../../mcp/errors';
import { errorOutput } from '../../mcp/schemas';

/** What a tool call runs with: the verified principal as the core's caller, and the core. */
export interface ToolContext {
  service: MemoryService;
  principal: Principal;
  caller: Caller;
  config: McpConfig;
  requestId: string;
  /** Remembers the results of write calls that carry an `idempotencyKey`. */
  idempotency?: IdempotencyStore;
}

interface ToolSpec<I extends ZodType, O extends ZodType> {
  name: string;
  title: string;
  description: string;
  scope: MemoryScope;
  annotations: ToolAnnotations;
  input: I;
  output: O;
  run(args: output<I>, ctx: ToolContext): Promise<input<O>>;
}

export interface McpTool {
  name: string;
  scope: MemoryScope;
  /** The `tools/list` entry. */
  definition: Tool;
  call(rawArgs: unknown, ctx: ToolContext): Promise<CallToolResult>;
}

// ------------------------------------------------------------------------------------------------
// Results

function ok(structured: Record<string, unknown>): CallToolResult {
  // The same JSON as text, for clients that read only `content` (protocol versions before 2025-06-18).
  return { content: [{ type: 'text', text: JSON.stringify(structured) }], structuredContent: structured };
}

export function toolErrorResult(err: ToolError): CallToolResult {
  const structured = { error: { code: err.code, message: err.message } };
  return { content: [{ type: 'text', text: JSON.stringify(structured) }], structuredContent: structured, isError: true };
}

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

// ------------------------------------------------------------------------------------------------
// Argument validation: the SDK's own would answer a plain-text error without a code, so the tools
// validate here and answer `invalid_argument` with a message naming the argument.

/** How a value's JSON type reads in a message: `null`, `a string`, `an array`, … */
function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  const t = typeof value;
  return t === 'object' || t === 'undefined' ? `an ${t}` : `a ${t}`;
}

/** zod's `expected` of an `invalid_type` issue, as a noun phrase (`int` is what `.int()` reports). */
const EXPECTED: Record<string, string> = {
  int: 'an integer',
  number: 'a number',
  string: 'a string',
  boolean: 'a boolean',
  array: 'an array',
  object: 'an object',
  record: 'an object',
};

function describeIssues(tool: string, input: ZodType, issues: readonly core.$ZodIssue[], rawArgs: unknown): string {
  const known = Object.keys((input as unknown as { shape?: Record<string, unknown> }).shape ?? {});
  const parts = issues.slice(0, 5).map((issue) => {
    const field = issue.path.map(String).join('.');
    if (issue.code === 'unrecognized_keys') {
      return `unknown argument${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => `"${k}"`).join(', ')}; ${tool} takes ${known.join(', ')}`;
    }
    if (issue.code === 'invalid_type' && field === '') {
      // The arguments as a whole: `null`, a string, an array… instead of an object of named arguments.
      return `arguments must be an object of named arguments (${known.join(', ')}), not ${kindOf(rawArgs)}`;
    }
    if (issue.code === 'invalid_type' && /received undefined/.test(issue.message)) return `${field} is required (${issue.expected})`;
    // A message written in schemas.ts names its argument already (e.g. "limit must be an integer").
    if (issue.code === 'invalid_type' && issue.message.startsWith(`${field.split('.')[0]} `)) return issue.message;
    if (issue.code === 'invalid_type') return `${field} must be ${EXPECTED[issue.expected] ?? `of type ${issue.expected}`}`;
    // A check of schemas.ts that says what the value must be (`custom`: the JSON-object arguments).
    if (issue.code === 'custom' && field !== '' && issue.message.startsWith('must ')) return `${field} ${issue.message}`;
    if (field !== '' && issue.message.startsWith(field.split('.')[0])) return issue.message;
    return field === '' ? issue.message : `${field}: ${issue.message}`;
  });
  return parts.join('; ');
}

/**
 * A write tool's `idempotencyKey` (the MCP twin of /v1's Idempotency-Key, same store and rules): the
 * first call with a key runs and its result is remembered for a day, per user; a retry with the
 * same key and arguments gets that result again and changes nothing; other arguments under the same
 * key are `invalid_argument`, a retry while the first still runs `conflict`. A failed call
 * remembers nothing. Calls without a key run as they are.
 */
async function onceByKey(tool: string, args: unknown, ctx: ToolContext, run: () => Promise<Record<string, unknown>>): Promise<Record<string, unknown>> {
  const { idempotencyKey, ...rest } = (args ?? {}) as { idempotencyKey?: unknown };
  if (typeof idempotencyKey !== 'string' || !ctx.idempotency) return run();
  const once = await runOnce(
    ctx.idempotency,
    scopedKey('mcp', ctx.principal.sub, idempotencyKey),
    fingerprintOf([tool, JSON.stringify(rest)]),
    run,
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

export function defineTool<I extends ZodType, O extends ZodType>(spec: ToolSpec<I, O>): McpTool {
  let definition: Tool | undefined;
  return {
    name: spec.name,
    scope: spec.scope,
    // Built on the first tools/list, not at module load: a cold start that only calls tools skips it.
    get definition(): Tool {
      definition ??= {
        name: spec.name,
        title: spec.title,
        description: spec.description,
        inputSchema: inputJsonSchema(spec.input),
        outputSchema: outputJsonSchema(spec.output),
        annotations: spec.annotations,
      };
      return definition;
    },
    async call(rawArgs, ctx) {
      try {
        if (!hasScope(ctx.principal, spec.scope)) {
          const held = ctx.principal.scopes.length ? ctx.principal.scopes.join(' ') : 'no memory scope';
          throw new ToolError('forbidden', `${spec.name} needs the ${spec.scope} scope; this token has ${held}`);
        }
        // A missing `arguments` is no arguments; anything else that is not an object fails validation.
        const parsed = spec.input.safeParse(rawArgs === undefined ? {} : rawArgs);
        if (!parsed.success) throw new ToolError('invalid_argument', describeIssues(spec.name, spec.input, parsed.error.issues, rawArgs));
        return ok(await onceByKey(spec.name, parsed.data, ctx, async () => (await spec.run(parsed.data, ctx)) as Record<string, unknown>));
      } catch (err) {
        if (isUnexpected(err)) {
          logger.error('tool failed unexpectedly', {
            requestId: ctx.requestId,
            tool: spec.name,
            err: err instanceof Error ? { name: err.name, message: err.message, stack: err.stack } : String(err),
          });
        }
        return toolErrorResult(toToolError(err, { label: 'the memory' }));
      }
    },
  };
}

type JsonObject = { [key: string]: unknown };

function jsonSchema(schema: ZodType): JsonObject {
  // `unrepresentable: 'any'`: the JSON-object schema is a zod `custom` that declares its own `type` in meta.
  const js = toJSONSchema(schema, { target: 'draft-2020-12', io: 'input', unrepresentable: 'any' }) as JsonObject;
  // MCP's default dialect is 2020-12 already; a `$schema` URI only trips validators that lack it.
  delete js.$schema;
  // zod keeps a definition's `id` (its name under $defs) as a keyword, which draft-07 validators
  // (Ajv in the TypeScript SDK's client) refuse; the name under $defs is all a $ref needs.
  for (const def of Object.values((js.$defs ?? {}) as Record<string, JsonObject>)) delete def.id;
  return js;
}

function inputJsonSchema(schema: ZodType): Tool['inputSchema'] {
  return jsonSchema(schema) as Tool['inputSchema'];
}

/**
 * The result schema admits both outcomes: the tool's result, or the `{ error }` of a failed call.
 * Clients (the TypeScript SDK's among them) validate a failed call's structured content against the
 * output schema too, so an error shape outside it would turn every tool error into a client error.
 */
function outputJsonSchema(schema: ZodType): NonNullable<Tool['outputSchema']> {
  const js = jsonSchema(schema);
  const error = (jsonSchema(errorOutput).properties as JsonObject).error;
  const { required, properties, ...rest } = js;
  return {
    ...rest,
    type: 'object',
    properties: { ...(properties as JsonObject), error },
    anyOf: [{ required }, { required: ['error'] }],
  } as NonNullable<Tool['outputSchema']>;
}
