import middy from '@middy/core';
import { randomUUID } from 'node:crypto';
import { logger } from '../logger';
import { errorResult, internalError } from './catalog-envelope';
import { corsHeaders } from './cors';
import type { HttpEvent, HttpResult, LambdaContext } from './types';

/**
 * The Lambda entry of an API function in the catalog envelope: middy around its dispatcher. Every
 * log line of a request carries its `requestId` explicitly (API Gateway's id, else Lambda's), so no
 * per-request logger state is kept. The dispatcher answers its own errors; what lands here is a
 * failed dependency initialisation, answered 500 with CORS so browsers can read it.
 */
export function catalogEnvelopeEntry<D>(
  name: string,
  getDeps: () => Promise<D>,
  dispatch: (event: HttpEvent, deps: D, requestId: string) => Promise<HttpResult>,
) {
  return middy<HttpEvent, HttpResult, Error, LambdaContext>().handler(async (event, context) => {
    const requestId = event.requestContext?.requestId ?? context.awsRequestId ?? randomUUID();
    try {
      return await dispatch(event, await getDeps(), requestId);
    } catch (err) {
      logger.error(`${name} handler failed`, { requestId, err: err instanceof Error ? err.message : String(err) });
      const failed = errorResult(internalError());
      return { ...failed, headers: { ...failed.headers, ...corsHeaders() } };
    }
  });
}
