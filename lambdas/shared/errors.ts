/**
 * Errors are typed values. Domain and handler code throws `AppError`; the HTTP layer maps it to
 * each API's envelope and status in one place (`http/envelope.ts`).
 */
export type CatalogErrorCode =
  | 'INVALID_QUERY'
  | 'UNAUTHORIZED'
  | 'NOT_FOUND'
  | 'METHOD_NOT_ALLOWED'
  | 'RATE_LIMITED'
  | 'AUTH_UNAVAILABLE'
  | 'INTERNAL_ERROR';

export interface FieldIssue {
  field: string;
  message: string;
}

const STATUS: Record<CatalogErrorCode, number> = {
  INVALID_QUERY: 400,
  UNAUTHORIZED: 401,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  RATE_LIMITED: 429,
  AUTH_UNAVAILABLE: 503,
  INTERNAL_ERROR: 500,
};

export class AppError extends Error {
  readonly status: number;

  constructor(
    readonly code: CatalogErrorCode,
    message: string,
    readonly details?: FieldIssue[],
    /** Extra response headers (Allow, Retry-After, …). */
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'AppError';
    this.status = STATUS[code];
  }
}

export const invalidQuery = (details: FieldIssue[], message = 'One or more parameters are invalid'): AppError =>
  new AppError('INVALID_QUERY', message, details);

export const notFound = (message: string): AppError => new AppError('NOT_FOUND', message);
