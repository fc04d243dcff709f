import { PersonalTokenError, type PersonalTokenErrorKind } from '../identity/personal-token-service';
import { isAuthError, refusalMessage } from '../identity/principal';
import { MemoryError, StorageError } from '../memory';
import { ValidationError } from '../shared/http/query';
import { IdempotencyUnavailable } from '../shared/idempotency/store';
import type { HttpResult } from '../shared/http/types';
import { ifMatchConflictMessage } from './if-match';

/**
 * The `/v1` error model, in ONE place: every failure (the core's `MemoryError`, the verifier's
 * `AuthError`, the personal tokens' `PersonalTokenError`, the shared layer's `ValidationError`, a body this transport refuses, anything
 * unexpected) becomes `{ error: { code, message } }` with the status of its code here.
 */
export const V1_ERROR_STATUS = {
  BAD_REQUEST: 400,
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  CONFLICT: 409,
  RATE_LIMITED: 429,
  INTERNAL_ERROR: 500,
  UPSTREAM_UNAVAILABLE: 503,
} as const;

export type V1ErrorCode = keyof typeof V1_ERROR_STATUS;
export const V1_ERROR_CODES = Object.keys(V1_ERROR_STATUS) as V1ErrorCode[];

const TOKEN_ERROR_CODE: Record<PersonalTokenErrorKind, V1ErrorCode> = {
  invalid: 'BAD_REQUEST',
  forbidden: 'FORBIDDEN',
  not_found: 'NOT_FOUND',
  ceiling: 'CONFLICT',
};

/** Seconds a client waits before retrying when the token could not be checked. */
const AUTH_RETRY_AFTER_SECONDS = 5;

export class ApiError extends Error {
  readonly status: number;

  constructor(
    readonly code: V1ErrorCode,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'ApiError';
    this.status = V1_ERROR_STATUS[code];
  }
}

export const badRequest = (message: string): ApiError => new ApiError('BAD_REQUEST', message);
export const forbidden = (message: string): ApiError => new ApiError('FORBIDDEN', message);

/** A 500 that leaks neither message nor stack. */
export const internalError = (): ApiError => new ApiError('INTERNAL_ERROR', 'An internal error occurred; please retry later');

/**
 * Maps anything thrown while serving a `/v1` request. `unexpected` is called for what is not a
 * known error (it is logged there, then answered 500).
 */
export function toApiError(err: unknown, unexpected: (err: unknown) => void = () => undefined): ApiError {
  if (err instanceof ApiError) return err;
  if (err instanceof MemoryError) {
    if (err.code === 'INTERNAL_ERROR') {
      unexpected(err);
      return internalError();
    }
    const retry = err.extra.retryAfterSeconds;
    // The core speaks of an expected rev; a /v1 client sent it as If-Match.
    const message = err.extra.stale ? ifMatchConflictMessage(err.extra.stale) : err.message;
    return new ApiError(err.code, message, retry === undefined ? {} : { 'retry-after': String(retry) });
  }
  if (err instanceof PersonalTokenError) return new ApiError(TOKEN_ERROR_CODE[err.kind], err.message);
  if (err instanceof IdempotencyUnavailable) {
    // The key's record lives in DynamoDB like the rev lock: the same outage, the same answer as a write without a key.
    return new ApiError('UPSTREAM_UNAVAILABLE', 'The record of this Idempotency-Key cannot be read or written; retry shortly (nothing was written)', {
      'retry-after': '1',
    });
  }
  if (err instanceof StorageError) {
    // The transport's own storage calls (an export written to S3); the core maps its own.
    return new ApiError('UPSTREAM_UNAVAILABLE', 'Memory storage is unavailable; retry shortly', { 'retry-after': '1' });
  }
  if (isAuthError(err)) {
    if (err.kind === 'unavailable') {
      return new ApiError('UPSTREAM_UNAVAILABLE', 'The sign-in service cannot be reached; retry shortly', {
        'retry-after': String(AUTH_RETRY_AFTER_SECONDS),
      });
    }
    const missing = err.reason === 'missing';
    return new ApiError('UNAUTHENTICATED', refusalMessage(err), {
      'www-authenticate': missing ? 'Bearer' : 'Bearer error="invalid_token"',
    });
  }
  if (err instanceof ValidationError) {
    const details = err.details.map((d) => `${d.field}: ${d.message}`).join('; ');
    return new ApiError('BAD_REQUEST', details ? `Invalid query: ${details}` : err.message);
  }
  unexpected(err);
  return internalError();
}

/** The envelope of spec 2; never cached (a shared cache must not keep one caller's answer). */
export function errorResult(err: ApiError): HttpResult {
  return {
    statusCode: err.status,
    headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', ...err.headers },
    body: JSON.stringify({ error: { code: err.code, message: err.message } }),
  };
}

/** The `WWW-Authenticate` of the git remote: git asks for credentials (and curl sends them) only after a Basic challenge. */
export const GIT_CHALLENGE = 'Basic realm="memory", charset="UTF-8"';

/**
 * An error of the git remote. git shows a `text/plain` error body to its user (`remote: …`) and
 * ignores JSON, so the same code and message go as one line of text; a 401 challenges for Basic.
 */
export function gitErrorResult(err: ApiError): HttpResult {
  const headers = { ...err.headers };
  if (err.status === 401) headers['www-authenticate'] = GIT_CHALLENGE;
  return {
    statusCode: err.status,
    headers: { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store', ...headers },
    body: `${err.code}: ${err.message}\n`,
  };
}
