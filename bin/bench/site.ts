import { embeddedSearchIndex, type CatalogDetail } from '../../lambdas/catalog-core';
import { loadavg } from 'node:os';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import { createSiteDispatcher } from '../../lambdas/site/api';
import { assets } from '../../lambdas/site/assets';
import { loadSiteConfig } from '../../lambdas/site/config';
import type { SiteDeps } from '../../lambdas/site/deps';
import { SITE_ROUTES } from '../../lambdas/site/routes';
import { RouteMatcher, routeKey } from '../../lambdas/shared/http/route-table';
import type { HttpEvent } from '../../lambdas/shared/http/types';
import { generateCatalog, toSearchDocument } from '../local-stack/synthetic';
import { ms, summarize, verdict, type BenchSection } from './stats';

const COUNT = 10_000;
const BUDGET = 100 * 1024;
const RENDERS = 300;

const matcher = new RouteMatcher(SITE_ROUTES);

function event(pathAndQuery: string): HttpEvent {
  const [path, query = ''] = pathAndQuery.split('?');
  const match = matcher.match('GET', path).match;
  const key = match ? routeKey(match.route) : '$default';
  return {
    version: '2.0',
    routeKey: key,
    rawPath: path,
    rawQueryString: query,
    headers: {},
    pathParameters: match?.pathParameters,
    requestContext: {
      accountId: 'bench',
      apiId: 'bench',
      domainName: 'localhost',
      domainPrefix: 'localhost',
      http: { method: 'GET', path, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'bench' },
      requestId: 'bench',
      routeKey: key,
      stage: '$default',
      time: '',
      timeEpoch: 0,
    },
    isBase64Encoded: false,
  };
}

const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;

export async function runSiteBench(log: (m: string) => void): Promise<BenchSection> {
  log(`generating ${COUNT} servers`);
  const servers = generateCatalog(COUNT);
  const index = embeddedSearchIndex({});
  await index.replaceAll(servers.map(toSearchDocument));
  const details = new Map<string, CatalogDetail>(servers.map((s) => [s.record.slug, { record: s.record, readme: s.readme, tools: s.tools }]));
  // One server whose README is ten times the render cap: the page must still fit.
  const huge = servers[0];
  const hugeReadme = Array.from({ length: 8000 }, (_, i) => `## Section ${i}\n\nSome **text** with a [link](https://example.com/${i}) and \`code\`.`).join(
    '\n\n',
  );
  details.set('bench-huge-readme', {
    record: { ...huge.record, slug: 'bench-huge-readme' },
    readme: { content: hugeReadme, path: 'README.md', size: hugeReadme.length, sha: 'x'.repeat(40) },
    tools: huge.tools,
  });
  const config = { ...loadSiteConfig({}), publicUrl: 'https://mcp.example.com' };
  const deps: SiteDeps = {
    config,
    store: { get: async (slug) => details.get(slug) },
    index,
    originSecret: () => undefined,
    now: () => Date.parse('2026-11-02T00:00:00Z'),
  };
  const dispatch = createSiteDispatcher(config);
  const body = async (path: string): Promise<string> => {
    const res = await dispatch(event(path), deps, 'bench');
    if (res.statusCode !== 200) throw new Error(`${path} answered ${res.statusCode}`);
    return res.body ?? '';
  };

  const a = assets();
  const assetBytes = [a.css, a.js, a.theme, a.icon].map((x) => gzipSync(x.body).length).reduce((s, n) => s + n, 0);
  const rows: BenchSection['rows'] = [];
  rows.push([
    'stylesheet + scripts + icon (gzip), once per visit',
    `${kb(assetBytes)} (css ${kb(gzipSync(a.css.body).length)}, js ${kb(gzipSync(a.js.body).length)})`,
    '',
    'informational',
  ]);

  const pages: Array<[string, string]> = [
    ['home /', '/'],
    ['list /servers', '/servers'],
    ['list, filtered and sorted', '/servers?category=Data%20%26%20Databases&type=npm&sort=stars'],
    ['list, page 100', '/servers?page=100'],
    ['search /search?q=database', '/search?q=database'],
    ['search, filtered', '/search?q=browser%20automation&type=remote'],
    ['detail, README over the cap', '/servers/bench-huge-readme'],
    ['favorites', '/favorites'],
    ['Atom feed', '/feed.xml'],
  ];
  for (const [label, path] of pages) {
    log(`page ${path}`);
    const html = Buffer.from(await body(path));
    const gz = gzipSync(html).length;
    const first = gz + assetBytes;
    rows.push([
      `${label}: raw / gzip / brotli; first visit (gzip, with assets)`,
      `${kb(html.length)} / ${kb(gz)} / ${kb(brotliCompressSync(html).length)}; ${kb(first)}`,
      '< 100 KB',
      verdict(first < BUDGET),
    ]);
  }

  log(`weighing all ${details.size} detail pages`);
  const raw: number[] = [];
  const gz: number[] = [];
  let heaviest = '';
  let maxGz = 0;
  let maxRaw = 0;
  for (const slug of details.keys()) {
    const html = Buffer.from(await body(`/servers/${slug}`));
    const size = gzipSync(html).length;
    raw.push(html.length);
    gz.push(size);
    maxRaw = Math.max(maxRaw, html.length);
    if (size > maxGz) {
      maxGz = size;
      heaviest = slug;
    }
  }
  const r = summarize(raw);
  const g = summarize(gz);
  rows.push([`detail pages (all ${details.size}), raw: p50 / p99 / max`, `${kb(r.p50)} / ${kb(r.p99)} / ${kb(maxRaw)}`, '', 'informational']);
  rows.push([
    'detail pages, gzip: p50 / p99 / max; heaviest first visit',
    `${kb(g.p50)} / ${kb(g.p99)} / ${kb(maxGz)} (${heaviest}); ${kb(maxGz + assetBytes)}`,
    '< 100 KB',
    verdict(maxGz + assetBytes < BUDGET),
  ]);

  log('render time');
  const slugs = [...details.keys()];
  const timed: Array<[string, (i: number) => string]> = [
    ['home', () => '/'],
    [
      'list (varied filters, sorts and pages)',
      (i) => `/servers?sort=${['popularity', 'stars', 'updated', 'name'][i % 4]}&page=${(i % 20) + 1}${i % 3 === 0 ? '&type=npm' : ''}`,
    ],
    ['search (varied queries)', (i) => `/search?q=${['database', 'browser', 'slack', 'github issues', 'weather', 'postgres'][i % 6]}&page=${(i % 3) + 1}`],
    ['detail (varied servers, README rendered)', (i) => `/servers/${slugs[(i * 37) % slugs.length]}`],
  ];
  for (const [label, pathOf] of timed) {
    for (let i = 0; i < 30; i++) await body(pathOf(i + 1000));
    const samples: number[] = [];
    for (let i = 0; i < RENDERS; i++) {
      const t = performance.now();
      await body(pathOf(i));
      samples.push(performance.now() - t);
    }
    const s = summarize(samples);
    rows.push([`render ${label}: p50 / p99`, `${ms(s.p50)} / ${ms(s.p99)}`, '', 'informational']);
  }

  return {
    title: `Site pages (${COUNT.toLocaleString('en-US')} synthetic servers)`,
    rows,
    method: [
      `- Data: \`generateCatalog(${COUNT})\` (seed 1) in the embedded search index, the store in memory; plus one server whose README is ${kb(hugeReadme.length)} of markdown (the page renders the first ${config.readmeMaxChars.toLocaleString('en-US')} characters).`,
      '- Weight: the body the site handler returns (the pipeline, CSP and all), raw and compressed with Node zlib at its default levels (CloudFront compresses with gzip or brotli). "First visit" adds the gzip-compressed stylesheet, scripts and icon, which later pages take from the cache (immutable, content-hashed URLs); server icons are left out, as the budget says. Every detail page of the catalog is weighed, not a sample.',
      `- Load: the machine's 1-minute load average was ${loadavg()[0].toFixed(1)} at the end of the run (it is shared; timings move with it, sizes do not).`,
      `- Render: \`createSiteDispatcher\` called in-process (no limiter, no edge cache), ${RENDERS} sequential renders per case after 30 warm-ups, README cache on (the default 200 entries: the detail case cycles through more servers than that, so most of its renders parse and sanitise a README).`,
      '- Bundle and init: the site row of "Lambda bundles and module init", which weighs the bundle CDK builds (markdown-it and sanitize-html are in `markdown-libs.js` beside it, loaded with the first README, not at init).',
    ].join('\n'),
  };
}
