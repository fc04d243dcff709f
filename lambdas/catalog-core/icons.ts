/**
 * Placeholder icons for synthetic servers: 128x128 webp images rendered from a generated SVG
 * (a coloured rounded square with a white glyph), plus a check that bytes are such an image.
 *
 * Glyphs are plain geometry, not text: text in SVG needs system fonts, which Lambda does not
 * have and which would make the bytes differ from machine to machine.
 */

import type { Sharp, SharpOptions } from 'sharp';

export const ICON_SIZE = 128;
export const ICON_KIND_COUNT = 16;

const COLORS: readonly string[] = [
  '#2563eb',
  '#16a34a',
  '#dc2626',
  '#9333ea',
  '#ea580c',
  '#0891b2',
  '#db2777',
  '#4f46e5',
  '#65a30d',
  '#0d9488',
  '#c026d3',
  '#b45309',
  '#475569',
  '#e11d48',
  '#0284c7',
  '#7c3aed',
];

// Each glyph is drawn inside the 128x128 canvas, centred on (64, 64).
const GLYPHS: readonly string[] = [
  '<circle cx="64" cy="64" r="30" fill="#fff"/>',
  '<path d="M64 30 L98 94 L30 94 Z" fill="#fff"/>',
  '<rect x="36" y="36" width="56" height="56" rx="6" fill="#fff"/>',
  '<path d="M64 28 L100 64 L64 100 L28 64 Z" fill="#fff"/>',
  '<path d="M64 28 L95 46 L95 82 L64 100 L33 82 L33 46 Z" fill="#fff"/>',
  '<path d="M64 26 L73 53 L102 53 L79 70 L88 98 L64 81 L40 98 L49 70 L26 53 L55 53 Z" fill="#fff"/>',
  '<path d="M54 28 H74 V54 H100 V74 H74 V100 H54 V74 H28 V54 H54 Z" fill="#fff"/>',
  '<g fill="#fff"><rect x="30" y="70" width="16" height="28" rx="3"/><rect x="56" y="50" width="16" height="48" rx="3"/><rect x="82" y="30" width="16" height="68" rx="3"/></g>',
  '<circle cx="64" cy="64" r="30" fill="none" stroke="#fff" stroke-width="12"/>',
  '<path d="M40 34 L24 64 L40 94 M88 34 L104 64 L88 94" fill="none" stroke="#fff" stroke-width="11" stroke-linecap="round" stroke-linejoin="round"/>',
  '<path d="M72 24 L38 70 H62 L54 104 L90 56 H66 Z" fill="#fff"/>',
  '<g fill="#fff"><circle cx="44" cy="44" r="14"/><circle cx="84" cy="44" r="14"/><circle cx="44" cy="84" r="14"/><circle cx="84" cy="84" r="14"/></g>',
  '<path d="M30 44 H98 M30 64 H98 M30 84 H98" stroke="#fff" stroke-width="11" stroke-linecap="round"/>',
  '<path d="M64 100 C28 76 26 50 42 38 C52 31 60 35 64 44 C68 35 76 31 86 38 C102 50 100 76 64 100 Z" fill="#fff"/>',
  '<g fill="none" stroke="#fff" stroke-width="10"><ellipse cx="64" cy="40" rx="30" ry="11"/><path d="M34 40 V88 C34 100 94 100 94 88 V40"/></g>',
  '<path d="M34 92 L64 32 L94 92 M46 70 H82" fill="none" stroke="#fff" stroke-width="12" stroke-linecap="round" stroke-linejoin="round"/>',
];

/** The SVG source of an icon kind (exported for inspection and tests). */
export function iconSvg(kind: number): string {
  assertKind(kind);
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${ICON_SIZE}" height="${ICON_SIZE}" viewBox="0 0 128 128">` +
    `<rect width="128" height="128" rx="24" ry="24" fill="${COLORS[kind]}"/>${GLYPHS[kind]}</svg>`
  );
}

function assertKind(kind: number): void {
  if (!Number.isInteger(kind) || kind < 0 || kind >= ICON_KIND_COUNT) {
    throw new RangeError(`icon kind must be an integer in [0, ${ICON_KIND_COUNT - 1}], got ${kind}`);
  }
}

type SharpFactory = (input?: Buffer | Uint8Array | string, options?: SharpOptions) => Sharp;

// sharp is a native module of several MB; loading it on first use keeps modules that only need
// ICON_KIND_COUNT (the synthetic generator, API handlers) free of that cost.
let sharpModule: Promise<SharpFactory> | undefined;
function loadSharp(): Promise<SharpFactory> {
  sharpModule ??= import('sharp').then((m) => m.default);
  return sharpModule;
}

// Promises, not buffers, are cached so concurrent callers of a kind share one render.
const rendered = new Map<number, Promise<Uint8Array>>();

/**
 * The 128x128 webp image of an icon kind (0 to ICON_KIND_COUNT − 1). Each kind is rendered once
 * per process and the same bytes are returned afterwards, so callers must not mutate them.
 */
export function renderIcon(kind: number): Promise<Uint8Array> {
  try {
    assertKind(kind);
  } catch (err) {
    return Promise.reject(err);
  }
  let bytes = rendered.get(kind);
  if (bytes === undefined) {
    bytes = loadSharp()
      .then((sharp) =>
        sharp(Buffer.from(iconSvg(kind)), { density: 72 })
          .resize(ICON_SIZE, ICON_SIZE)
          .webp({ quality: 90, effort: 4 })
          .toBuffer(),
      )
      .then((buf) => new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength));
    // A failed render must not poison the cache for later attempts.
    bytes.catch(() => rendered.delete(kind));
    rendered.set(kind, bytes);
  }
  return bytes;
}

/** Whether `bytes` decode as a 128x128 webp image (anything undecodable is simply `false`). */
export async function isWebp128(bytes: Uint8Array): Promise<boolean> {
  try {
    const sharp = await loadSharp();
    const meta = await sharp(bytes).metadata();
    return meta.format === 'webp' && meta.width === ICON_SIZE && meta.height === ICON_SIZE;
  } catch {
    return false;
  }
}
