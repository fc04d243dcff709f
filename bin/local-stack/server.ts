import { isUtf8 } from 'node:buffer';
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { RouteMatcher, routeKey, type ApiTable } from '../../lambdas/shared/http/route-table';
import { SinkClosedError, writeBody } from '../../lambdas/shared/http/stream-body';
import { ENCODED_BODY, type HttpEvent, type HttpResult, type LambdaContext, STREAM_BODY } from '../../lambdas/shared/http/types';
import type { Problem } from '../../lambdas/shared/http/pipeline';

/**
 * One HTTP server for the whole local stack. Each request becomes the API Gateway v2 event that
 * API Gateway would send (route key resolved from the same route table, `$default` otherwise) and
 * goes to the real handler; the handler's result is written back as API Gateway would.
 */
export type LambdaLike = (event: HttpEvent, context: LambdaContext) => Promise<HttpResult>;

/** An API and its functions by name (`RouteDef.fn`); the catch-all goes to `table.catchAllFn`. */
export interface MountedApi {
  table: ApiTable;
  functions: Record<string, LambdaLike>;
  /** The API's wording of a problem answered before its function runs (a body over the cap). */
  problem?: (problem: Problem, event: HttpEvent) => HttpResult;
}

export interface LocalServerOptions {
  apis: MountedApi[];
  /** Answers `/healthz`: 200 once true. */
  ready: () => boolean;
  /** Once ready, the backends that do not answer (`/healthz` is 503 naming them while any is down). */
  down?: () => Promise<string[]>;
  /** Largest request body accepted (API Gateway's payload limit is 10 MB). */
  maxBodyBytes?: number;
}

export interface RunningServer {
  server: Server;
  url: string;
  port: number;
  close(): Promise<void>;
}

const EMPTY = Buffer.alloc(0);
const NOT_FOUND_BODY = JSON.stringify({ success: false, error: { code: 'NOT_FOUND', message: 'No such endpoint' } });

export function createLocalServer(opts: LocalServerOptions): Server {
  const mounted = opts.apis.map((api) => {
    for (const fn of [api.table.catchAllFn, ...api.table.routes.map((r) => r.fn)]) {
      if (!api.functions[fn]) throw new Error(`no function "${fn}" mounted for ${api.table.prefix}`);
    }
    return { ...api, matcher: new RouteMatcher(api.table.routes) };
  });
  const maxBody = opts.maxBodyBytes ?? 10 * 1024 * 1024;
  // A table without a prefix (the site, at the root) owns exactly the paths of its routes, any verb.
  const mountedFor = (method: string, rawPath: string) => {
    for (const m of mounted) {
      const { prefix } = m.table;
      if (
        prefix === ''
          ? m.matcher.match(method, rawPath).allowed.length > 0
          : rawPath.startsWith(prefix) && (rawPath.length === prefix.length || rawPath[prefix.length] === '/')
      )
        return m;
    }
    return undefined;
  };

  const server = createServer((req, res) => {
    void (async () => {
      const rawUrl = req.url ?? '/';
      const q = rawUrl.indexOf('?');
      const rawPath = q < 0 ? rawUrl : rawUrl.slice(0, q);
      const rawQueryString = q < 0 ? '' : rawUrl.slice(q + 1);

      if (rawPath === '/healthz') {
        const down = opts.ready() ? ((await opts.down?.()) ?? []) : undefined;
        const ok = down !== undefined && down.length === 0;
        res.writeHead(ok ? 200 : 503, { 'content-type': 'application/json', ...(!ok && { 'retry-after': '1' }) });
        res.end(JSON.stringify(down === undefined ? { ok, starting: true } : { ok, ...(!ok && { down }) }));
        return;
      }
      const method = (req.method ?? 'GET').toUpperCase();
      const api = mountedFor(method, rawPath);
      if (!api) {
        res.writeHead(404, { 'content-type': 'application/json; charset=utf-8' });
        res.end(NOT_FOUND_BODY);
        return;
      }
      // A request without a body (GET, HEAD, DELETE) declares neither length nor chunking.
      // From the raw pairs, as the event needs them: `req.headers` would build node's own copy as well.
      const headers = eventHeaders(req);
      const hasBody = headers['content-length'] !== undefined || headers['transfer-encoding'] !== undefined;
      const body = hasBody ? await readBody(req, maxBody) : EMPTY;
      if (body === 'too-large') {
        // In the API's own envelope; API Gateway's bare `{"message":"Request Entity Too Large"}` otherwise.
        const problem = { kind: 'too_large', maxBytes: maxBody } as const;
        const result = api.problem?.(problem, toEvent(req, headers, method, rawPath, rawQueryString, EMPTY, '$default', undefined)) ?? {
          statusCode: 413,
          headers: { 'content-type': 'application/json; charset=utf-8' },
          body: JSON.stringify({ message: 'Request Entity Too Large' }),
        };
        res.setHeader('connection', 'close');
        await writeResult(res, result);
        return;
      }
      const { match } = api.matcher.match(method, rawPath);
      const event = toEvent(req, headers, method, rawPath, rawQueryString, body, match ? routeKey(match.route) : '$default', match?.pathParameters);
      const fn = api.functions[match ? match.route.fn : api.table.catchAllFn];
      const result = await fn(event, lambdaContext(event.requestContext.requestId));
      await writeResult(res, result);
    })().catch((err: unknown) => {
      // Handlers answer their own errors; reaching here is a bug in this adapter.
      console.error('local server error', err);
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ success: false, error: { code: 'INTERNAL_ERROR', message: 'An internal error occurred' } }));
    });
  });
  // Node closes an idle kept-alive connection after 5 s; a client that picks it from its pool as
  // the close crosses the wire sees "other side closed" (under load, timers fire late on both
  // sides). The front doors this server stands in for keep idle connections about a minute, so it
  // does too; `close()` still ends idle connections at once.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  return server;
}

function readBody(req: IncomingMessage, max: number): Promise<Buffer | 'too-large'> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > max) over = true;
      else chunks.push(c);
    });
    req.on('end', () => resolve(over ? 'too-large' : Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** The request's headers as API Gateway hands them over: lower-cased names, repeats joined with commas. */
function eventHeaders(req: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {};
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const k = req.rawHeaders[i].toLowerCase();
    headers[k] = headers[k] === undefined ? req.rawHeaders[i + 1] : `${headers[k]},${req.rawHeaders[i + 1]}`;
  }
  return headers;
}

function toEvent(
  req: IncomingMessage,
  headers: Record<string, string>,
  method: string,
  rawPath: string,
  rawQueryString: string,
  body: Buffer,
  key: string,
  pathParameters: Record<string, string> | undefined,
): HttpEvent {
  // API Gateway's parsed form; the APIs read `rawQueryString`, so it is built only if something asks.
  let queryStringParameters: Record<string, string> | undefined | null = null;
  const parsedQuery = (): Record<string, string> | undefined => {
    if (queryStringParameters !== null) return queryStringParameters;
    queryStringParameters = undefined;
    if (rawQueryString) {
      const q: Record<string, string> = {};
      for (const [k, v] of new URLSearchParams(rawQueryString)) q[k] = q[k] === undefined ? v : `${q[k]},${v}`;
      queryStringParameters = q;
    }
    return queryStringParameters;
  };
  const timeEpoch = Date.now();
  const requestId = randomUUID();
  // Text that is not valid UTF-8 travels base64-encoded, as binary does, so the API sees the bytes
  // and refuses them (decoding here would store U+FFFD in their place).
  const textual = body.length > 0 && /^(application\/(json|x-www-form-urlencoded)|text\/)/i.test(headers['content-type'] ?? '') && isUtf8(body);
  return {
    version: '2.0',
    routeKey: key,
    rawPath,
    rawQueryString,
    cookies: headers.cookie ? headers.cookie.split(/;\s*/) : undefined,
    headers,
    get queryStringParameters() {
      return parsedQuery();
    },
    pathParameters,
    requestContext: {
      accountId: 'local',
      apiId: 'local',
      domainName: headers.host ?? 'localhost',
      domainPrefix: 'localhost',
      http: {
        method,
        path: rawPath,
        protocol: `HTTP/${req.httpVersion}`,
        sourceIp: normaliseIp(req.socket.remoteAddress ?? '127.0.0.1'),
        userAgent: headers['user-agent'] ?? '',
      },
      requestId,
      routeKey: key,
      stage: '$default',
      // API Gateway's text form, made only if something reads it (nothing on the request path does: 1 µs a request).
      get time() {
        return new Date(timeEpoch).toUTCString();
      },
      timeEpoch,
    },
    body: body.length === 0 ? undefined : textual ? body.toString('utf8') : body.toString('base64'),
    isBase64Encoded: body.length > 0 && !textual,
  };
}

function normaliseIp(ip: string): string {
  return ip.startsWith('::ffff:') ? ip.slice(7) : ip;
}

/**
 * The Lambda context as far as it exists locally. There is no invocation deadline here, so
 * `getRemainingTimeInMillis` is left out: middy then skips its early-timeout timer, which would
 * otherwise be armed and cleared on every request against an invented deadline.
 */
function lambdaContext(requestId: string): LambdaContext {
  const context: Omit<LambdaContext, 'getRemainingTimeInMillis'> = {
    callbackWaitsForEmptyEventLoop: false,
    functionName: 'local',
    functionVersion: '$LATEST',
    invokedFunctionArn: 'arn:aws:lambda:local:000000000000:function:local',
    memoryLimitInMB: '1024',
    awsRequestId: requestId,
    logGroupName: 'local',
    logStreamName: 'local',
    done: ignore,
    fail: ignore,
    succeed: ignore,
  };
  return context as LambdaContext;
}

// One function for the context's legacy callbacks, not three closures made per request.
const ignore = (): undefined => undefined;

async function writeResult(res: ServerResponse, result: HttpResult): Promise<void> {
  const headers: Record<string, string | string[]> = result.headers;
  if (result.cookies?.length) headers['set-cookie'] = result.cookies;
  const made = result[STREAM_BODY];
  if (made) {
    // As a function URL in RESPONSE_STREAM mode sends it: chunked, each chunk made once the socket
    // took the last. A body that fails once the head is sent can only be cut short (the client sees
    // the transfer end without its last chunk); a client that leaves stops the body being made.
    res.writeHead(result.statusCode, headers);
    try {
      await writeBody(made, res);
      res.end();
    } catch (err) {
      if (!(err instanceof SinkClosedError)) console.error('local server: streamed answer cut short', err);
      res.destroy();
    }
    return;
  }
  const holder = result[ENCODED_BODY];
  let body: Buffer;
  if (holder?.bytes !== undefined) body = holder.bytes;
  else {
    body = result.body === undefined ? EMPTY : Buffer.from(result.body, result.isBase64Encoded ? 'base64' : 'utf8');
    if (holder) holder.bytes = body;
  }
  // With its length declared, the head and body leave in one write instead of as chunks.
  headers['content-length'] = String(body.length);
  res.writeHead(result.statusCode, headers);
  res.end(body);
}

export function listen(server: Server, port: number, host = '127.0.0.1'): Promise<RunningServer> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      const addr = server.address() as AddressInfo;
      resolve({
        server,
        port: addr.port,
        url: `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${addr.port}`,
        close: () =>
          new Promise<void>((r) => {
            server.closeAllConnections();
            server.close(() => r());
          }),
      });
    });
  });
}
