import type { HttpEvent } from '../../shared/http/types';

/** What a route handler sees of the request. */
export interface RequestCtx {
  event: HttpEvent;
  /** Raw query, key → values in order (see `parseRawQuery`). */
  query: Map<string, string[]>;
  /** Path parameters, decoded once. */
  params: Record<string, string>;
  requestId: string;
}
