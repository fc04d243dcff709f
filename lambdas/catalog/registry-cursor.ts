import { createHash } from 'node:crypto';
import type { RegistryQuery, SearchIndex } from '../catalog-core';
import { CursorError, type CursorCodec } from '../shared/cursor';
import { ValidationError } from '../shared/http/query';

/**
 * The cursors of the registry-shaped listings (`/api/v0.1/servers`, `/org/v0.1/servers`): a
 * position in name order, signed, bound to the query.
 *
 * The cursor encodes a compact position, not the name plus a MAC (names may be 200 chars long and
 * cursors must stay within 200): the last name itself when it fits in 64 UTF-8 bytes (almost always),
 * else its first 64 bytes plus a 6-byte hash of the whole name. Resuming asks the index for names
 * from the prefix on and takes the one whose hash matches. The cursor is bound to the query's
 * `search` and `updated_since` and to the listing (its purpose), so a cursor of another query or
 * of another listing is refused.
 */
const PREFIX_BYTES = 64;
const HASH_BYTES = 6;
/** How many names sharing a 64-byte prefix we look through to find the cursor's name. */
const PREFIX_SCAN = 64;

export type Resume = Pick<RegistryQuery, 'nameAfter' | 'nameFrom'>;

export function registryFingerprint(search: string | undefined, updatedSince: string | undefined): Buffer {
  return createHash('sha256')
    .update(`${search?.toLowerCase() ?? ''}\0${updatedSince ?? ''}`)
    .digest()
    .subarray(0, 4);
}

function nameHash(name: string): Buffer {
  return createHash('sha256').update(name).digest().subarray(0, HASH_BYTES);
}

export function encodeRegistryCursor(codec: CursorCodec, purpose: string, name: string, fp: Buffer): string {
  const bytes = Buffer.from(name, 'utf8');
  const full = bytes.length <= PREFIX_BYTES;
  const nameBytes = full ? bytes : Buffer.from(utf8Prefix(name, PREFIX_BYTES), 'utf8');
  const parts = [Buffer.from([1]), fp, Buffer.from([full ? 1 : 0, nameBytes.length]), nameBytes];
  if (!full) parts.push(nameHash(name));
  return codec.encode(purpose, Buffer.concat(parts));
}

/**
 * Where a listing resumes after the cursor's name. A server that left the catalog since: after
 * every name sharing its prefix that the index still has (or from the prefix when none).
 */
export async function resumeRegistryCursor(
  codec: CursorCodec,
  purpose: string,
  cursor: string,
  fp: Buffer,
  index: Pick<SearchIndex, 'registryPage'>,
  filter: Pick<RegistryQuery, 'search' | 'updatedSince'>,
): Promise<Resume> {
  const bad = () => new ValidationError([{ field: 'cursor', message: 'is not a cursor of this listing and query' }]);
  let p: Buffer;
  try {
    p = await codec.decode(purpose, cursor);
  } catch (err) {
    if (err instanceof CursorError) throw bad();
    throw err;
  }
  if (p.length < 7 || p[0] !== 1 || !p.subarray(1, 5).equals(fp)) throw bad();
  const full = p[5] === 1;
  const len = p[6];
  const name = p.subarray(7, 7 + len).toString('utf8');
  if (full) return { nameAfter: name };
  const hash = p.subarray(7 + len, 7 + len + HASH_BYTES);
  if (hash.length !== HASH_BYTES) throw bad();
  const candidates = await index.registryPage({ ...filter, nameFrom: name, limit: PREFIX_SCAN + 1 });
  const found = candidates.find((r) => nameHash(r.name).equals(hash));
  if (found) return { nameAfter: found.name };
  const sharing = candidates.filter((r) => r.name.startsWith(name));
  return sharing.length > 0 ? { nameAfter: sharing[sharing.length - 1].name } : { nameFrom: name };
}

/** The longest prefix of `s` whose UTF-8 encoding fits in `max` bytes, never splitting a character. */
function utf8Prefix(s: string, max: number): string {
  let bytes = 0;
  let out = '';
  for (const ch of s) {
    const n = Buffer.byteLength(ch, 'utf8');
    if (bytes + n > max) break;
    bytes += n;
    out += ch;
  }
  return out;
}
