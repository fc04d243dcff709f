import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { LocalStack } from '../../bin/local-stack/stack';
import { startScratchStack } from '../support/scratch-stack';

/**
 * The local stack (`npm start` in-process: DynamoDB Local, the S3 server, every function on one
 * HTTP server) on a fresh data dir and an ephemeral port, with the means to mint tokens and connect
 * the SDK's own client to `/mcp` over real HTTP.
 */
export interface McpHarness {
  stack: LocalStack;
  url: string;
  mcpUrl: string;
  token(o: { sub: string; scope?: string; memories?: string[]; ttlSeconds?: number; audience?: string }): string;
  connect(token: string, opts?: { headers?: Record<string, string> }): Promise<Client>;
  close(): Promise<void>;
}

/** `env` is in force while the stack starts (it reads its configuration then), and restored after. */
export async function startMcpHarness(env: Record<string, string> = {}): Promise<McpHarness> {
  const scratch = await startScratchStack('mcp-stack', env);
  const { stack } = scratch;
  const clients: Client[] = [];
  const mcpUrl = `${stack.url}/mcp`;
  return {
    stack,
    url: stack.url,
    mcpUrl,
    token: (o) =>
      stack.issuer.signAccessToken({
        sub: o.sub,
        scope: o.scope ?? 'memory:read memory:write',
        memories: o.memories,
        ttlSeconds: o.ttlSeconds ?? 600,
        audience: o.audience ?? stack.auth.audience,
      }),
    async connect(token, opts = {}) {
      const client = new Client({ name: 'mcp-test', version: '1.0.0' });
      const transport = new StreamableHTTPClientTransport(new URL(mcpUrl), {
        requestInit: { headers: { authorization: `Bearer ${token}`, ...opts.headers } },
      });
      await client.connect(transport);
      clients.push(client);
      return client;
    },
    async close() {
      await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
      await scratch.close();
    },
  };
}

/** A tool call's structured content, typed loosely for assertions. */
export type Structured = Record<string, unknown>;

export async function call(client: Client, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}

export async function ok<T = Structured>(client: Client, name: string, args: Record<string, unknown>): Promise<T> {
  const res = await call(client, name, args);
  if (res.isError) throw new Error(`${name} failed: ${JSON.stringify(res.structuredContent)}`);
  return res.structuredContent as T;
}

export async function toolError(client: Client, name: string, args: Record<string, unknown>): Promise<{ code: string; message: string }> {
  const res = await call(client, name, args);
  if (!res.isError) throw new Error(`${name} succeeded unexpectedly: ${JSON.stringify(res.structuredContent)}`);
  const error = (res.structuredContent as { error: { code: string; message: string } }).error;
  // The text content carries the same JSON, for clients that read only `content`.
  const text = res.content.find((c) => c.type === 'text');
  if (text?.type !== 'text' || JSON.parse(text.text).error.code !== error.code) throw new Error('text content does not mirror the error');
  return error;
}
