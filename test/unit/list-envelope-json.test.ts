import type { FacetCounts } from '../../lambdas/catalog-core';
import { listEnvelopeJson } from '../../lambdas/catalog/views';

/** The list envelope is written from pieces (items and facets serialised once each): it must read as the object it stands for. */
describe('listEnvelopeJson', () => {
  const facets: FacetCounts = {
    categories: [{ name: 'Data & "Databases"', count: 2 }],
    types: [{ name: 'npm', count: 1 }],
    languages: [],
    licenses: [{ name: 'MIT', count: 1 }],
    missing: { types: 0, languages: 1, licenses: 0 },
  };
  const items = [{ slug: 'a', name: 'é→' }, { slug: 'b' }];

  it.each([
    ['pagination and facets', { pagination: { page: 1, total: 2 } }, facets],
    ['pagination, search and facets', { pagination: { page: 2 }, search: { query: 'x "y"' } }, facets],
    ['no facets', { pagination: { page: 1 } }, undefined],
    ['facets alone', {}, facets],
  ])('%s: the same JSON as the whole object serialised at once', (_, meta, f) => {
    const body = listEnvelopeJson(
      items.map((i) => JSON.stringify(i)),
      meta,
      f,
    );
    expect(body).toBe(JSON.stringify({ success: true, data: items, meta: f === undefined ? meta : { ...meta, facets: f } }));
    // Again: the second answer comes from the facets' kept JSON.
    expect(listEnvelopeJson([], meta, f)).toBe(JSON.stringify({ success: true, data: [], meta: f === undefined ? meta : { ...meta, facets: f } }));
  });
});
