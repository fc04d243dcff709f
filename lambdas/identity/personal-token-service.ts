import type { PersonalTokenLimits } from './config';
import type { PersonalTokenGrant, PersonalTokenRecord, PersonalTokenStore } from './personal-token-store';
import { PERSONAL_TOKEN_ID } from './personal-tokens';
import { AuthError, MEMORY_NAME, MEMORY_SCOPES, type MemoryScope, type Principal } from './principal';

/**
 * Personal access tokens as `/v1/tokens` offers them: who may create, list and revoke them, what a
 * new one may hold, and the one-time answer with the secret. The rules, with their reasons:
 *
 * - Only a signed-in user manages them: a token of the identity provider (Cognito, the local
 *   issuer) or of the OAuth front, holding at least one memory scope. A personal access token never
 *   creates, lists or revokes one (a leaked token cannot mint itself a successor), and the site's
 *   favorites sign-in, which reaches no memory, cannot either.
 * - A new token holds at most what its creator holds: its scopes are among the creator's, its
 *   memories among the creator's grant (omitted: the creator's grant). It is read-only
 *   (`memory:read`) or read-write (both scopes); write alone is refused.
 * - `pathPrefix` limits it to one folder of each memory it reaches (see the memory core's
 *   `path-scope.ts` for what that allows).
 */
export type PersonalTokenErrorKind = 'invalid' | 'forbidden' | 'not_found' | 'ceiling';

export class PersonalTokenError extends Error {
  constructor(
    readonly kind: PersonalTokenErrorKind,
    message: string,
  ) {
    super(message);
    this.name = 'PersonalTokenError';
  }
}

export interface CreateTokenInput {
  name: string;
  scopes: string[];
  memories?: string[];
  pathPrefix?: string;
  expiresInDays?: number;
}

/** A token as `GET /v1/tokens` lists it: never the secret. Times are ISO 8601. */
export interface PersonalTokenInfo {
  id: string;
  name: string;
  scopes: MemoryScope[];
  /** Omitted: every memory of the account. */
  memories?: string[];
  /** Omitted: whole memories. */
  pathPrefix?: string;
  created: string;
  expires: string;
  /** Omitted until first used; accurate to within `AUTH_PAT_LAST_USED_SECONDS`. */
  lastUsed?: string;
}

export const MAX_TOKEN_NAME_CHARS = 100;
export const MAX_TOKEN_MEMORIES = 100;
/** The same bound as a note path's folder part (the core's `maxPathBytes` is 1024 for the whole path). */
export const MAX_PATH_PREFIX_BYTES = 512;

const CONTROL = /[\u0000-\u001f\u007f]/;
const iso = (seconds: number): string => new Date(seconds * 1000).toISOString();
const invalid = (message: string): PersonalTokenError => new PersonalTokenError('invalid', message);

export interface PersonalTokensOptions {
  /** Milliseconds since the epoch. */
  clock?: () => number;
  /** Called after a revocation, so this instance's verifier forgets the token at once. */
  onRevoke?: (id: string) => void;
}

export class PersonalTokens {
  private readonly clock: () => number;

  constructor(
    private readonly store: PersonalTokenStore,
    readonly limits: PersonalTokenLimits,
    private readonly opts: PersonalTokensOptions = {},
  ) {
    this.clock = opts.clock ?? Date.now;
  }

  async create(creator: Principal, input: CreateTokenInput): Promise<PersonalTokenInfo & { token: string }> {
    signedIn(creator);
    const grant = this.grantOf(creator, input);
    const out = await reachStore(() => this.store.create(grant, this.limits.maxPerUser));
    if (out.status === 'ceiling') {
      throw new PersonalTokenError(
        'ceiling',
        `you already have ${this.limits.maxPerUser} active personal access tokens, the most you may have; revoke one first`,
      );
    }
    return { ...infoOf(out.record), token: out.token };
  }

  async list(owner: Principal): Promise<PersonalTokenInfo[]> {
    signedIn(owner);
    return (await reachStore(() => this.store.list(owner.sub))).map(infoOf);
  }

  async revoke(owner: Principal, id: string): Promise<void> {
    signedIn(owner);
    const revoked = PERSONAL_TOKEN_ID.test(id) && (await reachStore(() => this.store.revoke(owner.sub, id)));
    if (!revoked) throw new PersonalTokenError('not_found', `you have no active personal access token "${id.slice(0, 64)}"`);
    this.opts.onRevoke?.(id);
  }

  /** The grant a creation asks for, checked against the creator's own. */
  grantOf(creator: Principal, input: CreateTokenInput): PersonalTokenGrant {
    const name = typeof input.name === 'string' ? input.name.trim() : '';
    if (name === '' || [...name].length > MAX_TOKEN_NAME_CHARS || CONTROL.test(name)) {
      throw invalid(`name must be 1-${MAX_TOKEN_NAME_CHARS} characters without control characters`);
    }
    const scopes = scopesOf(creator, input.scopes);
    const memories = memoriesOf(creator, input.memories);
    const pathPrefix = input.pathPrefix === undefined ? undefined : normalisePathPrefix(input.pathPrefix);
    const { defaultDays, maxDays } = this.limits;
    const days = input.expiresInDays ?? defaultDays;
    if (!Number.isInteger(days) || days < 1 || days > maxDays) throw invalid(`expiresInDays must be an integer from 1 to ${maxDays} (default ${defaultDays})`);
    return {
      sub: creator.sub,
      name,
      scopes,
      ...(memories !== undefined && { memories }),
      ...(pathPrefix !== undefined && { pathPrefix }),
      expiresAt: Math.floor(this.clock() / 1000) + days * 86400,
    };
  }
}

function signedIn(p: Principal): void {
  if (p.kind === 'pat') {
    throw new PersonalTokenError(
      'forbidden',
      'personal access tokens are managed with a sign-in (an OAuth or identity-provider token), not with a personal access token',
    );
  }
  if (p.scopes.length === 0) {
    throw new PersonalTokenError('forbidden', 'this sign-in reaches no memory; sign in with memory:read (and memory:write) to manage personal access tokens');
  }
}

function scopesOf(creator: Principal, raw: readonly string[]): MemoryScope[] {
  if (!Array.isArray(raw) || raw.length === 0) throw invalid(`scopes must list memory:read, or memory:read and memory:write`);
  const unknown = raw.find((s) => !(MEMORY_SCOPES as readonly string[]).includes(s));
  if (unknown !== undefined) throw invalid(`scopes: "${String(unknown).slice(0, 40)}" is not a scope (memory:read, memory:write)`);
  const scopes = MEMORY_SCOPES.filter((s) => raw.includes(s));
  if (!scopes.includes('memory:read'))
    throw invalid('scopes: a token is read-only (memory:read) or read-write (memory:read and memory:write); write alone is not offered');
  const lacking = scopes.filter((s) => !creator.scopes.includes(s));
  if (lacking.length > 0)
    throw new PersonalTokenError('forbidden', `this sign-in does not hold ${lacking.join(' and ')}; a token cannot be given more than its creator holds`);
  return scopes;
}

function memoriesOf(creator: Principal, raw: readonly string[] | undefined): string[] | undefined {
  if (raw === undefined) return creator.memories === undefined ? undefined : [...creator.memories];
  const names = [...new Set(raw)];
  if (names.length === 0 || names.length > MAX_TOKEN_MEMORIES)
    throw invalid(`memories must name 1-${MAX_TOKEN_MEMORIES} memories, or be omitted for all of them`);
  const bad = names.find((n) => typeof n !== 'string' || !MEMORY_NAME.test(n) || n === 'export');
  if (bad !== undefined) throw invalid(`memories: "${String(bad).slice(0, 70)}" is not a memory name (1-64 characters of a-z 0-9 _ -)`);
  const outside = creator.memories === undefined ? undefined : names.find((n) => !creator.memories?.includes(n));
  if (outside !== undefined)
    throw new PersonalTokenError('forbidden', `memory "${outside}" is not granted to this sign-in; a token cannot reach more than its creator`);
  return names;
}

/**
 * A folder as note paths spell it: no leading slash, no empty, `.` or `..` segment, no backslash,
 * control character or leading `@`, no segment ending in `.md`; one trailing slash is dropped. The
 * memory core refuses anything else in a path anyway, so a prefix it would refuse could reach nothing.
 */
export function normalisePathPrefix(raw: string): string {
  if (typeof raw !== 'string') throw invalid('pathPrefix must be a string');
  let p = raw.trim();
  if (p.endsWith('/')) p = p.slice(0, -1);
  if (p === '') throw invalid('pathPrefix must name a folder (omit it for whole memories)');
  if (Buffer.byteLength(p, 'utf8') > MAX_PATH_PREFIX_BYTES) throw invalid(`pathPrefix is longer than ${MAX_PATH_PREFIX_BYTES} bytes`);
  if (p.startsWith('/') || p.startsWith('@') || p.includes('\\') || CONTROL.test(p)) {
    throw invalid('pathPrefix must be a folder path like projects/alpha: no leading / or @, no backslash or control characters');
  }
  for (const seg of p.split('/')) {
    if (seg === '' || seg === '.' || seg === '..') throw invalid('pathPrefix may not contain empty, "." or ".." segments');
    if (seg.endsWith('.md')) throw invalid('pathPrefix names a folder: no segment may end in .md');
  }
  return p;
}

function infoOf(r: PersonalTokenRecord): PersonalTokenInfo {
  return {
    id: r.id,
    name: r.name,
    scopes: [...r.scopes],
    ...(r.memories !== undefined && { memories: [...r.memories] }),
    ...(r.pathPrefix !== undefined && { pathPrefix: r.pathPrefix }),
    created: iso(r.createdAt),
    expires: iso(r.expiresAt),
    ...(r.lastUsedAt !== undefined && { lastUsed: iso(r.lastUsedAt) }),
  };
}

/** A table outage is the sign-in service's (503 and retry), never a 500. */
async function reachStore<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw new AuthError('token-store-unavailable', 'the token store cannot be reached', { cause: err });
  }
}
