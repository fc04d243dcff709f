import { SearchWindowError, type SearchIndex, type CatalogRecord, type SearchDocument, type SortKey } from '../../lambdas/catalog-core';
/**
 * The behaviour every `SearchIndex` adapter must share (embedded and OpenSearch). Each `describe`
 * block builds its own index through `make`, so adapters backed by a server get fresh indices.
 */

/** A valid record with neutral text; tests override what they assert on. */
export function makeRecord(slug: string, over: Partial<CatalogRecord> = {}): CatalogRecord {
  return {
    slug,
    name: `io.example.fixture/${slug}`,
    description: 'A fixture server.',
    version: '1.0.0',
    status: 'active',
    packages: [],
    remotes: [],
    isOfficial: false,
    crawledAt: '2025-01-01T00:00:00Z',
    categories: ['Other'],
    grades: { license: null, maintenance: null, quality: 'untested' },
    popularity: 0,
    trending: 0,
    hasIcon: false,
    ...over,
  };
}

export function makeDoc(record: CatalogRecord, text: { toolText?: string; readmeText?: string } = {}): SearchDocument {
  return { record, toolText: text.toolText ?? '', readmeText: text.readmeText ?? '' };
}

const npm = (identifier: string): CatalogRecord['packages'][number] => ({
  registryType: 'npm',
  identifier,
  version: '1.0.0',
  transport: { type: 'stdio' },
});

/**
 * Five servers chosen so that every sort has a tie broken by slug and every filter picks a
 * distinct subset. Name order (delta, bravo, echo, alpha, charlie) differs from slug order.
 */
export function catalogFixture(): SearchDocument[] {
  return [
    makeDoc(
      makeRecord('alpha', {
        name: 'io.example/zeta-alpha',
        packages: [npm('@example/alpha')],
        categories: ['Data & Databases'],
        github: { language: 'TypeScript', license: 'MIT License', licenseSpdx: 'MIT', stars: 50 },
        popularity: 10,
        downloads: 1000,
        trending: 5,
        updatedAt: '2025-03-01T00:00:00Z',
      }),
    ),
    makeDoc(
      makeRecord('bravo', {
        name: 'com.acme/bravo',
        title: 'Postgres Toolkit',
        packages: [{ registryType: 'pypi', identifier: 'bravo', transport: { type: 'stdio' } }],
        remotes: [{ type: 'streamable-http', url: 'https://bravo.example.com/mcp' }],
        categories: ['Data & Databases', 'Search & Web'],
        github: { language: 'Python', license: 'Apache License 2.0', licenseSpdx: 'Apache-2.0', stars: 50 },
        popularity: 30,
        trending: 0,
        crawledAt: '2025-05-01T00:00:00Z',
      }),
    ),
    makeDoc(
      makeRecord('charlie', {
        name: 'io.github.someone/charlie',
        packages: [npm('charlie'), { registryType: 'oci', identifier: 'ghcr.io/someone/charlie', transport: { type: 'stdio' } }],
        categories: ['Search & Web'],
        github: { language: 'TypeScript', licenseSpdx: 'MIT', stars: 5 },
        popularity: 30,
        downloads: 500,
        trending: 9,
        updatedAt: '2025-04-01T00:00:00Z',
      }),
    ),
    makeDoc(
      makeRecord('delta', {
        name: 'ai.tools/delta',
        remotes: [{ type: 'sse', url: 'https://delta.example.com/sse' }],
        categories: ['Other'],
        popularity: 1,
        downloads: 20000,
        trending: 0,
        updatedAt: '2024-12-01T00:00:00Z',
      }),
    ),
    makeDoc(
      makeRecord('echo', {
        name: 'io.example/echo',
        packages: [{ registryType: 'nuget', identifier: 'Echo.Server', transport: { type: 'stdio' } }],
        categories: ['Security'],
        github: { language: 'C#', license: 'MIT License', licenseSpdx: 'MIT', stars: 200 },
        popularity: 5,
        trending: 9,
        // The same instant as charlie's, written differently: ordering compares instants.
        updatedAt: '2025-04-01T00:00:00.000Z',
      }),
    ),
  ];
}

const slugsOf = (records: { slug: string }[]): string[] => records.map((r) => r.slug);

/** A check-history summary with a 30-day uptime (the other windows alike). */
function history(uptime: number, down = false): NonNullable<CatalogRecord['healthHistory']> {
  return { uptime: { '24h': uptime, '7d': uptime, '30d': uptime }, consecutiveFailures: down ? 3 : 0, down, checks: 10 };
}

const hosted: CatalogRecord['remotes'] = [{ type: 'streamable-http', url: 'https://hosted.example.com/mcp' }];

/**
 * Six servers for the uptime sort and filters: two tie at 99.5 (slug breaks it), one is down, two
 * have no check history. Popularity runs the other way, so an uptime order is not a popularity one.
 */
export function uptimeFixture(): SearchDocument[] {
  return [
    makeDoc(makeRecord('kilo', { remotes: hosted, healthHistory: history(99.5), popularity: 5 })),
    makeDoc(makeRecord('lima', { remotes: hosted, healthHistory: history(99.5), popularity: 10 })),
    makeDoc(makeRecord('mike', { remotes: hosted, healthHistory: history(70), popularity: 20 })),
    makeDoc(makeRecord('november', { remotes: hosted, healthHistory: history(40, true), popularity: 40 })),
    makeDoc(makeRecord('oscar', { remotes: hosted, popularity: 30 })),
    makeDoc(makeRecord('papa', { packages: [npm('papa')], popularity: 50 })),
  ];
}

export function searchIndexContract(name: string, make: () => Promise<SearchIndex>): void {
  describe(`SearchIndex contract: ${name}`, () => {
    describe('list, filters and sorts', () => {
      let index: SearchIndex;
      beforeAll(async () => {
        index = await make();
        await index.replaceAll(catalogFixture());
      });

      const list = (filters: Parameters<SearchIndex['list']>[0]['filters'], sort: SortKey = 'popularity', offset = 0, limit = 50) =>
        index.list({ filters, sort, page: { offset, limit } });

      it.each<[SortKey, string[]]>([
        ['popularity', ['bravo', 'charlie', 'alpha', 'echo', 'delta']],
        ['name', ['delta', 'bravo', 'echo', 'alpha', 'charlie']],
        ['stars', ['echo', 'alpha', 'bravo', 'charlie', 'delta']],
        ['updated', ['bravo', 'charlie', 'echo', 'alpha', 'delta']],
        ['downloads', ['delta', 'alpha', 'charlie', 'bravo', 'echo']],
        ['trending', ['charlie', 'echo', 'alpha', 'bravo', 'delta']],
      ])('sorts by %s (ties by slug asc, missing numbers as 0, updated falls back to crawledAt)', async (sort, expected) => {
        const page = await list({}, sort);
        expect(slugsOf(page.items)).toEqual(expected);
        expect(page.total).toBe(5);
      });

      it('pages with an exact total', async () => {
        const page = await list({}, 'popularity', 1, 2);
        expect(slugsOf(page.items)).toEqual(['charlie', 'alpha']);
        expect(page.total).toBe(5);
        const beyond = await list({}, 'popularity', 10, 5);
        expect(beyond).toEqual({ items: [], total: 5 });
      });

      it('pages a filtered listing with the filtered total', async () => {
        const page = await list({ type: ['npm', 'remote'] }, 'popularity', 1, 2);
        expect(slugsOf(page.items)).toEqual(['charlie', 'alpha']);
        expect(page.total).toBe(4);
      });

      it.each<[string, Parameters<SearchIndex['list']>[0]['filters'], string[]]>([
        ['type npm matches packages[].registryType', { type: ['npm'] }, ['charlie', 'alpha']],
        ['type oci', { type: ['oci'] }, ['charlie']],
        ['type remote means at least one remote', { type: ['remote'] }, ['bravo', 'delta']],
        ['type without matches', { type: ['mcpb'] }, []],
        ['types OR together', { type: ['npm', 'remote'] }, ['bravo', 'charlie', 'alpha', 'delta']],
        ['category', { category: ['Search & Web'] }, ['bravo', 'charlie']],
        ['categories OR together', { category: ['Security', 'Other'] }, ['echo', 'delta']],
        ['language is exact', { language: ['TypeScript'] }, ['charlie', 'alpha']],
        ['language is case-sensitive', { language: ['typescript'] }, []],
        ['languages OR together', { language: ['Python', 'C#'] }, ['bravo', 'echo']],
        ['license by SPDX id', { license: ['MIT'] }, ['charlie', 'alpha', 'echo']],
        ['license by GitHub name', { license: ['MIT License'] }, ['alpha', 'echo']],
        ['license name of another server', { license: ['Apache License 2.0'] }, ['bravo']],
        ['licenses OR together', { license: ['Apache-2.0', 'MIT License'] }, ['bravo', 'alpha', 'echo']],
        ['unknown license matches nothing', { license: ['WTFPL'] }, []],
        ['filters AND together', { type: ['npm'], category: ['Data & Databases'] }, ['alpha']],
        ['three filters AND', { type: ['npm'], license: ['MIT'], language: ['TypeScript'] }, ['charlie', 'alpha']],
        ['AND across with OR within', { type: ['npm', 'pypi'], category: ['Data & Databases'] }, ['bravo', 'alpha']],
        ['AND with no overlap', { type: ['npm'], language: ['Python'] }, []],
        ['empty arrays do not filter', { type: [], category: [] }, ['bravo', 'charlie', 'alpha', 'echo', 'delta']],
      ])('filters: %s', async (_label, filters, expected) => {
        const page = await list(filters);
        expect(slugsOf(page.items)).toEqual(expected);
        expect(page.total).toBe(expected.length);
      });

      it('applies filters to other sorts too', async () => {
        const page = await list({ license: ['MIT'] }, 'name');
        expect(slugsOf(page.items)).toEqual(['echo', 'alpha', 'charlie']);
      });

      it('counts facets, most used first, ties by name, omitting servers without a value', async () => {
        expect(await index.facets()).toEqual({
          categories: [
            { name: 'Data & Databases', count: 2 },
            { name: 'Search & Web', count: 2 },
            { name: 'Other', count: 1 },
            { name: 'Security', count: 1 },
          ],
          languages: [
            { name: 'TypeScript', count: 2 },
            { name: 'C#', count: 1 },
            { name: 'Python', count: 1 },
          ],
          // The GitHub license name when present, else the SPDX id (charlie has only "MIT").
          licenses: [
            { name: 'MIT License', count: 2 },
            { name: 'Apache License 2.0', count: 1 },
            { name: 'MIT', count: 1 },
          ],
        });
      });

      it('lists every slug with its last-modified time, by slug, falling back to crawledAt', async () => {
        expect(await index.slugs()).toEqual([
          { slug: 'alpha', updatedAt: '2025-03-01T00:00:00Z' },
          { slug: 'bravo', updatedAt: '2025-05-01T00:00:00Z' },
          { slug: 'charlie', updatedAt: '2025-04-01T00:00:00Z' },
          { slug: 'delta', updatedAt: '2024-12-01T00:00:00Z' },
          { slug: 'echo', updatedAt: '2025-04-01T00:00:00.000Z' },
        ]);
      });

      describe('autocomplete', () => {
        it('matches a prefix of the full name', async () => {
          expect(slugsOf(await index.autocomplete('io.example', 8))).toEqual(['alpha', 'echo']);
        });

        it('matches a prefix of the part after the first /', async () => {
          expect(slugsOf(await index.autocomplete('zeta', 8))).toEqual(['alpha']);
          expect(slugsOf(await index.autocomplete('char', 8))).toEqual(['charlie']);
        });

        it('matches a prefix of the title', async () => {
          expect(slugsOf(await index.autocomplete('postgres', 8))).toEqual(['bravo']);
        });

        it('is anchored: a word inside the name or title is not a prefix', async () => {
          expect(await index.autocomplete('example', 8)).toEqual([]);
          expect(await index.autocomplete('toolkit', 8)).toEqual([]);
          expect(await index.autocomplete('lpha', 8)).toEqual([]);
        });

        it('is case-insensitive', async () => {
          expect(slugsOf(await index.autocomplete('IO.EXAMPLE/Z', 8))).toEqual(['alpha']);
          expect(slugsOf(await index.autocomplete('PoStGrEs T', 8))).toEqual(['bravo']);
        });

        it('orders by popularity desc, then slug asc, and honours the limit', async () => {
          // bravo by full name "com…", charlie by its tail "charlie": equal popularity.
          expect(slugsOf(await index.autocomplete('c', 8))).toEqual(['bravo', 'charlie']);
          expect(slugsOf(await index.autocomplete('io.', 8))).toEqual(['charlie', 'alpha', 'echo']);
          expect(slugsOf(await index.autocomplete('io.', 2))).toEqual(['charlie', 'alpha']);
        });

        it('returns nothing for an unknown prefix', async () => {
          expect(await index.autocomplete('zzz', 8)).toEqual([]);
        });
      });

      describe('registryPage', () => {
        it('orders by name', async () => {
          expect(slugsOf(await index.registryPage({ limit: 50 }))).toEqual(['delta', 'bravo', 'echo', 'alpha', 'charlie']);
        });

        it('returns at most limit records', async () => {
          expect(slugsOf(await index.registryPage({ limit: 2 }))).toEqual(['delta', 'bravo']);
        });

        it('nameAfter is an exclusive lower bound', async () => {
          expect(slugsOf(await index.registryPage({ limit: 50, nameAfter: 'com.acme/bravo' }))).toEqual(['echo', 'alpha', 'charlie']);
        });

        it('nameFrom is an inclusive lower bound, and need not be an existing name', async () => {
          expect(slugsOf(await index.registryPage({ limit: 50, nameFrom: 'com.acme/bravo' }))).toEqual(['bravo', 'echo', 'alpha', 'charlie']);
          expect(slugsOf(await index.registryPage({ limit: 50, nameFrom: 'io.' }))).toEqual(['echo', 'alpha', 'charlie']);
        });

        it('walks the whole feed page by page with nameAfter', async () => {
          const seen: string[] = [];
          let after: string | undefined;
          for (;;) {
            const page = await index.registryPage({ limit: 2, ...(after === undefined ? {} : { nameAfter: after }) });
            seen.push(...slugsOf(page));
            if (page.length < 2) break;
            after = page[page.length - 1].name;
          }
          expect(seen).toEqual(['delta', 'bravo', 'echo', 'alpha', 'charlie']);
        });

        it('search is a case-insensitive substring of the name', async () => {
          expect(slugsOf(await index.registryPage({ limit: 50, search: 'EXAMPLE' }))).toEqual(['echo', 'alpha']);
          expect(slugsOf(await index.registryPage({ limit: 50, search: 'ple/ze' }))).toEqual(['alpha']);
          expect(await index.registryPage({ limit: 50, search: 'nothing-like-this' })).toEqual([]);
        });

        it('updatedSince keeps servers modified at or after the instant (crawledAt as fallback)', async () => {
          expect(slugsOf(await index.registryPage({ limit: 50, updatedSince: '2025-04-01T00:00:00Z' }))).toEqual(['bravo', 'echo', 'charlie']);
          // The same instant in another offset.
          expect(slugsOf(await index.registryPage({ limit: 50, updatedSince: '2025-04-01T02:00:00+02:00' }))).toEqual(['bravo', 'echo', 'charlie']);
          expect(slugsOf(await index.registryPage({ limit: 50, updatedSince: '2025-04-01T00:00:00.001Z' }))).toEqual(['bravo']);
        });

        it('combines bounds, filters and limit', async () => {
          expect(slugsOf(await index.registryPage({ limit: 1, updatedSince: '2025-04-01T00:00:00Z', nameAfter: 'com.acme/bravo' }))).toEqual(['echo']);
          expect(slugsOf(await index.registryPage({ limit: 50, search: 'o', nameFrom: 'io.example/zeta-alpha' }))).toEqual(['alpha', 'charlie']);
        });
      });
    });

    describe('search', () => {
      let index: SearchIndex;
      const widgets = Array.from({ length: 25 }, (_, i) =>
        makeDoc(
          makeRecord(`w-${String(i).padStart(2, '0')}`, {
            name: `io.widgets/w${String(i).padStart(2, '0')}`,
            description: 'A widget server.',
            popularity: i,
          }),
        ),
      );
      beforeAll(async () => {
        index = await make();
        await index.replaceAll([
          makeDoc(makeRecord('s-name', { name: 'io.test/quasar', description: 'Stores things.', popularity: 0 })),
          makeDoc(makeRecord('s-readme', { name: 'io.test/other', description: 'Does stuff.', popularity: 100 }), {
            readmeText: 'This server is a general helper.\n\nIt was once compared with a quasar by its authors.',
          }),
          makeDoc(makeRecord('s-tool', { name: 'io.test/converter', description: 'Converts files.' }), {
            toolText: 'nebulize: turns documents into clouds of vectors',
          }),
          makeDoc(makeRecord('s-title', { name: 'io.test/relay', title: 'Photon Relay', description: 'Relays messages.' })),
          makeDoc(makeRecord('s-desc', { name: 'io.test/keeper', description: 'Keeps a ledger of zeppelin flights.' })),
          makeDoc(makeRecord('k-b', { name: 'io.test/brew-b', description: 'Brews kombucha daily.', popularity: 5 })),
          makeDoc(
            makeRecord('k-a', {
              name: 'io.test/brew-a',
              description: 'Brews kombucha daily.',
              popularity: 5,
              categories: ['Security'],
            }),
          ),
          makeDoc(makeRecord('k-c', { name: 'io.test/brew-c', description: 'Brews kombucha daily.', popularity: 9 })),
          ...widgets,
        ]);
      });

      const search = (q: string, offset = 0, limit = 24, filters = {}) => index.search({ q, filters, page: { offset, limit } });

      it('ranks a name hit above a README-only hit, even a more popular one', async () => {
        const page = await search('quasar');
        expect(slugsOf(page.items)).toEqual(['s-name', 's-readme']);
        expect(page.total).toBe(2);
      });

      it('searches tool text', async () => {
        expect(slugsOf((await search('nebulize')).items)).toEqual(['s-tool']);
      });

      it('searches README text', async () => {
        expect(slugsOf((await search('authors')).items)).toEqual(['s-readme']);
      });

      it('searches title and description', async () => {
        expect(slugsOf((await search('photon')).items)).toEqual(['s-title']);
        expect(slugsOf((await search('zeppelin')).items)).toEqual(['s-desc']);
      });

      it('breaks equal scores by popularity desc, then slug asc', async () => {
        const page = await search('kombucha');
        expect(slugsOf(page.items)).toEqual(['k-c', 'k-a', 'k-b']);
        expect(page.total).toBe(3);
      });

      it('applies filters', async () => {
        const page = await search('kombucha', 0, 24, { category: ['Security'] });
        expect(slugsOf(page.items)).toEqual(['k-a']);
        expect(page.total).toBe(1);
        expect(await search('kombucha', 0, 24, { type: ['npm'] })).toEqual({ items: [], total: 0 });
      });

      it('has exact totals and stable pages', async () => {
        const pages = [await search('widget', 0, 10), await search('widget', 10, 10), await search('widget', 20, 10)];
        expect(pages.map((p) => p.total)).toEqual([25, 25, 25]);
        expect(pages.map((p) => p.items.length)).toEqual([10, 10, 5]);
        const all = pages.flatMap((p) => slugsOf(p.items));
        expect(all).toEqual(widgets.map((d) => d.record.slug).reverse());
      });

      it('returns the same order when only the first results are asked for', async () => {
        expect(slugsOf((await search('widget', 0, 3)).items)).toEqual(['w-24', 'w-23', 'w-22']);
        expect(slugsOf((await search('widget', 3, 2)).items)).toEqual(['w-21', 'w-20']);
      });

      it('returns nothing for a query without matches', async () => {
        expect(await search('xylophonic')).toEqual({ items: [], total: 0 });
      });

      it('refuses pages beyond the 10,000-result window', async () => {
        await expect(search('widget', 9990, 11)).rejects.toBeInstanceOf(SearchWindowError);
        await expect(search('widget', 9990, 11)).rejects.toMatchObject({ maxWindow: 10000 });
        await expect(search('widget', 9990, 10)).resolves.toEqual({ items: [], total: 25 });
      });
    });

    describe('uptime sort and filters', () => {
      let index: SearchIndex;
      beforeAll(async () => {
        index = await make();
        await index.replaceAll(uptimeFixture());
      });
      type Filters = Parameters<SearchIndex['list']>[0]['filters'];
      const list = (filters: Filters, sort: SortKey = 'popularity', offset = 0, limit = 50) => index.list({ filters, sort, page: { offset, limit } });

      it('sorts by 30-day uptime, highest first, ties by slug, servers without history last', async () => {
        const page = await list({}, 'uptime');
        expect(slugsOf(page.items)).toEqual(['kilo', 'lima', 'mike', 'november', 'oscar', 'papa']);
        expect(page.total).toBe(6);
        const second = await list({}, 'uptime', 1, 2);
        expect(slugsOf(second.items)).toEqual(['lima', 'mike']);
        expect(second.total).toBe(6);
      });

      it.each<[string, Filters, string[]]>([
        ['uptimeMin is inclusive', { uptimeMin: 70 }, ['mike', 'lima', 'kilo']],
        ['uptimeMin with a decimal', { uptimeMin: 99.5 }, ['lima', 'kilo']],
        ['uptimeMin 0 still needs check history', { uptimeMin: 0 }, ['november', 'mike', 'lima', 'kilo']],
        ['uptimeMin above every server', { uptimeMin: 100 }, []],
        ['up leaves out servers marked down, keeps those without history', { up: true }, ['papa', 'oscar', 'mike', 'lima', 'kilo']],
        ['up and uptimeMin AND together', { up: true, uptimeMin: 50 }, ['mike', 'lima', 'kilo']],
        ['up ANDs with the other filters', { up: true, type: ['remote'] }, ['oscar', 'mike', 'lima', 'kilo']],
      ])('filters: %s', async (_label, filters, expected) => {
        const page = await list(filters);
        expect(slugsOf(page.items)).toEqual(expected);
        expect(page.total).toBe(expected.length);
      });

      it('applies the uptime filters under the uptime sort and to a search', async () => {
        expect(slugsOf((await list({ up: true }, 'uptime')).items)).toEqual(['kilo', 'lima', 'mike', 'oscar', 'papa']);
        const found = await index.search({ q: 'fixture', filters: { uptimeMin: 90 }, page: { offset: 0, limit: 10 } });
        expect(found.total).toBe(2);
        expect(slugsOf(found.items).sort()).toEqual(['kilo', 'lima']);
      });

      it("narrows every facet group: the uptime filters are no group's own", async () => {
        const page = await index.list({ filters: { up: true, type: ['remote'] }, sort: 'popularity', page: { offset: 0, limit: 1 }, facets: true });
        expect(page.total).toBe(4);
        expect(page.facets?.types).toEqual([
          { name: 'remote', count: 4 },
          { name: 'npm', count: 1 },
        ]);
        expect(page.facets?.missing.types).toBe(0);
      });
    });

    describe('writes', () => {
      it('upsert inserts and replaces documents by slug', async () => {
        const index = await make();
        await index.upsert([
          makeDoc(makeRecord('one', { name: 'io.test/one', description: 'Original marzipan text.', popularity: 1 })),
          makeDoc(makeRecord('two', { name: 'io.test/two', popularity: 2, categories: ['Security'] })),
        ]);
        await index.upsert([
          makeDoc(
            makeRecord('one', {
              name: 'io.test/one',
              description: 'Rewritten gooseberry text.',
              popularity: 3,
              categories: ['Security'],
              updatedAt: '2025-06-01T00:00:00Z',
            }),
          ),
        ]);
        const page = await index.list({ filters: {}, sort: 'popularity', page: { offset: 0, limit: 10 } });
        expect(slugsOf(page.items)).toEqual(['one', 'two']);
        expect(page.total).toBe(2);
        expect(page.items[0].description).toBe('Rewritten gooseberry text.');
        expect((await index.search({ q: 'marzipan', filters: {}, page: { offset: 0, limit: 10 } })).total).toBe(0);
        expect(slugsOf((await index.search({ q: 'gooseberry', filters: {}, page: { offset: 0, limit: 10 } })).items)).toEqual(['one']);
        expect((await index.facets()).categories).toEqual([{ name: 'Security', count: 2 }]);
        expect(await index.slugs()).toEqual([
          { slug: 'one', updatedAt: '2025-06-01T00:00:00Z' },
          { slug: 'two', updatedAt: '2025-01-01T00:00:00Z' },
        ]);
      });

      it('remove drops documents everywhere and ignores unknown slugs', async () => {
        const index = await make();
        await index.upsert([
          makeDoc(makeRecord('keep', { name: 'io.test/keep', description: 'A lingonberry server.' })),
          makeDoc(makeRecord('drop', { name: 'io.test/drop', description: 'A lingonberry server.', github: { language: 'Go' } })),
        ]);
        await index.remove(['drop', 'never-existed']);
        expect((await index.list({ filters: {}, sort: 'name', page: { offset: 0, limit: 10 } })).total).toBe(1);
        expect(slugsOf((await index.search({ q: 'lingonberry', filters: {}, page: { offset: 0, limit: 10 } })).items)).toEqual(['keep']);
        expect(slugsOf(await index.autocomplete('io.test/', 10))).toEqual(['keep']);
        expect(slugsOf(await index.registryPage({ limit: 10 }))).toEqual(['keep']);
        expect(await index.slugs()).toEqual([{ slug: 'keep', updatedAt: '2025-01-01T00:00:00Z' }]);
        expect((await index.facets()).languages).toEqual([]);
      });

      it('replaceAll leaves exactly the given documents', async () => {
        const index = await make();
        await index.upsert([
          makeDoc(makeRecord('old-a', { name: 'io.test/old-a', description: 'Tamarind things.' })),
          makeDoc(makeRecord('old-b', { name: 'io.test/old-b' })),
        ]);
        await index.replaceAll([makeDoc(makeRecord('new-c', { name: 'io.test/new-c', description: 'Persimmon things.' }))]);
        expect(await index.slugs()).toEqual([{ slug: 'new-c', updatedAt: '2025-01-01T00:00:00Z' }]);
        expect((await index.search({ q: 'tamarind', filters: {}, page: { offset: 0, limit: 10 } })).total).toBe(0);
        expect(slugsOf((await index.search({ q: 'persimmon', filters: {}, page: { offset: 0, limit: 10 } })).items)).toEqual(['new-c']);
        await index.upsert([makeDoc(makeRecord('after', { name: 'io.test/after' }))]);
        expect(slugsOf(await index.registryPage({ limit: 10 }))).toEqual(['after', 'new-c']);
        await index.replaceAll([]);
        expect(await index.list({ filters: {}, sort: 'popularity', page: { offset: 0, limit: 10 } })).toEqual({ items: [], total: 0 });
      });
    });
  });
}
