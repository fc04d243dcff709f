import type { SearchDocument } from '../../lambdas/catalog-core';
import { OpenSearchIndex } from '../../lambdas/catalog-core/search/opensearch';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@opensearch-project/opensearch';
import { startOpenSearchStandIn, type GoldenExchange, type StandIn } from '../support/opensearch-standin';
import { catalogFixture } from './search-contract';

/**
 * The production OpenSearch adapter, through the real client over HTTP, against golden exchanges
 * written from the OpenSearch documentation (test/fixtures/opensearch/README.md): the requests it
 * must send for the calls the shared contract suite makes on `catalogFixture()`, and the results it
 * must make of the answers a domain gives. The stand-in replays the script and refuses anything off
 * it. No engine runs here: the ranking itself is the real-engine contract's (OPENSEARCH_URL).
 */
interface Scenario {
  name: string;
  call: { method: 'list' | 'search' | 'facets' | 'slugs' | 'registryPage' | 'autocomplete' | 'upsert' | 'remove'; args: unknown[] };
  exchanges: GoldenExchange[];
  expect: { slugs?: string[]; total?: number; facets?: unknown; value?: unknown; resolves?: boolean; rejects?: string };
}

const golden = JSON.parse(readFileSync(join(__dirname, '..', 'fixtures', 'opensearch', 'exchanges.json'), 'utf8')) as { index: string; scenarios: Scenario[] };
const docs = new Map(catalogFixture().map((d) => [d.record.slug, d]));

/** `{"$record": slug}` and `{"$doc": slug}` become the fixture's record and document. */
function expand(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(expand);
  if (v !== null && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    if (typeof o.$record === 'string') return docs.get(o.$record)?.record ?? fail(o.$record);
    if (typeof o.$doc === 'string') return docs.get(o.$doc) ?? fail(o.$doc);
    return Object.fromEntries(Object.entries(o).map(([k, x]) => [k, expand(x)]));
  }
  return v;
}
const fail = (slug: string): never => {
  throw new Error(`no fixture record ${slug}`);
};

let standIn: StandIn;
let index: OpenSearchIndex;
beforeAll(async () => {
  standIn = await startOpenSearchStandIn();
  index = new OpenSearchIndex({ client: new Client({ node: standIn.url }), index: golden.index });
});
afterAll(() => standIn?.close());

describe('the OpenSearch adapter against golden exchanges from the documentation', () => {
  it.each(golden.scenarios.map((s) => [s.name, s] as const))('%s', async (_name, s) => {
    // A fresh adapter per scenario: whether the alias exists is each scenario's own question.
    index = new OpenSearchIndex({ client: new Client({ node: standIn.url }), index: golden.index });
    standIn.script(expand(s.exchanges) as GoldenExchange[]);
    const method = index[s.call.method] as (...args: unknown[]) => Promise<unknown>;
    const run = method.apply(index, expand(s.call.args) as unknown[]);
    if (s.expect.rejects !== undefined) {
      await expect(run).rejects.toThrow(new RegExp(s.expect.rejects));
    } else {
      const out = await run;
      if (s.expect.slugs !== undefined) {
        const items = (Array.isArray(out) ? out : (out as { items: Array<{ slug: string }> }).items) as Array<{ slug: string }>;
        expect(items.map((r) => r.slug)).toEqual(s.expect.slugs);
        // The records come back whole, as the adapter wrote them.
        for (const r of items) expect(r).toEqual(docs.get(r.slug)?.record);
      }
      if (s.expect.total !== undefined) expect((out as { total: number }).total).toBe(s.expect.total);
      if (s.expect.facets !== undefined) expect((out as { facets?: unknown }).facets).toEqual(s.expect.facets);
      if (s.expect.value !== undefined) expect(out).toEqual(s.expect.value);
    }
    expect(standIn.unexpected).toEqual([]);
    expect(standIn.pending()).toEqual([]);
  });
});

describe('the stand-in refuses what the script does not say', () => {
  it('answers a request off the script with a 400, which the adapter surfaces', async () => {
    standIn.script([]);
    await expect(index.list({ filters: {}, sort: 'name', page: { offset: 0, limit: 1 } })).rejects.toThrow(
      /illegal_argument_exception|after the end of the script/,
    );
    expect(standIn.unexpected).toEqual(['POST /catalog/_search after the end of the script']);
  });

  it('fails a scenario whose request differs from the golden one', async () => {
    const [first] = golden.scenarios;
    standIn.script(expand(first.exchanges) as GoldenExchange[]);
    // The same call with another sort is another request.
    await expect(index.list({ filters: {}, sort: 'name', page: { offset: 0, limit: 50 } })).rejects.toThrow(
      /^illegal_argument_exception: .* is not the script's$/,
    );
    expect(standIn.unexpected).toEqual([expect.stringMatching(/body .* is not the script's/)]);
    expect(standIn.pending()).toHaveLength(1);
  });
});

// Scenarios use the contract's data: keep the two in step.
it('uses only records of the contract fixture', () => {
  expect(
    JSON.stringify(golden)
      .match(/"\$(record|doc)":\s*"([^"]+)"/g)
      ?.every((m) => docs.has(m.replace(/.*"([^"]+)"$/, '$1'))),
  ).toBe(true);
  expect([...docs.values()].every((d: SearchDocument) => typeof d.record.slug === 'string')).toBe(true);
});
