import { createHash, randomBytes } from 'node:crypto';

/**
 * The OAuth front's opaque credentials. Each is `<prefix><family>.<secret>`: the prefix says what
 * it is (a refresh token presented as a bearer is refused without a lookup), `family` names the
 * authorization grant it descends from (so one strongly consistent BatchGet reads the token and its
 * family's revocation state together), `secret` is 256 random bits. Only the SHA-256 of the whole
 * string is stored, so the family part cannot be altered without missing the stored hash.
 */
export const TOKEN_PREFIX = { access: 'mcpat_', refresh: 'mcprt_', code: 'mcpac_' } as const;
export type OpaqueKind = keyof typeof TOKEN_PREFIX;

const FAMILY_CHARS = 22; // 16 random bytes, base64url
const SECRET_CHARS = 43; // 32 random bytes, base64url
const SHAPE = new RegExp(`^(mcpat_|mcprt_|mcpac_)([A-Za-z0-9_-]{${FAMILY_CHARS}})\\.([A-Za-z0-9_-]{${SECRET_CHARS}})$`);

export function newFamilyId(): string {
  return randomBytes(16).toString('base64url');
}

export function mintOpaque(kind: OpaqueKind, familyId: string): string {
  if (!/^[A-Za-z0-9_-]{22}$/.test(familyId)) throw new Error('family ids are 22 base64url characters');
  return `${TOKEN_PREFIX[kind]}${familyId}.${randomBytes(32).toString('base64url')}`;
}

export interface ParsedOpaque {
  kind: OpaqueKind;
  familyId: string;
  /** Hex SHA-256 of the whole token: the only form ever stored or cached. */
  hash: string;
}

export function parseOpaque(token: string): ParsedOpaque | undefined {
  const m = SHAPE.exec(token);
  if (!m) return undefined;
  const kind = (Object.keys(TOKEN_PREFIX) as OpaqueKind[]).find((k) => TOKEN_PREFIX[k] === m[1]) as OpaqueKind;
  return { kind, familyId: m[2], hash: hashToken(token) };
}

export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** Whether a bearer string claims to be one of ours (then it is never tried as a JWT). */
export function looksOpaque(token: string): boolean {
  return token.startsWith(TOKEN_PREFIX.access) || token.startsWith(TOKEN_PREFIX.refresh) || token.startsWith(TOKEN_PREFIX.code);
}
