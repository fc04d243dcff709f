import { hashToken } from './opaque-tokens';
import { AuthError, type AuthFailureReason, type Principal } from './principal';
import type { OpaqueTokenStore } from './token-store';
import { TtlCache } from './ttl-cache';

export interface OpaqueVerifierOptions {
  /** Audience of this deployment: a token granted for another resource is refused. */
  audience: string;
  /** Positive cache life: how long a revocation may go unnoticed by a warm instance. */
  cacheSeconds: number;
  clock?: () => number;
  maxEntries?: number;
}

/** Refusals that can never turn into acceptance (a random token does not become issued, a revoked one stays revoked). */
export const NEGATIVE_CACHE_MS = 5 * 60 * 1000;

/**
 * Verifies `mcpat_` access tokens against the token table: one strongly consistent read of the
 * token and its family, then cached briefly by hash. Refusals are cached too, so a client stuck
 * retrying a revoked token does not cost a read per request. Table errors are `unavailable`.
 */
export class OpaqueAccessTokenVerifier {
  private readonly accepted: TtlCache<Principal>;
  private readonly refused: TtlCache<{ reason: AuthFailureReason; message: string }>;
  private readonly clock: () => number;

  constructor(
    private readonly store: OpaqueTokenStore,
    private readonly opts: OpaqueVerifierOptions,
  ) {
    this.clock = opts.clock ?? Date.now;
    this.accepted = new TtlCache(opts.maxEntries ?? 10000);
    this.refused = new TtlCache(opts.maxEntries ?? 10000);
  }

  async verify(token: string): Promise<Principal> {
    const key = hashToken(token);
    const now = this.clock();
    const hit = this.accepted.get(key, now);
    if (hit && hit.expiresAt * 1000 > now) return hit;
    const no = this.refused.get(key, now);
    if (no) throw new AuthError(no.reason, no.message);

    let lookup: Awaited<ReturnType<OpaqueTokenStore['findAccessToken']>>;
    try {
      lookup = await this.store.findAccessToken(token);
    } catch (err) {
      throw new AuthError('token-store-unavailable', 'the token store cannot be reached', { cause: err });
    }
    if (lookup.status !== 'active') {
      const refusal = REFUSALS[lookup.status];
      this.refused.set(key, refusal, now + NEGATIVE_CACHE_MS);
      throw new AuthError(refusal.reason, refusal.message);
    }
    const r = lookup.record;
    if (r.resource !== this.opts.audience) {
      const refusal = { reason: 'wrong-audience' as const, message: 'token granted for another resource' };
      this.refused.set(key, refusal, now + NEGATIVE_CACHE_MS);
      throw new AuthError(refusal.reason, refusal.message);
    }
    const principal: Principal = {
      sub: r.sub,
      scopes: [...r.scopes],
      ...(r.memories !== undefined && { memories: [...r.memories] }),
      clientId: r.clientId,
      kind: 'opaque',
      expiresAt: r.expiresAt,
    };
    if (this.opts.cacheSeconds > 0) {
      this.accepted.set(key, principal, Math.min(now + this.opts.cacheSeconds * 1000, r.expiresAt * 1000));
    }
    return principal;
  }
}

const REFUSALS: Record<'unknown' | 'revoked' | 'expired', { reason: AuthFailureReason; message: string }> = {
  unknown: { reason: 'unknown-token', message: 'token not recognised' },
  revoked: { reason: 'revoked', message: 'token revoked' },
  expired: { reason: 'expired', message: 'token expired' },
};
