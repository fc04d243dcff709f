import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { Annotations } from 'aws-cdk-lib';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import type { Construct } from 'constructs';

/** The layer's source: `nodejs/node_modules/sharp` inside becomes `/opt/nodejs/node_modules/sharp`. */
export const SHARP_LAYER_DIR = path.join(__dirname, '..', '..', 'layers', 'sharp');

/**
 * The crawler's sharp layer from `layerDir` when it holds a linux-arm64 build; otherwise an empty
 * placeholder (so synth works on a fresh clone) and a warning, and `available` is false.
 */
export function sharpLayer(scope: Construct, layerDir: string): { layer: lambda.ILayerVersion; available: boolean } {
  const built = sharpLayerState(layerDir);
  const available = built === 'ok';
  const layer = new lambda.LayerVersion(scope, 'SharpLayer', {
    description: available
      ? 'sharp for linux-arm64 (glibc), built by layers/sharp/build.sh'
      : 'EMPTY placeholder for sharp: build layers/sharp (see layers/sharp/README.md) and deploy again',
    code: available ? lambda.Code.fromAsset(layerDir, { exclude: ['README.md', 'build.sh'] }) : lambda.Code.fromAsset(placeholderLayerDir()),
    compatibleRuntimes: [lambda.Runtime.NODEJS_24_X],
    compatibleArchitectures: [lambda.Architecture.ARM_64],
  });
  if (!available) {
    Annotations.of(scope).addWarningV2(
      'mcp-catalog:crawler-sharp-layer-missing',
      `The crawler's sharp layer is an empty placeholder (${built === 'missing' ? `${path.join(layerDir, 'nodejs', 'node_modules', 'sharp')} does not exist` : `${path.join(layerDir, 'nodejs')} has no linux-arm64 sharp binary`}): ` +
        'icons need the layer, so the icon enrichment step is off. Build it with layers/sharp/build.sh (see layers/sharp/README.md) or pass `sharpLayer`, then deploy again.',
    );
  }
  return { layer, available };
}

/**
 * Whether `layers/sharp` holds a usable build: sharp itself and its linux-arm64 (glibc) binary
 * package, which `npm install --os=linux --cpu=arm64 --libc=glibc sharp` installs.
 */
export function sharpLayerState(dir: string): 'ok' | 'missing' | 'wrong-platform' {
  const modules = path.join(dir, 'nodejs', 'node_modules');
  if (!existsSync(path.join(modules, 'sharp', 'package.json'))) return 'missing';
  return existsSync(path.join(modules, '@img', 'sharp-linux-arm64', 'package.json')) ? 'ok' : 'wrong-platform';
}

const PLACEHOLDER_TEXT = 'Placeholder for the sharp layer: build layers/sharp (see layers/sharp/README.md) and deploy again.\n';

/**
 * An empty layer (one text file) in the temporary directory, so synth works on a fresh clone. The
 * directory is named after its content and written by rename, so concurrent synths share it and
 * never see it half-written.
 */
function placeholderLayerDir(): string {
  const hash = createHash('sha256').update(PLACEHOLDER_TEXT).digest('hex').slice(0, 16);
  const dir = path.join(tmpdir(), `crawler-sharp-placeholder-${hash}`);
  const ready = () => {
    const file = path.join(dir, 'nodejs', 'PLACEHOLDER.txt');
    return existsSync(file) && readFileSync(file, 'utf8') === PLACEHOLDER_TEXT;
  };
  if (ready()) return dir;
  const staging = mkdtempSync(`${dir}-staging-`);
  mkdirSync(path.join(staging, 'nodejs'));
  writeFileSync(path.join(staging, 'nodejs', 'PLACEHOLDER.txt'), PLACEHOLDER_TEXT);
  try {
    renameSync(staging, dir);
    return dir;
  } catch {
    // Another synth got there first (use its copy), or something else is in the way (use ours).
    if (!ready()) return staging;
    rmSync(staging, { recursive: true, force: true });
    return dir;
  }
}
