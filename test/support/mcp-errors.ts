import { McpError } from '@modelcontextprotocol/sdk/types.js';

/**
 * The JSON-RPC error a call to an MCP server ends in, as the SDK's client throws it (a protocol
 * error, not a tool's `isError` result); anything else thrown, or no error, fails the test.
 */
export async function protocolError(p: Promise<unknown>): Promise<{ code: number; message: string }> {
  try {
    await p;
  } catch (err) {
    if (err instanceof McpError) return { code: err.code, message: err.message };
    throw err;
  }
  throw new Error('no error');
}
