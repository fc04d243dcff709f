import { toResult } from '../shared/http/respond';
import { header, type HandlerResponse, type HttpResult } from '../shared/http/types';
import { fingerprintOf, IDEMPOTENCY_KEY, runOnce, scopedKey } from '../shared/idempotency/store';
import type { MemoryCtx, MemoryRouteHandler } from './context';
import type { MemoryApiDeps } from './deps';
import { ApiError, badRequest } from './errors';

/** Headers of a first answer that a replay repeats: they describe the result, not the exchange. */
const KEPT = ['content-type', 'etag', 'location', 'content-disposition'];

const REPLAYED = { 'idempotent-replayed': 'true' };

/**
 * `Idempotency-Key` on a `/v1` write (IETF draft-ietf-httpapi-idempotency-key-header): the first
 * request with a key runs and its successful answer is remembered for a day, per user; a retry of
 * the same request (method, path, query, If-Match, body) gets that answer again, marked
 * `Idempotent-Replayed: true`, and writes nothing. A note write records its key with the commit
 * itself (`ctx.once`, passed to the core), so a retry after an answer that never left (a crash
 * between the commit and the answer) gets the same answer too. The same key with another request
 * is a 400; a retry while the first is still running is a 409 with Retry-After. A failed write
 * remembers nothing, so its retry runs again. Without the header nothing changes.
 */
export function idempotent(handler: MemoryRouteHandler): (ctx: MemoryCtx, deps: MemoryApiDeps) => Promise<HttpResult | HandlerResponse> {
  return async (ctx, deps) => {
    const raw = header(ctx.event, 'idempotency-key');
    if (raw === undefined) return handler(ctx, deps);
    if (!IDEMPOTENCY_KEY.test(raw)) throw badRequest('Idempotency-Key must be 1-255 printable ASCII characters');
    const { event } = ctx;
    const body = event.body === undefined || event.body === null ? '' : event.isBase64Encoded ? Buffer.from(event.body, 'base64') : event.body;
    const fingerprint = fingerprintOf([
      event.requestContext.http.method,
      event.rawPath,
      event.rawQueryString ?? '',
      header(event, 'if-match') ?? '',
      header(event, 'content-type') ?? '',
      body,
    ]);
    const once = await runOnce(
      deps.idempotency,
      scopedKey('v1', ctx.caller.account, raw),
      fingerprint,
      async (held) => toResult(await handler({ ...ctx, once: held }, deps)),
      // Only a success is remembered (a binary answer is not: exports are not writes).
      (result) =>
        result.statusCode >= 400 || result.isBase64Encoded
          ? undefined
          : {
              status: result.statusCode,
              body: typeof result.body === 'string' ? result.body : '',
              headers: Object.fromEntries(Object.entries(result.headers ?? {}).filter(([k]) => KEPT.includes(k.toLowerCase()))),
            },
    );
    switch (once.kind) {
      case 'ran':
        return once.replayed ? { ...once.value, headers: { ...once.value.headers, ...REPLAYED } } : once.value;
      case 'replay':
        return { statusCode: once.answer.status, headers: { ...once.answer.headers, ...REPLAYED }, body: once.answer.body };
      case 'mismatch':
        throw badRequest('This Idempotency-Key was already used with a different request; use a new key for a new request');
      case 'in_progress':
        throw new ApiError('CONFLICT', 'A request with this Idempotency-Key is still being processed; retry after the delay in Retry-After', {
          'retry-after': '1',
        });
    }
  };
}
