/**
 * Who a verified bearer token speaks for, and the typed ways verification fails. Every API
 * (favorites, memory REST, MCP) reads these and maps failures to its own envelope:
 * `unauthenticated` → 401 (UNAUTHORIZED on the catalog, UNAUTHENTICATED on `/v1`),
 * `unavailable` → 503 (AUTH_UNAVAILABLE / UPSTREAM_UNAVAILABLE) so clients retry instead of signing out.
 */

export const MEMORY_SCOPES = ['memory:read', 'memory:write'] as const;
export type MemoryScope = (typeof MEMORY_SCOPES)[number];

/**
 * The OAuth front's scope for a sign-in that reaches no memory (the catalog site's favorites): its
 * tokens carry no memory scope and an empty memory grant, which favorites accept (any valid token).
 */
export const FAVORITES_SCOPE = 'favorites';

/** Memory names as spec 2 defines them (1-64 chars of a-z 0-9 _ -). */
export const MEMORY_NAME = /^[a-z0-9_-]{1,64}$/;

export interface Principal {
  /** The account: the identity provider's subject (Cognito `sub`, or the local issuer's). */
  sub: string;
  /** Normalised memory scopes (`<resource-server>/memory:read` arrives as `memory:read`); others are dropped. */
  scopes: MemoryScope[];
  /**
   * The memories this token may see. `undefined`: every memory of the account. A list (possibly
   * empty): exactly those. Carried by the JWT claim `memories` (see `parseMemoriesClaim`) or by the
   * opaque token's stored grant; never taken from a request parameter.
   */
  memories?: string[];
  /**
   * The user pool groups of a signed-in user's JWT (Cognito's `cognito:groups` claim; the local
   * issuer's tokens carry it too). Absent on opaque and personal access tokens: no group speaks
   * through a token issued to a client. `catalog-admins` may edit the organisation's allow-list.
   */
  groups?: string[];
  /** OAuth client the token was issued to (Cognito app client, a registered MCP client, `local-cli`; `pat:<id>` for a personal access token). */
  clientId?: string;
  /** A signed-in user's JWT (Cognito, the local issuer), an OAuth front token, or a personal access token. */
  kind: 'jwt' | 'opaque' | 'pat';
  /** Expiry, epoch seconds. */
  expiresAt: number;
  /** Personal access tokens: the token's id (`GET /v1/tokens`). */
  tokenId?: string;
  /**
   * Personal access tokens: the folder (no trailing slash) every note the token reaches lies in,
   * subfolders included; undefined: the whole memory.
   */
  pathPrefix?: string;
}

export type AuthFailureReason =
  | 'missing'
  | 'malformed'
  | 'expired'
  | 'not-yet-valid'
  | 'wrong-issuer'
  | 'wrong-audience'
  | 'bad-algorithm'
  | 'bad-signature'
  | 'unknown-key'
  | 'invalid-claims'
  | 'unknown-token'
  | 'revoked'
  | 'jwks-unavailable'
  | 'token-store-unavailable';

export type AuthErrorKind = 'unauthenticated' | 'unavailable';

const UNAVAILABLE: ReadonlySet<AuthFailureReason> = new Set(['jwks-unavailable', 'token-store-unavailable']);

export class AuthError extends Error {
  readonly kind: AuthErrorKind;

  constructor(
    readonly reason: AuthFailureReason,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'AuthError';
    this.kind = UNAVAILABLE.has(reason) ? 'unavailable' : 'unauthenticated';
  }
}

export const isAuthError = (err: unknown): err is AuthError => err instanceof AuthError;

/**
 * Which check a refused token failed, in words a caller can act on (a token minted for another
 * deployment or data directory, an expired one). Nothing here is secret: issuer and audience are
 * published in the discovery documents, and no part of the token is echoed.
 */
const FAILED_CHECK: Record<AuthFailureReason, string> = {
  missing: 'no bearer token was sent',
  malformed: 'it is not a well-formed bearer token',
  expired: 'it has expired',
  'not-yet-valid': 'it is not valid yet',
  'wrong-issuer': 'it was issued by another issuer than this deployment’s',
  'wrong-audience': 'it was issued for another audience than this deployment’s',
  'bad-algorithm': 'it is signed with an algorithm this deployment does not accept',
  'bad-signature': 'its signature does not verify with this deployment’s keys',
  'unknown-key': 'it is signed by a key this deployment does not know (minted for another deployment or data directory?)',
  'invalid-claims': 'its claims are not valid',
  'unknown-token': 'this deployment did not issue it, or it has expired',
  revoked: 'it was revoked',
  'jwks-unavailable': 'the signing keys could not be fetched',
  'token-store-unavailable': 'the token store could not be reached',
};

/** `The bearer token is not valid: it has expired`, and the like; the missing case has its own sentence. */
export function refusalMessage(err: AuthError): string {
  return err.reason === 'missing' ? 'A bearer token is required' : `The bearer token is not valid: ${FAILED_CHECK[err.reason]}`;
}

/**
 * Keeps `memory:read` / `memory:write`, bare or prefixed with this deployment's resource server
 * (Cognito sends custom scopes as `<resource-server-id>/memory:read`). Scopes of any other
 * resource server are dropped, not normalised: they were granted for another API.
 */
export function normaliseScopes(raw: unknown, resourceServerId?: string): MemoryScope[] {
  const tokens = typeof raw === 'string' ? raw.split(' ') : Array.isArray(raw) ? raw : [];
  const found = new Set<MemoryScope>();
  const prefix = resourceServerId === undefined ? undefined : `${resourceServerId.replace(/\/+$/, '')}/`;
  for (const t of tokens) {
    if (typeof t !== 'string') continue;
    const bare = prefix !== undefined && t.startsWith(prefix) ? t.slice(prefix.length) : t;
    if ((MEMORY_SCOPES as readonly string[]).includes(bare)) found.add(bare as MemoryScope);
  }
  return MEMORY_SCOPES.filter((s) => found.has(s));
}

/**
 * The `memories` claim: absent means every memory of the account; otherwise an array of memory
 * names or one space-separated string of them (like `scope`). An empty array or empty string is a
 * grant of no memory at all. Anything else (a number, a non-name entry) makes the token invalid
 * rather than silently widening or narrowing the grant.
 */
export function parseMemoriesClaim(raw: unknown): string[] | undefined {
  if (raw === undefined) return undefined;
  let names: unknown[];
  if (typeof raw === 'string') names = raw.split(' ').filter((s) => s !== '');
  else if (Array.isArray(raw)) names = raw;
  else throw new AuthError('invalid-claims', 'the memories claim must be an array or a space-separated string');
  const out: string[] = [];
  for (const n of names) {
    if (typeof n !== 'string' || !MEMORY_NAME.test(n)) {
      throw new AuthError('invalid-claims', 'the memories claim holds something that is not a memory name');
    }
    if (!out.includes(n)) out.push(n);
  }
  return out;
}

export function hasScope(p: Principal, scope: MemoryScope): boolean {
  return p.scopes.includes(scope);
}

/** Whether the token's grant covers this memory (spec 2: a memory not granted is 403, existing or not). */
export function memoryGranted(p: Principal, memory: string): boolean {
  return p.memories === undefined || p.memories.includes(memory);
}
