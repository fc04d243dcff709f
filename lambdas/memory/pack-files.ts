import { createHash } from 'node:crypto';
import { deflateSync } from 'node:zlib';
import type { GitObjectType } from './pack';

const TYPE_CODES: Record<GitObjectType, number> = { commit: 1, tree: 2, blob: 3, tag: 4 };

/**
 * Writing git packfiles (Documentation/gitformat-pack: version 2, whole objects each deflated once,
 * no deltas, SHA-1 trailer), rather than with isomorphic-git's `packObjects`, which re-reads every
 * object through its file system.
 */

/**
 * A pack of whole objects. Its bytes can be taken as they are written (`take`), so a pack of any
 * size streams through a buffer of one chunk; `pending` says how many bytes wait to be taken.
 */
export class PackWriter {
  private chunks: Uint8Array[] = [];
  private readonly hash = createHash('sha1');
  private added = 0;
  pending = 0;

  constructor(private readonly count: number) {
    const header = Buffer.alloc(12);
    header.write('PACK', 0, 'latin1');
    header.writeUInt32BE(2, 4);
    header.writeUInt32BE(count, 8);
    this.push(header);
  }

  add(type: GitObjectType, content: Uint8Array): void {
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
    this.push(Buffer.from(head));
    this.push(deflateSync(content, oneBuffer(content.length)));
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
    this.pending += bytes.length;
  }
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
