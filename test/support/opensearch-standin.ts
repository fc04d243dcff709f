import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { isDeepStrictEqual } from 'node:util';

/**
 * An OpenSearch-protocol stand-in on loopback: it answers a script of golden exchanges
 * (test/fixtures/opensearch/exchanges.json) in order, and nothing else. It is no engine: it neither
 * ranks nor filters; it checks that each request is the one the script expects (method, path, query
 * parameters, JSON or NDJSON body, wholly or the parts the script fixes) and answers what the
 * documentation says a domain answers. A request off the script gets a 400 in OpenSearch's error
 * format and is kept in `unexpected`, so a test sees it even when the adapter swallows the error.
 */
export interface GoldenRequest {
  /** One method, or those the documentation accepts alike (`_bulk`: POST or PUT). */
  method: string | string[];
  path: string;
  query?: Record<string, string>;
  body?: unknown;
  ndjson?: unknown[];
}

export interface GoldenExchange {
  /** `exact` (default): the body equals the script's; `subset`: it contains what the script fixes. */
  match?: 'exact' | 'subset';
  request: GoldenRequest;
  response: { status: number; body?: unknown };
}

export interface StandIn {
  url: string;
  /** Replaces the script; `unexpected` and `served` start empty. */
  script(exchanges: GoldenExchange[]): void;
  /** Exchanges of the script not asked for yet. */
  pending(): GoldenExchange[];
  /** Requests that were not the next one of the script, with why. */
  unexpected: string[];
  close(): Promise<void>;
}

/** `actual` has everything `expected` has (objects: those keys, recursively; arrays and scalars: equal). */
export function contains(actual: unknown, expected: unknown): boolean {
  if (expected !== null && typeof expected === 'object' && !Array.isArray(expected)) {
    if (actual === null || typeof actual !== 'object' || Array.isArray(actual)) return false;
    return Object.entries(expected as Record<string, unknown>).every(([k, v]) => contains((actual as Record<string, unknown>)[k], v));
  }
  if (Array.isArray(expected)) {
    return Array.isArray(actual) && actual.length === expected.length && expected.every((v, i) => contains(actual[i], v));
  }
  return isDeepStrictEqual(actual, expected);
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function mismatch(expected: GoldenExchange, method: string, url: URL, text: string): string | undefined {
  const r = expected.request;
  const methods = ([] as string[]).concat(r.method);
  if (!methods.includes(method) || url.pathname !== r.path) return `${method} ${url.pathname} where the script expects ${methods.join(' or ')} ${r.path}`;
  const query = Object.fromEntries(url.searchParams);
  if (!isDeepStrictEqual(query, r.query ?? {})) return `query ${JSON.stringify(query)} where the script expects ${JSON.stringify(r.query ?? {})}`;
  const same = (a: unknown, e: unknown) => (expected.match === 'subset' ? contains(a, e) : isDeepStrictEqual(a, e));
  if (r.ndjson !== undefined) {
    const lines = text
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as unknown);
    if (!text.endsWith('\n')) return 'an NDJSON body must end with a newline';
    if (!same(lines, r.ndjson)) return `NDJSON body ${text.slice(0, 300)} is not the script's`;
    return undefined;
  }
  if (r.body !== undefined) {
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return `body is not JSON: ${text.slice(0, 100)}`;
    }
    if (!same(body, r.body)) return `body ${JSON.stringify(body).slice(0, 400)} is not the script's`;
  }
  return undefined;
}

export async function startOpenSearchStandIn(): Promise<StandIn> {
  let queue: GoldenExchange[] = [];
  const unexpected: string[] = [];
  const server: Server = createServer(async (req, res) => {
    const text = await readBody(req);
    const url = new URL(req.url ?? '/', 'http://standin');
    const next = queue[0];
    const why = next === undefined ? `${req.method} ${url.pathname} after the end of the script` : mismatch(next, req.method ?? '', url, text);
    if (why !== undefined) {
      unexpected.push(why);
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          error: { root_cause: [{ type: 'illegal_argument_exception', reason: why }], type: 'illegal_argument_exception', reason: why },
          status: 400,
        }),
      );
      return;
    }
    queue.shift();
    const { status, body } = next.response;
    // HEAD answers carry no body (Index exists API); every other answer is JSON.
    if (req.method === 'HEAD' || body === undefined) {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end();
      return;
    }
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    script(exchanges) {
      queue = [...exchanges];
      unexpected.length = 0;
    },
    pending: () => [...queue],
    unexpected,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((r) => server.close(() => r()));
    },
  };
}
