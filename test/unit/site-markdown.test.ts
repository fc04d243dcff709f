/**
 * README rendering (lambdas/site/render/markdown.ts): the hostile corpus of test/fixtures renders
 * inert markup, random hostile input never produces an active construct, and ordinary READMEs keep
 * their structure, with links and images pointed at the repository.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { renderReadme } from '../../lambdas/site/render/markdown';
import { activeMarkup, attr, elementsOf } from '../support/active-markup';

const CORPUS = join(__dirname, '..', 'fixtures', 'site', 'hostile-readmes');
const GITHUB = { repository: { url: 'https://github.com/acme/weather', source: 'github' }, path: 'README.md' };

/** Active constructs in the rendered README, read by an HTML parser as a browser reads it. */
const problemsOf = activeMarkup;

describe('the hostile README corpus', () => {
  const files = readdirSync(CORPUS).filter((f) => f.endsWith('.md') && f !== 'README.md');

  test('covers scripts, javascript: and data: links, SVG, event handlers, frames, CSS and forms', async () => {
    expect(files.sort()).toEqual(
      expect.arrayContaining([
        'css-expressions.md',
        'data-links.md',
        'event-handlers.md',
        'forms-and-meta.md',
        'iframes.md',
        'javascript-links.md',
        'obfuscation.md',
        'script-tags.md',
        'svg-scripts.md',
      ]),
    );
  });

  test.each(files)('%s renders inert', async (file) => {
    const source = readFileSync(join(CORPUS, file), 'utf8');
    for (const ctx of [GITHUB, {}]) {
      const { html } = await renderReadme(source, ctx, 40_000);
      expect(problemsOf(html)).toEqual([]);
      // Only the README's own classes and ids: nothing that imitates or clobbers the page.
      for (const el of elementsOf(html)) {
        expect(attr(el, 'class') ?? 'language-').toMatch(/^language-/);
        expect(attr(el, 'id') ?? 'readme-').toMatch(/^readme-/);
        expect(attr(el, 'name')).toBeUndefined();
      }
    }
  });

  test('ordinary text around the payloads survives', async () => {
    const { html } = await renderReadme(readFileSync(join(CORPUS, 'script-tags.md'), 'utf8'), GITHUB, 40_000);
    expect(html).toContain('Text after the scripts.');
    expect(html).not.toContain('__pwned');
  });
});

describe('hostile input in general', () => {
  const pieces = [
    '<script>',
    '</script>',
    '<img src=x onerror=alert(1)>',
    '<a href="javascript:alert(1)">',
    '<a href="jav&#x09;ascript:x">',
    '[x](javascript:y)',
    '<svg onload=x>',
    '<iframe src=x>',
    '<p style="x:expression(y)">',
    '<style>',
    '"',
    "'",
    '>',
    '<',
    '&#106;',
    'data:text/html,',
    '`',
    '\n',
    '# ',
    '```',
    '<!--',
    '-->',
    '<math>',
    '<noscript>',
    ' onclick=x ',
    '<a href=',
    '<details ontoggle=x open>',
  ];

  test('no combination of hostile fragments produces active markup', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.oneof(fc.constantFrom(...pieces), fc.string({ maxLength: 8 })), { maxLength: 40 }), async (parts) => {
        const { html } = await renderReadme(parts.join(''), GITHUB, 40_000);
        expect(problemsOf(html)).toEqual([]);
      }),
      { numRuns: Number(process.env.FUZZ_RUNS ?? 300), seed: 42 },
    );
  });
});

describe('ordinary READMEs', () => {
  const source = [
    '# Weather MCP',
    '',
    'See [the setup guide](docs/setup.md), [the API](https://api.example.com/docs) and [usage](#usage).',
    '',
    '![screenshot](./img/shot.png) <img src="https://img.shields.io/badge/x-y-green" alt="badge" width="80" height="20">',
    '',
    '## Usage',
    '',
    '```json',
    '{ "mcpServers": {} }',
    '```',
    '',
    '<details><summary>More</summary>',
    '',
    '| a | b |',
    '|---|---|',
    '| 1 | 2 |',
    '',
    '</details>',
  ].join('\n');

  test('headings move one level down and get readme- ids that in-page links use', async () => {
    const { html } = await renderReadme(source, GITHUB, 40_000);
    expect(html).toContain('<h2 id="readme-weather-mcp">Weather MCP</h2>');
    expect(html).toContain('<h3 id="readme-usage">Usage</h3>');
    expect(html).toContain('<a href="#readme-usage">usage</a>');
    expect(html).not.toMatch(/<h1/);
  });

  test('relative links and images resolve against the repository; other sites get rel="noopener nofollow ugc"', async () => {
    const { html } = await renderReadme(source, { ...GITHUB, path: 'packages/weather/README.md' }, 40_000);
    expect(html).toContain('href="https://github.com/acme/weather/blob/HEAD/packages/weather/docs/setup.md" rel="noopener nofollow ugc"');
    expect(html).toContain('src="https://raw.githubusercontent.com/acme/weather/HEAD/packages/weather/img/shot.png"');
    expect(html).toContain('href="https://api.example.com/docs" rel="noopener nofollow ugc"');
    expect(html).toMatch(/<img[^>]+loading="lazy"[^>]+referrerpolicy="no-referrer"[^>]+src="https:\/\/img\.shields\.io\/badge\/x-y-green"[^>]*width="80"/);
  });

  test('without a GitHub repository, relative links keep their text and lose their target', async () => {
    const { html } = await renderReadme('[setup](docs/setup.md) ![shot](shot.png)', {}, 40_000);
    expect(html).toContain('<a>setup</a>');
    expect(html).not.toContain('shot.png');
  });

  test('code keeps its language class; details, tables and summaries stay', async () => {
    const { html } = await renderReadme(source, GITHUB, 40_000);
    expect(html).toContain('<code class="language-json">');
    expect(html).toContain('<details><summary>More</summary>');
    expect(html).toContain('<table tabindex="0">');
    expect(html).toContain('<pre tabindex="0">');
  });

  test('a README over the cap is cut at a line break and says so', async () => {
    const long = Array.from({ length: 2000 }, (_, i) => `Line ${i} of a long README.`).join('\n');
    const out = await renderReadme(long, GITHUB, 5_000);
    expect(out.truncated).toBe(true);
    expect(out.html).toContain('Line 0 of');
    expect(out.html).not.toContain('Line 1999 of');
    expect((await renderReadme('short', GITHUB, 5_000)).truncated).toBe(false);
    // Markup that grows when rendered (links, badges) is cut further, so the page keeps its weight.
    const links = Array.from({ length: 3000 }, (_, i) => `[l${i}](https://example.com/${'p'.repeat(40)}/${i})`).join(' ');
    const bounded = await renderReadme(links, GITHUB, 40_000, false, 20_000);
    expect(bounded.html.length).toBeLessThanOrEqual(20_000);
    expect(bounded.truncated).toBe(true);
    expect((await renderReadme('short', GITHUB, 5_000, true)).truncated).toBe(true);
  });
});
