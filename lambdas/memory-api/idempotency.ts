import { createHash } from 'node:crypto';
import type { Principal } from '../identity/principal';
import type { Operation } from '../shared/http/pipeline';
import { toResult } from '../shared/http/respond';
import { header, type HttpResult } from '../shared/http/types';
import { IDEMPOTENCY_KEY } from '../shared/idempotency/store';
import type { MemoryApiDeps } from './deps';
import { ApiError, badRequest } from './errors';

/** Headers of a first answer that a replay repeats: they describe the result, not the exchange. */
const KEPT = ['content-type', 'etag', 'location', 'content-disposition'];

const sha256 = (s: string | Buffer): string => createHash('sha256').update(s).digest('hex');

/**
 * `Idempotency-Key` on a `/v1` write (IETF draft-ietf-httpapi-idempotency-key-header): the first
 * request with a key runs and its successful answer is remembered for a day, per user; a retry of
 * the same request (method, path, query, If-Match, body) gets that answer again, marked
 * `Idempotent-Replayed: true`, and writes nothing. The same key with another request is a 400; a
 * retry while the first is still running is a 409 with Retry-After. A failed write remembers
 * nothing, so its retry runs again. Without the header nothing changes.
 */
export function idempotent(op: Operation<MemoryApiDeps, Principal>): Operation<MemoryApiDeps, Principal> {
  return async (ctx) => {
    const raw = header(ctx.event, 'idempotency-key');
    if (raw === undefined || !ctx.principal) return op(ctx);
    if (!IDEMPOTENCY_KEY.test(raw)) throw badRequest('Idempotency-Key must be 1-255 printable ASCII characters');
    const { event } = ctx;
    const key = `v1:${sha256(ctx.principal.sub)}:${raw}`;
    const body = event.body === undefined || event.body === null ? '' : event.isBase64Encoded ? Buffer.from(event.body, 'base64') : event.body;
    const fingerprint = sha256(
      [
        event.requestContext.http.method,
        event.rawPath,
        event.rawQueryString ?? '',
        header(event, 'if-match') ?? '',
        header(event, 'content-type') ?? '',
        sha256(body),
      ].join('\n'),
    );
    const store = ctx.deps.idempotency;
    const claim = await store.claim(key, fingerprint);
    if (claim.kind === 'replay') {
      return { statusCode: claim.answer.status, headers: { ...claim.answer.headers, 'idempotent-replayed': 'true' }, body: claim.answer.body };
    }
    if (claim.kind === 'mismatch') throw badRequest('This Idempotency-Key was already used with a different request; use a new key for a new request');
    if (claim.kind === 'in_progress') {
      throw new ApiError('CONFLICT', 'A request with this Idempotency-Key is still being processed; retry after the delay in Retry-After', {
        'retry-after': '1',
      });
    }
    let result: HttpResult;
    try {
      const out = await op(ctx);
      result = 'statusCode' in out ? out : toResult(out);
    } catch (err) {
      await store.release(key).catch(() => undefined);
      throw err;
    }
    if (result.statusCode >= 400 || result.isBase64Encoded) {
      await store.release(key).catch(() => undefined);
      return result;
    }
    const headers = Object.fromEntries(Object.entries(result.headers ?? {}).filter(([k]) => KEPT.includes(k.toLowerCase())));
    await store.complete(key, fingerprint, { status: result.statusCode, body: typeof result.body === 'string' ? result.body : '', headers });
    return result;
  };
}
