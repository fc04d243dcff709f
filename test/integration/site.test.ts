/**
 * The site over HTTP (the local server, the real site and catalog handlers, DynamoDB Local and the
 * S3 server): every page answers HTML with its headers, lists and search show exactly what the
 * catalog API answers for the same query, bad input is a 400/404/405 page and never a 500, feeds
 * and the sitemap cover the catalog, and every page stays within the 100 KB budget.
 */
import { searchDocumentOf, type CatalogFilters, type CatalogRecord, type SortKey } from '../../lambdas/catalog-core';
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { generateCatalog } from '../../bin/local-stack/synthetic';
import { startTestSite, type TestSite } from '../support/site-harness';

let t: TestSite;
const SEEDED = 120;

beforeAll(async () => {
  t = await startTestSite({ seed: SEEDED });
}, 120000);

afterAll(async () => {
  await t?.close();
});

async function page(path: string, init?: RequestInit): Promise<{ status: number; headers: Headers; body: string }> {
  const res = await t.get(path, init);
  return { status: res.status, headers: res.headers, body: await res.text() };
}

/** The slugs of the server cards on a page, in order. */
function cardSlugs(html: string): string[] {
  return [...html.matchAll(/<h3 class="card-title"><a href="\/servers\/([^"]+)">/g)].map((m) => decodeURIComponent(m[1]));
}

async function apiSlugs(path: string): Promise<{ slugs: string[]; total: number }> {
  const body = (await (await t.get(path)).json()) as { data: Array<{ slug: string }>; meta: { pagination: { total: number } } };
  return { slugs: body.data.map((s) => s.slug), total: body.meta.pagination.total };
}

/** The index's own order (the site's `published` is not an API sort). */
async function indexSlugs(sort: SortKey, limit: number, filters: CatalogFilters = {}): Promise<string[]> {
  return (await t.catalog.index.list({ filters, sort, page: { offset: 0, limit } })).items.map((r) => r.slug);
}

async function anyRecord(pred: (r: CatalogRecord) => boolean): Promise<CatalogRecord> {
  for await (const d of t.catalog.store.scanAll()) if (pred(d.record)) return d.record;
  throw new Error('no record matches');
}

describe('every page', () => {
  const paths = ['/', '/index.html', '/servers', '/servers?category=Security&sort=stars', '/search?q=postgres', '/search', '/favorites', '/tokens'];

  test.each(paths)('%s is HTML with the security headers and an edge-cacheable Cache-Control', async (path) => {
    const r = await page(path);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const csp = r.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("style-src 'self'");
    expect(csp).toContain("default-src 'none'");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).not.toContain('unsafe-eval');
    expect(r.headers.get('x-content-type-options')).toBe('nosniff');
    expect(r.headers.get('x-frame-options')).toBe('DENY');
    expect(r.headers.get('strict-transport-security')).toMatch(/max-age=/);
    expect(r.headers.get('cache-control')).toMatch(/^public, max-age=\d+, s-maxage=\d+/);
    expect(r.headers.get('x-ratelimit-limit')).toBeNull();
    expect(r.body).toMatch(/^<!doctype html>/);
    // No inline script or style anywhere (the CSP would block them): only the site's own files and JSON-LD data.
    for (const m of r.body.matchAll(/<script([^>]*)>/g)) expect(m[1]).toMatch(/src="\/assets\/|type="application\/ld\+json"/);
    expect(r.body).not.toMatch(/<style|\sstyle=/);
    expect(r.body).not.toMatch(/\son[a-z]+=/);
  });

  test('the assets the pages name are served, immutable, with their types', async () => {
    const home = await page('/');
    const urls = [...home.body.matchAll(/(?:href|src)="(\/assets\/[^"]+)"/g)].map((m) => m[1]);
    expect(urls.length).toBeGreaterThanOrEqual(4);
    for (const u of urls) {
      const r = await page(u);
      expect(r.status).toBe(200);
      expect(r.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      expect(r.headers.get('content-type')).toMatch(/^(text\/css|text\/javascript|image\/svg\+xml)/);
    }
    expect((await page('/assets/site.0000000000.css')).status).toBe(404);
    expect((await page('/assets/..%2f..%2fpackage.json')).status).toBe(404);
  });

  test('HEAD answers a page as its GET would, without the body', async () => {
    const head = await t.get('/servers?sort=stars', { method: 'HEAD' });
    const get = await t.get('/servers?sort=stars');
    expect(head.status).toBe(200);
    expect(head.headers.get('etag')).toBe(get.headers.get('etag'));
    expect(head.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(await head.text()).toBe('');
    expect((await t.get('/servers/no-such-server', { method: 'HEAD' })).status).toBe(404);
  });

  test('an unchanged page is a 304 to a browser that holds it', async () => {
    const first = await t.get('/servers?sort=name');
    const etag = first.headers.get('etag');
    expect(etag).toMatch(/^W\/"/);
    const again = await t.get('/servers?sort=name', { headers: { 'if-none-match': etag as string } });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe('');
    expect((await t.get('/servers?sort=stars', { headers: { 'if-none-match': etag as string } })).status).toBe(200);
  });
});

describe('lists and search show what the catalog API answers', () => {
  const views = [
    ['', ''],
    ['?sort=stars', '&sort=stars'],
    ['?category=Data%20%26%20Databases&sort=updated', '&category=Data%20%26%20Databases&sort=updated'],
    ['?type=npm&type=remote&sort=name&page=2', '&type=npm,remote&sort=name&page=2'],
    ['?language=TypeScript&license=MIT&sort=downloads', '&language=TypeScript&license=MIT&sort=downloads'],
    ['?sort=trending', '&sort=trending'],
    // The filters form sends its uptime box empty when left blank: no minimum.
    ['?sort=uptime&up=true&uptimeMin=', '&sort=uptime&up=true'],
    ['?uptimeMin=90&sort=uptime', '&uptimeMin=90&sort=uptime'],
  ];

  test.each(views)('/servers%s', async (query, apiQuery) => {
    const html = (await page(`/servers${query}`)).body;
    const api = await apiSlugs(`/api/mcps?limit=24${apiQuery}`);
    expect(cardSlugs(html)).toEqual(api.slugs);
    expect(html).toContain(api.total === 0 ? 'No server matches' : `of ${api.total.toLocaleString('en-US')} server`);
  });

  it('keeps the uptime filters in its links and shows them as removable chips', async () => {
    const html = (await page('/servers?uptimeMin=90&up=true&sort=uptime')).body;
    expect(html).toContain('href="/servers?up=true&amp;sort=uptime" class="chip">Uptime ≥ 90%');
    expect(html).toContain('href="/servers?uptimeMin=90&amp;sort=uptime" class="chip">Not down');
    expect(html).toMatch(/<input type="checkbox" id="f-up" name="up" value="true" checked>/);
  });

  test.each([
    ['postgres', ''],
    ['weather forecast', ''],
    ['git', '&type=npm'],
    ['database', '&category=Data%20%26%20Databases&page=2'],
  ])('/search?q=%s%s', async (q, rest) => {
    const html = (await page(`/search?q=${encodeURIComponent(q)}${rest}`)).body;
    const api = await apiSlugs(`/api/search?limit=24&q=${encodeURIComponent(q)}${rest}`);
    expect(cardSlugs(html)).toEqual(api.slugs);
  });

  test('the filter form keeps the state of the URL, with the counts of this query beside every value', async () => {
    const html = (await page('/servers?category=Security&type=pypi&sort=stars')).body;
    expect(html).toMatch(/<input type="checkbox" id="f-cat-\d+" name="category" value="Security" checked>/);
    expect(html).toMatch(/<input type="checkbox" id="f-type-pypi" name="type" value="pypi" checked>/);
    expect(html).toMatch(/<option value="stars" selected>/);
    // The counts are the API's facets of the same query: categories under the type filter, types under the category filter.
    type Facets = { categories: Array<{ name: string; count: number }>; types: Array<{ name: string; count: number }> };
    const api = (await (await t.get('/api/mcps?category=Security&type=pypi&sort=stars')).json()) as { meta: { facets: Facets } };
    const { categories, types } = api.meta.facets;
    for (const c of categories) expect(html).toContain(`${c.name.replace('&', '&amp;')} (${c.count})`);
    for (const ty of types) expect(html).toMatch(new RegExp(`value="${ty.name}"[^>]*> <label for="f-type-${ty.name}">[^<]* \\(${ty.count}\\)`));
    const all = (await (await t.get('/api/facets')).json()) as { data: Facets };
    // Not the whole catalog's counts: the type filter narrows the category counts.
    expect(categories.find((c) => c.name === 'Security')?.count).toBeLessThan(all.data.categories.find((c) => c.name === 'Security')?.count ?? 0);
    // Each active filter has a link that removes it alone.
    expect(html).toContain('href="/servers?type=pypi&amp;sort=stars" class="chip"');
  });

  test('pages link to each other (rel prev/next) and past the last page say so', async () => {
    const p2 = (await page('/servers?page=2')).body;
    expect(p2).toContain('<link rel="prev" href="/servers">');
    expect(p2).toContain('<link rel="next" href="/servers?page=3">');
    expect(p2).toContain('aria-current="page">2</a>');
    const past = await page('/servers?page=999');
    expect(past.status).toBe(200);
    expect(past.body).toContain('is past the last page');
  });

  test('the home page: categories with counts, trending, recently published in the registry, popular', async () => {
    const html = (await page('/')).body;
    const [trending, published, popular] = await Promise.all([
      apiSlugs('/api/mcps?sort=trending&limit=6'),
      indexSlugs('published', 6).then((slugs) => ({ slugs })),
      apiSlugs('/api/mcps?limit=6'),
    ]);
    // The demo catalog has servers that gained stars this week, so the section is there.
    expect(cardSlugs(html)).toEqual([...trending.slugs, ...published.slugs, ...popular.slugs]);
    expect(html).toContain(`${SEEDED} servers from the official MCP registry`);
    expect(html).toContain('href="/servers?category=Data%20%26%20Databases"');
    expect(html).toContain('"@type":"WebSite"');
  });

  test('a query is escaped wherever it is shown', async () => {
    const r = await page(`/search?q=${encodeURIComponent('<script>alert(1)</script>"\'')}`);
    expect(r.status).toBe(200);
    expect(r.body).not.toContain('<script>alert(1)');
    expect(r.body).toContain('&lt;script&gt;alert(1)&lt;/script&gt;&quot;&#39;');
  });
});

describe('a server page', () => {
  test('has everything the catalog knows, install snippets, canonical URL, OpenGraph and schema.org data', async () => {
    const r = await anyRecord((x) => x.packages.some((p) => p.registryType === 'npm') && (x.github?.stars ?? 0) > 0 && x.hasIcon);
    const detail = await t.catalog.store.get(r.slug);
    const html = (await page(`/servers/${r.slug}`)).body;
    expect(html).toContain(`<link rel="canonical" href="https://mcp.example.com/servers/${r.slug}">`);
    expect(html).toContain('<meta property="og:type" content="article">');
    expect(html).toContain(`<meta property="og:image" content="https://mcp.example.com/api/icons/${r.slug}">`);
    const ld = JSON.parse(/<script type="application\/ld\+json">([^<]*)<\/script>/.exec(html)?.[1] ?? 'null');
    expect(ld).toMatchObject({
      '@context': 'https://schema.org',
      '@type': 'SoftwareApplication',
      alternateName: r.name,
      softwareVersion: r.version,
      url: `https://mcp.example.com/servers/${r.slug}`,
    });
    for (const label of ['Claude Desktop', 'Claude Code', 'VS Code', 'Cursor']) expect(html).toContain(`<summary>${label} <span class="muted">`);
    expect(html).toContain('claude mcp add ');
    expect(html).toContain('data-copy="snippet-');
    expect(html).toContain('Trust grades');
    expect(html).toContain('Health');
    if (detail?.tools?.length) {
      expect(html).toContain(`Tools <span class="count">(${detail.tools.length})</span>`);
      expect(html).toContain(`<code>${detail.tools[0].name}</code>`);
    }
    if (detail?.readme) expect(html).toContain('<div class="readme">');
    if (r.repository?.url) expect(html).toContain(`href="${r.repository.url}" rel="noopener nofollow ugc"`);
  });

  test('a hosted server shows its health and an endpoint snippet', async () => {
    const r = await anyRecord((x) => x.remotes.length > 0 && x.health !== undefined);
    const html = (await page(`/servers/${r.slug}`)).body;
    expect(html).toContain('Hosted endpoint (');
    expect(html).toContain(r.health?.live ? 'Live: it answered an MCP initialize' : 'Not responding to MCP');
    expect(html).toContain(`datetime="${r.health?.checkedAt}"`);
    expect(html).toContain('Any MCP client');
  });

  test('an unknown server is a 404 page; a slug over 200 characters a 400', async () => {
    const missing = await page('/servers/no-such-server');
    expect(missing.status).toBe(404);
    expect(missing.body).toContain('data-error-code>NOT_FOUND<');
    expect(missing.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const long = await page(`/servers/${'a'.repeat(201)}`);
    expect(long.status).toBe(400);
    expect(long.body).toContain('INVALID_QUERY');
  });
});

describe('bad input is a page with the status and code, never a 500', () => {
  test.each([
    ['/servers?category=Bogus', 400, 'category'],
    ['/servers?type=rubygems', 400, 'type'],
    ['/servers?sort=random', 400, 'sort'],
    ['/servers?uptimeMin=200', 400, 'uptimeMin'],
    ['/servers?up=maybe', 400, 'up'],
    ['/servers?page=0', 400, 'page'],
    ['/servers?page=1.5', 400, 'page'],
    ['/servers?page=1&page=2', 400, 'page'],
    [`/servers?language=${'x'.repeat(81)}`, 400, 'language'],
    [`/search?q=${'x'.repeat(101)}`, 400, 'q'],
    ['/search?q=a&q=b', 400, 'q'],
    ['/feed.xml?category=Nope', 400, 'category'],
    ['/sitemap.xml?part=0', 400, 'part'],
    ['/sitemap.xml?part=2', 404, ''],
  ])('%s → %d', async (path, status, field) => {
    const r = await page(path);
    expect(r.status).toBe(status);
    expect(r.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(r.body).toContain(status === 400 ? 'INVALID_QUERY' : 'NOT_FOUND');
    if (field) expect(r.body).toContain(`<code>${field}</code>`);
  });

  test('a wrong verb on a page is 405 with Allow; an unknown path keeps the catalog 404', async () => {
    const r = await page('/servers', { method: 'POST', body: 'x', headers: { 'content-type': 'text/plain' } });
    expect(r.status).toBe(405);
    expect(r.headers.get('allow')).toBe('GET');
    expect(r.body).toContain('METHOD_NOT_ALLOWED');
    const unknown = await page('/no-such-page');
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get('content-type')).toMatch(/application\/json/);
  });

  test('random query strings on every page: never a 5xx, always HTML or the feed', async () => {
    const paths = ['/', '/servers', '/search', '/favorites', '/tokens', '/feed.xml', '/sitemap.xml', '/servers/x'];
    const keys = ['q', 'page', 'sort', 'type', 'category', 'language', 'license', 'part', 'view', '%', '&', ''];
    const value = fc.oneof(
      fc.string({ maxLength: 30 }),
      fc.constantFrom('0', '-1', '1e3', '99999999999999999999', '%zz', '<script>', 'Security', 'npm,remote', ''),
    );
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...paths), fc.array(fc.tuple(fc.constantFrom(...keys), value), { maxLength: 5 }), async (path, pairs) => {
        const qs = pairs.map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join('&');
        const r = await t.get(`${path}?${qs}`);
        await r.arrayBuffer();
        expect(r.status).toBeLessThan(500);
        expect(r.headers.get('content-type')).toMatch(/^(text\/html|application\/(atom\+)?xml)/);
      }),
      { numRuns: Number(process.env.FUZZ_RUNS ?? 150), seed: 7 },
    );
  });
});

describe('feeds, sitemap, robots.txt and the OAuth client document', () => {
  test('/feed.xml: Atom, newest in the registry first (the index order `published`)', async () => {
    const r = await page('/feed.xml');
    expect(r.headers.get('content-type')).toBe('application/atom+xml; charset=utf-8');
    expect(r.body).toMatch(/^<\?xml version="1.0" encoding="utf-8"\?>\n<feed xmlns="http:\/\/www.w3.org\/2005\/Atom">/);
    const ids = [...r.body.matchAll(/<entry>\n<id>https:\/\/mcp\.example\.com\/servers\/([^<]+)<\/id>/g)].map((m) => m[1]);
    expect(ids.filter((id) => !id.includes('#change-'))).toEqual(await indexSlugs('published', 50));
    // Then the newest breaking changes across servers (the demo history has some), each marked.
    const breaking = await t.site.trust?.recentBreaking(50);
    expect(breaking?.length).toBeGreaterThan(0);
    expect(ids.filter((id) => id.includes('#change-'))).toEqual(breaking?.map((b) => `${b.slug}#change-${b.entry.at}-${b.entry.kind}`));
    expect(r.body.match(/<category term="breaking"\/>/g)).toHaveLength(breaking?.length ?? -1);
    expect(r.body).toContain('<link rel="self" type="application/atom+xml" href="https://mcp.example.com/feed.xml"/>');
  });

  test('/feed.xml?category=…: that category only, linked from its list page', async () => {
    const r = await page('/feed.xml?category=Security');
    const ids = [...r.body.matchAll(/<entry>\n<id>https:\/\/mcp\.example\.com\/servers\/([^<]+)<\/id>/g)].map((m) => m[1]);
    expect(ids).toEqual(await indexSlugs('published', 50, { category: ['Security'] }));
    expect((await page('/servers?category=Security')).body).toContain('href="/feed.xml?category=Security"');
  });

  test('/sitemap.xml lists the home, the list and every server with its last modification', async () => {
    const r = await page('/sitemap.xml');
    expect(r.headers.get('content-type')).toBe('application/xml; charset=utf-8');
    const locs = [...r.body.matchAll(/<loc>([^<]+)<\/loc>/g)].map((m) => m[1]);
    const slugs = ((await (await t.get('/api/slugs')).json()) as { data: Array<{ slug: string; updatedAt: string }> }).data;
    expect(locs).toEqual(['https://mcp.example.com/', 'https://mcp.example.com/servers', ...slugs.map((s) => `https://mcp.example.com/servers/${s.slug}`)]);
    expect(r.body).toContain(`<lastmod>${slugs[0].updatedAt}</lastmod>`);
  });

  test('robots.txt names the sitemap and keeps crawlers off the API and search results', async () => {
    const r = await page('/robots.txt');
    expect(r.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(r.body).toContain('Sitemap: https://mcp.example.com/sitemap.xml');
    expect(r.body).toContain('Disallow: /api/');
    expect(r.body).toContain('Disallow: /search');
    expect(r.body).toContain('Disallow: /tokens');
  });

  test('/oauth-client.json is a Client ID Metadata Document naming itself, the favorites page and the tokens page', async () => {
    const r = await t.get('/oauth-client.json');
    expect(await r.json()).toMatchObject({
      client_id: 'https://mcp.example.com/oauth-client.json',
      redirect_uris: ['https://mcp.example.com/favorites', 'https://mcp.example.com/tokens'],
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
    });
  });
});

describe('the tokens page', () => {
  test('/tokens is the same page for everyone (no secret in it), linked beside favorites, with the form and table the script fills', async () => {
    const r = await page('/tokens');
    expect(r.headers.get('cache-control')).toMatch(/^public,/);
    expect(r.body).toContain('<h1>Personal access tokens</h1>');
    expect(r.body).toContain('data-redirect-uri="https://mcp.example.com/tokens"');
    expect(r.body).toMatch(/<form class="token-form" data-token-form hidden>/);
    for (const name of ['name', 'access', 'memories', 'pathPrefix', 'expiresInDays']) expect(r.body).toContain(`name="${name}"`);
    expect(r.body).toMatch(/<caption>Your active tokens<\/caption>/);
    expect(r.body).toContain('<meta name="robots" content="noindex">');
    expect(r.body).not.toMatch(/mcpm_pat_/);
    const home = await page('/');
    expect(home.body).toMatch(/<a class="nav-link" href="\/favorites">Favorites<\/a><\/li>\n<li><a class="nav-link" href="\/tokens">Tokens<\/a>/);
    expect(r.body).toContain('<a class="nav-link" href="/tokens" aria-current="page">Tokens</a>');
  });
});

describe('a catalog too large for one sitemap file', () => {
  let small: TestSite;
  beforeAll(async () => {
    small = await startTestSite({ seed: 25, site: { sitemapMaxUrls: 10 } });
  }, 120000);
  afterAll(async () => small?.close());

  test('is an index of parts, each a urlset of at most the limit, together every URL once', async () => {
    const index = await (await small.get('/sitemap.xml')).text();
    expect(index).toContain('<sitemapindex');
    const parts = [...index.matchAll(/<loc>https:\/\/mcp\.example\.com(\/sitemap\.xml\?part=\d+)<\/loc>/g)].map((m) => m[1]);
    expect(parts).toEqual(['/sitemap.xml?part=1', '/sitemap.xml?part=2', '/sitemap.xml?part=3']);
    const all: string[] = [];
    for (const p of parts) {
      const locs = [...(await (await small.get(p)).text()).matchAll(/<loc>([^<]+)<\/loc>/g)].map((m) => m[1]);
      expect(locs.length).toBeLessThanOrEqual(10);
      all.push(...locs);
    }
    expect(all.length).toBe(27);
    expect(new Set(all).size).toBe(27);
    expect((await small.get('/sitemap.xml?part=4')).status).toBe(404);
  });
});

describe('the site is rate limited per client IP, with its own page', () => {
  let limited: TestSite;
  beforeAll(async () => {
    limited = await startTestSite({ seed: 3, limited: true, site: { rate: { rate: 1, burst: 3 } } });
  }, 120000);
  afterAll(async () => limited?.close());

  test('past the burst: 429 with Retry-After, not cached; assets stay free', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) statuses.push((await limited.get('/servers')).status);
    expect(statuses).toContain(429);
    const denied = await limited.get('/servers');
    expect(denied.status).toBe(429);
    expect(denied.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(denied.headers.get('cache-control')).toBe('no-store');
    expect(await denied.text()).toContain('RATE_LIMITED');
    // The 429 page itself still names the stylesheet, which is served although the reader is limited.
    const refused = await limited.get('/favorites');
    expect(refused.status).toBe(429);
    const css = /href="(\/assets\/site\.[0-9a-f]+\.css)"/.exec(await refused.text())?.[1];
    expect(css).toBeDefined();
    expect((await limited.get(css as string)).status).toBe(200);
  });
});

describe('page weight', () => {
  test('every kind of page is under 100 KB transferred (gzip, as CloudFront sends it); the largest detail page too', async () => {
    // The heaviest server of the catalog: the most tools and the longest README.
    let heaviest = '';
    let weight = -1;
    for await (const d of t.catalog.store.scanAll()) {
      const w = (d.readme?.content.length ?? 0) + JSON.stringify(d.tools ?? []).length;
      if (w > weight) {
        weight = w;
        heaviest = d.record.slug;
      }
    }
    const sizes: Record<string, { raw: number; gzip: number }> = {};
    for (const path of ['/', '/servers', '/servers?sort=stars&page=2', '/search?q=data', `/servers/${heaviest}`, '/favorites', '/tokens', '/feed.xml']) {
      const body = Buffer.from(await (await t.get(path)).arrayBuffer());
      sizes[path] = { raw: body.length, gzip: gzipSync(body).length };
    }
    for (const [path, s] of Object.entries(sizes)) expect({ path, ok: s.gzip < 100 * 1024 }).toEqual({ path, ok: true });
    // The figures themselves go in BENCHMARKS.md (npm run bench -- site); the list pages are small even uncompressed.
    expect(sizes['/servers'].raw).toBeLessThan(100 * 1024);
  });

  test('a README far over the cap is cut, so its page stays within budget', async () => {
    const [base] = generateCatalog(1, { seed: 99 });
    const slug = 'zz-huge-readme';
    const record = { ...base.record, slug, name: 'io.github.zz/huge-readme' };
    const content = Array.from({ length: 6000 }, (_, i) => `Paragraph ${i}: ${'lorem ipsum '.repeat(4)}`).join('\n\n');
    const readme = { content, path: 'README.md', size: content.length, sha: 'h'.repeat(40) };
    await t.catalog.store.put([{ record, readme, tools: null }]);
    await t.catalog.index.upsert([searchDocumentOf({ record, readme })]);
    const body = Buffer.from(await (await t.get(`/servers/${slug}`)).arrayBuffer());
    expect(content.length).toBeGreaterThan(300_000);
    expect(body.length).toBeLessThan(100 * 1024);
    expect(body.toString()).toContain('The README is longer than shown here.');
  });
});
