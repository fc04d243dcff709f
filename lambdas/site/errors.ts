/**
 * The site's errors: typed values a page throws, answered as an HTML page with the status and the
 * stable code of the catalog's vocabulary (spec 1), so a person reads what went wrong and a test or
 * a crawler reads the status and the code on the page (`data-error-code`).
 */
export type SiteErrorCode = 'INVALID_QUERY' | 'NOT_FOUND' | 'METHOD_NOT_ALLOWED' | 'RATE_LIMITED' | 'FORBIDDEN' | 'INTERNAL_ERROR' | 'UNAVAILABLE';

const STATUS: Record<SiteErrorCode, number> = {
  INVALID_QUERY: 400,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  RATE_LIMITED: 429,
  FORBIDDEN: 403,
  INTERNAL_ERROR: 500,
  UNAVAILABLE: 503,
};

export class SiteError extends Error {
  readonly status: number;

  constructor(
    readonly code: SiteErrorCode,
    readonly title: string,
    message: string,
    /** Field problems of a bad query, shown as a list. */
    readonly details: Array<{ field: string; message: string }> = [],
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'SiteError';
    this.status = STATUS[code];
  }
}

export const pageNotFound = (message: string): SiteError => new SiteError('NOT_FOUND', 'Not found', message);
