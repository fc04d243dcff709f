import { logger } from '../shared/logger';
import { NEGATIVE_CACHE_MS } from './opaque-verifier';
import type { PersonalTokenStore } from './personal-token-store';
import { parsePersonalToken, sameHash } from './personal-tokens';
import { AuthError, type AuthFailureReason, type Principal } from './principal';
import { TtlCache } from './ttl-cache';

export interface PersonalVerifierOptions {
  /**
   * How long a verified token is trusted without a table read (`AUTH_TOKEN_CACHE_SECONDS`): the
   * bound within which a revocation made on another instance is seen here. The instance that
   * revokes forgets the token at once (`forget`).
   */
  cacheSeconds: number;
  /** A use is recorded at most this often per token (`AUTH_PAT_LAST_USED_SECONDS`). */
  lastUsedSeconds: number;
  /** Milliseconds since the epoch. */
  clock?: () => number;
  maxEntries?: number;
}

/**
 * Verifies personal access tokens (`mcpm_pat_…`): the shape and checksum first (a mistyped token
 * costs no read), then one strongly consistent read of the token's item, its hash compared in
 * constant time. Accepted tokens are cached by hash for `cacheSeconds`, refusals for five minutes
 * (a refusal never turns into acceptance). Keyed by the whole token's hash, never by its id: a
 * forged secret with a real id cannot evict or poison the real token's entry.
 *
 * Its use is recorded on the table read, when the stored `lastUsedAt` is older than
 * `lastUsedSeconds`: with the cache in front, a busy token costs one read per `cacheSeconds` per
 * instance and one write per interval overall.
 */
export class PersonalTokenVerifier {
  private readonly accepted: TtlCache<Principal>;
  private readonly refused: TtlCache<{ reason: AuthFailureReason; message: string }>;
  private readonly clock: () => number;

  constructor(
    private readonly store: PersonalTokenStore,
    private readonly opts: PersonalVerifierOptions,
  ) {
    this.clock = opts.clock ?? Date.now;
    this.accepted = new TtlCache(opts.maxEntries ?? 10000);
    this.refused = new TtlCache(opts.maxEntries ?? 10000);
  }

  async verify(token: string): Promise<Principal> {
    const parsed = parsePersonalToken(token);
    if (!parsed) throw new AuthError('malformed', 'not a well-formed personal access token');
    const now = this.clock();
    const hit = this.accepted.get(parsed.hash, now);
    if (hit && hit.expiresAt * 1000 > now) return hit;
    const no = this.refused.get(parsed.hash, now);
    if (no) throw new AuthError(no.reason, no.message);

    let record: Awaited<ReturnType<PersonalTokenStore['find']>>;
    try {
      record = await this.store.find(parsed.id);
    } catch (err) {
      throw new AuthError('token-store-unavailable', 'the token store cannot be reached', { cause: err });
    }
    const refuse = (reason: AuthFailureReason, message: string): never => {
      this.refused.set(parsed.hash, { reason, message }, now + NEGATIVE_CACHE_MS);
      throw new AuthError(reason, message);
    };
    if (!record || !sameHash(record.hash, parsed.hash)) return refuse('unknown-token', 'token not recognised');
    if (record.revoked) return refuse('revoked', 'token revoked');
    if (record.expiresAt * 1000 <= now) return refuse('expired', 'token expired');

    const principal: Principal = {
      sub: record.sub,
      scopes: [...record.scopes],
      ...(record.memories !== undefined && { memories: [...record.memories] }),
      clientId: `pat:${record.id}`,
      kind: 'pat',
      expiresAt: record.expiresAt,
      tokenId: record.id,
      ...(record.pathPrefix !== undefined && { pathPrefix: record.pathPrefix }),
    };
    if (this.opts.cacheSeconds > 0) this.accepted.set(parsed.hash, principal, Math.min(now + this.opts.cacheSeconds * 1000, record.expiresAt * 1000));
    const nowSeconds = Math.floor(now / 1000);
    if (record.lastUsedAt === undefined || record.lastUsedAt <= nowSeconds - this.opts.lastUsedSeconds) {
      // A failed record of use never fails the request it was for.
      await this.store.touch(record.id, this.opts.lastUsedSeconds).catch((err: unknown) => {
        logger.warn('could not record the use of a personal access token', { tokenId: record.id, err: err instanceof Error ? err.message : String(err) });
      });
    }
    return principal;
  }

  /** This instance's revocation: the token is refused from the next request on, not after the cache life. */
  forget(id: string): void {
    this.accepted.deleteWhere((p) => p.tokenId === id);
  }
}
