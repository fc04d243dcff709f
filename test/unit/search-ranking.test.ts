/**
 * The ranking rules of `lambdas/catalog-core/search/ranking.ts`, held for both engines: the embedded
 * engine, and the OpenSearch adapter's requests as the simulator of `bin/bench/relevance`
 * evaluates them (an independent implementation of Lucene's scoring). Then the three
 * measured complaints on the demo catalog `npm start` seeds; each failed before the change.
 */
import { type SearchDocument, embeddedSearchIndex } from '../../lambdas/catalog-core';
import { embeddedRanker, openSearchRanker, type Ranker } from '../../bin/bench/relevance/evaluate';
import { generateCatalog, toSearchDocument } from '../../bin/local-stack/synthetic';
import { makeDoc, makeRecord } from './search-contract';

const doc = (name: string, description: string, more: { title?: string; readmeText?: string; toolText?: string; popularity?: number } = {}) =>
  makeDoc(
    makeRecord(name.replace(/[^a-z0-9]+/gi, '-').toLowerCase(), {
      name,
      description,
      popularity: more.popularity ?? 0,
      ...(more.title && { title: more.title }),
    }),
    {
      readmeText: more.readmeText ?? '',
      toolText: more.toolText ?? '',
    },
  );

const ENGINES: Array<[string, (docs: SearchDocument[]) => Promise<Ranker>]> = [
  ['embedded engine', embeddedRanker],
  ['OpenSearch requests', async (docs) => openSearchRanker(docs)],
];

describe.each(ENGINES)('ranking rules: %s', (_name, make) => {
  const corpus = [
    doc('io.github.alice/notes-mcp', 'Take notes in markdown.'),
    doc('io.github.bob/github-mcp', 'Manage GitHub issues and pull requests.'),
    doc('com.stripe/mcp', 'Payments, customers and invoices.'),
    doc('io.example/slack-a', 'Send Slack messages.'),
    doc('io.example/slack-b', 'Read Slack channels.'),
    ...['one', 'two', 'three', 'four', 'five'].map((n) => doc(`io.example/sentry-${n}`, 'Investigate errors and stack traces.')),
    doc('io.example/drive', 'Drive a real browser with clicks and forms.', { title: 'Browser Automation' }),
    doc('io.example/apart', 'A browser extension helper; automation of reports on the side.'),
    doc('io.example/only-automation', 'Automation automation automation for workflows.'),
    doc('io.example/puppet', 'Control headless Chrome with Puppeteer.'),
    doc('io.example/desktop', 'Automate desktop apps.'),
    doc('io.example/dbs', 'Query relational databases.'),
    doc('io.example/linker', 'A helper.', { readmeText: 'Built by https://github.com/someone/linker and listed at https://example.com/catalog.' }),
    doc('io.example/tools', 'Tools for GitHub.'),
    doc('io.example/news', 'Latest news headlines.'),
    doc('io.example/newer', 'A new way to take notes.'),
  ];
  let rank: Ranker;
  beforeAll(async () => {
    rank = await make(corpus);
  });
  const names = (q: string) => rank(q, 100);

  it('does not take a namespace for relevance: io.github.<user> is not about GitHub, the author is still findable', async () => {
    expect(await names('github')).toEqual(['io.github.bob/github-mcp', 'io.example/tools']);
    expect(await names('alice')).toEqual(['io.github.alice/notes-mcp']);
    // A company's own namespace names the product.
    expect(await names('stripe')).toEqual(['com.stripe/mcp']);
  });

  it('ignores URLs in READMEs', async () => {
    expect(await names('catalog')).toEqual([]);
    expect(await names('linker')).toEqual(['io.example/linker']);
  });

  it('matches fuzzily only where exact matching finds little', async () => {
    // 2 servers say "slack", 5 "stack": a real word is not widened to its neighbour.
    expect((await names('slack')).sort()).toEqual(['io.example/slack-a', 'io.example/slack-b']);
    // A typo, found by nothing, is.
    expect((await names('slakc')).sort()).toEqual(['io.example/slack-a', 'io.example/slack-b']);
    expect(await names('stack')).toHaveLength(5);
  });

  it('rewards every word present and the words next to each other', async () => {
    const ranked = await names('browser automation');
    // Both words together (here in the title), then both words apart, then the synonym and single words.
    expect(ranked.slice(0, 2)).toEqual(['io.example/drive', 'io.example/apart']);
    expect(ranked.indexOf('io.example/apart')).toBeLessThan(ranked.indexOf('io.example/only-automation'));
  });

  it('finds what a generic word means: synonyms and stems', async () => {
    expect(await names('browser')).toContain('io.example/puppet');
    expect(await names('automation')).toContain('io.example/desktop');
    expect(await names('database')).toEqual(['io.example/dbs']);
  });

  it('drops stop words and keeps words the stemmer would merge apart', async () => {
    expect(await names('tools for github')).toEqual(await names('tools github'));
    expect(await names('news')).toEqual(['io.example/news']);
    expect(await names('the')).toEqual([]);
  });
});

describe('the issue, measured on the demo catalog (300 servers)', () => {
  const catalog = generateCatalog(300);
  const index = embeddedSearchIndex();
  beforeAll(async () => {
    await index.replaceAll(catalog.map(toSearchDocument));
  });
  const search = (q: string, limit = 100) => index.search({ q, filters: {}, page: { offset: 0, limit } });

  it('`github` matches the servers that mention GitHub, not the 194 named io.github.<user>', async () => {
    const mentions = catalog
      .map(toSearchDocument)
      .filter((d) => {
        const r = d.record;
        const text = `${r.name.slice(r.name.indexOf('/') + 1)} ${r.title ?? ''} ${r.description} ${d.toolText} ${d.readmeText.replace(/https?:\/\/\S+/g, ' ')}`;
        return /(^|[^a-z0-9])github([^a-z0-9]|$)/i.test(text);
      })
      .map((d) => d.record.slug);
    const result = await search('github');
    expect(mentions.length).toBeGreaterThan(0);
    expect(result.items.map((r) => r.slug).sort()).toEqual(mentions.sort());
    expect(result.total).toBe(mentions.length);
    expect(catalog.filter((s) => s.record.name.startsWith('io.github.')).length).toBeGreaterThan(150);
  });

  it('`slack` finds Slack servers and no Sentry server (no fuzzy "stack")', async () => {
    const result = await search('slack', 10);
    expect(result.items.length).toBeGreaterThan(0);
    for (const r of result.items) expect(`${r.name} ${r.title ?? ''} ${r.description}`).toMatch(/slack/i);
    expect(result.items.filter((r) => /sentry/i.test(r.name))).toEqual([]);
  });

  it('deprecated servers lead neither the default list nor `postgres` (issue 23), and stay findable', async () => {
    const deprecated = new Set(catalog.filter((s) => s.record.status === 'deprecated').map((s) => s.record.slug));
    expect(deprecated.size).toBeGreaterThan(5);
    const first = (await index.list({ filters: {}, sort: 'popularity', page: { offset: 0, limit: 24 } })).items;
    expect(first.filter((r) => deprecated.has(r.slug))).toEqual([]);
    const postgres = (await search('postgres', 10)).items;
    expect(postgres.length).toBeGreaterThan(1);
    expect(deprecated.has(postgres[0].slug)).toBe(false);
    // Below the active ones, not gone.
    const firstDeprecated = postgres.findIndex((r) => deprecated.has(r.slug));
    expect(firstDeprecated).toBeGreaterThan(0);
  });

  it('`browser automation` puts the Puppeteer servers (19, 74 and 92 before) in the top 10, a browser tool first', async () => {
    const browserTools = catalog.filter((s) => /puppeteer|playwright/i.test(s.record.name)).map((s) => s.record.slug);
    expect(browserTools.length).toBeGreaterThanOrEqual(5);
    const top = (await search('browser automation', 10)).items;
    expect(browserTools).toContain(top[0].slug);
    for (const slug of browserTools) expect(top.map((r) => r.slug)).toContain(slug);
  });
});
