import { spawnSync } from 'node:child_process';
import { createReadStream, createWriteStream, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, sep } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createBrotliDecompress } from 'node:zlib';

/**
 * Where the browser tests find a Chromium, in this order:
 *
 * 1. `CHROMIUM_PATH` (it must exist: a wrong path is an error, not a fall-through);
 * 2. the system's: Debian and Ubuntu (`/usr/bin/chromium`, `/usr/bin/chromium-browser`, the snap),
 *    Google Chrome on Linux and macOS, Chromium on macOS;
 * 3. Playwright's own browser cache (`PLAYWRIGHT_BROWSERS_PATH`, else `~/.cache/ms-playwright` or
 *    `~/Library/Caches/ms-playwright`), newest revision first;
 * 4. on Linux x64 only, the Chromium the `@sparticuz/chromium` dev dependency ships inside its
 *    package (brotli-compressed, with the NSS libraries a bare machine lacks and a font), inflated
 *    once into `node_modules/.cache/chromium-<version>/`: `npm ci && npm test` needs no browser
 *    installed.
 *
 * `CHROMIUM_SEARCH_PATHS` (colon-separated) replaces the lists of steps 2 and 3; empty, it hides them
 * all, which is how the fallback of step 4 is exercised on a machine that has a browser.
 */
export interface Browser {
  executablePath: string;
  /** Which step found it. */
  source: 'CHROMIUM_PATH' | 'system' | 'playwright-cache' | 'npm-package';
  /** Environment the browser process needs (the packaged libraries and fonts). */
  env: Record<string, string>;
}

export interface FinderHost {
  env: Record<string, string | undefined>;
  platform: NodeJS.Platform;
  arch: string;
  home: string;
  exists(path: string): boolean;
  list(dir: string): string[];
}

const SYSTEM: Partial<Record<NodeJS.Platform, string[]>> = {
  linux: [
    '/usr/bin/chromium',
    '/usr/bin/chromium-browser',
    '/snap/bin/chromium',
    '/usr/bin/google-chrome',
    '/usr/bin/google-chrome-stable',
    '/opt/google/chrome/chrome',
  ],
  darwin: ['/Applications/Google Chrome.app/Contents/MacOS/Google Chrome', '/Applications/Chromium.app/Contents/MacOS/Chromium'],
};

/** Executables inside one revision folder of Playwright's cache, per platform. */
const PLAYWRIGHT_BINARIES: Partial<Record<NodeJS.Platform, string[]>> = {
  linux: ['chrome-linux64/chrome', 'chrome-linux/chrome', 'chrome-headless-shell-linux64/chrome-headless-shell', 'chrome-linux/headless_shell'],
  darwin: [
    'chrome-mac-arm64/Google Chrome for Testing.app/Contents/MacOS/Google Chrome for Testing',
    'chrome-mac-x64/Google Chrome for Testing.app/Contents/MacOS/Google Chrome for Testing',
    'chrome-mac/Chromium.app/Contents/MacOS/Chromium',
  ],
};

function playwrightCandidates(host: FinderHost): string[] {
  const cache =
    host.env.PLAYWRIGHT_BROWSERS_PATH ||
    (host.platform === 'darwin' ? join(host.home, 'Library', 'Caches', 'ms-playwright') : join(host.home, '.cache', 'ms-playwright'));
  const revisions = host
    .list(cache)
    .filter((d) => /^chromium(_headless_shell)?-\d+$/.test(d))
    // Newest first; the full browser before the headless shell of the same revision.
    .sort((a, b) => Number(b.split('-')[1]) - Number(a.split('-')[1]) || a.length - b.length);
  return revisions.flatMap((r) => (PLAYWRIGHT_BINARIES[host.platform] ?? []).map((bin) => join(cache, r, bin)));
}

/** Steps 2 and 3, in order: every path the finder tries before the packaged browser. */
export function browserCandidates(host: FinderHost): Array<{ path: string; source: 'system' | 'playwright-cache' }> {
  const override = host.env.CHROMIUM_SEARCH_PATHS;
  if (override !== undefined) return override.split(':').flatMap((path) => (path === '' ? [] : [{ path, source: 'system' as const }]));
  return [
    ...(SYSTEM[host.platform] ?? []).map((path) => ({ path, source: 'system' as const })),
    ...playwrightCandidates(host).map((path) => ({ path, source: 'playwright-cache' as const })),
  ];
}

/** Steps 1 to 3: an installed browser, or undefined (then step 4, where the platform allows it). */
export function installedBrowser(host: FinderHost): Omit<Browser, 'env'> | undefined {
  const given = host.env.CHROMIUM_PATH;
  if (given !== undefined && given !== '') {
    if (!host.exists(given)) throw new Error(`CHROMIUM_PATH=${given} does not exist`);
    return { executablePath: given, source: 'CHROMIUM_PATH' };
  }
  const found = browserCandidates(host).find((c) => host.exists(c.path));
  return found && { executablePath: found.path, source: found.source };
}

const localHost = (): FinderHost => ({
  env: process.env,
  platform: process.platform,
  arch: process.arch,
  home: homedir(),
  exists: existsSync,
  list: (dir) => {
    try {
      return readdirSync(dir);
    } catch {
      return [];
    }
  },
});

/** Inflates `file` (brotli; a tar when `untar`) into `target`, through a temporary name so a crash leaves nothing half-written. */
async function inflate(file: string, target: string, untar: boolean): Promise<void> {
  if (existsSync(target)) return;
  const partial = `${target}.partial-${process.pid}`;
  rmSync(partial, { recursive: true, force: true });
  if (untar) {
    // Inflated to a tar file, then unpacked by the system's tar (every Linux has one).
    const tarFile = `${partial}.tar`;
    await pipeline(createReadStream(file), createBrotliDecompress(), createWriteStream(tarFile));
    mkdirSync(partial, { recursive: true });
    const tar = spawnSync('tar', ['-x', '-f', tarFile, '-C', partial], { encoding: 'utf8' });
    rmSync(tarFile, { force: true });
    if (tar.status !== 0) throw new Error(`tar could not unpack ${file}: ${tar.stderr || tar.error?.message}`);
  } else {
    await pipeline(createReadStream(file), createBrotliDecompress(), createWriteStream(partial, { mode: 0o755 }));
  }
  try {
    renameSync(partial, target);
  } catch (err) {
    // Another test worker inflated it at the same time: theirs is as good.
    rmSync(partial, { recursive: true, force: true });
    if (!existsSync(target)) throw err;
  }
}

/** Step 4: the Chromium of `@sparticuz/chromium`, inflated once into `node_modules/.cache`. */
export async function packagedBrowser(cacheRoot = join(__dirname, '..', '..', 'node_modules', '.cache')): Promise<Browser> {
  let pkg: string;
  try {
    // Its exports map hides package.json: the package is the folder above its build output.
    const main = require.resolve('@sparticuz/chromium');
    pkg = main.slice(0, main.lastIndexOf(`${sep}build${sep}`));
  } catch {
    throw new Error('no Chromium found, and the @sparticuz/chromium dev dependency is not installed (run npm ci)');
  }
  const { version } = JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8')) as { version: string };
  const dir = join(cacheRoot, `chromium-${version}`);
  mkdirSync(dir, { recursive: true });
  const bin = join(pkg, 'bin');
  await Promise.all([
    // The GL libraries (SwiftShader) go beside the binary, where Chromium looks for them.
    inflate(join(bin, 'swiftshader.tar.br'), join(dir, 'bin'), true).then(() => inflate(join(bin, 'chromium.br'), join(dir, 'bin', 'chromium'), false)),
    inflate(join(bin, 'al2023.tar.br'), join(dir, 'al2023'), true),
    inflate(join(bin, 'fonts.tar.br'), join(dir, 'fonts'), true),
  ]);
  // The package's fonts.conf names Lambda's folders: this one adds the machine's fonts (when it has
  // any) to the packaged Open Sans. Without a font the browser aborts on the first fallback.
  const fontconfig = join(dir, 'fontconfig');
  mkdirSync(fontconfig, { recursive: true });
  writeFileSync(
    join(fontconfig, 'fonts.conf'),
    `<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "fonts.dtd">\n<fontconfig>\n  <include ignore_missing="yes">/etc/fonts/fonts.conf</include>\n  <dir>${join(dir, 'fonts')}</dir>\n  <cachedir>${join(dir, 'fonts-cache')}</cachedir>\n</fontconfig>\n`,
  );
  return {
    executablePath: join(dir, 'bin', 'chromium'),
    source: 'npm-package',
    // The NSS libraries it was built with (a bare Debian has none) and the fonts.
    env: {
      LD_LIBRARY_PATH: [join(dir, 'al2023', 'lib'), process.env.LD_LIBRARY_PATH].filter(Boolean).join(':'),
      FONTCONFIG_PATH: fontconfig,
    },
  };
}

/** The browser the tests drive: an installed one, else (Linux x64) the packaged one. */
export async function findBrowser(host: FinderHost = localHost()): Promise<Browser> {
  const installed = installedBrowser(host);
  if (installed) return { ...installed, env: {} };
  if (host.platform === 'linux' && host.arch === 'x64') return packagedBrowser();
  throw new Error(
    `no Chromium or Chrome found (tried CHROMIUM_PATH, ${browserCandidates(host)
      .map((c) => c.path)
      .join(', ')}): install one, or set CHROMIUM_PATH`,
  );
}
