import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { crc32 } from 'node:zlib';

/**
 * The shape of a personal access token: `mcpm_pat_<id>_<secret><checksum>`, like GitHub's tokens,
 * so that a secret scanner (this project's, in `lambdas/memory/credentials.ts`, and any other)
 * recognises one by its prefix alone and can tell a real one from a look-alike by its checksum.
 *
 *   id        12 base62 characters (71 bits): names the token in `GET /v1/tokens` and keys its item
 *   secret    32 base62 characters (190 bits)
 *   checksum  6 base62 characters: CRC-32 of everything before it, so a mistyped or truncated token
 *             is refused without a table read
 *
 * Only the SHA-256 of the whole token is stored; the id alone grants nothing.
 */
export const PERSONAL_TOKEN_PREFIX = 'mcpm_pat_';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const ID_CHARS = 12;
const SECRET_CHARS = 32;
const CHECKSUM_CHARS = 6;
const SHAPE = new RegExp(`^${PERSONAL_TOKEN_PREFIX}([0-9A-Za-z]{${ID_CHARS}})_([0-9A-Za-z]{${SECRET_CHARS}})([0-9A-Za-z]{${CHECKSUM_CHARS}})$`);
/** A token id as `GET /v1/tokens` lists it and `DELETE /v1/tokens/{id}` takes it. */
export const PERSONAL_TOKEN_ID = new RegExp(`^[0-9A-Za-z]{${ID_CHARS}}$`);

/** Uniform base62 characters: bytes of 248 and above are dropped (248 = 4 × 62), so no character is likelier than another. */
function randomBase62(n: number): string {
  let out = '';
  while (out.length < n) {
    for (const b of randomBytes(n * 2)) {
      if (b < 248 && out.length < n) out += BASE62[b % 62];
    }
  }
  return out;
}

function base62(value: number, width: number): string {
  let out = '';
  let v = value;
  for (let i = 0; i < width; i++) {
    out = BASE62[v % 62] + out;
    v = Math.floor(v / 62);
  }
  return out;
}

const checksum = (body: string): string => base62(crc32(body), CHECKSUM_CHARS);

export function hashPersonalToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

export function mintPersonalToken(): { id: string; token: string; hash: string } {
  const id = randomBase62(ID_CHARS);
  const body = `${PERSONAL_TOKEN_PREFIX}${id}_${randomBase62(SECRET_CHARS)}`;
  const token = body + checksum(body);
  return { id, token, hash: hashPersonalToken(token) };
}

/** The id and hash of a well-formed token (prefix, lengths, alphabet and checksum), else undefined. */
export function parsePersonalToken(token: string): { id: string; hash: string } | undefined {
  const m = SHAPE.exec(token);
  if (!m) return undefined;
  const body = token.slice(0, token.length - CHECKSUM_CHARS);
  if (checksum(body) !== m[3]) return undefined;
  return { id: m[1], hash: hashPersonalToken(token) };
}

/** Whether a bearer string claims to be a personal access token (then it is never tried as a JWT). */
export function looksPersonal(token: string): boolean {
  return token.startsWith(PERSONAL_TOKEN_PREFIX);
}

/** Compares two hex hashes in constant time. */
export function sameHash(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === y.length && x.length > 0 && timingSafeEqual(x, y);
}
