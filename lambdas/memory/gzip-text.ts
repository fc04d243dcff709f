import { isAscii, transcode } from 'node:buffer';
import { constants, gunzipSync } from 'node:zlib';

/**
 * Decompressing and decoding the stored index and segments, which a fresh instance's first search
 * does on its critical path (megabytes of text at 10,000 notes).
 */

/** zlib's own output chunk: what `gunzipSync` allocates and grows by when told nothing. */
const MIN_CHUNK = 64 * 1024;
/** The largest output buffer allocated up front, whatever the gzip trailer claims. */
const MAX_CHUNK = 64 * 1024 * 1024;

/**
 * The whole of a gzip object, inflated into one buffer of the size its trailer names (ISIZE, the
 * length mod 2^32 of the last member): without it zlib fills 16 KiB chunks and joins them, which
 * was nearly half of the inflation of a 3 MB index. The trailer only sizes the first buffer: one
 * that lies, or a multi-member object, inflates all the same, in more chunks.
 */
export function gunzipWhole(bytes: Uint8Array): Buffer {
  const n = bytes.length;
  const isize = n >= 18 ? (bytes[n - 4] | (bytes[n - 3] << 8) | (bytes[n - 2] << 16) | (bytes[n - 1] << 24)) >>> 0 : 0;
  // One byte more than the text: a buffer filled exactly would make zlib allocate another one just
  // to find the end of the stream.
  return gunzipSync(bytes, { chunkSize: Math.min(MAX_CHUNK, Math.max(MIN_CHUNK, isize + 1)) });
}

/**
 * What the first `prefix` compressed bytes of a gzip object inflate to (less than the whole when it
 * is longer): lets a reader act on the head of a large object before inflating the rest.
 */
export function gunzipHead(bytes: Uint8Array, prefix: number): Buffer {
  return gunzipSync(bytes.subarray(0, prefix), { finishFlush: constants.Z_SYNC_FLUSH });
}

/**
 * UTF-8 bytes as a string, as `toString('utf8')` gives it, faster: ASCII (most notes, every JSON
 * head we write) is taken byte for byte, and other text goes through ICU's converter to UTF-16 and
 * is then copied as is, about twice as fast as V8's UTF-8 decoder for a megabyte of text with a few
 * non-ASCII characters (an excerpt's ellipsis, an accent). Bytes that are not valid UTF-8 (never
 * written by us) make the converter fail: the decoder then replaces them as it always did.
 */
export function utf8Text(bytes: Buffer): string {
  if (isAscii(bytes)) return bytes.toString('latin1');
  try {
    return transcode(bytes, 'utf8', 'ucs2').toString('ucs2');
  } catch {
    return bytes.toString('utf8');
  }
}

/**
 * A stored object of a JSON line and then texts back to back (the index's and segments' format):
 * each part decoded on its own, so a non-ASCII character among the texts (an excerpt's ellipsis)
 * does not make the JSON a two-byte string, slower to decode and to parse. The first newline byte
 * ends the JSON (JSON escapes every newline; UTF-8 never puts byte 0x0a inside a character).
 * `texts` is undefined when there is no newline (an index of version 1 or 2: JSON alone).
 */
export function jsonAndTexts(raw: Buffer): { json: string; texts?: string } {
  const nl = raw.indexOf(10);
  if (nl < 0) return { json: utf8Text(raw) };
  return { json: utf8Text(raw.subarray(0, nl)), texts: utf8Text(raw.subarray(nl + 1)) };
}
