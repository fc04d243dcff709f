import type { RateDecision } from '../shared/rate-limit/rate-limiter';
import type { HttpResult } from '../shared/http/types';
import { CatalogError } from './errors';

/** The catalog API's envelope (spec 1): `{ success, data, meta }` / `{ success: false, error }`. */
export function successBody(data: unknown, meta?: unknown): unknown {
  return meta === undefined ? { success: true, data } : { success: true, data, meta };
}

export function errorResult(err: CatalogError, extraHeaders: Record<string, string> = {}): HttpResult {
  const error = { code: err.code, message: err.message, ...(err.details && err.details.length > 0 && { details: err.details }) };
  return {
    statusCode: err.status,
    headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', ...extraHeaders, ...err.headers },
    body: JSON.stringify({ success: false, error }),
  };
}

/** Anything that is not an `CatalogError` is a 500 that leaks neither message nor stack. */
export function internalError(): CatalogError {
  return new CatalogError('INTERNAL_ERROR', 'An internal error occurred; please retry later');
}

/** `X-RateLimit-*` of a limiter decision (DECISIONS: Limit is the burst, Reset the seconds until full). */
export function rateHeaders(d: RateDecision): Record<string, string> {
  return {
    'x-ratelimit-limit': String(d.limit),
    'x-ratelimit-remaining': String(d.remaining),
    'x-ratelimit-reset': String(d.resetSeconds),
  };
}
