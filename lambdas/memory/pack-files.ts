import { createHash } from 'node:crypto';
import { crc32, deflateSync, inflateSync } from 'node:zlib';
import { fitted, type GitObjectType, PackError } from './pack';

/**
 * Writing git packfiles and their indexes (Documentation/gitformat-pack: pack version 2 of whole
 * objects, index version 2), and reading one object of such a pack at its offset. A push's objects
 * are stored as one pack and its index under `m/<id>/objects/pack/` (`packed-objects.ts`), the
 * names git itself gives them, so the memory's `objects/` folder stays a valid `.git/objects`.
 */
const TYPE_CODES: Record<GitObjectType, number> = { commit: 1, tree: 2, blob: 3, tag: 4 };
const TYPES: Record<number, GitObjectType> = { 1: 'commit', 2: 'tree', 3: 'blob', 4: 'tag' };

export interface PackEntry {
  oid: string;
  offset: number;
  crc: number;
}

/**
 * A pack of whole objects, each deflated once; `entries` says where each one starts (for its index).
 * Its bytes can be taken as they are written (`take`), so a pack of any size streams through a
 * buffer of one chunk (an export); `pending` says how many bytes wait to be taken. A writer whose
 * bytes are never taken returns the whole pack from `finish` (a push).
 */
export class PackWriter {
  private chunks: Uint8Array[] = [];
  private readonly hash = createHash('sha1');
  private length = 0;
  private added = 0;
  pending = 0;
  readonly entries: PackEntry[] = [];

  constructor(private readonly count: number) {
    const header = Buffer.alloc(12);
    header.write('PACK', 0, 'latin1');
    header.writeUInt32BE(2, 4);
    header.writeUInt32BE(count, 8);
    this.push(header);
  }

  /**
   * Adds an object; `oid` (its id) is needed only for an index. `deflated`: its content as a zlib
   * stream already (from the pack a push sent), stored as it is rather than deflated again.
   */
  add(type: GitObjectType, content: Uint8Array, oid = '', deflated?: Uint8Array): void {
    if (++this.added > this.count) throw new Error(`pack declared ${this.count} objects; one more was added`);
    // Type and size: 3 bits of type and 4 of size, then 7 bits of size per byte, low bits first.
    let size = content.length;
    const head: number[] = [];
    let byte = (TYPE_CODES[type] << 4) | (size & 0x0f);
    size = Math.floor(size / 16);
    while (size > 0) {
      head.push(byte | 0x80);
      byte = size & 0x7f;
      size = Math.floor(size / 128);
    }
    head.push(byte);
    const parts = [Buffer.from(head), deflated ?? deflate(content)];
    this.entries.push({ oid, offset: this.length, crc: crc32(parts[1], crc32(parts[0])) });
    for (const p of parts) this.push(p);
  }

  /** The bytes written since the last call, as one buffer. */
  take(): Buffer {
    const out = Buffer.concat(this.chunks);
    this.chunks = [];
    this.pending = 0;
    return out;
  }

  /** The trailer after the last object: everything not yet taken, checksum included. */
  finish(): Buffer {
    if (this.added !== this.count) throw new Error(`pack declared ${this.count} objects but ${this.added} were added`);
    const digest = this.hash.digest();
    this.chunks.push(digest);
    this.pending += digest.length;
    return this.take();
  }

  private push(bytes: Uint8Array): void {
    this.hash.update(bytes);
    this.chunks.push(bytes);
    this.length += bytes.length;
    this.pending += bytes.length;
  }
}

/** One object's zlib stream, in one output buffer sized to it (`oneBuffer`). */
export function deflate(content: Uint8Array): Buffer {
  return deflateSync(content, oneBuffer(content.length));
}

/** zlib's `compressBound`: the most bytes deflate (with its zlib wrapper) makes of `size` bytes. */
export function deflateBound(size: number): number {
  return size + Math.floor(size / 2 ** 12) + Math.floor(size / 2 ** 14) + Math.floor(size / 2 ** 25) + 13;
}

/**
 * An output buffer deflate fills at once: zlib's default (16 KiB for every call) is mostly garbage
 * for a note, and ten thousand of them between two collections are what a process's size shows.
 */
export const oneBuffer = (size: number): { chunkSize: number } => ({ chunkSize: Math.max(64, deflateBound(size)) });

/** Bytes of a pack entry of `size` bytes of content at most: its header (at most 10 bytes) and the deflated content. */
export function packEntryBound(size: number): number {
  return 10 + deflateBound(size);
}

/** A pack's header and trailer. */
export const PACK_OVERHEAD = 12 + 20;

/** The pack's own id: the SHA-1 trailer, as git names `pack-<id>.pack`. */
export const packId = (pack: Uint8Array): string => Buffer.from(pack.subarray(pack.length - 20)).toString('hex');

/** A version 2 pack index of `entries` (offsets below 2 GiB: a push is far smaller). */
export function writePackIndex(entries: readonly PackEntry[], pack: Uint8Array): Buffer {
  const sorted = [...entries].sort((a, b) => (a.oid < b.oid ? -1 : a.oid > b.oid ? 1 : 0));
  const n = sorted.length;
  const out = Buffer.alloc(8 + 1024 + n * 28 + 40);
  out.write('\xfftOc', 0, 'latin1');
  out.writeUInt32BE(2, 4);
  let i = 0;
  for (let b = 0; b < 256; b++) {
    while (i < n && Number.parseInt(sorted[i].oid.slice(0, 2), 16) <= b) i++;
    out.writeUInt32BE(i, 8 + b * 4);
  }
  let pos = 8 + 1024;
  for (const e of sorted) pos += out.write(e.oid, pos, 'hex');
  for (const e of sorted) pos = out.writeUInt32BE(e.crc, pos);
  for (const e of sorted) pos = out.writeUInt32BE(e.offset, pos);
  Buffer.from(pack.subarray(pack.length - 20)).copy(out, pos);
  pos += 20;
  createHash('sha1').update(out.subarray(0, pos)).digest().copy(out, pos);
  return out;
}

/** A parsed version 2 index: the offset of an object in its pack, by binary search. */
export class PackIndex {
  private readonly count: number;

  constructor(private readonly idx: Buffer) {
    if (idx.length < 8 + 1024 + 40 || idx.readUInt32BE(0) !== 0xff744f63 || idx.readUInt32BE(4) !== 2) throw new PackError('not a version 2 pack index');
    this.count = idx.readUInt32BE(8 + 255 * 4);
    if (idx.length < 8 + 1024 + this.count * 28 + 40) throw new PackError('pack index truncated');
  }

  get size(): number {
    return this.count;
  }

  offset(oid: string): number | undefined {
    const key = Buffer.from(oid, 'hex');
    const first = key[0];
    let lo = first === 0 ? 0 : this.idx.readUInt32BE(8 + (first - 1) * 4);
    let hi = this.idx.readUInt32BE(8 + first * 4);
    const names = 8 + 1024;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const cmp = key.compare(this.idx, names + mid * 20, names + mid * 20 + 20);
      if (cmp === 0) {
        const off = this.idx.readUInt32BE(names + this.count * 24 + mid * 4);
        if (off & 0x80000000) throw new PackError('pack offsets past 2 GiB are not supported');
        return off;
      }
      if (cmp < 0) hi = mid;
      else lo = mid + 1;
    }
    return undefined;
  }
}

/** The whole object stored at `offset` of a pack this module wrote (no deltas). */
export function readPackEntry(pack: Uint8Array, offset: number): { type: GitObjectType; content: Buffer } {
  const buf = Buffer.from(pack.buffer, pack.byteOffset, pack.byteLength);
  let pos = offset;
  let c = buf[pos++];
  const type = TYPES[(c >> 4) & 7];
  let size = c & 15;
  let shift = 4;
  while (c & 0x80) {
    c = buf[pos++];
    size += (c & 0x7f) * 2 ** shift;
    shift += 7;
  }
  if (!type) throw new PackError(`pack entry at ${offset} is a delta or unknown (type ${(buf[offset] >> 4) & 7})`);
  const content = inflateSync(buf.subarray(pos, buf.length - 20), fitted(size));
  if (content.length !== size) throw new PackError(`pack entry at ${offset} has the wrong size`);
  return { type, content };
}
