/**
 * The machinery every MCP tool shares, whichever endpoint serves it (the memory tools at `/mcp`, the
 * catalog's): argument validation with messages that name the argument, results and error results,
 * and the `tools/list` entry with JSON Schemas whose output admits the `{ error }` of a failed call.
 * An endpoint adds its own rules through a `ToolPolicy` (the memory tools' scope check and
 * `idempotencyKey`, its error mapping) and gets its `defineTool` from `toolDefiner`.
 */
import type { CallToolResult, Tool, ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import { toJSONSchema, type core, type input, type output, type ZodType } from 'zod';
import { logger } from '../logger';
import { ToolError, toolErrorResult, toolResult } from './tool-error';

export interface ToolSpec<I extends ZodType, O extends ZodType, Ctx> {
  name: string;
  title: string;
  description: string;
  annotations: ToolAnnotations;
  /** Icons of the tool in `tools/list` (MCP 2025-11-25). */
  icons?: Tool['icons'];
  input: I;
  output: O;
  run(args: output<I>, ctx: Ctx): Promise<input<O>>;
  /**
   * The result as the text content, for a reader (default: the structured content as JSON). The
   * catalog's tools answer prose an agent can quote; the memory tools the JSON.
   */
  text?(result: input<O>): string;
}

export interface McpTool<Ctx> {
  name: string;
  /** The `tools/list` entry. */
  definition: Tool;
  call(rawArgs: unknown, ctx: Ctx): Promise<CallToolResult>;
}

/** What an endpoint adds to every tool it defines. `Extra` is what its specs declare beyond `ToolSpec` (the memory tools' `scope`). */
export interface ToolPolicy<Ctx, Extra> {
  /** The structured error every output schema admits (`errorOutput(codes)` of `tool-error.ts`). */
  errorOutput: ZodType;
  /** Refuses a call before its arguments are read, by throwing a `ToolError`. */
  guard?(spec: { name: string } & Extra, ctx: Ctx): void;
  /** Runs a call whose arguments are valid (default: runs it): the place for `idempotencyKey`. */
  around?(tool: string, args: unknown, ctx: Ctx, run: (ctx: Ctx) => Promise<Record<string, unknown>>): Promise<Record<string, unknown>>;
  /** A failure the caller can act on, as its tool error; `undefined` for a bug (logged, answered `unavailable`). */
  toolError(err: unknown): ToolError | undefined;
  /** The request's id, for the log line of an unexpected failure. */
  requestId(ctx: Ctx): string;
}

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
    // A message written in the tool's schema names its argument already (e.g. "limit must be an integer").
    if (issue.code === 'invalid_type' && issue.message.startsWith(`${field.split('.')[0]} `)) return issue.message;
    if (issue.code === 'invalid_type') return `${field} must be ${EXPECTED[issue.expected] ?? `of type ${issue.expected}`}`;
    // A check of the schema that says what the value must be (`custom`: the JSON-object arguments).
    if (issue.code === 'custom' && field !== '' && issue.message.startsWith('must ')) return `${field} ${issue.message}`;
    if (field !== '' && issue.message.startsWith(field.split('.')[0])) return issue.message;
    return field === '' ? issue.message : `${field}: ${issue.message}`;
  });
  return parts.join('; ');
}

/** The `defineTool` of an endpoint: every tool it defines follows `policy`. */
export function toolDefiner<Ctx, Extra extends object = Record<never, never>>(policy: ToolPolicy<Ctx, Extra>) {
  return function defineTool<I extends ZodType, O extends ZodType>(spec: ToolSpec<I, O, Ctx> & Extra): McpTool<Ctx> & Extra {
    let definition: Tool | undefined;
    const { name, title, description, annotations, icons, input, output, run, text, ...extra } = spec;
    return {
      ...(extra as unknown as Extra),
      name,
      // Built on the first tools/list, not at module load: a cold start that only calls tools skips it.
      get definition(): Tool {
        definition ??= {
          name,
          title,
          description,
          ...(icons && { icons }),
          inputSchema: inputJsonSchema(input),
          outputSchema: outputJsonSchema(output, policy.errorOutput),
          annotations,
        };
        return definition;
      },
      async call(rawArgs, ctx) {
        try {
          policy.guard?.(spec, ctx);
          // A missing `arguments` is no arguments; anything else that is not an object fails validation.
          const parsed = input.safeParse(rawArgs === undefined ? {} : rawArgs);
          if (!parsed.success) throw new ToolError('invalid_argument', describeIssues(name, input, parsed.error.issues, rawArgs));
          // `around` may run the call with a context of its own (the memory tools' claimed key).
          const once = async (c: Ctx) => (await run(parsed.data, c)) as Record<string, unknown>;
          const result = await (policy.around ? policy.around(name, parsed.data, ctx, once) : once(ctx));
          return toolResult(result, text?.(result as input<O>));
        } catch (err) {
          const known = err instanceof ToolError ? err : policy.toolError(err);
          if (known) return toolErrorResult(known);
          logger.error('tool failed unexpectedly', {
            requestId: policy.requestId(ctx),
            tool: name,
            err: err instanceof Error ? { name: err.name, message: err.message, stack: err.stack } : String(err),
          });
          // A bug, not the caller's fault: say so without leaking internals.
          return toolErrorResult(new ToolError('unavailable', 'internal error; retry later'));
        }
      },
    } as McpTool<Ctx> & Extra;
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
function outputJsonSchema(schema: ZodType, errorOutput: ZodType): NonNullable<Tool['outputSchema']> {
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
