import { README_INDEX_CHARS, type SearchDocument } from '../../lambdas/catalog-core';
import { EmbeddedSearchIndex } from '../../lambdas/catalog-core/search/embedded';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, utimesSync, writeFileSync, existsSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { makeDoc, makeRecord, searchIndexContract } from './search-contract';
import { searchFacetsContract } from './search-contract-facets';

const tmpDirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'search-embedded-'));
  tmpDirs.push(dir);
  return dir;
}
afterAll(() => {
  for (const dir of tmpDirs) rmSync(dir, { recursive: true, force: true });
});

searchIndexContract('embedded, in memory', async () => new EmbeddedSearchIndex());
searchIndexContract('embedded, snapshot-backed', async () => new EmbeddedSearchIndex({ snapshotPath: join(tempDir(), 'nested', 'dir', 'index.json') }));
searchFacetsContract('embedded, in memory', async () => new EmbeddedSearchIndex());
searchFacetsContract('embedded, snapshot-backed', async () => new EmbeddedSearchIndex({ snapshotPath: join(tempDir(), 'facets', 'index.json') }));

const page = { offset: 0, limit: 100 };
const slugsOf = (records: { slug: string }[]): string[] => records.map((r) => r.slug).sort();
const doc = (slug: string, description = 'A fixture server.') => makeDoc(makeRecord(slug, { name: `io.test/${slug}`, description }));
/** A clock the test moves: the reader's 200 ms check interval passes when the test says so, whatever the machine's load. */
function manualClock() {
  let now = 1_000_000;
  return { clock: () => now, advance: (ms: number) => (now += ms) };
}

describe('EmbeddedSearchIndex snapshot sharing', () => {
  it('a reader instance sees upserts and removes of a writer instance on the same file', async () => {
    const file = join(tempDir(), 'index.json');
    const writer = new EmbeddedSearchIndex({ snapshotPath: file });
    const time = manualClock();
    const reader = new EmbeddedSearchIndex({ snapshotPath: file, clock: time.clock });

    expect(await reader.slugs()).toEqual([]); // no file yet: an empty catalog

    await writer.upsert([doc('a', 'About quokkas.'), doc('b')]);
    // Within the reader's 200 ms check interval it still serves what it has; past it, it reloads
    // on its own (no explicit refresh).
    time.advance(199);
    expect(await reader.slugs()).toEqual([]);
    time.advance(1);
    expect(slugsOf(await reader.registryPage({ limit: 10 }))).toEqual(['a', 'b']);
    expect(slugsOf((await reader.search({ q: 'quokkas', filters: {}, page })).items)).toEqual(['a']);

    await writer.remove(['a']);
    await reader.refresh();
    expect(slugsOf((await reader.list({ filters: {}, sort: 'name', page })).items)).toEqual(['b']);
    expect((await reader.search({ q: 'quokkas', filters: {}, page })).total).toBe(0);

    await writer.upsert([makeDoc(makeRecord('b', { name: 'io.test/b', description: 'Now about wombats.' }))]);
    await reader.refresh();
    expect(slugsOf((await reader.search({ q: 'wombats', filters: {}, page })).items)).toEqual(['b']);

    await writer.replaceAll([doc('c')]);
    await reader.refresh();
    expect(await reader.slugs()).toEqual([{ slug: 'c', updatedAt: '2025-01-01T00:00:00Z' }]);

    // A new instance loads the file as it is now.
    expect(slugsOf(await new EmbeddedSearchIndex({ snapshotPath: file }).registryPage({ limit: 10 }))).toEqual(['c']);
  });

  it('concurrent reads during a reload all see the new state', async () => {
    const file = join(tempDir(), 'index.json');
    const writer = new EmbeddedSearchIndex({ snapshotPath: file });
    const time = manualClock();
    const reader = new EmbeddedSearchIndex({ snapshotPath: file, clock: time.clock });
    await reader.slugs();
    await writer.upsert(Array.from({ length: 50 }, (_, i) => doc(`d${i}`)));
    time.advance(200);
    const results = await Promise.all(Array.from({ length: 10 }, () => reader.list({ filters: {}, sort: 'name', page })));
    expect(results.map((r) => r.total)).toEqual(Array(10).fill(50));
  });

  it('two writers interleaving keep each other’s documents', async () => {
    const file = join(tempDir(), 'index.json');
    const w1 = new EmbeddedSearchIndex({ snapshotPath: file });
    const w2 = new EmbeddedSearchIndex({ snapshotPath: file });
    await w1.upsert([doc('one')]);
    await w2.upsert([doc('two')]);
    await w1.upsert([doc('three')]);
    await w2.remove(['one']);
    await w1.upsert([doc('four')]);

    const reader = new EmbeddedSearchIndex({ snapshotPath: file });
    expect(slugsOf(await reader.registryPage({ limit: 10 }))).toEqual(['four', 'three', 'two']);
    // The writers' own reads are fresh too.
    await w2.refresh();
    expect(slugsOf(await w2.registryPage({ limit: 10 }))).toEqual(['four', 'three', 'two']);
  });

  it('two writers writing at the same time lose nothing', async () => {
    const file = join(tempDir(), 'index.json');
    const w1 = new EmbeddedSearchIndex({ snapshotPath: file });
    const w2 = new EmbeddedSearchIndex({ snapshotPath: file });
    await Promise.all([...Array.from({ length: 10 }, (_, i) => w1.upsert([doc(`x${i}`)])), ...Array.from({ length: 10 }, (_, i) => w2.upsert([doc(`y${i}`)]))]);
    const reader = new EmbeddedSearchIndex({ snapshotPath: file });
    expect((await reader.list({ filters: {}, sort: 'name', page })).total).toBe(20);
    expect(readdirSync(resolve(file, '..')).sort()).toEqual(['index.json']); // no temp or lock files left
  });

  it('a writer in another process is seen by this process', async () => {
    const dir = tempDir();
    const file = join(dir, 'index.json');
    const reader = new EmbeddedSearchIndex({ snapshotPath: file });
    await reader.upsert([doc('local')]);
    const script = join(dir, 'writer.ts');
    const modulePath = resolve(__dirname, '../../lambdas/catalog-core/search/embedded.ts').replace(/\\/g, '/');
    writeFileSync(
      script,
      `import { EmbeddedSearchIndex } from '${modulePath}';
const index = new EmbeddedSearchIndex({ snapshotPath: ${JSON.stringify(file)} });
const record = { slug: 'remote-proc', name: 'io.test/remote-proc', description: 'Written by a child process.', version: '1.0.0',
  status: 'active', packages: [], remotes: [], isOfficial: false, crawledAt: '2025-01-01T00:00:00Z', categories: ['Other'],
  grades: { license: null, maintenance: null, quality: 'untested' }, popularity: 1, trending: 0, hasIcon: false };
index.upsert([{ record, toolText: '', readmeText: '' }]).catch((e) => { console.error(e); process.exit(1); });
`,
    );
    const tsx = resolve(__dirname, '../../node_modules/.bin/tsx');
    await promisify(execFile)(tsx, [script], { cwd: resolve(__dirname, '../..') });
    await reader.refresh();
    expect(slugsOf(await reader.registryPage({ limit: 10 }))).toEqual(['local', 'remote-proc']);
  });

  it('waits for a held lock and breaks a stale one', async () => {
    const file = join(tempDir(), 'index.json');
    const writer = new EmbeddedSearchIndex({ snapshotPath: file });
    await writer.upsert([doc('first')]);

    writeFileSync(`${file}.lock`, 'someone-else');
    let done = false;
    const pending = writer.upsert([doc('second')]).then(() => {
      done = true;
    });
    // However slow the machine, the writer cannot get past a fresh lock (stale only after 30 s):
    // this wait can only make the check stronger, never fail it.
    await new Promise((r) => setTimeout(r, 300));
    expect(done).toBe(false);
    rmSync(`${file}.lock`);
    await pending;
    expect(done).toBe(true);

    writeFileSync(`${file}.lock`, 'crashed-process');
    const old = new Date(Date.now() - 60_000);
    utimesSync(`${file}.lock`, old, old);
    await writer.upsert([doc('third')]);
    expect(existsSync(`${file}.lock`)).toBe(false);
    const reader = new EmbeddedSearchIndex({ snapshotPath: file });
    expect(slugsOf(await reader.registryPage({ limit: 10 }))).toEqual(['first', 'second', 'third']);
  });

  it('a reader keeps its state when the file is corrupt, and recovers when it is rewritten', async () => {
    const file = join(tempDir(), 'index.json');
    const writer = new EmbeddedSearchIndex({ snapshotPath: file });
    const reader = new EmbeddedSearchIndex({ snapshotPath: file });
    await writer.upsert([doc('solid')]);
    await reader.refresh();
    writeFileSync(file, '{"truncated":');
    const warn = jest.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    try {
      await reader.refresh();
      expect(slugsOf(await reader.registryPage({ limit: 10 }))).toEqual(['solid']);
      expect(warn).toHaveBeenCalled();
      // A writer does not build on a snapshot it cannot read: it refuses rather than overwrite it.
      await expect(writer.upsert([doc('more')])).rejects.toThrow(SyntaxError);
      await writer.replaceAll([doc('fresh')]);
      await reader.refresh();
      expect(slugsOf(await reader.registryPage({ limit: 10 }))).toEqual(['fresh']);
    } finally {
      warn.mockRestore();
    }
  });
});

/** A deterministic corpus over a small vocabulary, so queries match many documents with many ties. */
function corpus(count: number, seed: number): SearchDocument[] {
  let state = seed;
  const rnd = () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state / 2147483648;
  };
  const vocab = ['alpha', 'beacon', 'cobalt', 'delta', 'ember', 'fjord', 'garnet', 'harbor', 'indigo', 'juniper', 'kestrel', 'lantern'];
  const words = (n: number) => Array.from({ length: n }, () => vocab[Math.floor(rnd() * vocab.length)]).join(' ');
  return Array.from({ length: count }, (_, i) =>
    makeDoc(
      makeRecord(`doc-${String(i).padStart(3, '0')}`, {
        name: `io.corpus/${vocab[i % vocab.length]}-${i}`,
        description: words(3 + Math.floor(rnd() * 5)),
        popularity: Math.floor(rnd() * 4),
      }),
      { toolText: words(Math.floor(rnd() * 6)), readmeText: words(Math.floor(rnd() * 30)) },
    ),
  );
}

const QUERIES = ['alpha', 'cobalt harbor', 'lanter', 'fjorx', 'kestrel juniper beacon', 'ember', 'garn'];

async function ranking(index: EmbeddedSearchIndex): Promise<string[][]> {
  const out: string[][] = [];
  for (const q of QUERIES) {
    const result = await index.search({ q, filters: {}, page: { offset: 0, limit: 100 } });
    out.push([String(result.total), ...result.items.map((r) => r.slug)]);
  }
  return out;
}

describe('EmbeddedSearchIndex specifics', () => {
  it('ranks the same whatever the write history (removals, replacements, compaction, reload)', async () => {
    const initial = corpus(120, 7);
    const replacements = corpus(120, 99).slice(0, 30); // same slugs doc-000…029, new text
    const removed = ['doc-040', 'doc-041', 'doc-077', 'doc-100'];
    const final = [...replacements, ...initial.slice(30).filter((d) => !removed.includes(d.record.slug))];

    const fresh = new EmbeddedSearchIndex();
    await fresh.replaceAll(final);
    const expected = await ranking(fresh);
    expect(expected.every((r) => Number(r[0]) > 0)).toBe(true);

    // Few dead documents: no compaction yet, statistics must still ignore them.
    const incremental = new EmbeddedSearchIndex();
    await incremental.upsert(initial);
    await incremental.remove(removed);
    await incremental.upsert(replacements.slice(0, 5));
    await incremental.upsert(replacements.slice(5));
    expect(await ranking(incremental)).toEqual(expected);

    // Many dead documents: compaction runs.
    const churned = new EmbeddedSearchIndex();
    await churned.upsert(initial);
    for (let round = 0; round < 3; round++) await churned.upsert(corpus(120, 1000 + round));
    await churned.replaceAll([]);
    await churned.upsert(initial);
    await churned.remove(removed);
    await churned.upsert(replacements);
    expect(await ranking(churned)).toEqual(expected);

    const file = join(tempDir(), 'index.json');
    const writer = new EmbeddedSearchIndex({ snapshotPath: file });
    await writer.upsert(initial);
    await writer.remove(removed);
    await writer.upsert(replacements);
    expect(await ranking(writer)).toEqual(expected);
    expect(await ranking(new EmbeddedSearchIndex({ snapshotPath: file }))).toEqual(expected);
  });

  it('pages agree with the full ordering when only the top results are selected', async () => {
    const index = new EmbeddedSearchIndex();
    await index.replaceAll(corpus(300, 3));
    for (const q of QUERIES) {
      const all = await index.search({ q, filters: {}, page: { offset: 0, limit: 300 } });
      const pages: string[] = [];
      for (let offset = 0; offset < all.total; offset += 7) {
        const pageResult = await index.search({ q, filters: {}, page: { offset, limit: 7 } });
        expect(pageResult.total).toBe(all.total);
        pages.push(...pageResult.items.map((r) => r.slug));
      }
      expect(pages).toEqual(all.items.map((r) => r.slug));
    }
  });

  it('the feed search finds a substring within one name only, in name order, from any bound', async () => {
    // The engine joins the lowercased names into one text to search it: a needle spanning the end
    // of one name and the start of the next must not match, and every bound must start the search.
    const names = Array.from(
      { length: 60 },
      (_, i) => `io.n${String(i).padStart(2, '0')}/${i % 7 === 0 ? 'Rare-Tool' : 'common'}-${i % 3 === 0 ? 'end' : 'mid'}`,
    );
    const index = new EmbeddedSearchIndex();
    await index.replaceAll(
      names.map((name, i) => makeDoc(makeRecord(`s${i}`, { name, crawledAt: `2025-01-${String(1 + (i % 28)).padStart(2, '0')}T00:00:00Z` }))),
    );
    const sorted = [...names].sort();
    const expected = (needle: string, from: number, since?: string, limit = 50) =>
      sorted
        .filter((n, i) => i >= from && n.toLowerCase().includes(needle.toLowerCase()))
        .filter((n) => since === undefined || names.indexOf(n) % 28 >= Number(since.slice(8, 10)) - 1)
        .slice(0, limit);
    for (const needle of ['RARE', 'rare-tool-end', 'end\nio', 'd\nio.n', 'mid', 'io.n5', 'n0', 'zzz']) {
      for (const from of [0, 1, 17, 42, 59, 60]) {
        const bound = from < sorted.length ? { nameFrom: sorted[from] } : { nameAfter: sorted[sorted.length - 1] };
        expect((await index.registryPage({ limit: 50, search: needle, ...bound })).map((r) => r.name)).toEqual(expected(needle, from));
        expect((await index.registryPage({ limit: 3, search: needle, ...bound })).map((r) => r.name)).toEqual(expected(needle, from, undefined, 3));
      }
      const since = '2025-01-20T00:00:00Z';
      expect((await index.registryPage({ limit: 50, search: needle, updatedSince: since })).map((r) => r.name)).toEqual(expected(needle, 0, since));
    }
  });

  it(`indexes only the first ${README_INDEX_CHARS} characters of a README`, async () => {
    const index = new EmbeddedSearchIndex();
    const filler = 'lorem ipsum '.repeat(Math.ceil(README_INDEX_CHARS / 12));
    await index.upsert([
      makeDoc(makeRecord('early', { name: 'io.test/early' }), { readmeText: `capybara ${filler}` }),
      makeDoc(makeRecord('late', { name: 'io.test/late' }), { readmeText: `${filler} axolotl` }),
    ]);
    expect((await index.search({ q: 'capybara', filters: {}, page })).total).toBe(1);
    expect((await index.search({ q: 'axolotl', filters: {}, page })).total).toBe(0);
  });

  it('matches prefixes and small typos of words of 4+ characters only', async () => {
    const index = new EmbeddedSearchIndex();
    await index.upsert([makeDoc(makeRecord('pg', { name: 'io.test/postgresql', description: 'Run SQL.' }))]);
    const hits = async (q: string) => (await index.search({ q, filters: {}, page })).total;
    expect(await hits('postg')).toBe(1);
    expect(await hits('postgrexql')).toBe(1);
    expect(await hits('sq')).toBe(0);
    expect(await hits('sqk')).toBe(0);
  });

  it('does not keep references to the caller’s objects', async () => {
    const index = new EmbeddedSearchIndex();
    const record = makeRecord('mutable', { name: 'io.test/mutable', popularity: 1 });
    await index.upsert([makeDoc(record)]);
    record.name = 'io.test/changed';
    expect((await index.registryPage({ limit: 10 }))[0].name).toBe('io.test/mutable');
  });

  it('keeps the last document when a batch repeats a slug', async () => {
    const index = new EmbeddedSearchIndex();
    await index.upsert([doc('dup', 'first version'), doc('dup', 'second version')]);
    const result = await index.list({ filters: {}, sort: 'name', page });
    expect(result.total).toBe(1);
    expect(result.items[0].description).toBe('second version');
  });
});
