import { AppError } from '../errors';
import type { HttpResult } from './types';

/** The catalog API's envelope (spec 1): `{ success, data, meta }` / `{ success: false, error }`. */
export function successBody(data: unknown, meta?: unknown): unknown {
  return meta === undefined ? { success: true, data } : { success: true, data, meta };
}

export function errorResult(err: AppError, extraHeaders: Record<string, string> = {}): HttpResult {
  const error = { code: err.code, message: err.message, ...(err.details && err.details.length > 0 && { details: err.details }) };
  return {
    statusCode: err.status,
    headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', ...extraHeaders, ...err.headers },
    body: JSON.stringify({ success: false, error }),
  };
}

/** Anything that is not an `AppError` is a 500 that leaks neither message nor stack. */
export function internalError(): AppError {
  return new AppError('INTERNAL_ERROR', 'An internal error occurred; please retry later');
}
