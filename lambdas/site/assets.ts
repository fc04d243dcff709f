import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The site's stylesheet and scripts: plain files in `client/` (linted by Biome, run by the browser
 * tests), read once per instance and served under content-hashed names (`/assets/site.3f2a….css`),
 * so a page names the exact version it was rendered with and browsers and CloudFront keep each
 * version for a year. In a Lambda bundle `client/` is copied next to the bundle (`lib/site.ts`).
 */
export interface Asset {
  /** `/assets/site.0123456789.css` */
  url: string;
  file: string;
  body: string;
  contentType: string;
}

const SOURCES = {
  css: { name: 'site', ext: 'css', contentType: 'text/css; charset=utf-8' },
  js: { name: 'site', ext: 'js', contentType: 'text/javascript; charset=utf-8' },
  theme: { name: 'theme', ext: 'js', contentType: 'text/javascript; charset=utf-8' },
  icon: { name: 'icon', ext: 'svg', contentType: 'image/svg+xml' },
} as const;

export type AssetName = keyof typeof SOURCES;

let loaded: Record<AssetName, Asset> | undefined;

/** The client folder: beside this module in the sources, beside the bundle in a Lambda. */
export const CLIENT_DIR = join(__dirname, 'client');

function load(): Record<AssetName, Asset> {
  const out = {} as Record<AssetName, Asset>;
  for (const [key, src] of Object.entries(SOURCES) as Array<[AssetName, (typeof SOURCES)[AssetName]]>) {
    const body = readFileSync(join(CLIENT_DIR, `${src.name}.${src.ext}`), 'utf8');
    const hash = createHash('sha256').update(body).digest('hex').slice(0, 10);
    const file = `${src.name}.${hash}.${src.ext}`;
    out[key] = { url: `/assets/${file}`, file, body, contentType: src.contentType };
  }
  return out;
}

export function assets(): Record<AssetName, Asset> {
  loaded ??= load();
  return loaded;
}

export function assetByFile(file: string): Asset | undefined {
  return Object.values(assets()).find((a) => a.file === file);
}
