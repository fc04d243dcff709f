/**
 * The zip writer of exports (`exports.ts`), in its own module so that it is loaded by the first zip
 * export of an instance and not at module init (fflate builds its tables when it loads).
 */
import { deflateRawSync } from 'node:zlib';
import { Zip, ZipPassThrough } from 'fflate';
import { oneBuffer } from './pack-files';

export { Zip };

/**
 * A zip entry deflated by zlib in one call (its whole content is pushed at once). fflate's own
 * `ZipDeflate` keeps each entry's compressor state (about 100 KB) until the zip ends, so a zip of
 * 10,000 notes would hold a gigabyte; this is the extension point fflate documents for another
 * compressor (`push` counts the size and CRC of what it is given, `process` emits what is stored).
 */
export class DeflatedEntry extends ZipPassThrough {
  constructor(name: string, mtime: Date) {
    super(name);
    this.compression = 8;
    this.mtime = mtime;
  }

  override process(chunk: Uint8Array, final: boolean): void {
    this.ondata(null, deflateRawSync(chunk, { level: 6, ...oneBuffer(chunk.length) }), final);
  }
}
