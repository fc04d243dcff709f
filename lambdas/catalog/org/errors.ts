import type { FieldIssue } from '../../shared/http/query';
import type { HttpResult } from '../../shared/http/types';

/**
 * The organisation registry's errors: the official registry's shape, `{ "error": "<message>" }`
 * (its OpenAPI's 404 body), with `details` per field where a request or an allow-list failed
 * validation. Handlers throw them; `api.ts` maps every other error onto one of them.
 */
export class OrgError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly details?: FieldIssue[],
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'OrgError';
  }
}

export const serverNotFound = (): OrgError => new OrgError(404, 'Server not found');

export function orgErrorResult(err: OrgError): HttpResult {
  return {
    statusCode: err.status,
    headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', ...err.headers },
    body: JSON.stringify({ error: err.message, ...(err.details && err.details.length > 0 && { details: err.details }) }),
  };
}
