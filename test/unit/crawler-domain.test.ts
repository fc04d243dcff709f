import { type CatalogDetail, type Category, CATEGORIES } from '../../lambdas/catalog-core';
import { parseSteps, loadCrawlerConfig } from '../../lambdas/crawler/config';
import { mergeHealth } from '../../lambdas/crawler/domain/health';
import { classifyByRules, LlmCategoryClassifier, readmeProse } from '../../lambdas/crawler/domain/classify';
import { checkedKeywords } from '../../lambdas/crawler/domain/category-keywords';
import lists from '../../lambdas/crawler/domain/category-keywords.json';
import { normaliseRow } from '../../lambdas/crawler/domain/normalise';
import { buildEntry, contentHash, stableStringify } from '../../lambdas/crawler/domain/record';
import { buildReport, formatSummary } from '../../lambdas/crawler/domain/report';
import { baseSlug, isValidSlug, slugCandidates } from '../../lambdas/crawler/domain/slug';
import { starsGained, withStarSnapshot } from '../../lambdas/crawler/domain/trending';
import type { NormalisedServer } from '../../lambdas/crawler/domain/types';
import { emptyUnitResult } from '../../lambdas/crawler/domain/types';
import { loadFixtureRows } from '../support/crawler-fakes';

const fixture = new Map<string, NormalisedServer>();
for (const row of loadFixtureRows()) {
  const r = normaliseRow(row);
  if (r.ok && r.server.isLatest) fixture.set(r.server.name, r.server);
}
function real(name: string): NormalisedServer {
  const s = fixture.get(name);
  if (!s) throw new Error(`fixture has no ${name}`);
  return s;
}
const classify = (s: NormalisedServer, extra: { tools?: Array<{ name: string; description?: string }>; readme?: string } = {}) =>
  classifyByRules({ name: s.name, description: s.description, ...(s.title !== undefined && { title: s.title }), ...extra });

describe('slugs', () => {
  it('are lowercase, URL-safe, 1-200 chars, with hashed variants for collisions', () => {
    expect(baseSlug('io.github.Some_User/My..Server')).toBe('io-github-some-user-my-server');
    expect(baseSlug('--./..')).toBe('server');
    const long = `com.example/${'a'.repeat(250)}`;
    for (const c of slugCandidates(long)) expect(isValidSlug(c)).toBe(true);
    const [base, ...hashed] = slugCandidates('io.github.bob/b.c');
    expect(base).toBe('io-github-bob-b-c');
    expect(hashed[0]).toMatch(/^io-github-bob-b-c-[0-9a-f]{8}$/);
    expect(new Set(hashed).size).toBe(hashed.length);
    // Deterministic: the same name always gives the same candidates.
    expect(slugCandidates('io.github.bob/b.c')).toEqual(slugCandidates('io.github.bob/b.c'));
    expect(slugCandidates('io.github.bob/b-c')[1]).not.toBe(hashed[0]);
  });
});

describe('category classifier on real registry rows', () => {
  const expectations: Array<[string, Category]> = [
    ['io.github.spences10/mcp-sqlite-tools', 'Data & Databases'],
    ['io.github.domdomegg/airtable-mcp-server', 'Data & Databases'],
    ['io.github.abhishekbhakat/airflow-mcp-server', 'Data & Databases'],
    ['io.github.stefanoamorelli/sec-edgar-mcp', 'Finance & Crypto'],
    ['io.github.ycjcl868/mcp-server-fear-greed', 'Finance & Crypto'],
    ['ai.waystation/jira', 'Productivity & Docs'],
    ['io.github.jztan/redmine-mcp-server', 'Productivity & Docs'],
    ['io.github.huoshuiai42/huoshui-pdf-converter', 'Productivity & Docs'],
    ['io.github.yuna0x0/hackmd-mcp', 'Productivity & Docs'],
    ['io.github.ruvnet/claude-flow', 'AI & Machine Learning'],
    ['io.github.containers/kubernetes-mcp-server', 'Cloud & DevOps'],
    ['com.devcycle/mcp', 'Cloud & DevOps'],
    ['io.github.Decodo/mcp-web-scraper', 'Search & Web'],
    ['ai.smithery/shoumikdc-arxiv-mcp', 'Search & Web'],
    ['travel.kismet/mcp-server', 'Commerce & Marketing'],
    ['io.testiny/testiny-mcp', 'Development & Coding'],
    ['com.jumpcloud/jumpcloud-genai', 'Security'],
  ];
  it.each(expectations)('%s → %s', (name, category) => {
    expect(classify(real(name))).toContain(category);
  });

  it('answers Other, alone, when nothing matches', () => {
    expect(classify(real('com.joelverhagen.mcp/Knapcode.SampleMcpServer'))).toEqual(['Other']);
  });

  it('gives 1-3 known labels for every row, never Other with another, deterministically', () => {
    for (const s of fixture.values()) {
      const c = classify(s);
      expect(c.length).toBeGreaterThanOrEqual(1);
      expect(c.length).toBeLessThanOrEqual(3);
      for (const label of c) expect(CATEGORIES).toContain(label);
      if (c.includes('Other')) expect(c).toEqual(['Other']);
      expect(classify(s)).toEqual(c);
    }
  });

  it('uses captured tools and the README', () => {
    const golf = real('com.pga/pga-golf');
    expect(classify(golf)).toEqual(['Other']);
    expect(classify(golf, { tools: [{ name: 'upload_video', description: 'Upload a video or audio asset and create a playback ID' }] })).toContain(
      'Media & Design',
    );
    expect(classify(golf, { readme: '# Golf\nStream video and audio, cut podcasts and edit images.\n```sh\nnpm install docker kubernetes\n```' })).toContain(
      'Media & Design',
    );
    // Code blocks in the README do not count.
    expect(classify(golf, { readme: '```sh\nkubectl apply -f deploy.yaml\ndocker run terraform\n```' })).toEqual(['Other']);
  });

  it('reads what a README says the server is for, not how to install, build or deploy it', () => {
    const golf = real('com.pga/pga-golf');
    // The sections every project has: install, deploy, contributing (and their subsections).
    const boilerplate = [
      '# Golf',
      '## Installation',
      'Clone the repository with git, then build the code with the CLI and open a pull request.',
      '### Docker',
      'Deploy the Docker container to Kubernetes with Terraform.',
      '## Contributing',
      'Fork it on GitHub, lint, debug and refactor the source code.',
    ].join('\n');
    expect(classify(golf, { readme: boilerplate })).toEqual(['Other']);
    expect(readmeProse(boilerplate).trim()).toBe('# Golf');
    // Development and DevOps words in the prose itself count only beside the server's own:
    // every README speaks of code, git and deploying.
    expect(classify(golf, { readme: '# Golf\nWritten in TypeScript with a CLI, tested in CI, its source code is on GitHub.' })).toEqual(['Other']);
    expect(
      classifyByRules({
        name: 'io.example/linter',
        description: 'Lint your code.',
        readme: 'Runs in CI on every commit and every pull request of a repository.',
      }),
    ).toEqual(['Development & Coding']);
  });

  it('reads its keyword lists from a data file, checked at load', () => {
    expect(Object.keys(checkedKeywords(lists)).sort()).toEqual(CATEGORIES.filter((c) => c !== 'Other').sort());
    expect(() => checkedKeywords({ ...lists, Weather: ['rain'] })).toThrow(/unknown labels Weather/);
    expect(() => checkedKeywords({ ...lists, Security: ['tls', 'TLS'] })).toThrow(/Security lists TLS twice/);
    expect(() => checkedKeywords({ ...lists, Security: ['~ spaced'] })).toThrow(/malformed in Security/);
    const { Security: _, ...withoutSecurity } = lists;
    expect(() => checkedKeywords(withoutSecurity)).toThrow(/no list for Security/);
  });

  it('takes MCP as boilerplate, except as the subject: a registry of MCP servers, a router over them', () => {
    expect(rules('io.github.wei/mcp-registry-mcp-server', 'MCP server for querying the official MCP registry.')).toEqual(['Development & Coding']);
    expect(rules('ai.smithery/smithery-toolbox', "Toolbox dynamically routes to all MCPs in the Smithery registry based on your agent's need.")).toEqual([
      'Development & Coding',
    ]);
    // In a name, "mcp-registry" is where it is published, not what it does.
    expect(rules('net.example/company-lens-mcp-registry', 'Company data: firmographics of businesses.')).toEqual(['Data & Databases']);
  });

  // Descriptions of real registry servers (the 2025-10-21 sample) the issue names or that show a rule.
  const rules = (name: string, description: string, title?: string) => classifyByRules({ name, description, ...(title !== undefined && { title }) });

  it('classifies servers "Other" held before: Monday.com boards, PCAP analysis, Home Assistant', () => {
    expect(rules('ai.waystation/monday', 'Access and manage your Monday.com boards, items, and updates seamlessly')).toEqual(['Productivity & Docs']);
    expect(rules('ai.mcpcap/mcpcap', 'An MCP server for analyzing PCAP files.')).toEqual(['Security']);
    expect(
      rules('ai.smithery/slhad-aha-mcp', 'A TypeScript MCP server for Home Assistant, enabling programmatic management of entities, automations'),
    ).toContain('Browser & Automation');
  });

  it('does not make "workflow" or "automate" alone Browser & Automation, nor a weak word alone anything', () => {
    expect(rules('net.todoist/mcp', 'Official Todoist MCP server for AI assistants to manage tasks, projects, and workflows.')).toEqual([
      'Productivity & Docs',
    ]);
    expect(rules('ai.waystation/jira', 'Track issues, manage projects, and streamline workflows in Jira.')).not.toContain('Browser & Automation');
    expect(rules('io.example/crm', 'Automate CRM workflows with fast search across companies and deals.')).toEqual(['Commerce & Marketing']);
    // Strong words still count: browsers, Android UI automation, n8n.
    expect(rules('io.github.browserbase/mcp-server-browserbase', 'MCP server for AI web browser automation using Browserbase and Stagehand')).toEqual([
      'Browser & Automation',
    ]);
    expect(
      rules('io.github.pedro-rivas/android-puppeteer-mcp', 'MCP server for Android automation with UI interaction, screenshots, and device control'),
    ).toContain('Browser & Automation');
    // `search` alone is a feature, not the Search & Web domain; searching the web is.
    expect(rules('com.amplitude/mcp-server', 'Search, access, and get insights on your Amplitude data')).toEqual(['Data & Databases']);
    expect(rules('io.example/insights', 'Search, access, and get insights on your data')).toEqual(['Other']);
    expect(rules('ai.smithery/arjunkmrm-perplexity-search', "Enable AI assistants to perform web searches using Perplexity's Sonar Pro.")).toEqual([
      'Search & Web',
    ]);
  });

  it('matches keywords on Unicode word boundaries with Unicode case folding (the patterns run on a normalised copy)', () => {
    // A keyword with a non-ASCII letter matches in either case.
    expect(rules('io.example/cards', 'Browse Pokémon cards')).toEqual(['Media & Design']);
    expect(rules('io.example/cards', 'BROWSE POKÉMON CARDS')).toEqual(['Media & Design']);
    // A non-ASCII letter next to a keyword is part of the word: no match inside `ñpostgres` or `postgresé`.
    expect(rules('io.example/db', 'Query Postgres databases')).toContain('Data & Databases');
    expect(rules('io.example/db', 'Query ñpostgresé')).toEqual(['Other']);
    // Non-ASCII punctuation and white space are boundaries.
    expect(rules('io.example/db', 'Query\u00a0«Postgres»')).toContain('Data & Databases');
    // Case folding maps the long s to s, as the `iu` patterns did.
    expect(rules('io.example/db', 'Query Poſtgres')).toContain('Data & Databases');
  });

  it('puts greeting and sample demos in Other unless a domain scores high', () => {
    expect(
      rules('ai.smithery/arjunkmrm-ahoy', 'Send friendly, personalized greetings by name. Switch to a playful pirate voice for themed salutations.'),
    ).toEqual(['Other']);
    expect(
      rules('io.github.joelverhagen/Knapcode.SampleMcpServer', 'A sample MCP server using the MCP C# SDK. Generates random numbers and random weather.'),
    ).toEqual(['Other']);
    expect(
      rules(
        'ai.smithery/devbrother2024-typescript-mcp-server-boilerplate',
        'Kickstart development with a customizable TypeScript template featuring sample tools for greeting, calculations',
      ),
    ).toEqual(['Development & Coding']);
  });

  it('LLM seam: uses a valid answer, falls back to the rules on anything else', async () => {
    const s = real('io.github.spences10/mcp-sqlite-tools');
    const input = { name: s.name, description: s.description };
    const ok = new LlmCategoryClassifier(async () => 'Sure: ["Knowledge & Memory", "Data & Databases"]');
    expect(await ok.classify(input)).toEqual(['Knowledge & Memory', 'Data & Databases']);
    const invented = new LlmCategoryClassifier(async () => '["Databases"]');
    expect(await invented.classify(input)).toEqual(classifyByRules(input));
    const down = new LlmCategoryClassifier(async () => {
      throw new Error('model unavailable');
    });
    expect(await down.classify(input)).toEqual(classifyByRules(input));
    expect(LlmCategoryClassifier.prompt(input)).toContain('Development & Coding');
  });
});

describe('trending', () => {
  it('is the gain over 7 days of daily snapshots, 0 without history, never negative', () => {
    let h = withStarSnapshot(undefined, '2025-10-01', 100);
    expect(starsGained(h, '2025-10-01')).toBe(0);
    for (let d = 2; d <= 9; d++) h = withStarSnapshot(h, `2025-10-0${d}`, 100 + d * 10);
    expect(starsGained(h, '2025-10-09')).toBe(190 - 120);
    expect(starsGained({ '2025-10-07': 50, '2025-10-09': 80 }, '2025-10-09')).toBe(30);
    expect(starsGained({ '2025-10-01': 50, '2025-10-09': 80 }, '2025-10-09')).toBe(0);
    expect(starsGained({ '2025-10-05': 90, '2025-10-09': 80 }, '2025-10-09')).toBe(0);
    const pruned = withStarSnapshot(
      Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`2025-09-${String(i + 1).padStart(2, '0')}`, i])),
      '2025-10-01',
      99,
    );
    expect(Object.keys(pruned)).toHaveLength(15);
  });
});

describe('records and change detection', () => {
  const server = real('io.github.spences10/mcp-sqlite-tools');
  const now = new Date('2025-10-22T12:00:00Z');
  const later = new Date('2025-10-22T18:00:00Z');
  const repo = { exists: true, stars: 42, language: 'TypeScript', license: 'MIT License', licenseSpdx: 'MIT', pushedAt: '2025-10-20T00:00:00Z' };
  const readme = { content: '# sqlite tools', path: 'README.md', size: 14, sha: 'abc' };
  const first = buildEntry({ server, slug: 'x', enrichment: { repo, readme, downloads: 10 }, categories: ['Data & Databases'], trending: 0, now });
  const existing: CatalogDetail = { record: first.record, readme };

  it('builds a complete record with grades, popularity and timestamps', () => {
    expect(first.change).toBe('added');
    expect(first.record).toMatchObject({
      slug: 'x',
      isOfficial: false,
      github: { stars: 42, licenseSpdx: 'MIT' },
      grades: { license: 'A', maintenance: 'A', quality: 'untested' },
      crawledAt: now.toISOString(),
      updatedAt: now.toISOString(),
      downloads: 10,
    });
    expect(first.record.popularity).toBeGreaterThan(0);
  });

  it('is unchanged when only volatile timestamps differ', () => {
    const again = buildEntry({
      server,
      slug: 'x',
      existing,
      enrichment: { repo, readme: 'unchanged', downloads: 10 },
      categories: ['Data & Databases'],
      trending: 0,
      now: later,
    });
    expect(again.change).toBe('unchanged');
    expect(again.record).toBe(existing.record);
  });

  it('writes star changes without moving updatedAt, and moves it for README or upstream changes', () => {
    const stars = buildEntry({
      server,
      slug: 'x',
      existing,
      enrichment: { repo: { ...repo, stars: 50 } },
      categories: ['Data & Databases'],
      trending: 8,
      now: later,
    });
    expect(stars.change).toBe('updated');
    expect(stars.record.updatedAt).toBe(now.toISOString());
    expect(stars.record.crawledAt).toBe(later.toISOString());
    expect(stars.readme).toBeUndefined(); // the README item is not rewritten
    const newReadme = buildEntry({
      server,
      slug: 'x',
      existing,
      enrichment: { repo, readme: { ...readme, sha: 'def' }, downloads: 10 },
      categories: ['Data & Databases'],
      trending: 0,
      now: later,
    });
    expect(newReadme.record.updatedAt).toBe(later.toISOString());
    const newVersion = buildEntry({
      server: { ...server, version: '9.9.9' },
      slug: 'x',
      existing,
      enrichment: { repo, downloads: 10 },
      categories: ['Data & Databases'],
      trending: 0,
      now: later,
    });
    expect(newVersion.record.updatedAt).toBe(later.toISOString());
  });

  it('keeps previous enrichment when a step failed, grades null without a repository', () => {
    const failed = buildEntry({ server, slug: 'x', existing, enrichment: {}, categories: ['Data & Databases'], trending: 0, now: later });
    expect(failed.change).toBe('unchanged');
    const noRepo = buildEntry({ server: { ...server, repository: undefined }, slug: 'x', enrichment: {}, categories: ['Other'], trending: 0, now });
    expect(noRepo.record.grades).toEqual({ license: null, maintenance: null, quality: 'untested' });
    const unlicensed = buildEntry({ server, slug: 'x', enrichment: { repo: { exists: true, stars: 1 } }, categories: ['Other'], trending: 0, now });
    expect(unlicensed.record.grades.license).toBe('F');
  });

  it('hashes independently of key order and ignores crawledAt and health.checkedAt', () => {
    expect(stableStringify({ b: 1, a: { d: 2, c: undefined } })).toBe('{"a":{"d":2},"b":1}');
    const r = { ...first.record, health: { live: true, checkedAt: 'a' } };
    expect(contentHash({ record: r })).toBe(contentHash({ record: { ...r, crawledAt: 'z', health: { live: true, checkedAt: 'b' } } }));
    expect(contentHash({ record: r })).not.toBe(contentHash({ record: { ...r, health: { live: false, checkedAt: 'a' } } }));
  });
});

describe('health merging', () => {
  it('is live if any remote is live, with the latest check time and the best tool list', () => {
    const m = mergeHealth([
      { url: 'a', live: false, checkedAt: '2025-01-01T00:00:01Z', error: 'timeout' },
      { url: 'b', live: true, authRequired: true, checkedAt: '2025-01-01T00:00:03Z' },
      { url: 'c', live: true, toolCount: 2, tools: [{ name: 'x' }, { name: 'y' }], checkedAt: '2025-01-01T00:00:02Z' },
    ]);
    expect(m.health).toEqual({ live: true, checkedAt: '2025-01-01T00:00:03Z', toolCount: 2 });
    expect(m.tools).toHaveLength(2);
    expect(mergeHealth([{ url: 'b', live: true, authRequired: true, checkedAt: 't' }]).health).toEqual({ live: true, authRequired: true, checkedAt: 't' });
    expect(mergeHealth([])).toEqual({});
  });
});

describe('report and config', () => {
  it('summarises counts, rejections by reason and failures by step', () => {
    const result = {
      ...emptyUnitResult(),
      rows: 3,
      added: ['a'],
      unchanged: 1,
      rejected: [{ name: 'b', code: 'schema' as const, reason: 'bad' }],
      failures: [{ name: 'a', step: 'github' as const, reason: 'down' }],
    };
    const report = buildReport(
      { runId: 'r1', mode: 'full', startedAt: 't', status: 'running', steps: 1, unitsCreated: 1, unitsDone: 1, rowsSeen: 3 },
      [{ runId: 'r1', unitId: 'p1', kind: 'page', status: 'done', result }],
      { swept: ['c'] },
    );
    expect(report.counts).toMatchObject({ rows: 3, added: 1, unchanged: 1, removed: 1, rejected: 1, enrichmentFailures: 1 });
    expect(report.failuresByStep).toEqual({ github: 1 });
    const text = formatSummary(report);
    expect(text).toContain('added 1, updated 0, unchanged 1, removed 1, rejected 1');
    expect(text).toContain('b: bad');
    expect(text).toContain('github 1');
  });

  it('reads the environment with documented defaults and validates it', () => {
    const c = loadCrawlerConfig({});
    expect(c).toMatchObject({
      registryUrl: 'https://registry.modelcontextprotocol.io',
      githubApiUrl: 'https://api.github.com',
      pageSize: 100,
      readmeMaxBytes: 262144,
      classifier: 'rules',
    });
    expect(Object.values(c.steps).every(Boolean)).toBe(true);
    expect(parseSteps('github,icon')).toMatchObject({ github: true, icon: true, readme: false, health: false });
    expect(Object.values(parseSteps('none')).some(Boolean)).toBe(false);
    expect(() => parseSteps('stars')).toThrow(/unknown enrichment step/);
    expect(() => loadCrawlerConfig({ REGISTRY_URL: 'ftp://x' })).toThrow(/http\(s\) URL/);
    expect(loadCrawlerConfig({ REGISTRY_URL: 'http://127.0.0.1:9/' }).registryUrl).toBe('http://127.0.0.1:9');
  });
});
