import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';

/** API Gateway HTTP API (payload 2.0) and Lambda function URLs share this event shape. */
export type HttpEvent = APIGatewayProxyEventV2;
export type HttpResult = APIGatewayProxyStructuredResultV2 & {
  statusCode: number;
  headers: Record<string, string>;
  [ENCODED_BODY]?: EncodedBody;
  [STREAM_BODY]?: AsyncIterable<Uint8Array>;
};

/**
 * Where a writer that encodes a result's body to bytes may keep them for the next write of the same
 * body: a cached result's copies share one holder, so the local server encodes a cached page once,
 * not on every hit. A symbol key, so Lambda's runtime (which serialises the result as JSON) never
 * sees it, and nothing is held unless a writer fills it.
 */
export const ENCODED_BODY: unique symbol = Symbol('encodedBody');
export interface EncodedBody {
  bytes?: Buffer;
}

/**
 * A body made while it is sent (an export of a whole memory), in place of `body`: only a writer that
 * streams sends it (the local server, a function URL in RESPONSE_STREAM mode); a buffered Lambda's
 * runtime serialises the result as JSON and would drop it, so an API returns one only where its
 * answers stream. Reading it is what makes it: stopping early (`return()`) stops the work.
 */
export const STREAM_BODY: unique symbol = Symbol('streamBody');

export type LambdaContext = Context;

/** What a route handler returns; the API layer turns it into an `HttpResult`. */
export type HandlerResponse =
  | { kind: 'json'; status?: number; body: unknown; headers?: Record<string, string> }
  | { kind: 'text'; status?: number; body: string; contentType: string; headers?: Record<string, string> }
  | { kind: 'binary'; status?: number; body: Uint8Array; contentType: string; headers?: Record<string, string> }
  | { kind: 'stream'; status?: number; body: AsyncIterable<Uint8Array>; contentType: string; headers?: Record<string, string> };

export const json = (body: unknown, headers?: Record<string, string>, status = 200): HandlerResponse => ({
  kind: 'json',
  status,
  body,
  headers,
});

/** Lower-cased header lookup (API Gateway lower-cases v2 headers; function URLs too, but be safe). */
export function header(event: HttpEvent, name: string): string | undefined {
  const h = event.headers ?? {};
  const lower = name.toLowerCase();
  // The lower-cased key first: it is how API Gateway and function URLs deliver every header, so the
  // scan below (a lower-casing of every key, several times a request) runs only for odd events.
  const direct = h[lower];
  if (direct !== undefined) return direct;
  for (const k of Object.keys(h)) if (k.toLowerCase() === lower) return h[k];
  return undefined;
}
