import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { Annotations, AssetHashType, DockerImage } from 'aws-cdk-lib';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import type { Construct } from 'constructs';

/**
 * The crawler's sharp layer (`/opt/nodejs/node_modules/sharp` for Lambda's linux-arm64, glibc),
 * built by `cdk synth` itself: local bundling (no Docker) runs
 * `npm install --os=linux --cpu=arm64 --libc=glibc sharp@<version>` (the version of the root
 * package.json) and checks that the linux-arm64 binary arrived. The result is cached per version
 * under node_modules/.cache, so only the first synth of a machine installs anything; CDK also skips
 * bundling when the asset of the same hash is already staged. See layers/sharp/README.md.
 */

const ROOT = path.join(__dirname, '..', '..');

/** What `CatalogCrawler.sharpLayer` accepts: build it, skip it (no icons), or a layer of your own. */
export type SharpLayerSource = 'build' | 'skip' | lambda.ILayerVersion;

export function sharpVersion(): string {
  const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { dependencies?: Record<string, string> };
  const version = pkg.dependencies?.sharp;
  if (!version) throw new Error('package.json has no sharp dependency');
  return version;
}

/** Where a built layer of a version is kept between synths (its `nodejs/` is the layer's content). */
export function sharpCacheDir(version: string, cacheRoot = path.join(ROOT, 'node_modules', '.cache', 'mcp-catalog')): string {
  return path.join(cacheRoot, `sharp-layer-${version}-linux-arm64-glibc`);
}

/** Whether `dir` holds a usable layer: sharp itself and its linux-arm64 (glibc) binary package. */
export function sharpLayerState(dir: string): 'ok' | 'missing' | 'wrong-platform' {
  const modules = path.join(dir, 'nodejs', 'node_modules');
  if (!existsSync(path.join(modules, 'sharp', 'package.json'))) return 'missing';
  return existsSync(path.join(modules, '@img', 'sharp-linux-arm64', 'package.json')) ? 'ok' : 'wrong-platform';
}

export interface BuildSharpOptions {
  version: string;
  cacheDir: string;
  /** The npm executable (tests pass a stand-in that records its arguments). @default 'npm' */
  npm?: string;
}

/**
 * Makes sure `cacheDir` holds the built layer, installing it once: into a staging directory next to
 * it, then renamed into place, so concurrent synths never see half a layer. Returns why it could
 * not be built (the registry is unreachable, say), or undefined when the layer is there.
 */
export function ensureSharpLayer(o: BuildSharpOptions): string | undefined {
  if (sharpLayerState(o.cacheDir) === 'ok') return undefined;
  mkdirSync(path.dirname(o.cacheDir), { recursive: true });
  const staging = mkdtempSync(`${o.cacheDir}-staging-`);
  try {
    const prefix = path.join(staging, 'nodejs');
    mkdirSync(prefix);
    // A package.json of its own, so npm installs here and not into the repository's node_modules.
    writeFileSync(path.join(prefix, 'package.json'), '{ "name": "sharp-layer", "private": true }\n');
    const run = spawnSync(
      o.npm ?? 'npm',
      [
        'install',
        '--os=linux',
        '--cpu=arm64',
        '--libc=glibc',
        '--omit=dev',
        // The prebuilt binaries are all the layer needs; sharp's install check would look at this machine.
        '--ignore-scripts',
        '--no-audit',
        '--no-fund',
        '--no-save',
        '--no-package-lock',
        `sharp@${o.version}`,
      ],
      { cwd: prefix, encoding: 'utf8', timeout: 300_000, env: { ...process.env, npm_config_update_notifier: 'false' } },
    );
    if (run.status !== 0)
      return `npm install failed (${run.error?.message ?? `exit ${run.status}`}): ${(run.stderr ?? '').trim().split('\n').slice(-3).join(' ')}`;
    rmSync(path.join(prefix, 'package.json'), { force: true });
    if (sharpLayerState(staging) !== 'ok') return 'npm install finished but the linux-arm64 binary of sharp (@img/sharp-linux-arm64) is not there';
    try {
      renameSync(staging, o.cacheDir);
    } catch {
      // Another synth finished first: its copy is as good as ours.
      if (sharpLayerState(o.cacheDir) !== 'ok') throw new Error(`could not move the sharp layer into ${o.cacheDir}`);
    }
    return undefined;
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

export interface SharpLayerResult {
  layer: lambda.ILayerVersion;
  /** False when the function got the empty placeholder layer (icons cannot be re-encoded). */
  available: boolean;
}

/**
 * The layer for `source`: a given one; a placeholder (`skip`: infrastructure tests, a machine
 * without the registry by choice); or built at synth (`build`, the default), falling back to the
 * placeholder with a synth warning when the install fails (offline).
 */
export function sharpLayer(scope: Construct, source: SharpLayerSource = 'build', opts: Partial<BuildSharpOptions> = {}): SharpLayerResult {
  if (source !== 'build' && source !== 'skip') return { layer: source, available: true };
  const version = opts.version ?? sharpVersion();
  const cacheDir = opts.cacheDir ?? sharpCacheDir(version);
  let why = source === 'skip' ? 'sharpLayer is "skip"' : undefined;
  if (source === 'build') why = ensureSharpLayer({ version, cacheDir, npm: opts.npm });
  if (why === undefined) {
    const layer = new lambda.LayerVersion(scope, 'SharpLayer', {
      description: `sharp ${version} for linux-arm64 (glibc), installed by cdk synth`,
      code: lambda.Code.fromAsset(cacheDir, {
        assetHashType: AssetHashType.CUSTOM,
        assetHash: `sharp-${version}-linux-arm64-glibc`,
        bundling: {
          // Only used if local bundling declined, which it never does: synth runs without Docker.
          image: DockerImage.fromRegistry('public.ecr.aws/sam/build-nodejs22.x'),
          local: {
            tryBundle(outputDir: string): boolean {
              cpSync(path.join(cacheDir, 'nodejs'), path.join(outputDir, 'nodejs'), { recursive: true });
              return true;
            },
          },
        },
      }),
      compatibleRuntimes: [lambda.Runtime.NODEJS_24_X],
      compatibleArchitectures: [lambda.Architecture.ARM_64],
    });
    return { layer, available: true };
  }
  const layer = new lambda.LayerVersion(scope, 'SharpLayer', {
    description: 'EMPTY placeholder for sharp: synth again with the npm registry reachable (see layers/sharp/README.md)',
    code: lambda.Code.fromAsset(placeholderLayerDir()),
    compatibleRuntimes: [lambda.Runtime.NODEJS_24_X],
    compatibleArchitectures: [lambda.Architecture.ARM_64],
  });
  if (source === 'build') {
    Annotations.of(scope).addWarningV2(
      'mcp-catalog:crawler-sharp-layer-missing',
      `The crawler's sharp layer could not be built (${why}): it is an empty placeholder and the icon enrichment step is off. Synth again with the npm registry reachable (see layers/sharp/README.md) or pass \`sharpLayer\`.`,
    );
  }
  return { layer, available: false };
}

const PLACEHOLDER_TEXT = 'Placeholder for the sharp layer: synth again with the npm registry reachable (see layers/sharp/README.md).\n';

/**
 * An empty layer (one text file) in the temporary directory. The directory is named after its
 * content and written by rename, so concurrent synths share it and never see it half-written.
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
