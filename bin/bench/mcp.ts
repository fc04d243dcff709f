import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { handleMcpRequest } from '../../lambdas/mcp/api';
import type { HttpEvent } from '../../lambdas/shared/http/types';
import { startLocalStack } from '../local-stack/stack';
import { ms, summarize, timeEach, type BenchSection } from './stats';

/**
 * `npm run bench -- mcp`: tools/call round trips of memory__read, memory__write and memory__search
 * with the SDK's own client over loopback HTTP against the local stack (the same handler, verifier,
 * shared DynamoDB rate limiter and memory core as `npm start`, on DynamoDB Local and the loopback S3
 * server), over a 1,000-note default memory. The same reads straight on the memory core show what
 * the MCP layer (HTTP, JSON-RPC, auth, rate limit, a fresh server per request) adds. The
 * function's bundle and module init are in the `lambdas` section with every other function.
 */
const NOTES = 1000;
const SAMPLES = 300;
const WARMUP = 30;
const WORDS = ['apples', 'pears', 'kubernetes', 'memory', 'notes', 'design', 'budget', 'latency', 'search', 'history'];

function noteText(i: number): string {
  const w = (k: number) => WORDS[(i * 7 + k) % WORDS.length];
  return `---\ntags: [area-${i % 10}]\n---\n# Note ${i}\n\nA note about ${w(0)} and ${w(1)}, with ${w(2)} #t${i % 5}.\n\n${`Body line ${i} on ${w(3)}. `.repeat(8)}\n`;
}

/** A function-URL event for the handler in-process (what the local server builds from a request). */
function event(token: string, body: unknown): HttpEvent {
  return {
    version: '2.0',
    routeKey: 'POST /mcp',
    rawPath: '/mcp',
    rawQueryString: '',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${token}`,
      'mcp-protocol-version': '2025-11-25',
    },
    requestContext: {
      accountId: 'bench',
      apiId: 'bench',
      domainName: 'localhost',
      domainPrefix: 'localhost',
      http: { method: 'POST', path: '/mcp', protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'bench' },
      requestId: 'bench',
      routeKey: 'POST /mcp',
      stage: '$default',
      time: '',
      timeEpoch: 0,
    },
    body: JSON.stringify(body),
    isBase64Encoded: false,
  };
}

const row = (name: string, samples: number[]): [string, string, string, string] => {
  const s = summarize(samples);
  return [name, `${ms(s.p50)} (p99 ${ms(s.p99)}, n=${s.n})`, '—', 'informational'];
};

export async function runMcpBench(log: (m: string) => void): Promise<BenchSection> {
  const tmp = mkdtempSync(join(tmpdir(), 'mcp-bench-'));
  // Not a benchmark of the limit: raise it so 1,000+ calls a minute from one user pass.
  const savedRate = process.env.MCP_RATE_PER_MINUTE;
  process.env.MCP_RATE_PER_MINUTE = '1000000';
  const stack = await startLocalStack({ dataDir: join(tmp, 'data'), port: 0, demoCount: 0 });
  if (savedRate === undefined) delete process.env.MCP_RATE_PER_MINUTE;
  else process.env.MCP_RATE_PER_MINUTE = savedRate;
  const client = new Client({ name: 'bench', version: '1.0.0' });
  try {
    const caller = { account: 'bench-user' };
    log(`seeding ${NOTES} notes`);
    await stack.memory.service.importNotes(
      caller,
      'default',
      Array.from({ length: NOTES }, (_, i) => ({ path: `area-${i % 10}/note-${String(i).padStart(4, '0')}.md`, markdown: noteText(i) })),
      { createMemory: true },
    );
    const token = stack.issuer.signAccessToken({ sub: caller.account, scope: 'memory:read memory:write', ttlSeconds: 3600, audience: stack.auth.audience });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${stack.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
    await client.listTools();

    // Every timed call is checked: a tool that fails answers fast, and must not be timed as a success.
    const succeeded = (what: string, r: Awaited<ReturnType<typeof client.callTool>>, ok: (sc: Record<string, unknown>) => boolean) => {
      const sc = (r.structuredContent ?? {}) as Record<string, unknown>;
      if (r.isError || !ok(sc)) throw new Error(`${what} failed: ${JSON.stringify(r.structuredContent ?? r.content).slice(0, 300)}`);
      return r;
    };
    const notePath = (i: number) => `area-${i % 10}/note-${String(i % NOTES).padStart(4, '0')}.md`;
    const read = async (i: number) =>
      succeeded('memory__read', await client.callTool({ name: 'memory__read', arguments: { path: notePath(i) } }), (sc) => sc.path === notePath(i));
    const write = async (i: number) =>
      succeeded(
        'memory__write',
        await client.callTool({ name: 'memory__write', arguments: { path: `bench/w-${i % 50}.md`, body: `# Write ${i}\n\nbody ${i}` } }),
        (sc) => sc.path === `bench/w-${i % 50}.md` && typeof sc.updated === 'string',
      );
    const search = async (i: number) =>
      succeeded(
        'memory__search',
        await client.callTool({ name: 'memory__search', arguments: { query: WORDS[i % WORDS.length], limit: 20 } }),
        (sc) => Array.isArray(sc.results) && sc.results.length > 0,
      );
    const handlerRead = async (i: number) => {
      const res = await handleMcpRequest(
        event(token, {
          jsonrpc: '2.0',
          id: i,
          method: 'tools/call',
          params: { name: 'memory__read', arguments: { path: `area-${i % 10}/note-${String(i % NOTES).padStart(4, '0')}.md` } },
        }),
        stack.mcp,
        'bench',
      );
      // A failed tool is a 200 too: the JSON-RPC result must be a success with the note.
      const body = JSON.parse(res.body as string) as { result?: { isError?: boolean; structuredContent?: { path?: string } } };
      if (res.statusCode !== 200 || body.result?.isError === true || body.result?.structuredContent?.path !== notePath(i)) {
        throw new Error(`handler read failed: ${res.statusCode} ${String(res.body).slice(0, 300)}`);
      }
    };
    const coreRead = async (i: number) => {
      const note = await stack.memory.service.readNote(caller, 'default', notePath(i), { includeDeleted: true });
      if (note.path !== notePath(i)) throw new Error(`core read returned ${note.path}`);
    };

    log('warming up');
    for (const fn of [read, write, search, handlerRead, coreRead]) await timeEach(WARMUP, fn);
    log(`measuring ${SAMPLES} calls of each`);
    const readMs = await timeEach(SAMPLES, read);
    const writeMs = await timeEach(SAMPLES, write);
    const searchMs = await timeEach(SAMPLES, search);
    const handlerMs = await timeEach(SAMPLES, handlerRead);
    const coreMs = await timeEach(SAMPLES, coreRead);

    const overhead = summarize(readMs).p50 - summarize(coreMs).p50;
    return {
      title: 'MCP endpoint (/mcp)',
      rows: [
        row('memory__read, tools/call round trip', readMs),
        row('memory__write (create or replace), round trip', writeMs),
        row(`memory__search (one keyword over ${NOTES.toLocaleString('en')} notes, limit 20), round trip`, searchMs),
        row('the same read through the handler, in-process (no HTTP, no client)', handlerMs),
        row('the same read on the memory core, in-process (no MCP, no HTTP)', coreMs),
        ['MCP layer over the core, read p50 (HTTP, JSON-RPC, token, rate limit, a server per request)', ms(overhead), '—', 'informational'],
      ],
      method: [
        `The local stack in-process (\`startLocalStack\`: DynamoDB Local, the loopback S3 server, every function behind one HTTP server), one user with a ${NOTES.toLocaleString('en')}-note default memory seeded through the core.`,
        `The SDK's own \`Client\` with \`StreamableHTTPClientTransport\` over loopback HTTP calls each tool ${SAMPLES} times in sequence after ${WARMUP} warm-up calls; a round trip is \`callTool\` from call to parsed result, including the client's output-schema validation. Every call is checked (not \`isError\`, and the read's path, the write's path and time, the search's results are there): a failing tool stops the run instead of being timed as a success.`,
        'Each request runs the whole path: Origin and protocol-version checks, RS256 token verification (JWKS cached), the shared DynamoDB rate limiter (leased tokens, rate raised so it never denies), a new SDK server and stateless transport, argument validation, the memory core on DynamoDB Local and S3.',
        'The handler row calls `handleMcpRequest` with the event the local server would build (token, limiter, server, transport, tool, core), so the difference to the round trip is loopback HTTP, the local server and the SDK client.',
        'Reads and searches hit a warm instance cache (immutable objects are cached forever); writes go to storage every time (one rev read, one PUT wave, one conditional write). Writes cycle over 50 paths, so each replaces an existing note.',
        'Bundle size and module init: the section "Lambda bundles and module init".',
        'The machine is shared with other work while this runs: figures are for comparison between runs of this script, not absolute.',
      ].join(' '),
    };
  } finally {
    await client.close().catch(() => undefined);
    await stack.close();
    rmSync(tmp, { recursive: true, force: true });
  }
}
