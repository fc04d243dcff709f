import { type CatalogRecord, toRegistryEntry } from '../../catalog-core';
import { createHash } from 'node:crypto';
import { CursorError } from '../../shared/cursor';
import { invalidQuery } from '../errors';
import { validateQuery } from '../../shared/http/query';
import { json, type HandlerResponse } from '../../shared/http/types';
import type { CatalogDeps } from '../deps';
import { RegistryQuerySchema } from '../schemas';
import type { RequestCtx } from './context';

/**
 * GET /api/v0.1/servers: the registry-compatible feed, ordered by name, unwrapped.
 *
 * The cursor encodes a compact position, not the name plus a MAC (names may be 200 chars long and
 * cursors must stay within 200): the last name itself when it fits in 64 UTF-8 bytes (almost always),
 * else its first 64 bytes plus a 6-byte hash of the whole name. Resuming asks the index for names
 * from the prefix on and skips past the one whose hash matches. The cursor is bound to the query's
 * `search` and `updated_since`, so a cursor of another query (or of another listing) is refused.
 */
const PURPOSE = 'catalog:v0.1/servers';
const PREFIX_BYTES = 64;
const HASH_BYTES = 6;
/** How many names sharing a 64-byte prefix we look through to find the cursor's name. */
const PREFIX_SCAN = 64;

interface Position {
  full: boolean;
  name: string;
  hash?: Buffer;
}

export async function listRegistryServers(ctx: RequestCtx, deps: CatalogDeps): Promise<HandlerResponse> {
  const q = validateQuery(RegistryQuerySchema, { multi: [] }, ctx.query);
  const updatedSince = q.updated_since ? new Date(q.updated_since).toISOString() : undefined;
  const fp = fingerprint(q.search, updatedSince);
  const filter = { search: q.search, updatedSince };

  let items: CatalogRecord[];
  if (!q.cursor) {
    items = await deps.index.registryPage({ ...filter, limit: q.limit + 1 });
  } else {
    const pos = await decodePosition(deps, q.cursor, fp);
    if (pos.full) {
      items = await deps.index.registryPage({ ...filter, nameAfter: pos.name, limit: q.limit + 1 });
    } else {
      const candidates = await deps.index.registryPage({ ...filter, nameFrom: pos.name, limit: q.limit + 1 + PREFIX_SCAN });
      const at = candidates.findIndex((r) => nameHash(r.name).equals(pos.hash as Buffer));
      // The cursor's server left the catalog: continue after every name sharing its prefix.
      const start = at >= 0 ? at + 1 : candidates.findIndex((r) => !r.name.startsWith(pos.name));
      items = start < 0 ? [] : candidates.slice(start, start + q.limit + 1);
    }
  }

  const page = items.slice(0, q.limit);
  const hasMore = items.length > q.limit;
  const opts = { brand: deps.config.brand, siteUrlTemplate: deps.config.siteUrlTemplate };
  const body = {
    servers: page.map((r) => toRegistryEntry(r, opts)),
    metadata: {
      count: page.length,
      ...(hasMore && page.length > 0 && { nextCursor: encodePosition(deps, page[page.length - 1].name, fp) }),
    },
  };
  return json(body);
}

function fingerprint(search: string | undefined, updatedSince: string | undefined): Buffer {
  return createHash('sha256')
    .update(`${search?.toLowerCase() ?? ''}\0${updatedSince ?? ''}`)
    .digest()
    .subarray(0, 4);
}

function nameHash(name: string): Buffer {
  return createHash('sha256').update(name).digest().subarray(0, HASH_BYTES);
}

function encodePosition(deps: CatalogDeps, name: string, fp: Buffer): string {
  const bytes = Buffer.from(name, 'utf8');
  const full = bytes.length <= PREFIX_BYTES;
  const nameBytes = full ? bytes : Buffer.from(utf8Prefix(name, PREFIX_BYTES), 'utf8');
  const parts = [Buffer.from([1]), fp, Buffer.from([full ? 1 : 0, nameBytes.length]), nameBytes];
  if (!full) parts.push(nameHash(name));
  return deps.cursors.encode(PURPOSE, Buffer.concat(parts));
}

async function decodePosition(deps: CatalogDeps, cursor: string, fp: Buffer): Promise<Position> {
  const bad = () => invalidQuery([{ field: 'cursor', message: 'is not a cursor of this listing and query' }]);
  let p: Buffer;
  try {
    p = await deps.cursors.decode(PURPOSE, cursor);
  } catch (err) {
    if (err instanceof CursorError) throw bad();
    throw err;
  }
  if (p.length < 7 || p[0] !== 1 || !p.subarray(1, 5).equals(fp)) throw bad();
  const full = p[5] === 1;
  const len = p[6];
  const name = p.subarray(7, 7 + len).toString('utf8');
  if (full) return { full, name };
  const hash = p.subarray(7 + len, 7 + len + HASH_BYTES);
  if (hash.length !== HASH_BYTES) throw bad();
  return { full, name, hash };
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
