/**
 * The catalog core's face (lambdas/catalog-core/index.ts): the reads every surface shares (a server
 * by slug or by registry name, the slug and filter vocabulary), and the promise that importing the
 * face loads no search engine (each function pays the module init of the engine it builds).
 */
import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';
import { embeddedSearchIndex, filtersOf, findServer, type CatalogDetail, type CatalogStore, validateSlug } from '../../lambdas/catalog-core';
import { ValidationError } from '../../lambdas/shared/http/query';
import { docOf, makeRecord } from '../support/records';

function storeOf(details: CatalogDetail[]): Pick<CatalogStore, 'get'> {
  const bySlug = new Map(details.map((d) => [d.record.slug, d]));
  return { get: async (slug) => bySlug.get(slug) };
}

describe('findServer', () => {
  // Names in the order the registry feed keeps them, with neighbours a loose match would take.
  const entries = [
    { record: makeRecord('weather', { name: 'io.github.acme/weather' }) },
    { record: makeRecord('weather-2', { name: 'io.github.acme/weather-extra' }) },
    { record: makeRecord('other-weather', { name: 'io.github.other/weather' }) },
    { record: makeRecord('caps', { name: 'io.github.Acme/Caps' }), tools: [{ name: 'forecast' }] },
  ];
  const details: CatalogDetail[] = entries.map((e) => ({ record: e.record, ...(e.tools && { tools: e.tools }) }));
  const index = embeddedSearchIndex();
  const parts = { store: storeOf(details), index };
  beforeAll(() => index.replaceAll(entries.map(docOf)));

  test('by slug, the detail the store holds', async () => {
    expect((await findServer(parts, { slug: 'caps' }))?.tools).toEqual([{ name: 'forecast' }]);
    expect(await findServer(parts, { slug: 'nope' })).toBeUndefined();
  });

  test('by registry name, exactly: no prefix, neighbour or other case matches', async () => {
    expect((await findServer(parts, { name: 'io.github.acme/weather' }))?.record.slug).toBe('weather');
    expect((await findServer(parts, { name: 'io.github.acme/weather-extra' }))?.record.slug).toBe('weather-2');
    expect((await findServer(parts, { name: 'io.github.Acme/Caps' }))?.record.slug).toBe('caps');
    expect(await findServer(parts, { name: 'io.github.acme/weath' })).toBeUndefined();
    expect(await findServer(parts, { name: 'io.github.acme/caps' })).toBeUndefined();
    expect(await findServer(parts, { name: 'zzz/none' })).toBeUndefined();
  });
});

describe('the query vocabulary', () => {
  test('a slug is trimmed; an empty or over-long one is a ValidationError on field slug', () => {
    expect(validateSlug({ slug: ' weather ' })).toEqual({ slug: 'weather' });
    for (const slug of ['', 'a'.repeat(201)]) {
      let err: unknown;
      try {
        validateSlug({ slug });
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(ValidationError);
      expect((err as ValidationError).details.map((d) => d.field)).toEqual(['slug']);
    }
  });

  test('filtersOf keeps only the filters given', () => {
    expect(filtersOf({ category: ['Security'], language: undefined })).toEqual({ category: ['Security'] });
  });
});

test('importing the face loads no search engine module', () => {
  const face = resolve(__dirname, '../../lambdas/catalog-core/index.ts');
  const script = `require(${JSON.stringify(face)}); console.log(JSON.stringify(Object.keys(require.cache)))`;
  const tsx = resolve(__dirname, '../../node_modules/.bin/tsx');
  const loaded = JSON.parse(execFileSync(tsx, ['-e', script], { encoding: 'utf8' })) as string[];
  const engines = loaded.filter(
    (p) =>
      /catalog-core[\\/]search[\\/](embedded|opensearch|s3-snapshot|text-index|snapshot-file)/.test(p) ||
      /[\\/]node_modules[\\/](minisearch|@opensearch-project)[\\/]/.test(p),
  );
  expect(loaded.some((p) => p.endsWith('catalog-core/index.ts'))).toBe(true);
  expect(engines).toEqual([]);
});
