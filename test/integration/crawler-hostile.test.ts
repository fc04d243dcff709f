/**
 * Hostile registry entries (test/fixtures/site/hostile-registry) crawled through the loopback fake
 * registry: the crawler keeps the servers, drops every URL whose scheme is not http(s) from the
 * website, repository, icons and package registries with the field and the scheme in its report,
 * refuses remotes without an http(s) URL and names the schema refuses, and stores titles and
 * descriptions as the text they are (the site escapes them; test/e2e/site-browser.test.ts renders them).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCrawl } from '../../lambdas/crawler/crawler';
import { formatSummary } from '../../lambdas/crawler/domain/report';
import type { CrawlReport } from '../../lambdas/crawler/domain/types';
import { catalogByName, startCrawlerEnv, type CrawlerEnv } from '../support/crawler-env';

const FIXTURES = join(__dirname, '..', 'fixtures', 'site');
const HOSTILE_ROWS = JSON.parse(readFileSync(join(FIXTURES, 'hostile-registry', 'rows.json'), 'utf8')) as unknown[];
const n = (s: string) => `io.github.attacker/${s}`;

let env: CrawlerEnv;
let report: CrawlReport;

beforeAll(async () => {
  env = await startCrawlerEnv(HOSTILE_ROWS);
  const corpus = readdirSync(join(FIXTURES, 'hostile-readmes'))
    .filter((f) => f.endsWith('.md') && f !== 'README.md')
    .map((f) => readFileSync(join(FIXTURES, 'hostile-readmes', f), 'utf8'));
  env.github.override('attacker/hostile-readme', { readme: corpus.join('\n\n') });
  report = await runCrawl(env.newCrawler().crawler);
}, 120_000);
afterAll(() => env?.close());

test('keeps the servers, drops each non-web URL with its field and scheme in the report', async () => {
  const catalog = await catalogByName(env.rawStore);
  expect([...catalog.keys()].sort()).toEqual(
    ['attribute-break', 'bidi-tricks', 'data-urls', 'file-urls', 'js-urls', 'script-close', 'vbscript-urls'].map(n).sort(),
  );
  const dropped = report.dropped.map((d) => `${d.name.replace('io.github.attacker/', '')}: ${d.reason}`).sort();
  expect(dropped).toEqual(
    [
      'data-urls: icons[0].src: a data: URL dropped (only http and https are kept)',
      'data-urls: repository.url: a data: URL dropped (only http and https are kept)',
      'data-urls: websiteUrl: a data: URL dropped (only http and https are kept)',
      'file-urls: repository.url: a ssh: URL dropped (only http and https are kept)',
      'file-urls: websiteUrl: a file: URL dropped (only http and https are kept)',
      'js-urls: icons[0].src: a javascript: URL dropped (only http and https are kept)',
      'js-urls: packages[0].registryBaseUrl: a javascript: URL dropped (only http and https are kept)',
      'js-urls: repository.url: a javascript: URL dropped (only http and https are kept)',
      'js-urls: websiteUrl: a javascript: URL dropped (only http and https are kept)',
      'vbscript-urls: icons[0].src: a vbscript: URL dropped (only http and https are kept)',
      'vbscript-urls: repository.url: a javascript: URL dropped (only http and https are kept)',
      'vbscript-urls: websiteUrl: a vbscript: URL dropped (only http and https are kept)',
    ].sort(),
  );
  expect(report.counts.droppedUrls).toBe(12);
  expect(formatSummary(report)).toContain('URLs dropped (not http or https): 12');
});

test('refuses remotes without an http(s) URL and the name the schema refuses, with reasons', () => {
  const rejected = Object.fromEntries(report.rejected.map((r) => [r.name, `${r.code}: ${r.reason}`]));
  expect(rejected).toEqual({
    [n('js-remote')]: expect.stringMatching(/^invalid_remote: remotes\[0\]: streamable-http needs an http\(s\) URL/),
    [n('data-remote')]: expect.stringMatching(/^invalid_remote: remotes\[0\]: sse needs an http\(s\) URL/),
    [n('<script>alert(1)</script>')]: expect.stringMatching(/^invalid_name: /),
  });
});

test('no stored record holds a URL outside http(s), wherever it is', async () => {
  const urls: string[] = [];
  const walk = (v: unknown, key: string): void => {
    if (typeof v === 'string' && /(url|src|uri)$/i.test(key)) urls.push(v);
    else if (Array.isArray(v)) for (const x of v) walk(x, key);
    else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) walk(x, k);
  };
  for (const detail of (await catalogByName(env.rawStore)).values()) walk(detail.record, '');
  expect(urls.length).toBeGreaterThan(0);
  expect(urls.filter((u) => !/^https?:\/\//.test(u))).toEqual([]);
});

test('titles and descriptions are stored as the text they are; the hostile README as its source', async () => {
  const catalog = await catalogByName(env.rawStore);
  expect(catalog.get(n('script-close'))?.record.title).toBe("</script><script>window.__pwned='title'</script>");
  expect(catalog.get(n('bidi-tricks'))?.record.title).toBe('Off\u202eicial\u202c Serv\u200ber');
  expect(catalog.get(n('script-close'))?.readme?.content).toContain('<script');
  // An http(s) URL that carries markup is a URL like any other: kept, and escaped where shown.
  expect(catalog.get(n('attribute-break'))?.record.websiteUrl).toBe(`https://example.com/"><img/src=x/onerror=window.__pwned='website'>`);
});
