/**
 * The site in a real browser: a Chromium (test/support/browser.ts finds one) driven by playwright-core against the whole local
 * stack (site, catalog API, favorites, the OAuth front and its development sign-in), as a person
 * uses it: search with suggestions, filter and sort, open a server, copy an install snippet, sign
 * in, pin and unpin, create, copy and revoke a personal access token, at a desktop's and at a phone's width, with the keyboard alone and without
 * JavaScript. axe-core checks every page in both themes; the hostile README corpus renders inert
 * (no script runs, no handler fires, no CSP violation), and so do hostile registry entries, crawled
 * through the fake registry and written as they came (every link http(s) or absent). Screenshots of each page go to
 * `test-artifacts/site/` (git-ignored). Requests to other hosts are answered by nobody: the test
 * never reaches the internet.
 */
import { searchDocumentOf, type CatalogRecord, type CatalogWrite } from '../../lambdas/catalog-core';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { seedCatalog } from '../../bin/local-stack/seed';
import { generateCatalog } from '../../bin/local-stack/synthetic';
import { generateHistory } from '../../bin/local-stack/synthetic-history';
import { atomProblems } from '../support/atom';
import { runCrawl } from '../../lambdas/crawler/crawler';
import { catalogByName, startCrawlerEnv } from '../support/crawler-env';
import { findBrowser } from '../support/browser';
import { startScratchStack, type ScratchStack } from '../support/scratch-stack';
import { ROOT } from '../support/stack-process';

const ARTIFACTS = join(ROOT, 'test-artifacts', 'site');
const HOSTILE = join(ROOT, 'test', 'fixtures', 'site', 'hostile-readmes');
const HOSTILE_ROWS = join(ROOT, 'test', 'fixtures', 'site', 'hostile-registry', 'rows.json');
const AXE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
/** Generous waits on events: CI's two cores are shared with the backends and the other test files. */
const WAIT = 45_000;

const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1280, height: 900 };

let scratch: ScratchStack;
let browser: Browser;
let base = '';
/** A server with an npm package and a hosted endpoint, whose snippets the copy test checks. */
let known: CatalogRecord;
const hostileSlugs: string[] = [];
/** Hostile registry entries: as the crawler kept them, and as they came (written past the crawler). */
const crawledSlugs: string[] = [];
const rawSlugs: string[] = [];

/**
 * The hostile registry entries crawled through the loopback fake registry (with the hostile README
 * corpus as one repository's README), and the same entries written to the catalog as they came, as
 * if the crawler had let every URL through: then only the site's own escaping and link checks stand
 * between them and the page.
 */
async function hostileEntries(template: CatalogRecord): Promise<CatalogWrite[]> {
  const rows = JSON.parse(readFileSync(HOSTILE_ROWS, 'utf8')) as Array<{ server: Record<string, unknown> }>;
  const env = await startCrawlerEnv(rows);
  try {
    const corpus = readdirSync(HOSTILE).filter((f) => f.endsWith('.md') && f !== 'README.md');
    env.github.override('attacker/hostile-readme', { readme: corpus.map((f) => readFileSync(join(HOSTILE, f), 'utf8')).join('\n\n') });
    await runCrawl(env.newCrawler().crawler);
    const crawled = [...(await catalogByName(env.rawStore)).values()].map((d) => ({ ...d, record: { ...d.record, hasIcon: false } }));
    crawledSlugs.push(...crawled.map((d) => d.record.slug));
    const raw = rows
      .filter((r) => /^[\w.-]+\/[\w.-]+$/.test(String(r.server.name)))
      .map(({ server: s }) => {
        const key = String(s.name).split('/')[1];
        const record = {
          ...template,
          slug: `zz-raw-${key}`,
          name: String(s.name),
          title: s.title as string | undefined,
          description: String(s.description),
          websiteUrl: s.websiteUrl as string | undefined,
          repository: s.repository as CatalogRecord['repository'],
          packages: (s.packages ?? []) as CatalogRecord['packages'],
          remotes: (s.remotes ?? []) as CatalogRecord['remotes'],
          hasIcon: false,
        } as CatalogRecord;
        rawSlugs.push(record.slug);
        return { record, readme: key === 'script-close' ? crawled.find((d) => d.record.name === record.name)?.readme : undefined, tools: null };
      });
    return [...crawled, ...raw];
  } finally {
    await env.close();
  }
}

beforeAll(async () => {
  // CHROMIUM_PATH, a system browser, Playwright's cache, else the one the @sparticuz/chromium dev dependency ships.
  const found = await findBrowser();
  mkdirSync(ARTIFACTS, { recursive: true });
  // Limits are not what this file is about (DECISIONS): one browser is one client IP.
  scratch = await startScratchStack('site-e2e', {
    RATE_ANON_RPS: '10000',
    RATE_ANON_BURST: '10000',
    RATE_USER_RPS: '10000',
    RATE_USER_BURST: '10000',
    SITE_RATE_RPS: '10000',
    SITE_RATE_BURST: '10000',
    OAUTH_TOKEN_RATE_PER_MINUTE: '10000',
  });
  const { stack } = scratch;
  base = stack.site.config.publicUrl;
  await seedCatalog(stack.catalog.config, stack.catalog.index, 80);

  const [template] = generateCatalog(1, { seed: 5 });
  const hostileFiles = readdirSync(HOSTILE).filter((f) => f.endsWith('.md') && f !== 'README.md');
  const writes = hostileFiles.map((file) => {
    const key = file.replace(/\.md$/, '');
    const record: CatalogRecord = {
      ...template.record,
      slug: `zz-hostile-${key}`,
      name: `io.github.attacker/${key}`,
      title: `Hostile ${key}`,
      repository: { url: 'https://github.com/attacker/hostile', source: 'github' },
      hasIcon: false,
    };
    hostileSlugs.push(record.slug);
    const content = readFileSync(join(HOSTILE, file), 'utf8');
    return { record, readme: { content, path: 'README.md', size: content.length, sha: key.padEnd(40, '0') }, tools: null };
  });
  known = {
    ...template.record,
    slug: 'zz-known-weather',
    name: 'io.github.acme/weather',
    title: 'Known Weather',
    packages: [
      {
        registryType: 'npm',
        identifier: '@acme/weather-mcp',
        version: '1.2.0',
        transport: { type: 'stdio' },
        environmentVariables: [{ name: 'WEATHER_API_KEY', description: 'API key', isRequired: true, isSecret: true }],
      },
    ],
    remotes: [{ type: 'streamable-http', url: 'https://mcp.acme.dev/mcp' }],
    hasIcon: false,
  };
  const registryEntries = await hostileEntries(template.record);
  const all: CatalogWrite[] = [...writes, ...registryEntries, { record: known, readme: null, tools: null }];
  await stack.catalog.store.put(all);
  await stack.catalog.index.upsert(all.map((w) => searchDocumentOf({ record: w.record, readme: w.readme ?? undefined })));

  browser = await chromium.launch({
    executablePath: found.executablePath,
    env: { ...process.env, ...found.env },
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run', '--disable-sync'],
  });
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await scratch?.close();
}, 60_000);

interface Watched {
  page: Page;
  context: BrowserContext;
  /** Uncaught page errors and console errors (other than refused third-party requests). */
  errors: string[];
  dialogs: string[];
  /** Requests the tests refused because they left the stack. */
  foreign: string[];
}

async function open(
  opts: { viewport?: { width: number; height: number }; scheme?: 'light' | 'dark'; mobile?: boolean; javaScript?: boolean } = {},
): Promise<Watched> {
  const context = await browser.newContext({
    viewport: opts.viewport ?? DESKTOP,
    colorScheme: opts.scheme ?? 'light',
    isMobile: opts.mobile ?? false,
    hasTouch: opts.mobile ?? false,
    javaScriptEnabled: opts.javaScript ?? true,
    baseURL: base,
  });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
  const watched: Watched = { page: await context.newPage(), context, errors: [], dialogs: [], foreign: [] };
  const origin = new URL(base).origin;
  await context.route('**/*', (route) => {
    const url = route.request().url();
    if (new URL(url).origin === origin) return route.continue();
    watched.foreign.push(url);
    return route.abort('blockedbyclient');
  });
  // Every CSP violation of the page is counted, whatever triggers it.
  await context.addInitScript(
    'window.__cspViolations = []; document.addEventListener("securitypolicyviolation", (e) => window.__cspViolations.push(e.violatedDirective + " " + e.blockedURI));',
  );
  watched.page.on('pageerror', (e) => watched.errors.push(`pageerror: ${e.message}`));
  watched.page.on('console', (m) => {
    if (m.type() === 'error' && !/ERR_BLOCKED_BY_CLIENT|Failed to load resource/.test(m.text())) watched.errors.push(`console: ${m.text()}`);
  });
  watched.page.on('dialog', (d) => {
    watched.dialogs.push(d.message());
    void d.dismiss();
  });
  watched.page.setDefaultTimeout(WAIT);
  return watched;
}

interface AxeViolation {
  id: string;
  impact: string;
  help: string;
  nodes: number;
}

async function axe(page: Page): Promise<AxeViolation[]> {
  // Through the debugging protocol, which the page's CSP does not govern (a script tag would be refused).
  await page.evaluate(AXE);
  return page.evaluate(
    'axe.run(document, { resultTypes: ["violations"] }).then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.length })))',
  );
}

async function shot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
}

async function cspViolations(page: Page): Promise<string[]> {
  return page.evaluate('window.__cspViolations');
}

/** Wider than the viewport means sideways scrolling on a phone. */
async function overflowsSideways(page: Page): Promise<boolean> {
  return page.evaluate('document.documentElement.scrollWidth > window.innerWidth + 1');
}

async function apiSlugs(path: string): Promise<string[]> {
  const body = (await (await fetch(`${base}${path}`)).json()) as { data: Array<{ slug: string }> };
  return body.data.map((s) => s.slug);
}

async function cardSlugs(page: Page): Promise<string[]> {
  const links = await page.locator('.results .card-title a').all();
  const hrefs = await Promise.all(links.map((a) => a.getAttribute('href')));
  return hrefs.map((h) => decodeURIComponent((h ?? '').replace('/servers/', '')));
}

/** The page's path and query as a map, whatever order the form wrote them in. */
function queryOf(page: Page): Record<string, string[]> {
  const u = new URL(page.url());
  const out: Record<string, string[]> = {};
  // An empty field of the filter form (the minimum uptime left blank) is no state.
  for (const [k, v] of u.searchParams) if (v !== '') out[k] = [...(out[k] ?? []), v];
  return out;
}

async function signIn(page: Page, user: string): Promise<void> {
  await page.waitForURL(/\/oauth\/authorize\?/);
  await page.getByLabel('User name').fill(user);
  await page.getByRole('button', { name: 'Continue' }).click();
  await page.getByText('no access to your memories').waitFor();
  await page.getByRole('button', { name: 'Allow' }).click();
}

function expectClean(w: Watched): void {
  expect(w.errors).toEqual([]);
  expect(w.dialogs).toEqual([]);
}

describe('pages in both themes', () => {
  const pages = () => [
    ['home', '/'],
    ['servers', '/servers?category=Data%20%26%20Databases&sort=stars'],
    ['search', '/search?q=weather'],
    ['detail', `/servers/${known.slug}`],
    ['detail-readme', `/servers/${generateCatalog(80).find((s) => s.readme && s.tools)?.record.slug}`],
    ['detail-history', `/servers/${withBreakingChange()}`],
    ['favorites', '/favorites'],
    ['tokens', '/tokens'],
    ['not-found', '/servers/no-such-server'],
  ];

  test.each(['light', 'dark'] as const)(
    'axe-core finds no violations on any page (%s), and none at a phone width',
    async (scheme) => {
      for (const viewport of [DESKTOP, PHONE]) {
        const w = await open({ scheme, viewport, mobile: viewport === PHONE });
        for (const [name, path] of pages()) {
          await w.page.goto(path);
          await w.page.waitForLoadState('load');
          expect({ page: name, scheme, width: viewport.width, violations: await axe(w.page) }).toEqual({
            page: name,
            scheme,
            width: viewport.width,
            violations: [],
          });
          expect({ page: name, csp: await cspViolations(w.page) }).toEqual({ page: name, csp: [] });
          if (viewport === PHONE) expect({ page: name, overflow: await overflowsSideways(w.page) }).toEqual({ page: name, overflow: false });
          await shot(w.page, `${name}-${scheme}-${viewport === PHONE ? 'phone' : 'desktop'}`);
        }
        expectClean(w);
        await w.context.close();
      }
    },
    240_000,
  );
});

describe('finding a server', () => {
  test('search with suggestions: type, choose with the keyboard, land on the server', async () => {
    const w = await open();
    await w.page.goto('/');
    const box = w.page.getByRole('combobox', { name: 'Search MCP servers' });
    await box.click();
    await box.pressSequentially('Known Wea', { delay: 30 });
    const list = w.page.getByRole('listbox', { name: 'Suggestions' });
    await list.getByRole('option', { name: /Known Weather/ }).waitFor();
    expect(await box.getAttribute('aria-expanded')).toBe('true');
    await box.press('ArrowDown');
    expect(await box.getAttribute('aria-activedescendant')).toBe('q-home-list-0');
    await box.press('Enter');
    await w.page.waitForURL(`**/servers/${known.slug}`);
    await w.page.getByRole('heading', { level: 1, name: 'Known Weather' }).waitFor();
    // Escape closes the list; the form alone searches.
    await w.page.goto('/');
    await box.fill('weather');
    await list.getByRole('option').first().waitFor();
    await box.press('Escape');
    expect(await list.isHidden()).toBe(true);
    await box.press('Enter');
    await w.page.waitForURL('**/search?q=weather');
    expect(await cardSlugs(w.page)).toEqual(await apiSlugs('/api/search?q=weather&limit=24'));
    expectClean(w);
    await w.context.close();
  }, 120_000);

  test('filter and sort on /servers: the URL keeps the state, the list is what the API answers', async () => {
    const w = await open();
    await w.page.goto('/servers');
    await w.page.getByLabel(/^Security \(\d+\)$/).check();
    await w.page.getByLabel('Sort by').selectOption('stars');
    await w.page.getByRole('button', { name: 'Apply' }).click();
    await w.page.waitForURL(/\/servers\?.*category=Security/);
    expect(queryOf(w.page)).toEqual({ sort: ['stars'], category: ['Security'] });
    expect(await cardSlugs(w.page)).toEqual(await apiSlugs('/api/mcps?category=Security&sort=stars&limit=24'));
    // The chip removes the filter and keeps the sort.
    await w.page.getByRole('link', { name: /^Security \(remove filter\)$/ }).click();
    await w.page.waitForURL(/\/servers\?sort=stars$/);
    // Next page.
    await w.page.getByRole('link', { name: 'Next →' }).click();
    await w.page.waitForURL(/\/servers\?sort=stars&page=2$/);
    expect(await cardSlugs(w.page)).toEqual(await apiSlugs('/api/mcps?sort=stars&limit=24&page=2'));
    expectClean(w);
    await w.context.close();
  }, 120_000);

  test('copy an install snippet: the clipboard holds exactly the snippet, which parses', async () => {
    const w = await open();
    await w.page.goto(`/servers/${known.slug}`);
    const option = w.page.getByRole('region', { name: 'npm @acme/weather-mcp 1.2.0' });
    await option.locator('summary', { hasText: 'Cursor' }).click();
    await option.getByRole('button', { name: 'Copy the Cursor snippet' }).click();
    await w.page.getByRole('status').filter({ hasText: 'Copied to the clipboard' }).waitFor();
    const copied = JSON.parse(await w.page.evaluate('navigator.clipboard.readText()'));
    expect(copied).toEqual({
      mcpServers: { weather: { command: 'npx', args: ['-y', '@acme/weather-mcp@1.2.0'], env: { WEATHER_API_KEY: '<WEATHER_API_KEY>' } } },
    });
    // The hosted endpoint's Claude Code line, copied with the keyboard alone.
    const remote = w.page.getByRole('region', { name: 'Hosted endpoint (Streamable HTTP)' });
    await remote.locator('summary', { hasText: 'Claude Code' }).click();
    await remote.getByRole('button', { name: 'Copy the Claude Code snippet' }).focus();
    await w.page.keyboard.press('Enter');
    await expectClipboard(w.page, 'claude mcp add --transport http weather https://mcp.acme.dev/mcp');
    expectClean(w);
    await w.context.close();
  }, 120_000);
});

async function expectClipboard(page: Page, text: string): Promise<void> {
  await page.waitForFunction(`navigator.clipboard.readText().then((t) => t === ${JSON.stringify(text)})`, undefined, { timeout: WAIT, polling: 100 });
}

describe('favorites', () => {
  test('sign in locally from a pin, pin and unpin from a list and a detail page, see the list', async () => {
    const w = await open();
    await w.page.goto(`/servers/${known.slug}`);
    const pin = w.page.locator('.detail-head').getByRole('button', { name: /Pin Known Weather/ });
    await pin.click();
    await signIn(w.page, 'ada');
    // Back where sign-in began, the pending pin made.
    await w.page.waitForURL(`**/servers/${known.slug}`);
    await w.page.locator('.detail-head button.pin[aria-pressed="true"]').waitFor();
    expect(await w.page.locator('.detail-head button.pin').textContent()).toContain('Pinned');
    // Pin another from the list page.
    await w.page.goto('/servers?sort=name');
    const first = w.page.locator('.results .card').first();
    const firstTitle = (await first.locator('.card-title').textContent())?.trim() ?? '';
    await first.getByRole('button', { name: `Pin ${firstTitle}` }).click();
    await first.locator('button.pin[aria-pressed="true"]').waitFor();
    await w.page.goto('/favorites');
    const list = w.page.getByRole('list', { name: 'Pinned servers' });
    await list.getByRole('listitem').nth(1).waitFor();
    expect(await list.locator('.card-title').allTextContents()).toEqual([firstTitle, 'Known Weather']);
    expect(await axe(w.page)).toEqual([]);
    await shot(w.page, 'favorites-signed-in');
    // Unpin from the list: it leaves the list and the API.
    await list.getByRole('button', { name: /Known Weather/ }).click();
    await list.getByRole('listitem').filter({ hasText: 'Known Weather' }).waitFor({ state: 'detached' });
    await w.page.reload();
    await list.getByRole('listitem').first().waitFor();
    expect(await list.locator('.card-title').allTextContents()).toEqual([firstTitle]);
    // Unpin the other from its detail page.
    await list.getByRole('link', { name: firstTitle }).click();
    await w.page.locator('.detail-head button.pin[aria-pressed="true"]').click();
    await w.page.locator('.detail-head button.pin[aria-pressed="false"]').waitFor();
    await w.page.goto('/favorites');
    await w.page.getByText('Nothing pinned yet').waitFor();
    // Sign out: the refresh token is revoked and the page asks to sign in again.
    await w.page.getByRole('button', { name: 'Sign out' }).click();
    await w.page.getByRole('button', { name: 'Sign in' }).waitFor();
    expect(await w.page.evaluate('localStorage.getItem("mcp-site-tokens")')).toBeNull();
    expectClean(w);
    await w.context.close();
  }, 180_000);

  test('the same at a phone width, by touch', async () => {
    const w = await open({ viewport: PHONE, mobile: true, scheme: 'dark' });
    await w.page.goto('/favorites');
    await w.page.getByRole('button', { name: 'Sign in' }).tap();
    await signIn(w.page, 'grace');
    await w.page.waitForURL('**/favorites');
    await w.page.getByText('Nothing pinned yet').waitFor();
    await w.page.goto('/');
    const box = w.page.getByRole('combobox', { name: 'Search MCP servers' });
    await box.tap();
    await box.pressSequentially('Known', { delay: 30 });
    await w.page.getByRole('option', { name: /Known Weather/ }).tap();
    await w.page.waitForURL(`**/servers/${known.slug}`);
    expect(await overflowsSideways(w.page)).toBe(false);
    await w.page.locator('.detail-head button.pin').tap();
    await w.page.locator('.detail-head button.pin[aria-pressed="true"]').waitFor();
    await w.page.getByRole('region', { name: 'Hosted endpoint (Streamable HTTP)' }).getByRole('button', { name: 'Copy the Claude Desktop snippet' }).tap();
    await w.page.getByRole('status').filter({ hasText: 'Copied' }).waitFor();
    await shot(w.page, 'detail-phone-pinned');
    await w.page.goto('/favorites');
    const list = w.page.getByRole('list', { name: 'Pinned servers' });
    await list.getByRole('listitem').first().waitFor();
    expect(await list.locator('.card-title').allTextContents()).toEqual(['Known Weather']);
    await list.getByRole('button', { name: /Known Weather/ }).tap();
    await list.getByRole('listitem').first().waitFor({ state: 'detached' });
    expect(await overflowsSideways(w.page)).toBe(false);
    // Filter and sort: on a phone the facets start closed, so the results come first.
    await w.page.goto('/servers');
    const category = w.page.locator('details.facet', { hasText: 'Category' });
    expect(await category.getAttribute('open')).toBeNull();
    await category.locator('summary').tap();
    await w.page.getByLabel(/^Security \(\d+\)$/).tap();
    await w.page.getByLabel('Sort by').selectOption('name');
    await w.page.getByRole('button', { name: 'Apply' }).tap();
    await w.page.waitForURL(/category=Security/);
    expect(queryOf(w.page)).toEqual({ sort: ['name'], category: ['Security'] });
    expect(await cardSlugs(w.page)).toEqual(await apiSlugs('/api/mcps?category=Security&sort=name&limit=24'));
    expect(await overflowsSideways(w.page)).toBe(false);
    expectClean(w);
    await w.context.close();
  }, 180_000);
});

describe('personal access tokens', () => {
  /** The front's development sign-in, then its consent with the memory scopes (all checked, all memories). */
  async function signInWithMemories(page: Page, user: string): Promise<void> {
    await page.waitForURL(/\/oauth\/authorize\?/);
    await page.getByLabel('User name').fill(user);
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByLabel(/All my memories/).check();
    await page.getByRole('button', { name: 'Allow' }).click();
  }

  test('sign in with memory scopes, create one (shown once, copied), see it listed, use it, revoke it, sign out', async () => {
    const w = await open();
    await w.page.goto('/tokens');
    await w.page.getByText('Sign in to see, create and revoke your tokens.').waitFor();
    await w.page.getByRole('button', { name: 'Sign in' }).click();
    await signInWithMemories(w.page, 'tess');
    await w.page.waitForURL('**/tokens');
    await w.page.getByText(/^Signed in\./).waitFor();
    await w.page.getByText('No tokens yet.').waitFor();
    // A refusal of the API is shown as it words it, and creates nothing.
    await w.page.getByLabel('Name').fill('bad folder');
    await w.page.getByLabel('Folder').fill('a/../b');
    await w.page.getByRole('button', { name: 'Create token' }).click();
    await w.page
      .locator('[data-tokens-status]')
      .filter({ hasText: /pathPrefix may not contain/ })
      .waitFor();

    await w.page.getByLabel('Name').fill('laptop git');
    await w.page.getByLabel('Folder').fill('');
    await w.page.getByLabel('Read and write').check();
    await w.page.getByLabel('Expires in (days)').fill('30');
    await w.page.getByRole('button', { name: 'Create token' }).click();
    const secret = w.page.locator('[data-new-token-value]');
    await secret.filter({ hasText: /^mcpm_pat_/ }).waitFor();
    const token = (await secret.textContent()) ?? '';
    expect(token).toMatch(/^mcpm_pat_[0-9A-Za-z]{12}_[0-9A-Za-z]{38}$/);
    // Focus moves to the new token's heading, so a screen reader hears it first.
    expect(await w.page.evaluate('document.activeElement?.id')).toBe('new-token-title');
    await w.page.getByRole('button', { name: 'Copy the token' }).click();
    await expectClipboard(w.page, token);
    const table = w.page.getByRole('table', { name: 'Your active tokens' });
    const row = table.getByRole('row', { name: /laptop git/ });
    await row.waitFor();
    expect(await row.getByRole('cell').allTextContents()).toEqual([
      token.slice(9, 21),
      'Read and write',
      'All',
      'Whole memories',
      expect.any(String),
      expect.any(String),
      'Never',
      'Revoke laptop git',
    ]);
    expect(await axe(w.page)).toEqual([]);
    expect(await cspViolations(w.page)).toEqual([]);
    await shot(w.page, 'tokens-created');

    // It works as a bearer; its use shows after a reload, and the secret is never shown again.
    expect((await fetch(`${base}/v1/memories`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
    await w.page.reload();
    await row.waitFor();
    expect(await w.page.locator('[data-new-token]').isHidden()).toBe(true);
    expect(await w.page.content()).not.toContain(token);
    expect(await row.getByRole('cell').nth(6).textContent()).not.toBe('Never');

    await row.getByRole('button', { name: 'Revoke laptop git' }).click();
    await w.page.getByText('No tokens yet.').waitFor();
    expect((await fetch(`${base}/v1/memories`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(401);
    // Its own sign-in, kept in this tab only: the favorites' stays untouched, and sign-out forgets it.
    expect(await w.page.evaluate('localStorage.getItem("mcp-site-tokens")')).toBeNull();
    await w.page.getByRole('button', { name: 'Sign out' }).click();
    await w.page.getByRole('button', { name: 'Sign in' }).waitFor();
    expect(await w.page.evaluate('sessionStorage.getItem("mcp-site-pat-session")')).toBeNull();
    expectClean(w);
    await w.context.close();
  }, 180_000);

  test('at a phone width, by touch and in the dark theme: no sideways scroll, no axe violation', async () => {
    const w = await open({ viewport: PHONE, mobile: true, scheme: 'dark' });
    await w.page.goto('/tokens');
    await w.page.getByRole('button', { name: 'Sign in' }).tap();
    await signInWithMemories(w.page, 'tom');
    await w.page.waitForURL('**/tokens');
    await w.page.getByLabel('Name').fill('phone script');
    await w.page.getByLabel('Memories').fill('default, work');
    await w.page.getByLabel('Folder').fill('daily/');
    await w.page.getByRole('button', { name: 'Create token' }).tap();
    await w.page
      .locator('[data-new-token-value]')
      .filter({ hasText: /^mcpm_pat_/ })
      .waitFor();
    const row = w.page.getByRole('table', { name: 'Your active tokens' }).getByRole('row', { name: /phone script/ });
    await row.waitFor();
    expect((await row.getByRole('cell').allTextContents()).slice(1, 4)).toEqual(['Read', 'default, work', 'daily/']);
    expect(await overflowsSideways(w.page)).toBe(false);
    expect(await axe(w.page)).toEqual([]);
    await shot(w.page, 'tokens-phone');
    expectClean(w);
    await w.context.close();
  }, 180_000);
});

describe('keyboard and no JavaScript', () => {
  test('the skip link leads to the content; the theme switch is a toggle button that persists', async () => {
    const w = await open();
    await w.page.goto('/servers');
    await w.page.keyboard.press('Tab');
    expect(await w.page.evaluate('document.activeElement.textContent')).toBe('Skip to content');
    await w.page.keyboard.press('Enter');
    await w.page.waitForURL('**/servers#main');
    const toggle = w.page.getByRole('button', { name: 'Dark theme' });
    expect(await toggle.getAttribute('aria-pressed')).toBe('false');
    await toggle.focus();
    await w.page.keyboard.press('Space');
    expect(await w.page.evaluate('document.documentElement.dataset.theme')).toBe('dark');
    await w.page.reload();
    expect(await w.page.evaluate('document.documentElement.dataset.theme')).toBe('dark');
    expect(await toggle.getAttribute('aria-pressed')).toBe('true');
    await shot(w.page, 'servers-dark-toggled');
    expectClean(w);
    await w.context.close();
  }, 120_000);

  test('without JavaScript, search, filters, pages and install snippets all work', async () => {
    const w = await open({ javaScript: false });
    await w.page.goto('/');
    await w.page.getByRole('combobox', { name: 'Search MCP servers' }).fill('weather');
    await w.page.getByRole('combobox', { name: 'Search MCP servers' }).press('Enter');
    await w.page.waitForURL('**/search?q=weather');
    expect(await cardSlugs(w.page)).toEqual(await apiSlugs('/api/search?q=weather&limit=24'));
    await w.page.goto('/servers');
    await w.page.getByLabel(/^Security \(\d+\)$/).check();
    await w.page.getByRole('button', { name: 'Apply' }).click();
    await w.page.waitForURL(/category=Security/);
    expect(await cardSlugs(w.page)).toEqual(await apiSlugs('/api/mcps?category=Security&limit=24'));
    await w.page.goto(`/servers/${known.slug}`);
    expect(await w.page.locator('#snippet-1-0').textContent()).toContain('@acme/weather-mcp@1.2.0');
    // Controls that need the script stay out of the way.
    expect(await w.page.locator('button.pin').isHidden()).toBe(true);
    expect(await w.page.locator('button.copy').first().isHidden()).toBe(true);
    await w.context.close();
  }, 120_000);
});

describe('hostile READMEs', () => {
  test('each renders inert in the browser: no script, no handler, no CSP violation, nothing active in the README', async () => {
    const w = await open();
    for (const slug of hostileSlugs) {
      await w.page.goto(`/servers/${slug}`);
      await w.page.waitForLoadState('load');
      // Give any handler (onload, onerror of a refused image, animations) its chance to fire.
      await w.page.evaluate('new Promise((r) => requestAnimationFrame(() => setTimeout(r, 250)))');
      const report = {
        slug,
        pwned: await w.page.evaluate('window.__pwned ?? null'),
        csp: await cspViolations(w.page),
        active: await w.page.evaluate(`(() => {
          const root = document.querySelector('.readme');
          if (!root) return ['no README rendered'];
          const found = [];
          for (const el of root.querySelectorAll('*')) {
            if (/^(script|style|iframe|frame|object|embed|svg|math|form|input|button|textarea|select|link|meta|base)$/i.test(el.tagName)) found.push(el.tagName);
            for (const a of el.attributes) {
              if (/^on/i.test(a.name) || a.name === 'style' || a.name === 'srcdoc') found.push(el.tagName + '@' + a.name);
              if ((a.name === 'href' || a.name === 'src') && !/^(https?:|mailto:|#)/i.test(a.value)) found.push(el.tagName + '@' + a.name + '=' + a.value);
            }
          }
          return found;
        })()`),
        pwnedRequests: w.foreign.filter((u) => u.includes('pwned')),
      };
      expect(report).toEqual({ slug, pwned: null, csp: [], active: [], pwnedRequests: [] });
    }
    await shot(w.page, 'hostile-last');
    expect(w.dialogs).toEqual([]);
    await w.context.close();
  }, 180_000);
});

/**
 * Everything on the page that could run or lead somewhere: every URL-bearing attribute resolved as
 * the browser resolves it must be http(s) (mailto: in a README); every script must be the site's own
 * (same origin) or a JSON-LD data block that still parses; no element carries an event handler.
 */
const PAGE_AUDIT = `(() => {
  const links = [];
  for (const el of document.querySelectorAll('[href],[src],[action],[formaction],[poster],[ping],[data],[srcset]')) {
    for (const name of ['href', 'src', 'action', 'formaction', 'poster', 'ping', 'data', 'srcset']) {
      const value = el.getAttribute(name);
      if (value === null) continue;
      for (const part of name === 'srcset' ? value.split(',').map((c) => c.trim().split(/\\s+/)[0]) : [value]) {
        let scheme = 'unparseable';
        try { scheme = new URL(part, document.baseURI).protocol; } catch {}
        if (!['http:', 'https:'].includes(scheme) && !(scheme === 'mailto:' && el.closest('.readme'))) links.push(el.tagName + '@' + name + '=' + part);
      }
    }
  }
  const scripts = [];
  for (const s of document.scripts) {
    if (s.type === 'application/ld+json') { try { JSON.parse(s.textContent); } catch { scripts.push('broken JSON-LD: ' + s.textContent.slice(0, 80)); } }
    else if (!s.src || new URL(s.src).origin !== location.origin) scripts.push(s.outerHTML.slice(0, 80));
  }
  const handlers = [];
  for (const el of document.querySelectorAll('*')) for (const a of el.attributes) if (/^on/i.test(a.name)) handlers.push(el.tagName + '@' + a.name);
  return { links, scripts, handlers };
})()`;

describe('hostile registry entries', () => {
  test('crawled or written as they came, each page is inert: nothing runs, every link is http(s) or absent', async () => {
    expect(crawledSlugs.length).toBe(7);
    expect(rawSlugs.length).toBe(9);
    const w = await open();
    const visit = async (path: string) => {
      await w.page.goto(path);
      await w.page.waitForLoadState('load');
      // Give any handler (an image's onerror, a focus, an animation) its chance to fire.
      await w.page.evaluate('new Promise((r) => requestAnimationFrame(() => setTimeout(r, 250)))');
      const audit = (await w.page.evaluate(PAGE_AUDIT)) as { links: string[]; scripts: string[]; handlers: string[] };
      return { path, pwned: await w.page.evaluate('window.__pwned ?? null'), csp: await cspViolations(w.page), ...audit };
    };
    const clean = (path: string) => ({ path, pwned: null, csp: [], links: [], scripts: [], handlers: [] });
    for (const slug of [...crawledSlugs, ...rawSlugs])
      expect(await visit(`/servers/${encodeURIComponent(slug)}`)).toEqual(clean(`/servers/${encodeURIComponent(slug)}`));
    // Their cards, in a list and in search results, suggestions included.
    for (const path of ['/servers?sort=name&q=attacker', '/search?q=attacker', '/search?q=script']) expect(await visit(path)).toEqual(clean(path));
    const box = w.page.getByRole('combobox', { name: 'Search MCP servers' });
    await box.fill('hostile');
    await w.page.getByRole('listbox', { name: 'Suggestions' }).getByRole('option').first().waitFor();
    expect((await w.page.evaluate(PAGE_AUDIT)) as unknown).toEqual({ links: [], scripts: [], handlers: [] });
    // The markup arrived as text: the title is shown as written, right-to-left override and all.
    await w.page.goto(`/servers/zz-raw-script-close`);
    expect(await w.page.getByRole('heading', { level: 1 }).textContent()).toBe("</script><script>window.__pwned='title'</script>");
    await w.page.goto(`/servers/zz-raw-bidi-tricks`);
    expect(await w.page.getByRole('heading', { level: 1 }).textContent()).toBe('Off\u202eicial\u202c Serv\u200ber');
    expect(w.foreign.filter((u) => !/^https?:/.test(u) || u.includes('pwned'))).toEqual([]);
    expectClean(w);
    await shot(w.page, 'hostile-registry-last');
    await w.context.close();
  }, 240_000);
});

/** A demo server the seed gives check history and a breaking change (the seed's history is deterministic but for its times). */
function withBreakingChange(): string {
  const history = generateHistory(generateCatalog(80), { now: Date.now() });
  const slug = history.changes.find((c) => c.entry.breaking && c.entry.changes?.[0]?.kind === 'removed')?.slug;
  if (slug === undefined) throw new Error('the demo history has no removed tool');
  return slug;
}

describe('trust over time on a server page', () => {
  test('the uptime chart (SVG with title, description and a table of its figures), "Changes", the description grade and the feeds', async () => {
    const slug = withBreakingChange();
    const w = await open();
    await w.page.goto(`/servers/${slug}`);
    const chart = w.page.getByRole('img', { name: /Daily uptime and median latency of .+, last 30 days/ });
    await chart.waitFor();
    expect(await chart.locator('desc').textContent()).toContain('The table below gives the same figures.');
    expect(await w.page.locator('.uptime-chart rect.bar').count()).toBeGreaterThan(25);
    await w.page.getByText("The chart's figures, day by day").click();
    const rows = w.page.getByRole('table', { name: 'Daily uptime and median latency' }).locator('tbody tr');
    expect(await rows.count()).toBeGreaterThan(25);
    expect(await w.page.locator('.uptime-summary').textContent()).toMatch(/% over 24 hours, [\d.]+% over 7 days, [\d.]+% over 30 days/);
    const changes = w.page.getByRole('region', { name: 'Changes' });
    expect(await changes.locator('.change-breaking').count()).toBeGreaterThan(0);
    expect(await changes.textContent()).toMatch(/_legacy\s*removed\s*\(breaking/);
    const grades = w.page.getByRole('table', { name: 'Trust grades and what they mean' });
    expect(await grades.getByRole('rowheader', { name: 'Tool descriptions' }).count()).toBe(1);
    expect(await w.page.locator('details.findings summary').textContent()).toMatch(/Tool description findings \(\d+; score \d+ of 100\)/);
    const feedHref = await w.page.locator(`link[rel="alternate"][href="/servers/${slug}/feed.xml"]`).getAttribute('type');
    expect(feedHref).toBe('application/atom+xml');
    expect(await axe(w.page)).toEqual([]);

    // Both feeds are valid Atom and carry the breaking removal.
    const own = await (await fetch(`${base}/servers/${slug}/feed.xml`)).text();
    expect(await atomProblems(w.page, own)).toEqual([]);
    expect(own).toMatch(/<category term="breaking"\/>\n<summary type="text">[^<]*_legacy removed \(breaking\)/);
    const site = await (await fetch(`${base}/feed.xml`)).text();
    expect(await atomProblems(w.page, site)).toEqual([]);
    expect(site).toContain(`<id>${base}/servers/${slug}#change-`);
    expectClean(w);
    await shot(w.page, 'detail-history');
    await w.context.close();
  }, 120_000);

  test('the Atom check finds what a broken feed lacks', async () => {
    const w = await open();
    await w.page.goto('/');
    expect(await atomProblems(w.page, '<feed xmlns="http://www.w3.org/2005/Atom"><id>x</id>')).toEqual([expect.stringMatching(/^not well-formed XML/)]);
    const broken = `<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"><id>urn:a</id><title>t</title><updated>yesterday</updated>
<entry><id>urn:e</id><title>e</title><updated>2026-01-01T00:00:00Z</updated></entry><entry><id>urn:e</id><title></title><updated>2026-01-01T00:00:00Z</updated><link href="/x"/></entry></feed>`;
    expect(await atomProblems(w.page, broken)).toEqual([
      'feed: updated "yesterday" is not an RFC 3339 date',
      'entry 1: neither content nor a link rel="alternate"',
      'entry 1: no author, and the feed has none',
      'entry 2: empty title',
      "entry 2: id urn:e repeats an earlier entry's",
      'entry 2: no author, and the feed has none',
    ]);
    await w.context.close();
  }, 60_000);
});

describe('the registry feed points at these pages', () => {
  test('CatalogMeta.url of /api/v0.1/servers is the server page, which answers', async () => {
    const body = (await (await fetch(`${base}/api/v0.1/servers?limit=3`)).json()) as {
      servers: Array<{ _meta: Record<string, { slug: string; url?: string }> }>;
    };
    for (const entry of body.servers) {
      const meta = entry._meta['io.example.catalog/v0'];
      expect(meta.url).toBe(`${base}/servers/${meta.slug}`);
      expect((await fetch(meta.url as string)).status).toBe(200);
    }
  });
});
