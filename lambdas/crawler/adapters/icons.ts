import { ICON_SIZE } from '../../catalog-core';
import type { Sharp, SharpOptions } from 'sharp';
import type { IconFetcher } from '../domain/ports';
import { describeError, type HttpClient } from '../http/http-client';

/**
 * Icon pipeline: fetch a candidate (registry `icons[]` first, then the GitHub owner's avatar),
 * refuse anything that is not an image, SVGs that could run or load anything (scripts, event
 * handlers, `javascript:` URLs, `foreignObject`, external references) and bodies over the size cap,
 * then re-encode with sharp to a 128x128 webp (letterboxed on transparency, aspect kept).
 *
 * The type is decided by the bytes (magic numbers), not by the URL or the declared type; a
 * declared type that is neither `image/*` nor generic binary is refused as well.
 */

export const ICON_MAX_BYTES = 1024 * 1024;
/** Decompression-bomb guard: ~25 megapixels is far above any real icon. */
const MAX_INPUT_PIXELS = 25_000_000;

export type ImageKind = 'png' | 'jpeg' | 'gif' | 'webp' | 'svg' | 'ico' | 'avif';

export function sniffImage(bytes: Uint8Array): ImageKind | undefined {
  const b = bytes;
  const at = (i: number, ...sig: number[]) => sig.every((v, j) => b[i + j] === v);
  if (at(0, 0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)) return 'png';
  if (at(0, 0xff, 0xd8, 0xff)) return 'jpeg';
  if (at(0, 0x47, 0x49, 0x46, 0x38)) return 'gif';
  if (at(0, 0x52, 0x49, 0x46, 0x46) && at(8, 0x57, 0x45, 0x42, 0x50)) return 'webp';
  if (at(0, 0x00, 0x00, 0x01, 0x00)) return 'ico';
  if (at(4, 0x66, 0x74, 0x79, 0x70) && (at(8, 0x61, 0x76, 0x69, 0x66) || at(8, 0x61, 0x76, 0x69, 0x73))) return 'avif';
  const head = new TextDecoder()
    .decode(b.subarray(0, 1024))
    .replace(/^\uFEFF/, '')
    .trimStart()
    .toLowerCase();
  if (head.startsWith('<svg') || ((head.startsWith('<?xml') || head.startsWith('<!--') || head.startsWith('<!doctype svg')) && head.includes('<svg')))
    return 'svg';
  return undefined;
}

/** Why an SVG is unsafe to rasterise, or undefined when it is fine. */
export function svgProblem(svg: string): string | undefined {
  const s = svg.toLowerCase();
  if (/<script[\s>/]/.test(s)) return 'SVG contains a script';
  if (/\son[a-z]+\s*=/.test(s)) return 'SVG contains an event handler attribute';
  if (s.includes('javascript:')) return 'SVG contains a javascript: URL';
  if (s.includes('<foreignobject')) return 'SVG contains foreignObject';
  if (/<!entity/.test(s)) return 'SVG declares XML entities';
  // Only in-document (#id) and data: references are rendered; anything else could be fetched.
  const refs = s.match(/(?:xlink:)?href\s*=\s*["'][^"']*["']|url\(\s*["']?[^)"']*/g) ?? [];
  for (const r of refs) {
    const target = r
      .replace(/^(?:xlink:)?href\s*=\s*["']|^url\(\s*["']?/, '')
      .replace(/["']$/, '')
      .trim();
    if (target !== '' && !target.startsWith('#') && !target.startsWith('data:')) return 'SVG references an external resource';
  }
  return undefined;
}

type SharpFactory = (input?: Buffer | Uint8Array | string, options?: SharpOptions) => Sharp;
let sharpModule: Promise<SharpFactory> | undefined;
function loadSharp(): Promise<SharpFactory> {
  sharpModule ??= import('sharp').then((m) => m.default);
  return sharpModule;
}

/** Re-encodes any supported image to the catalog's 128x128 webp. */
export async function toWebp128(bytes: Uint8Array, kind: ImageKind): Promise<Uint8Array> {
  const sharp = await loadSharp();
  const input = sharp(Buffer.from(bytes), {
    limitInputPixels: MAX_INPUT_PIXELS,
    ...(kind === 'svg' && { density: 144 }),
    animated: false,
  });
  const out = await input
    .resize(ICON_SIZE, ICON_SIZE, { fit: 'contain', background: { r: 0, g: 0, b: 0, alpha: 0 } })
    .webp({ quality: 85, effort: 4 })
    .toBuffer();
  return new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
}

export class IconPipeline implements IconFetcher {
  constructor(private readonly o: { http: HttpClient; maxBytes?: number; timeoutMs?: number }) {}

  async fetchIcon(candidates: string[]): Promise<{ webp: Uint8Array; source: string } | { refused: string[] }> {
    const refused: string[] = [];
    for (const url of [...new Set(candidates)]) {
      try {
        const res = await this.o.http.request(url, {
          headers: { accept: 'image/webp,image/png,image/jpeg,image/gif,image/svg+xml;q=0.8,*/*;q=0.1' },
          maxBytes: this.o.maxBytes ?? ICON_MAX_BYTES,
          retries: 1,
          untrusted: true,
          ...(this.o.timeoutMs !== undefined && { timeoutMs: this.o.timeoutMs }),
        });
        if (res.status !== 200) {
          refused.push(`${url}: HTTP ${res.status}`);
          continue;
        }
        const declared = (res.headers.get('content-type') ?? '').split(';')[0].trim().toLowerCase();
        if (declared !== '' && !declared.startsWith('image/') && declared !== 'application/octet-stream' && declared !== 'binary/octet-stream') {
          refused.push(`${url}: not an image (${declared})`);
          continue;
        }
        const kind = sniffImage(res.body);
        if (kind === undefined) {
          refused.push(`${url}: not an image`);
          continue;
        }
        if (kind === 'ico') {
          refused.push(`${url}: ICO images are not supported`);
          continue;
        }
        if (kind === 'svg') {
          const problem = svgProblem(new TextDecoder().decode(res.body));
          if (problem !== undefined) {
            refused.push(`${url}: ${problem}`);
            continue;
          }
        }
        return { webp: await toWebp128(res.body, kind), source: url };
      } catch (err) {
        refused.push(`${url}: ${describeError(err)}`);
      }
    }
    return { refused };
  }
}
