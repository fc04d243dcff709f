import { logger } from '../logger';
import type { HttpEvent } from './types';

// Level checked once: building the entry costs more than the (usually silent) call itself.
const LOG_REQUESTS = logger.getLevelName() !== 'SILENT';

/**
 * The one access-log line of a request of the APIs on API Gateway: its id, verb, path, route and
 * outcome. Never headers or the query string: they carry bearer tokens, codes and `state`.
 */
export function logRequest(requestId: string, event: HttpEvent, route: string, status: number, startedMs: number): void {
  if (!LOG_REQUESTS) return;
  logger.info('request', {
    requestId,
    method: event.requestContext.http.method,
    path: event.rawPath,
    route,
    status,
    durationMs: Math.round((performance.now() - startedMs) * 100) / 100,
  });
}
