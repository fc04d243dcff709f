import { type HandlerResponse, type HttpResult, STREAM_BODY } from './types';

/**
 * Turning what a route handler returned into what API Gateway sends, shared by every API that
 * dispatches on the route table.
 */
export function toResult(res: HandlerResponse): HttpResult {
  const statusCode = res.status ?? 200;
  switch (res.kind) {
    case 'json':
      return {
        statusCode,
        headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', ...res.headers },
        body: JSON.stringify(res.body),
      };
    case 'text':
      return { statusCode, headers: { 'content-type': res.contentType, ...res.headers }, body: res.body };
    case 'binary':
      return {
        statusCode,
        headers: { 'content-type': res.contentType, ...res.headers },
        body: Buffer.from(res.body).toString('base64'),
        isBase64Encoded: true,
      };
    case 'stream':
      return { statusCode, headers: { 'content-type': res.contentType, ...res.headers }, [STREAM_BODY]: res.body };
  }
}

/** API Gateway's `pathParameters` without the `undefined` entries its type allows. */
export function definedOnly(p: Record<string, string | undefined> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(p ?? {})) if (v !== undefined) out[k] = v;
  return out;
}
