import { browserCandidates, findBrowser, installedBrowser, type FinderHost } from '../support/browser';

/**
 * The browser finder of the e2e tests (test/support/browser.ts), on a made-up file system: the order
 * is CHROMIUM_PATH, the system's browsers, Playwright's cache (newest first), then the packaged one.
 */
function host(files: string[], o: Partial<FinderHost> = {}): FinderHost {
  const set = new Set(files);
  return {
    env: {},
    platform: 'linux',
    arch: 'x64',
    home: '/home/ada',
    exists: (p) => set.has(p),
    list: (dir) => [...new Set(files.filter((f) => f.startsWith(`${dir}/`)).map((f) => f.slice(dir.length + 1).split('/')[0]))],
    ...o,
  };
}

const PW = '/home/ada/.cache/ms-playwright';

test('CHROMIUM_PATH first, and a wrong one is an error rather than a fall-through', () => {
  expect(installedBrowser(host(['/usr/bin/chromium', '/opt/c'], { env: { CHROMIUM_PATH: '/opt/c' } }))).toEqual({
    executablePath: '/opt/c',
    source: 'CHROMIUM_PATH',
  });
  expect(() => installedBrowser(host(['/usr/bin/chromium'], { env: { CHROMIUM_PATH: '/nope' } }))).toThrow('CHROMIUM_PATH=/nope does not exist');
});

test('on Linux: Debian, Ubuntu, the snap, Google Chrome, then Playwright’s cache, newest revision first', () => {
  const all = [
    '/usr/bin/chromium',
    '/usr/bin/chromium-browser',
    '/snap/bin/chromium',
    '/usr/bin/google-chrome',
    '/usr/bin/google-chrome-stable',
    '/opt/google/chrome/chrome',
    `${PW}/chromium-1100/chrome-linux/chrome`,
    `${PW}/chromium-1255/chrome-linux64/chrome`,
    `${PW}/chromium_headless_shell-1255/chrome-headless-shell-linux64/chrome-headless-shell`,
  ];
  const order = [...all.slice(0, 6), all[7], all[8], all[6]];
  expect(
    browserCandidates(host(all))
      .map((c) => c.path)
      .filter((p) => all.includes(p)),
  ).toEqual(order);
  // Each one is what the finder takes when every one before it is missing.
  for (const [i, path] of order.entries()) expect(installedBrowser(host(order.slice(i)))?.executablePath).toBe(path);
  expect(installedBrowser(host([all[8]]))).toEqual({ executablePath: all[8], source: 'playwright-cache' });
  expect(installedBrowser(host([]))).toBeUndefined();
  // PLAYWRIGHT_BROWSERS_PATH moves the cache.
  expect(installedBrowser(host(['/pw/chromium-7/chrome-linux/chrome'], { env: { PLAYWRIGHT_BROWSERS_PATH: '/pw' } }))?.executablePath).toBe(
    '/pw/chromium-7/chrome-linux/chrome',
  );
});

test('on macOS: Google Chrome, Chromium, then Playwright’s cache under ~/Library/Caches', () => {
  const chrome = '/Applications/Google Chrome.app/Contents/MacOS/Google Chrome';
  const chromium = '/Applications/Chromium.app/Contents/MacOS/Chromium';
  const cached =
    '/Users/ada/Library/Caches/ms-playwright/chromium-1255/chrome-mac-arm64/Google Chrome for Testing.app/Contents/MacOS/Google Chrome for Testing';
  const mac = (files: string[]) => host(files, { platform: 'darwin', arch: 'arm64', home: '/Users/ada' });
  expect(installedBrowser(mac([chrome, chromium, cached]))?.executablePath).toBe(chrome);
  expect(installedBrowser(mac([chromium, cached]))?.executablePath).toBe(chromium);
  expect(installedBrowser(mac([cached]))?.executablePath).toBe(cached);
  // No packaged browser for macOS: the error names every path it tried.
  return expect(findBrowser(mac([]))).rejects.toThrow(/no Chromium or Chrome found \(tried CHROMIUM_PATH, \/Applications\/Google Chrome\.app/);
});

test('CHROMIUM_SEARCH_PATHS replaces the system and cache lists; empty, it hides them all', () => {
  expect(browserCandidates(host([], { env: { CHROMIUM_SEARCH_PATHS: '/a:/b' } })).map((c) => c.path)).toEqual(['/a', '/b']);
  expect(installedBrowser(host(['/usr/bin/chromium'], { env: { CHROMIUM_SEARCH_PATHS: '' } }))).toBeUndefined();
});
