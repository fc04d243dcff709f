import type { Principal } from '../identity/principal';
import type { TokenVerifier } from '../identity/verifier';
import type { CatalogConfig } from './config';
import { clientIp } from '../shared/http/client-ip';
import { header, type HttpEvent } from '../shared/http/types';
import { logger } from '../shared/logger';
import type { Bucket } from '../shared/http/pipeline';
import type { RatePolicy } from '../shared/rate-limit/rate-limiter';

/** Who is calling, for rate limiting: `BearerCallers` (the bearer tier) or `AnonymousCallers` (IP only). */
export interface CallerResolver {
  resolve(event: HttpEvent): Promise<Bucket>;
}

export function anonymousPolicy(config: CatalogConfig): RatePolicy {
  return { name: 'catalog-anon', ratePerSecond: config.anonymous.rate, burst: config.anonymous.burst };
}

export function authenticatedPolicy(config: CatalogConfig): RatePolicy {
  return { name: 'catalog-user', ratePerSecond: config.authenticated.rate, burst: config.authenticated.burst };
}

/**
 * The rate-limit tier of a request whose token has (or has not) been verified: a principal is
 * keyed by user with the authenticated policy, anything else by client IP with the anonymous one.
 */
export function tierFor(principal: Principal | undefined, event: HttpEvent, config: CatalogConfig, originSecret: () => string | undefined): Bucket {
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

  async resolve(event: HttpEvent): Promise<Bucket> {
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
      return tierFor(principal, event, this.config, this.originSecret);
    } catch {
      return { key: 'ip:unknown', policy: anonymousPolicy(this.config) };
    }
  }
}

/** The IP tier only, for a deployment without a token verifier. */
export class AnonymousCallers implements CallerResolver {
  constructor(
    private readonly config: CatalogConfig,
    private readonly originSecret: () => string | undefined,
  ) {}

  async resolve(event: HttpEvent): Promise<Bucket> {
    return { key: `ip:${clientIp(event, this.originSecret())}`, policy: anonymousPolicy(this.config) };
  }
}
