import type { CatalogTool, RegistryRemote, ToolAnnotations } from '../../catalog-core';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { HealthChecker } from '../domain/ports';
import type { RemoteHealth } from '../domain/types';
import { describeError, type HttpClient } from '../http/http-client';

/**
 * Remote health with the MCP SDK client: connect (initialize) and list tools, within a short
 * overall timeout.
 *
 * - answered and listed tools → `live`, `toolCount`, captured tools;
 * - HTTP 401/403 → `live` (it answered) and `authRequired`;
 * - refused, timed out, any other failure → not live (with the reason, for the report).
 *
 * URLs with `{template}` variables cannot be checked without the user's values: not checked.
 * Captured tools are capped (count, description length, schema size) to keep the TOOLS item
 * small; the host's concurrency budget and circuit breaker are those of the shared HttpClient.
 */

export const MAX_TOOLS = 200;
const MAX_TOOL_DESCRIPTION = 2_000;
const MAX_SCHEMA_CHARS = 16_000;
const MAX_TOOL_PAGES = 5;

export interface McpHealthCheckerOptions {
  http: HttpClient;
  timeoutMs: number;
  now?: () => Date;
}

class CheckTimeout extends Error {}

function statusOf(err: unknown): number | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'number' && code >= 100 && code < 600 ? code : undefined;
}

const HINTS = ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const;
const MAX_TITLE = 200;

/** The declared annotations: the four boolean hints and a title, nothing else (the rest is untrusted noise). */
function captureAnnotations(a: unknown): ToolAnnotations | undefined {
  if (typeof a !== 'object' || a === null) return undefined;
  const src = a as Record<string, unknown>;
  const out: ToolAnnotations = {};
  for (const h of HINTS) if (typeof src[h] === 'boolean') out[h] = src[h] as boolean;
  if (typeof src.title === 'string' && src.title !== '') out.title = src.title.slice(0, MAX_TITLE);
  return Object.keys(out).length > 0 ? out : undefined;
}

function captureTool(t: { name: string; title?: unknown; description?: string; inputSchema?: unknown; annotations?: unknown }): CatalogTool {
  const tool: CatalogTool = { name: t.name };
  if (typeof t.title === 'string' && t.title !== '') tool.title = t.title.slice(0, MAX_TITLE);
  const annotations = captureAnnotations(t.annotations);
  if (annotations) tool.annotations = annotations;
  if (typeof t.description === 'string' && t.description !== '') tool.description = t.description.slice(0, MAX_TOOL_DESCRIPTION);
  if (typeof t.inputSchema === 'object' && t.inputSchema !== null && !Array.isArray(t.inputSchema)) {
    const schema = t.inputSchema as Record<string, unknown>;
    if (JSON.stringify(schema).length <= MAX_SCHEMA_CHARS) tool.inputSchema = schema;
  }
  return tool;
}

export class McpHealthChecker implements HealthChecker {
  private readonly now: () => Date;

  constructor(private readonly o: McpHealthCheckerOptions) {
    this.now = o.now ?? (() => new Date());
  }

  async check(remote: RegistryRemote): Promise<RemoteHealth | undefined> {
    if (/[{}]/.test(remote.url)) return undefined;
    const checkedAt = (): string => this.now().toISOString();
    try {
      this.o.http.checkUrl(remote.url, true);
    } catch (err) {
      return { url: remote.url, live: false, checkedAt: checkedAt(), error: describeError(err) };
    }
    return this.o.http.withHost(remote.url, () => this.probe(remote, checkedAt));
  }

  private async probe(remote: RegistryRemote, checkedAt: () => string): Promise<RemoteHealth> {
    let lastStatus: number | undefined;
    let answered = false;
    const recordingFetch: typeof fetch = async (input, init) => {
      const res = await this.o.http.untrustedFetch(input, init);
      answered = true;
      if (res.status >= 400) lastStatus = res.status;
      return res;
    };
    const url = new URL(remote.url);
    const transport =
      remote.type === 'sse'
        ? new SSEClientTransport(url, { fetch: recordingFetch })
        : new StreamableHTTPClientTransport(url, {
            fetch: recordingFetch,
            reconnectionOptions: { maxRetries: 0, initialReconnectionDelay: 1000, maxReconnectionDelay: 1000, reconnectionDelayGrowFactor: 1 },
          });
    const client = new Client({ name: 'mcp-catalog-crawler', version: '0.1.0' }, { capabilities: {} });
    let timer: NodeJS.Timeout | undefined;
    const started = performance.now();
    const latencyMs = () => Math.round(performance.now() - started);
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new CheckTimeout(`no answer within ${this.o.timeoutMs} ms`)), this.o.timeoutMs);
    });
    try {
      const tools = await Promise.race([this.listAll(client, transport), deadline]);
      this.o.http.noteConnection(remote.url, true);
      return { url: remote.url, live: true, toolCount: tools.length, tools: tools.slice(0, MAX_TOOLS), checkedAt: checkedAt(), latencyMs: latencyMs() };
    } catch (err) {
      const status = lastStatus ?? statusOf(err);
      this.o.http.noteConnection(remote.url, answered);
      if (status === 401 || status === 403) {
        return { url: remote.url, live: true, authRequired: true, checkedAt: checkedAt(), status, latencyMs: latencyMs() };
      }
      const reason = err instanceof CheckTimeout ? `timeout: ${err.message}` : status !== undefined ? `HTTP ${status}` : describeError(err);
      return { url: remote.url, live: false, checkedAt: checkedAt(), error: reason, ...(status !== undefined && { status }) };
    } finally {
      clearTimeout(timer);
      await client.close().catch(() => undefined);
      await transport.close().catch(() => undefined);
    }
  }

  private async listAll(client: Client, transport: SSEClientTransport | StreamableHTTPClientTransport): Promise<CatalogTool[]> {
    const requestOptions = { timeout: this.o.timeoutMs };
    await client.connect(transport, requestOptions);
    const tools: CatalogTool[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_TOOL_PAGES; page++) {
      const res = await client.listTools(cursor === undefined ? {} : { cursor }, requestOptions);
      for (const t of res.tools) tools.push(captureTool(t));
      cursor = res.nextCursor;
      if (cursor === undefined || tools.length >= MAX_TOOLS) break;
    }
    return tools;
  }
}
