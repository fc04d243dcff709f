import { createHash } from 'node:crypto';
import { inflateSync } from 'node:zlib';

/**
 * Reading a git packfile (what `git push` sends): version 2 or 3, every object inflated, deltas
 * (OFS_DELTA and REF_DELTA) applied, bases outside the pack looked up in storage (a thin pack, git's
 * default for push), and every object's id computed from its content. Nothing in a pack is taken on
 * trust: sizes are checked before anything is inflated (a small pack cannot inflate into gigabytes),
 * the trailing checksum is verified, and a malformed pack is a `PackError` whose message git shows as
 * `remote unpack failed`. isomorphic-git parses packs only through its file-system `indexPack`, so
 * this is written here, after git's pack-format documentation.
 */
export class PackError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PackError';
  }
}

/** A pack past a limit of a push (not malformed): refused with `reason` as git's short status. */
export class PackLimitError extends PackError {
  constructor(
    readonly reason: string,
    message: string,
  ) {
    super(message);
    this.name = 'PackLimitError';
  }
}

/** The object count a pack's header declares (0 when it is not a pack): checked before anything is read. */
export function packCount(bytes: Uint8Array): number {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return buf.length >= 12 && buf.toString('latin1', 0, 4) === 'PACK' ? buf.readUInt32BE(8) : 0;
}

export type GitObjectType = 'blob' | 'tree' | 'commit' | 'tag';

export interface PackObject {
  oid: string;
  type: GitObjectType;
  content: Buffer;
  /** The zlib stream the pack held it as, when it was a whole object (not a delta): a pack written from it reuses it. */
  deflated?: Buffer;
}

export interface PackLimits {
  /** Objects in one pack. */
  maxObjects: number;
  /** Inflated size of one object. */
  maxObjectBytes: number;
  /** Inflated size of all objects together. */
  maxTotalBytes: number;
}

/**
 * The objects among `oids` that storage holds: the bases a thin pack's deltas name that are not in the
 * pack (all of one round at once, so that the caller can fetch them together).
 */
export type Bases = (oids: readonly string[]) => Promise<ReadonlyMap<string, { type: GitObjectType; content: Uint8Array }>>;

const TYPES: Record<number, GitObjectType> = { 1: 'commit', 2: 'tree', 3: 'blob', 4: 'tag' };
const OFS_DELTA = 6;
const REF_DELTA = 7;

interface Entry {
  offset: number;
  kind: number;
  data: Buffer;
  deflated?: Buffer;
  baseOffset?: number;
  baseOid?: string;
}

/**
 * Options of a one-shot inflate whose result is `size` bytes: an output buffer of that size (zlib's
 * default is 16 KiB per call, and the result is a view that keeps it: a push of 15,000 tiny objects
 * held 240 MiB that way), and nothing past it.
 */
export function fitted(size: number): { chunkSize: number; maxOutputLength: number } {
  return { chunkSize: Math.max(64, size + 1), maxOutputLength: Math.max(1, size) };
}

export function objectId(type: GitObjectType, content: Uint8Array): string {
  return createHash('sha1').update(`${type} ${content.length}\0`).update(content).digest('hex');
}

export async function readPack(bytes: Uint8Array, bases: Bases, limits: PackLimits): Promise<Map<string, PackObject>> {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (buf.length < 32 || buf.toString('latin1', 0, 4) !== 'PACK') throw new PackError('not a pack');
  const version = buf.readUInt32BE(4);
  if (version !== 2 && version !== 3) throw new PackError(`pack version ${version} is not supported`);
  const count = buf.readUInt32BE(8);
  if (count > limits.maxObjects)
    throw new PackLimitError('too many objects', `the push brings ${count} objects; a push may bring at most ${limits.maxObjects}`);
  const end = buf.length - 20;
  const sum = createHash('sha1').update(buf.subarray(0, end)).digest();
  if (!sum.equals(buf.subarray(end))) throw new PackError('pack checksum mismatch');

  const entries: Entry[] = [];
  const byOffset = new Map<number, Entry>();
  let pos = 12;
  let total = 0;
  for (let i = 0; i < count; i++) {
    const offset = pos;
    if (pos >= end) throw new PackError('pack truncated');
    let c = buf[pos++];
    const kind = (c >> 4) & 7;
    let size = c & 15;
    let shift = 4;
    while (c & 0x80) {
      if (pos >= end || shift > 35) throw new PackError('bad object header');
      c = buf[pos++];
      size += (c & 0x7f) * 2 ** shift;
      shift += 7;
    }
    const entry: Entry = { offset, kind, data: Buffer.alloc(0) };
    if (kind === OFS_DELTA) {
      c = buf[pos++];
      let back = c & 0x7f;
      while (c & 0x80) {
        if (pos >= end) throw new PackError('bad delta offset');
        c = buf[pos++];
        back = (back + 1) * 128 + (c & 0x7f);
      }
      entry.baseOffset = offset - back;
      if (entry.baseOffset < 12 || !byOffset.has(entry.baseOffset)) throw new PackError('delta base offset out of range');
    } else if (kind === REF_DELTA) {
      if (pos + 20 > end) throw new PackError('pack truncated');
      entry.baseOid = buf.subarray(pos, pos + 20).toString('hex');
      pos += 20;
    } else if (!TYPES[kind]) throw new PackError(`unknown object type ${kind}`);
    if (size > limits.maxObjectBytes) throw new PackLimitError('object too large', `an object of ${size} bytes; at most ${limits.maxObjectBytes}`);
    total += size;
    if (total > limits.maxTotalBytes)
      throw new PackLimitError(
        'push too large',
        `the push's objects inflate past ${limits.maxTotalBytes} bytes, the most one push may bring; push fewer commits at a time`,
      );
    let inflated: { buffer: Buffer; engine: { bytesWritten: number } };
    try {
      inflated = inflateSync(buf.subarray(pos, end), { info: true, ...fitted(size) }) as unknown as typeof inflated;
    } catch {
      throw new PackError('corrupt object data');
    }
    if (inflated.buffer.length !== size) throw new PackError('object size mismatch');
    entry.data = inflated.buffer;
    if (TYPES[kind]) entry.deflated = buf.subarray(pos, pos + inflated.engine.bytesWritten);
    pos += inflated.engine.bytesWritten;
    entries.push(entry);
    byOffset.set(offset, entry);
  }
  if (pos !== end) throw new PackError('trailing data after the last object');

  // Resolve deltas: a base is another entry (by offset, or by id once resolved) or, for REF_DELTA,
  // an object already stored (a thin pack). Chains are resolved iteratively.
  const resolved = new Map<number, PackObject>();
  const byOid = new Map<string, PackObject>();
  for (const e of entries) {
    if (TYPES[e.kind]) {
      const o = { oid: objectId(TYPES[e.kind], e.data), type: TYPES[e.kind], content: e.data, deflated: e.deflated };
      resolved.set(e.offset, o);
      byOid.set(o.oid, o);
    }
  }
  const external = new Map<string, { type: GitObjectType; content: Uint8Array }>();
  const tried = new Set<string>();
  let pending = entries.filter((e) => !resolved.has(e.offset));
  while (pending.length > 0) {
    const waiting: Entry[] = [];
    for (const e of pending) {
      const b = e.baseOffset !== undefined ? resolved.get(e.baseOffset) : (byOid.get(e.baseOid as string) ?? external.get(e.baseOid as string));
      if (!b) {
        waiting.push(e);
        continue;
      }
      const content = applyDelta(Buffer.from(b.content), e.data, limits.maxObjectBytes);
      const o = { oid: objectId(b.type, content), type: b.type, content };
      resolved.set(e.offset, o);
      byOid.set(o.oid, o);
    }
    if (waiting.length === pending.length) {
      // No base inside the pack: look the missing ones up in storage, once each.
      const lookups = [...new Set(waiting.map((e) => e.baseOid).filter((o): o is string => o !== undefined && !tried.has(o)))];
      for (const oid of lookups) tried.add(oid);
      for (const [oid, o] of lookups.length > 0 ? await bases(lookups) : []) if (tried.has(oid)) external.set(oid, o);
      if (!lookups.some((oid) => external.has(oid))) {
        throw new PackError(`a delta's base ${waiting[0].baseOid ?? `at offset ${waiting[0].baseOffset}`} is missing`);
      }
    }
    pending = waiting;
  }
  return byOid;
}

/** git's delta format: source and target sizes, then copy (from the base) and insert instructions. */
export function applyDelta(src: Buffer, delta: Buffer, maxBytes: number): Buffer {
  let pos = 0;
  const varint = (): number => {
    let n = 0;
    let shift = 0;
    let c: number;
    do {
      if (pos >= delta.length) throw new PackError('delta truncated');
      c = delta[pos++];
      n += (c & 0x7f) * 2 ** shift;
      shift += 7;
    } while (c & 0x80);
    return n;
  };
  const srcSize = varint();
  const dstSize = varint();
  if (srcSize !== src.length) throw new PackError('delta base size mismatch');
  if (dstSize > maxBytes) throw new PackError(`an object of ${dstSize} bytes; at most ${maxBytes}`);
  const out = Buffer.alloc(dstSize);
  let o = 0;
  while (pos < delta.length) {
    const op = delta[pos++];
    if (op & 0x80) {
      let off = 0;
      let len = 0;
      for (let i = 0; i < 4; i++) if (op & (1 << i)) off += delta[pos++] * 2 ** (8 * i);
      for (let i = 0; i < 3; i++) if (op & (1 << (4 + i))) len += delta[pos++] * 2 ** (8 * i);
      if (len === 0) len = 0x10000;
      if (off + len > src.length || o + len > dstSize) throw new PackError('delta copies out of range');
      src.copy(out, o, off, off + len);
      o += len;
    } else if (op > 0) {
      if (pos + op > delta.length || o + op > dstSize) throw new PackError('delta inserts out of range');
      delta.copy(out, o, pos, pos + op);
      pos += op;
      o += op;
    } else throw new PackError('delta instruction 0 is reserved');
  }
  if (o !== dstSize) throw new PackError('delta result size mismatch');
  return out;
}
