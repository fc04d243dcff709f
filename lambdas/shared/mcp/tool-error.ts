import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { enum as zEnum, object, string } from 'zod';

/**
 * The MCP error model (DECISIONS), shared by every MCP endpoint of the deployment: a failed tool
 * call is a tool result `{ isError: true }` whose structured content is `{ error: { code, message } }`,
 * plus the same JSON as text for clients that read only `content`. Protocol errors (JSON-RPC) are
 * kept for what is not a tool call at all. The codes are one vocabulary; each endpoint lists the
 * ones its tools answer in its output schemas (`errorOutput`).
 */
export const TOOL_ERROR_CODES = ['not_found', 'conflict', 'invalid_argument', 'refused_content', 'forbidden', 'rate_limited', 'unavailable'] as const;
export type ToolErrorCode = (typeof TOOL_ERROR_CODES)[number];

export class ToolError extends Error {
  constructor(
    readonly code: ToolErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'ToolError';
  }
}

/** The structured content of a failed call, with the codes an endpoint answers; every output schema admits it (`define-tool.ts`). */
export function errorOutput(codes: readonly [ToolErrorCode, ...ToolErrorCode[]]) {
  return object({ error: object({ code: zEnum(codes), message: string() }) });
}

/**
 * A successful call: the structured content, and as text the same JSON (protocol versions before
 * 2025-06-18 read only `content`) or, when the tool renders one, its readable text.
 */
export function toolResult(structured: Record<string, unknown>, text = JSON.stringify(structured)): CallToolResult {
  return { content: [{ type: 'text', text }], structuredContent: structured };
}

export function toolErrorResult(err: ToolError): CallToolResult {
  const structured = { error: { code: err.code, message: err.message } };
  return { content: [{ type: 'text', text: JSON.stringify(structured) }], structuredContent: structured, isError: true };
}
