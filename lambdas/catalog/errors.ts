/**
 * The catalog API's errors (spec 1), favorites included: typed values with the spec's stable
 * codes. Handlers throw them; `api.ts` turns them into the envelope of `envelope.ts`.
 */
export type CatalogErrorCode =
  | 'INVALID_QUERY'
  | 'UNAUTHORIZED'
  /** A request that reached the origin without CloudFront (README, "Deployment"): never seen through the public URL. */
  | 'FORBIDDEN'
  | 'NOT_FOUND'
  | 'METHOD_NOT_ALLOWED'
  | 'RATE_LIMITED'
  | 'AUTH_UNAVAILABLE'
  | 'INTERNAL_ERROR';

import type { FieldIssue } from '../shared/http/query';

const STATUS: Record<CatalogErrorCode, number> = {
  INVALID_QUERY: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  RATE_LIMITED: 429,
  AUTH_UNAVAILABLE: 503,
  INTERNAL_ERROR: 500,
};

export class CatalogError extends Error {
  readonly status: number;

  constructor(
    readonly code: CatalogErrorCode,
    message: string,
    readonly details?: FieldIssue[],
    /** Extra response headers (Allow, Retry-After, …). */
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'CatalogError';
    this.status = STATUS[code];
  }
}

export const invalidQuery = (details: FieldIssue[], message = 'One or more parameters are invalid'): CatalogError =>
  new CatalogError('INVALID_QUERY', message, details);

export const notFound = (message: string): CatalogError => new CatalogError('NOT_FOUND', message);
