import {
  SERVER_SCHEMA_URL,
  SERVER_TEXT_MAX,
  toServerJson,
  isOfficialNamespace,
  licenseGrade,
  maintenanceGrade,
  popularityScore,
  CATEGORIES,
  REGISTRY_TYPES,
  type CatalogRecord,
  ICON_KIND_COUNT,
  ICON_SIZE,
  isWebp128,
  renderIcon,
  slugFromName,
} from '../../lambdas/catalog-core';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describeUnless } from '../support/skips';

import Ajv, { type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import sharp from 'sharp';

import {
  DEFAULT_NOW_ISO,
  generateCatalog,
  LANGUAGES,
  README_ONLY_WORDS,
  TOOL_ONLY_WORDS,
  TOPICS,
  toSearchDocument,
  type SyntheticServer,
} from '../../bin/local-stack/synthetic';
import { checkedVocabulary } from '../../bin/local-stack/vocabulary';

const NOW = new Date(DEFAULT_NOW_ISO);
const REPO_ROOT = join(__dirname, '../..');
const FIXTURE_SCHEMA = join(REPO_ROOT, 'test/fixtures/registry/server.schema.2025-12-11.json');
const SHARED_SCHEMA = join(REPO_ROOT, '../shared/reference/registry/static/schemas/2025-12-11/server.schema.json');

// One catalog shared by the shape tests: generation is deterministic, so sharing is safe.
const catalog = generateCatalog(1000);
const records = catalog.map((s) => s.record);
const share = (pred: (s: SyntheticServer) => boolean): number => catalog.filter(pred).length / catalog.length;

describe('generateCatalog determinism', () => {
  it('gives deep-equal, byte-identical output for the same inputs', () => {
    const a = generateCatalog(400, { seed: 7 });
    const b = generateCatalog(400, { seed: 7 });
    expect(b).toEqual(a);
    expect(JSON.stringify(b)).toBe(JSON.stringify(a));
  });

  it('defaults to seed 1 and now = 2026-11-01T00:00:00Z, never the wall clock', () => {
    expect(DEFAULT_NOW_ISO).toBe('2026-11-01T00:00:00.000Z');
    expect(JSON.stringify(generateCatalog(50))).toBe(JSON.stringify(generateCatalog(50, { seed: 1, now: NOW })));
  });

  it('differs with another seed', () => {
    const a = generateCatalog(100, { seed: 1 });
    const b = generateCatalog(100, { seed: 2 });
    expect(JSON.stringify(b)).not.toBe(JSON.stringify(a));
    const namesA = new Set(a.map((s) => s.record.name));
    expect(b.filter((s) => namesA.has(s.record.name)).length).toBeLessThan(20);
  });

  it('moves every date with `now`', () => {
    const later = new Date(NOW.getTime() + 10 * 86_400_000);
    const a = generateCatalog(20);
    const b = generateCatalog(20, { now: later });
    expect(b[0].record.crawledAt).not.toBe(a[0].record.crawledAt);
    expect(Date.parse(b[0].record.crawledAt) - Date.parse(a[0].record.crawledAt)).toBe(10 * 86_400_000);
  });

  it('makes a smaller catalog a prefix of a larger one', () => {
    expect(generateCatalog(1200).slice(0, 1000)).toEqual(catalog);
  });

  it('handles count 0 and rejects a bad count', () => {
    expect(generateCatalog(0)).toEqual([]);
    expect(() => generateCatalog(-1)).toThrow(RangeError);
    expect(() => generateCatalog(1.5)).toThrow(RangeError);
  });
});

describe('the vocabulary file (bin/local-stack/demo-vocabulary.json)', () => {
  const file = JSON.parse(readFileSync(join(REPO_ROOT, 'bin/local-stack/demo-vocabulary.json'), 'utf8')) as { topics: Array<Record<string, unknown>> };

  it('is what the generator draws from', () => {
    expect(TOPICS.map((t) => t.key)).toEqual(file.topics.map((t) => t.key));
    expect(checkedVocabulary(file).topics).toHaveLength(TOPICS.length);
  });

  it('refuses an entry the generator could not use, naming where it is', () => {
    const withTopic = (over: Record<string, unknown>) => ({ ...file, topics: [{ ...file.topics[0], ...over }, ...file.topics.slice(1)] });
    expect(() => checkedVocabulary(withTopic({ category: 'Gardening' }))).toThrow(/^demo-vocabulary\.json: topics\.0\.category: /);
    expect(() => checkedVocabulary(withTopic({ key: 'Not A Token' }))).toThrow(/topics\.0\.key/);
    expect(() => checkedVocabulary(withTopic({ nouns: [] }))).toThrow(/topics\.0\.nouns/);
    expect(() => checkedVocabulary({ ...file, licenses: [[{ name: 'MIT License', spdx: 'MIT' }, -1]] })).toThrow(/licenses\.0\.1/);
    expect(() => checkedVocabulary({ ...file, extra: [] })).toThrow(/\(root\)/);
  });
});

describe('generateCatalog shape (1000 servers)', () => {
  it('uses all 14 categories, 1-3 distinct valid labels per server', () => {
    const used = new Set(records.flatMap((r) => r.categories));
    expect([...used].sort()).toEqual([...CATEGORIES].sort());
    for (const r of records) {
      expect(r.categories.length).toBeGreaterThanOrEqual(1);
      expect(r.categories.length).toBeLessThanOrEqual(3);
      expect(new Set(r.categories).size).toBe(r.categories.length);
    }
    // Never "Other" beside a real label (20 of the 300 demo servers carried both before).
    for (const r of records) if (r.categories.includes('Other')) expect(r.categories).toEqual(['Other']);
    expect(records.filter((r) => r.categories.includes('Other')).length).toBeGreaterThan(0);
    // Even a tiny catalog covers every category (the first servers walk the topic list).
    expect(new Set(generateCatalog(TOPICS.length).flatMap((s) => s.record.categories)).size).toBe(CATEGORIES.length);
  });

  it('uses every registry type with plausible identifiers and transports', () => {
    const packages = records.flatMap((r) => r.packages);
    const types = new Set(packages.map((p) => p.registryType));
    for (const t of REGISTRY_TYPES.filter((x) => x !== 'remote')) expect(types).toContain(t);
    for (const p of packages) {
      expect(p.transport.type === 'stdio' || typeof p.transport.url === 'string').toBe(true);
      if (p.registryType === 'npm') expect(p.identifier).toMatch(/^(@[a-z0-9-]+\/)?[a-z0-9-]+$/);
      if (p.registryType === 'oci') expect(p.identifier).toMatch(/^(ghcr\.io|docker\.io)\/[a-z0-9-]+\/[a-z0-9-]+:v?\d/);
      if (p.registryType === 'mcpb') {
        expect(p.identifier).toMatch(/^https:\/\/.+\.mcpb$/);
        expect(p.fileSha256).toMatch(/^[a-f0-9]{64}$/);
      }
      if (p.registryType === 'nuget') expect(p.identifier).toMatch(/^[A-Z][A-Za-z0-9]*\.[A-Za-z0-9]+Mcp$/);
    }
    const stdio = packages.filter((p) => p.transport.type === 'stdio').length / packages.length;
    expect(stdio).toBeGreaterThan(0.8);
    expect(packages.some((p) => p.transport.type === 'streamable-http')).toBe(true);
    expect(packages.some((p) => p.transport.type === 'sse')).toBe(true);
  });

  it('gives about 40% of servers remotes, some of them remote-only, both remote types', () => {
    const withRemotes = share((s) => s.record.remotes.length > 0);
    expect(withRemotes).toBeGreaterThan(0.3);
    expect(withRemotes).toBeLessThan(0.5);
    expect(share((s) => s.record.remotes.length > 0 && s.record.packages.length === 0)).toBeGreaterThan(0.1);
    expect(share((s) => s.record.remotes.length === 0 && s.record.packages.length === 0)).toBe(0);
    const remoteTypes = new Set(records.flatMap((r) => r.remotes.map((x) => x.type)));
    expect([...remoteTypes].sort()).toEqual(['sse', 'streamable-http']);
  });

  it('has unique names and unique, URL-safe slugs derived from the name', () => {
    expect(new Set(records.map((r) => r.name)).size).toBe(records.length);
    expect(new Set(records.map((r) => r.slug)).size).toBe(records.length);
    for (const r of records) {
      expect(r.name).toMatch(/^[a-zA-Z0-9.-]+\/[a-zA-Z0-9._-]+$/);
      expect(r.slug).toMatch(/^[a-z0-9]+(-[a-z0-9]+)*$/);
      expect(r.slug.length).toBeLessThanOrEqual(200);
      expect(r.slug).toBe(slugFromName(r.name));
    }
    const namespaces = records.map((r) => r.name.split('/')[0]);
    expect(namespaces.some((n) => n.startsWith('io.github.'))).toBe(true);
    expect(namespaces.some((n) => n === 'ai.smithery')).toBe(true);
    expect(namespaces.some((n) => n.startsWith('com.'))).toBe(true);
    expect(namespaces.some((n) => n.startsWith('ai.') && n !== 'ai.smithery')).toBe(true);
  });

  it('slugifies names as documented', () => {
    expect(slugFromName('io.github.Some_User/My..Server')).toBe('io-github-some-user-my-server');
    expect(slugFromName('--a--/--b--')).toBe('a-b');
    expect(slugFromName(`com.x/${'a'.repeat(250)}`).length).toBe(200);
    expect(slugFromName(`com.x/${'a'.repeat(193)}-b`)).toMatch(/[a-z0-9]$/);
  });

  it('derives isOfficial, grades and popularity from scoring.ts', () => {
    for (const r of records) {
      expect(r.isOfficial).toBe(isOfficialNamespace(r.name));
      expect(r.grades).toEqual({
        license: licenseGrade(r.github?.licenseSpdx ?? r.github?.license, r.repository !== undefined),
        maintenance: maintenanceGrade(r.github?.pushedAt, NOW),
        quality: 'untested',
      });
      expect(r.popularity).toBe(
        popularityScore({ stars: r.github?.stars, downloads: r.downloads, live: r.health?.live, pushedAt: r.github?.pushedAt, isOfficial: r.isOfficial }, NOW),
      );
    }
    expect(share((s) => s.record.isOfficial)).toBeGreaterThan(0.2);
    expect(share((s) => !s.record.isOfficial)).toBeGreaterThan(0.5);
    const licenseGrades = new Set(records.map((r) => r.grades.license));
    const maintenanceGrades = new Set(records.map((r) => r.grades.maintenance));
    for (const g of ['A', 'B', 'C', 'D', 'F', null]) {
      expect(licenseGrades).toContain(g);
      expect(maintenanceGrades).toContain(g);
    }
  });

  it('has many languages and licenses, some repositories without a license, some servers without a repository', () => {
    const languages = new Set(records.map((r) => r.github?.language).filter((l) => l !== undefined));
    expect(languages.size).toBeGreaterThanOrEqual(12);
    for (const l of languages) expect(LANGUAGES).toContain(l);
    for (const l of ['TypeScript', 'Python', 'Go', 'Rust', 'Java', 'C#', 'JavaScript', 'Kotlin', 'Ruby', 'PHP', 'Swift', 'Elixir']) {
      expect(languages).toContain(l);
    }
    const spdx = new Set(records.map((r) => r.github?.licenseSpdx));
    for (const id of ['MIT', 'Apache-2.0', 'GPL-3.0', 'AGPL-3.0', 'MPL-2.0', 'LGPL-3.0', 'NOASSERTION']) expect(spdx).toContain(id);
    expect(records.some((r) => r.github !== undefined && r.github.license === undefined)).toBe(true);
    const noRepo = records.filter((r) => r.repository === undefined);
    expect(noRepo.length).toBeGreaterThan(20);
    for (const r of noRepo) {
      expect(r.github).toBeUndefined();
      expect(r.grades.license).toBeNull();
      expect(r.grades.maintenance).toBeNull();
    }
    for (const r of records) if (r.github !== undefined) expect((r.github.license === undefined) === (r.github.licenseSpdx === undefined)).toBe(true);
  });

  it('has Zipf-like stars and downloads, downloads only for npm/PyPI packages', () => {
    const stars = records
      .map((r) => r.github?.stars)
      .filter((s): s is number => s !== undefined)
      .sort((a, b) => b - a);
    expect(stars[0]).toBeGreaterThan(5_000);
    const median = stars[Math.floor(stars.length / 2)];
    expect(median).toBeLessThan(50);
    expect(stars.filter((s) => s > 1000).length / stars.length).toBeLessThan(0.05);
    for (const r of records) {
      const npmOrPypi = r.packages.some((p) => p.registryType === 'npm' || p.registryType === 'pypi');
      if (!npmOrPypi) expect(r.downloads).toBeUndefined();
      if (r.downloads !== undefined) expect(Number.isInteger(r.downloads) && r.downloads >= 0).toBe(true);
    }
    const downloads = records
      .map((r) => r.downloads)
      .filter((d): d is number => d !== undefined)
      .sort((a, b) => b - a);
    expect(downloads[0]).toBeGreaterThan(100_000);
    expect(downloads[Math.floor(downloads.length / 2)]).toBeLessThan(2_000);
  });

  it('has titles on ~70%, descriptions within the schema limit, mostly active status', () => {
    expect(share((s) => s.record.title !== undefined)).toBeGreaterThan(0.6);
    expect(share((s) => s.record.title !== undefined)).toBeLessThan(0.8);
    for (const r of records) {
      expect(r.description.length).toBeGreaterThan(10);
      expect(r.description.length).toBeLessThanOrEqual(SERVER_TEXT_MAX);
      if (r.title !== undefined) expect(r.title.length).toBeLessThanOrEqual(SERVER_TEXT_MAX);
      expect(['active', 'deprecated']).toContain(r.status);
    }
    const deprecated = share((s) => s.record.status === 'deprecated');
    expect(deprecated).toBeGreaterThan(0);
    expect(deprecated).toBeLessThan(0.15);
  });

  it('has trending 0 for most and small positive integers for some', () => {
    const positive = records.filter((r) => r.trending > 0);
    expect(positive.length / records.length).toBeGreaterThan(0.03);
    expect(positive.length / records.length).toBeLessThan(0.3);
    for (const r of records) expect(Number.isInteger(r.trending) && r.trending >= 0 && r.trending <= 50).toBe(true);
  });

  it('has health exactly for servers with remotes, and toolCount matching tools on ~60%', () => {
    for (const s of catalog) {
      const r = s.record;
      expect(r.health !== undefined).toBe(r.remotes.length > 0);
      if (r.health !== undefined) {
        expect(Date.parse(r.health.checkedAt)).toBeLessThanOrEqual(NOW.getTime());
        if (r.health.toolCount !== undefined) expect(r.health.toolCount).toBe(r.toolCount);
      }
      expect(r.toolCount).toBe(s.tools?.length);
    }
    expect(records.some((r) => r.health?.live === true)).toBe(true);
    expect(records.some((r) => r.health?.live === false)).toBe(true);
    expect(records.some((r) => r.health?.authRequired === true)).toBe(true);
    const withTools = share((s) => s.record.toolCount !== undefined);
    expect(withTools).toBeGreaterThan(0.5);
    expect(withTools).toBeLessThan(0.7);
  });

  it('has crawledAt always, updatedAt on ~90%, all dates at or before now', () => {
    expect(share((s) => s.record.updatedAt !== undefined)).toBeGreaterThan(0.85);
    expect(share((s) => s.record.updatedAt !== undefined)).toBeLessThan(0.95);
    for (const r of records) {
      const crawled = Date.parse(r.crawledAt);
      expect(new Date(crawled).toISOString()).toBe(r.crawledAt);
      expect(crawled).toBeLessThanOrEqual(NOW.getTime());
      if (r.updatedAt !== undefined) expect(Date.parse(r.updatedAt)).toBeLessThanOrEqual(crawled);
      if (r.publishedAt !== undefined && r.updatedAt !== undefined) expect(Date.parse(r.publishedAt)).toBeLessThanOrEqual(Date.parse(r.updatedAt));
      if (r.github?.pushedAt !== undefined) expect(Date.parse(r.github.pushedAt)).toBeLessThanOrEqual(crawled);
    }
  });

  it('never stores undefined values (DynamoDB marshalling rejects them)', () => {
    const hasUndefined = (v: unknown): boolean => v === undefined || (typeof v === 'object' && v !== null && Object.values(v).some(hasUndefined));
    expect(catalog.filter(hasUndefined)).toEqual([]);
  });

  it('gives icons to most servers, with kinds inside the palette', () => {
    for (const s of catalog) {
      expect(s.record.hasIcon).toBe(s.iconKind !== undefined);
      if (s.iconKind !== undefined) {
        expect(Number.isInteger(s.iconKind)).toBe(true);
        expect(s.iconKind).toBeGreaterThanOrEqual(0);
        expect(s.iconKind).toBeLessThan(ICON_KIND_COUNT);
      }
    }
    expect(share((s) => s.record.hasIcon)).toBeGreaterThan(0.6);
    expect(new Set(catalog.map((s) => s.iconKind)).size).toBe(ICON_KIND_COUNT + 1);
  });
});

describe('READMEs, tools and search documents', () => {
  const readmes = catalog.flatMap((s) => (s.readme ? [s.readme] : []));

  it('has READMEs from a few hundred bytes to a few KB, with consistent size and sha', () => {
    expect(readmes.length / catalog.length).toBeGreaterThan(0.6);
    const sizes = readmes.map((r) => r.size);
    expect(Math.min(...sizes)).toBeGreaterThan(200);
    expect(Math.max(...sizes)).toBeGreaterThan(2500);
    expect(Math.max(...sizes)).toBeLessThan(16_384);
    for (const r of readmes) {
      expect(r.size).toBe(Buffer.byteLength(r.content, 'utf8'));
      expect(r.sha).toMatch(/^[a-f0-9]{40}$/);
      expect(r.path).toMatch(/(^|\/)(README|readme)\.md$/);
      expect(r.content.startsWith('# ')).toBe(true);
    }
    for (const s of catalog) if (s.readme) expect(s.readme.content).toContain(s.record.description);
  });

  it('has 1-25 tools with unique names, descriptions and object input schemas', () => {
    for (const s of catalog) {
      if (s.tools === undefined) continue;
      expect(s.tools.length).toBeGreaterThanOrEqual(1);
      expect(s.tools.length).toBeLessThanOrEqual(25);
      expect(new Set(s.tools.map((t) => t.name)).size).toBe(s.tools.length);
      for (const t of s.tools) {
        expect(t.name).toMatch(/^[a-z][a-z0-9_]*$/);
        expect(t.description?.length).toBeGreaterThan(10);
        expect(t.inputSchema?.type).toBe('object');
      }
    }
    expect(Math.max(...catalog.map((s) => s.tools?.length ?? 0))).toBeGreaterThan(15);
  });

  const words = (text: string): Set<string> => new Set(text.toLowerCase().split(/[^a-z0-9]+/));
  const recordText = (r: CatalogRecord): string => JSON.stringify(r);

  it('keeps README-only probe words out of records and tools', () => {
    const seen = new Set<string>();
    for (const s of catalog) {
      const outside = words(`${recordText(s.record)} ${JSON.stringify(s.tools ?? [])}`);
      const inReadme = words(s.readme?.content ?? '');
      for (const w of README_ONLY_WORDS) {
        expect(outside.has(w)).toBe(false);
        if (inReadme.has(w)) seen.add(w);
      }
    }
    expect([...seen].sort()).toEqual([...README_ONLY_WORDS].sort());
  });

  it('keeps tool-only probe words out of records and READMEs', () => {
    const seen = new Set<string>();
    for (const s of catalog) {
      const outside = words(`${recordText(s.record)} ${s.readme?.content ?? ''}`);
      const inTools = words(toSearchDocument(s).toolText);
      for (const w of TOOL_ONLY_WORDS) {
        expect(outside.has(w)).toBe(false);
        if (inTools.has(w)) seen.add(w);
      }
    }
    expect([...seen].sort()).toEqual([...TOOL_ONLY_WORDS].sort());
  });

  it('mentions each topic keyword somewhere searchable', () => {
    const all = catalog.map((s) => {
      const d = toSearchDocument(s);
      return `${d.record.name} ${d.record.title ?? ''} ${d.record.description} ${d.toolText} ${d.readmeText}`.toLowerCase();
    });
    for (const topic of TOPICS) {
      expect(all.some((text) => text.includes(topic.label.toLowerCase()))).toBe(true);
    }
  });

  it('builds search documents from tools and README', () => {
    const s = catalog.find((x) => x.tools !== undefined && x.readme !== undefined);
    if (s === undefined || s.tools === undefined || s.readme === undefined) throw new Error('fixture catalog lacks a server with tools and README');
    const doc = toSearchDocument(s);
    expect(doc.record).toBe(s.record);
    expect(doc.readmeText).toBe(s.readme.content);
    expect(doc.toolText).toBe(s.tools.flatMap((t) => [t.name, t.description ?? '']).join('\n'));
    const bare = toSearchDocument({ record: s.record });
    expect(bare).toEqual({ record: s.record, toolText: '', readmeText: '' });
    expect(toSearchDocument({ record: s.record, tools: [{ name: 'ping' }, { name: 'echo', description: 'Echo input' }] }).toolText).toBe(
      'ping\necho\nEcho input',
    );
  });
});

describe('at benchmark scale', () => {
  // Its speed is measured by `npm run bench`, not asserted here.
  it('generates 10,000 servers with unique slugs and names', () => {
    const big = generateCatalog(10_000);
    expect(big).toHaveLength(10_000);
    expect(new Set(big.map((s) => s.record.slug)).size).toBe(10_000);
    expect(new Set(big.map((s) => s.record.name)).size).toBe(10_000);
  });
});

// ---------------------------------------------------------------------------------------------
// server.json conversion against the official schema
// ---------------------------------------------------------------------------------------------

function compileSchema(path: string): ValidateFunction {
  const ajv = new Ajv({ strict: false, allErrors: true });
  addFormats(ajv);
  return ajv.compile(JSON.parse(readFileSync(path, 'utf8')) as object);
}

function expectAllValid(validate: ValidateFunction, servers: SyntheticServer[]): void {
  const failures: Array<{ name: string; errors: unknown }> = [];
  for (const s of servers) {
    if (!validate(toServerJson(s.record))) failures.push({ name: s.record.name, errors: validate.errors });
  }
  expect(failures.slice(0, 3)).toEqual([]);
}

describe('toServerJson against the official 2025-12-11 schema (fixture copy)', () => {
  const validate = compileSchema(FIXTURE_SCHEMA);

  it('validates every generated record (two seeds)', () => {
    expectAllValid(validate, catalog);
    expectAllValid(validate, generateCatalog(500, { seed: 99 }));
  });

  it('keeps status, packages and remotes, and omits empty optionals', () => {
    for (const r of records) {
      const json = toServerJson(r);
      expect(json.$schema).toBe(SERVER_SCHEMA_URL);
      expect(json.status).toBe(r.status);
      expect(Array.isArray(json.packages) && Array.isArray(json.remotes)).toBe(true);
      expect('title' in json).toBe(r.title !== undefined);
      expect('repository' in json).toBe(r.repository !== undefined);
      for (const catalogOnly of ['slug', 'grades', 'popularity', 'github', 'health', 'isOfficial', 'categories']) {
        expect(catalogOnly in json).toBe(false);
      }
    }
  });

  it('repairs what older upstream shapes allowed and the current schema rejects', () => {
    const base = records.find((r) => r.packages.length > 0 && r.repository !== undefined);
    if (base === undefined) throw new Error('no record with a package and a repository');
    const odd: CatalogRecord = {
      ...base,
      title: 'T'.repeat(150),
      description: `${'word '.repeat(40)}end`,
      repository: { url: '', source: '' },
      packages: [{ ...base.packages[0], version: 'latest' }],
    };
    const json = toServerJson(odd);
    expect(validate(json)).toBe(true);
    expect(Array.from(json.description).length).toBeLessThanOrEqual(SERVER_TEXT_MAX);
    expect(json.description.endsWith('…')).toBe(true);
    expect(json.title?.length).toBe(SERVER_TEXT_MAX);
    expect(json.repository).toBeUndefined();
    expect(json.packages[0].version).toBeUndefined();
  });

  it('is what the schema rejects when a required field is broken (the validator is live)', () => {
    const json = { ...toServerJson(records[0]), name: 'no slash here' };
    expect(validate(json)).toBe(false);
    const badRemote = { ...toServerJson(records[0]), remotes: [{ type: 'sse', url: 'ftp://x' }] };
    expect(validate(badRemote)).toBe(false);
  });
});

describeUnless(existsSync(SHARED_SCHEMA) ? undefined : `${SHARED_SCHEMA} is absent (../shared is not checked out)`, {
  id: 'shared:synthetic-schema',
  what: 'the synthetic catalog against the official server.json schema of ../shared; validated against the committed copy only',
})('toServerJson against the shared reference schema', () => {
  it('the fixture is an exact copy of the reference schema', () => {
    expect(readFileSync(FIXTURE_SCHEMA, 'utf8')).toBe(readFileSync(SHARED_SCHEMA, 'utf8'));
  });

  it('validates every generated record', () => {
    expectAllValid(compileSchema(SHARED_SCHEMA), catalog);
  });
});

// ---------------------------------------------------------------------------------------------
// Icons
// ---------------------------------------------------------------------------------------------

describe('icons', () => {
  it('renders every kind as a 128x128 webp', async () => {
    for (let kind = 0; kind < ICON_KIND_COUNT; kind++) {
      const bytes = await renderIcon(kind);
      expect(await isWebp128(bytes)).toBe(true);
      const meta = await sharp(bytes).metadata();
      expect([meta.format, meta.width, meta.height]).toEqual(['webp', ICON_SIZE, ICON_SIZE]);
    }
  });

  it('renders each kind once and distinct kinds differently', async () => {
    const [a, b, again] = await Promise.all([renderIcon(3), renderIcon(4), renderIcon(3)]);
    expect(again).toBe(a);
    expect(Buffer.from(a).equals(Buffer.from(b))).toBe(false);
  });

  it('rejects kinds outside the palette', async () => {
    await expect(renderIcon(ICON_KIND_COUNT)).rejects.toThrow(RangeError);
    await expect(renderIcon(-1)).rejects.toThrow(RangeError);
    await expect(renderIcon(1.5)).rejects.toThrow(RangeError);
  });

  it('isWebp128 rejects other formats, sizes and garbage', async () => {
    const png = await sharp({ create: { width: 128, height: 128, channels: 3, background: '#fff' } })
      .png()
      .toBuffer();
    const smallWebp = await sharp({ create: { width: 64, height: 64, channels: 3, background: '#fff' } })
      .webp()
      .toBuffer();
    expect(await isWebp128(png)).toBe(false);
    expect(await isWebp128(smallWebp)).toBe(false);
    expect(await isWebp128(new Uint8Array([1, 2, 3, 4]))).toBe(false);
    expect(await isWebp128(new Uint8Array())).toBe(false);
  });
});
