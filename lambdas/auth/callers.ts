import { anonymousPolicy, authenticatedPolicy, clientIp, type Caller, type CallerResolver } from '../catalog/caller';
import type { CatalogConfig } from '../shared/config';
import { header, type HttpEvent } from '../shared/http/types';
import { logger } from '../shared/logger';
import type { Principal } from './principal';
import type { TokenVerifier } from './verifier';

/**
 * The rate-limit tier of a request whose token has (or has not) been verified: a principal is
 * keyed by user with the authenticated policy, anything else by client IP with the anonymous one.
 */
export function callerFor(
  principal: Principal | undefined,
  event: HttpEvent,
  config: CatalogConfig,
  originSecret: () => string | undefined,
): Caller {
  if (principal) return { key: `user:${principal.sub}`, policy: authenticatedPolicy(config) };
  return { key: `ip:${clientIp(event, originSecret())}`, policy: anonymousPolicy(config) };
}

/**
 * The catalog's bearer tier (spec 1): a valid bearer raises the limit to the authenticated policy
 * keyed by `user:<sub>`; a missing, bad, expired or unverifiable one (auth backend down) silently
 * gets the anonymous IP tier. Catalog reads are never refused for a token, so this never throws.
 */
export class BearerCallers implements CallerResolver {
  constructor(
    private readonly verifier: TokenVerifier,
    private readonly config: CatalogConfig,
    private readonly originSecret: () => string | undefined,
  ) {}

  async resolve(event: HttpEvent): Promise<Caller> {
    let principal: Principal | undefined;
    const authorization = header(event, 'authorization');
    if (authorization !== undefined) {
      try {
        principal = await this.verifier.verify(authorization);
      } catch (err) {
        logger.debug('bearer not accepted for the rate-limit tier', { reason: (err as { reason?: string }).reason ?? 'error' });
      }
    }
    try {
      return callerFor(principal, event, this.config, this.originSecret);
    } catch {
      return { key: 'ip:unknown', policy: anonymousPolicy(this.config) };
    }
  }
}
