import { logger } from '../logger';

/**
 * Runs a rate-limit check (`take`: a caller's lookup and the limiter's call) so that an outage of
 * the limiter's table opens the gate instead of failing the request: the limit protects the
 * service, and its own table being down must not turn every request into a 500. Logged, with the
 * request id; `undefined` means "not limited, no decision".
 */
export async function failOpen<T>(requestId: string, take: () => Promise<T>): Promise<T | undefined> {
  try {
    return await take();
  } catch (err) {
    logger.warn('rate limiter unavailable; request served without a limit', { requestId, err: err instanceof Error ? err.message : String(err) });
    return undefined;
  }
}
