/**
 * The search index on Amazon OpenSearch Service (AWS stack).
 *
 * Each document keeps the `CatalogRecord` verbatim under `record` (not indexed) and flattens the
 * fields queries need to the top level. The configured `index` name is an alias: `replaceAll`
 * builds a fresh index and swaps the alias atomically, so readers never see a half-built catalog.
 *
 * Request bodies are built by the pure `build*` functions of `opensearch-requests.ts`.
 * Keyword sorts (name, slug) are by Unicode code point, which matches the embedded adapter's
 * JavaScript string order for every ASCII name (see embedded.ts).
 */
import { defaultProvider } from '@aws-sdk/credential-provider-node';
import { Client, type API } from '@opensearch-project/opensearch';
import { AwsSigv4Signer } from '@opensearch-project/opensearch/aws';
import type { ListQuery, PageResult, RegistryQuery, SearchIndex, TextQuery } from '../domain/ports';
import { FACET_GROUPS, type CatalogRecord, type FacetCounts, type Facets, type NameCount, type SearchDocument, type SlugEntry } from '../domain/types';
import {
  buildAutocompleteRequest,
  buildBulkDelete,
  buildBulkUpsert,
  buildFacetsRequest,
  buildListRequest,
  buildRegistryRequest,
  buildSlugsRequest,
  indexDefinition,
  SLUG_PAGE,
  type Clause,
  type SearchRequestBody,
} from './opensearch-requests';
import { buildSearchRequest, fuzzyWordsFrom } from './opensearch-search';

const BULK_CHUNK = 500;

/**
 * The slice of the OpenSearch client this adapter calls; `Client` satisfies it (checked below),
 * and tests can hand in a small fake.
 */
export interface OpenSearchClientLike {
  search(params: API.Search_Request): Promise<{ body: unknown }>;
  bulk(params: API.Bulk_Request): Promise<{ body: unknown }>;
  indices: {
    create(params: API.Indices_Create_Request): Promise<{ body: unknown }>;
    exists(params: API.Indices_Exists_Request): Promise<{ body: unknown }>;
    getAlias(params: API.Indices_GetAlias_Request): Promise<{ body: unknown }>;
    updateAliases(params: API.Indices_UpdateAliases_Request): Promise<{ body: unknown }>;
    delete(params: API.Indices_Delete_Request): Promise<{ body: unknown }>;
    refresh(params: API.Indices_Refresh_Request): Promise<{ body: unknown }>;
  };
}

// Compile-time proof that a real client can be passed where the narrow interface is expected.
const clientFitsInterface: Client extends OpenSearchClientLike ? true : never = true;
void clientFitsInterface;

export interface OpenSearchIndexOptions {
  client: OpenSearchClientLike;
  /** The alias readers and writers use; concrete indices are named `<alias>-<suffix>`. */
  index: string;
}

/** A client for an Amazon OpenSearch Service domain, signing every request with SigV4. */
export function createOpenSearchClient(url: string, region: string): Client {
  // One provider for the process: it caches credentials and refreshes them before they expire.
  const credentials = defaultProvider();
  return new Client({
    ...AwsSigv4Signer({ region, service: 'es', getCredentials: () => credentials() }),
    node: url,
  });
}

// ------------------------------------------------------------------ response parsing

function asObject(v: unknown): Record<string, unknown> | undefined {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
}

function asArray(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}

interface Hits {
  total: number;
  sources: Record<string, unknown>[];
}

function readHits(body: unknown): Hits {
  const hits = asObject(asObject(body)?.hits);
  const totalRaw = hits?.total;
  const total = typeof totalRaw === 'number' ? totalRaw : Number(asObject(totalRaw)?.value ?? 0);
  const sources: Record<string, unknown>[] = [];
  for (const h of asArray(hits?.hits)) {
    const source = asObject(asObject(h)?._source);
    if (source !== undefined) sources.push(source);
  }
  return { total, sources };
}

function recordOf(source: Record<string, unknown>): CatalogRecord {
  const record = asObject(source.record);
  if (record === undefined || typeof record.slug !== 'string') {
    throw new Error('search index document without a record; rebuild the index (npm run reindex)');
  }
  // The record was written by this adapter from a validated CatalogRecord.
  return record as unknown as CatalogRecord;
}

function aggregation(body: unknown, name: string): Record<string, unknown> | undefined {
  return asObject(asObject(asObject(body)?.aggregations)?.[name]);
}

/** The buckets of a terms aggregation, as name and count. */
function bucketsOf(agg: Record<string, unknown> | undefined): NameCount[] {
  const out: NameCount[] = [];
  for (const b of asArray(agg?.buckets)) {
    const bucket = asObject(b);
    if (bucket !== undefined && typeof bucket.key === 'string' && typeof bucket.doc_count === 'number') {
      out.push({ name: bucket.key, count: bucket.doc_count });
    }
  }
  return out;
}

function readBuckets(body: unknown, name: string): NameCount[] {
  return bucketsOf(aggregation(body, name));
}

/**
 * The facet counts of a response to a request built with facets (`withFacets`): per group its
 * `filter` aggregation holding `values` (terms) and `missing`. No response (no index yet) counts nothing.
 */
export function readFacetCounts(body: unknown): FacetCounts {
  const out: FacetCounts = { categories: [], types: [], languages: [], licenses: [], missing: { types: 0, languages: 0, licenses: 0 } };
  for (const group of FACET_GROUPS) {
    const agg = aggregation(body, `facet_${group}`);
    out[group] = bucketsOf(asObject(agg?.values)).filter((b) => b.count > 0);
    const missing = asObject(agg?.missing)?.doc_count;
    if (group !== 'categories' && typeof missing === 'number') out.missing[group] = missing;
  }
  return out;
}

function statusOf(err: unknown): number | undefined {
  const e = asObject(err);
  if (e === undefined) return undefined;
  if (typeof e.statusCode === 'number') return e.statusCode;
  const meta = asObject(e.meta);
  return typeof meta?.statusCode === 'number' ? meta.statusCode : undefined;
}

function errorTypeOf(err: unknown): string | undefined {
  const e = asObject(err);
  const body = asObject(e?.body) ?? asObject(asObject(e?.meta)?.body);
  const type = asObject(body?.error)?.type;
  return typeof type === 'string' ? type : undefined;
}

function isIndexNotFound(err: unknown): boolean {
  return errorTypeOf(err) === 'index_not_found_exception' || (statusOf(err) === 404 && errorTypeOf(err) === undefined);
}

/** Throws with the first failed item of a bulk response (bulk reports item failures with HTTP 200). */
function assertBulkOk(body: unknown): void {
  const b = asObject(body);
  if (b?.errors !== true) return;
  for (const item of asArray(b.items)) {
    const op = asObject(item);
    const result = op === undefined ? undefined : asObject(Object.values(op)[0]);
    if (result === undefined) continue;
    const status = typeof result.status === 'number' ? result.status : 0;
    // Deleting a document that is not there is fine: `remove` ignores unknown slugs.
    if (status === 404 && asObject(item)?.delete !== undefined) continue;
    if (status >= 300 || result.error !== undefined) {
      throw new Error(`bulk request failed for ${String(result._id)}: ${JSON.stringify(result.error ?? status)}`);
    }
  }
}

// ------------------------------------------------------------------ adapter

export class OpenSearchIndex implements SearchIndex {
  private readonly client: OpenSearchClientLike;
  private readonly alias: string;
  private ensured: Promise<void> | undefined;

  constructor(options: OpenSearchIndexOptions) {
    this.client = options.client;
    this.alias = options.index;
  }

  // --- write side

  async upsert(docs: SearchDocument[]): Promise<void> {
    if (docs.length === 0) return;
    await this.ensureIndex();
    for (let i = 0; i < docs.length; i += BULK_CHUNK) {
      await this.bulk(this.alias, buildBulkUpsert(docs.slice(i, i + BULK_CHUNK)), 'wait_for');
    }
  }

  async remove(slugs: string[]): Promise<void> {
    if (slugs.length === 0) return;
    await this.ensureIndex();
    for (let i = 0; i < slugs.length; i += BULK_CHUNK) {
      await this.bulk(this.alias, buildBulkDelete(slugs.slice(i, i + BULK_CHUNK)), 'wait_for');
    }
  }

  /** Builds a fresh index, then points the alias at it in one atomic alias update and drops the old one. */
  async replaceAll(docs: SearchDocument[]): Promise<void> {
    const fresh = this.newIndexName();
    await this.client.indices.create({ index: fresh, body: indexDefinition() });
    try {
      for (let i = 0; i < docs.length; i += BULK_CHUNK) {
        await this.bulk(fresh, buildBulkUpsert(docs.slice(i, i + BULK_CHUNK)), false);
      }
      await this.client.indices.refresh({ index: fresh });
      const { aliased, concrete } = await this.currentTargets();
      const actions: API.Indices_UpdateAliases_RequestBody['actions'] = [
        ...aliased.map((index) => ({ remove: { index, alias: this.alias } })),
        { add: { index: fresh, alias: this.alias } },
      ];
      // A concrete index squatting on the alias name (auto-created by a stray write) goes in the same step.
      if (concrete) actions.push({ remove_index: { index: this.alias } });
      await this.client.indices.updateAliases({ body: { actions } });
      this.ensured = Promise.resolve();
      for (const index of aliased) {
        try {
          await this.client.indices.delete({ index });
        } catch (err) {
          // The swap succeeded; a leftover index only costs storage.
          if (statusOf(err) !== 404) process.emitWarning(`could not delete old search index ${index}: ${String(err)}`);
        }
      }
    } catch (err) {
      await this.client.indices.delete({ index: fresh }).catch(() => undefined);
      throw err;
    }
  }

  // --- read side

  async list(q: ListQuery): Promise<PageResult> {
    const body = await this.query(buildListRequest(q));
    if (body === undefined) return { items: [], total: 0, ...(q.facets === true && { facets: readFacetCounts(undefined) }) };
    const hits = readHits(body);
    return { items: hits.sources.map(recordOf), total: hits.total, ...(q.facets === true && { facets: readFacetCounts(body) }) };
  }

  /**
   * One request, which also counts what decides the fuzzy fallback; a second, with fuzzy matching
   * for the words that need it, only when one does (a typo, rarely).
   */
  async search(q: TextQuery): Promise<PageResult> {
    let body = await this.query(buildSearchRequest(q));
    if (body === undefined) return { items: [], total: 0, ...(q.facets === true && { facets: readFacetCounts(undefined) }) };
    const fuzzy = fuzzyWordsFrom(q.q, body);
    if (fuzzy.size > 0) body = (await this.query(buildSearchRequest(q, { fuzzy }))) ?? body;
    const hits = readHits(body);
    return { items: hits.sources.map(recordOf), total: hits.total, ...(q.facets === true && { facets: readFacetCounts(body) }) };
  }

  async autocomplete(prefix: string, limit: number): Promise<CatalogRecord[]> {
    if (prefix === '' || limit <= 0) return [];
    const body = await this.query(buildAutocompleteRequest(prefix, limit));
    return body === undefined ? [] : readHits(body).sources.map(recordOf);
  }

  async facets(): Promise<Facets> {
    const body = await this.query(buildFacetsRequest());
    if (body === undefined) return { categories: [], languages: [], licenses: [] };
    return {
      categories: readBuckets(body, 'categories'),
      languages: readBuckets(body, 'languages'),
      licenses: readBuckets(body, 'licenses'),
    };
  }

  async slugs(): Promise<SlugEntry[]> {
    const out: SlugEntry[] = [];
    let after: string | undefined;
    for (;;) {
      const body = await this.query(buildSlugsRequest(after));
      if (body === undefined) return out;
      const { sources } = readHits(body);
      for (const s of sources) {
        if (typeof s.slug === 'string' && typeof s.lastModified === 'string') {
          out.push({ slug: s.slug, updatedAt: s.lastModified });
        }
      }
      if (sources.length < SLUG_PAGE) return out;
      after = out[out.length - 1]?.slug;
    }
  }

  async registryPage(q: RegistryQuery): Promise<CatalogRecord[]> {
    if (q.limit <= 0) return [];
    const body = await this.query(buildRegistryRequest(q));
    return body === undefined ? [] : readHits(body).sources.map(recordOf);
  }

  // --- internals

  /** Runs a search on the alias; `undefined` when the index does not exist yet (nothing indexed). */
  private async query(body: SearchRequestBody): Promise<unknown> {
    try {
      const res = await this.client.search({ index: this.alias, body: body as API.Search_RequestBody });
      return res.body;
    } catch (err) {
      if (isIndexNotFound(err)) return undefined;
      throw err;
    }
  }

  private async bulk(index: string, ops: Clause[], refresh: API.Bulk_Request['refresh']): Promise<void> {
    const res = await this.client.bulk({ index, body: ops, refresh });
    assertBulkOk(res.body);
  }

  private newIndexName(): string {
    const stamp = new Date()
      .toISOString()
      .replace(/[^0-9]/g, '')
      .slice(0, 17);
    return `${this.alias}-${stamp}-${Math.random().toString(36).slice(2, 8)}`.toLowerCase();
  }

  private async currentTargets(): Promise<{ aliased: string[]; concrete: boolean }> {
    const exists = (await this.client.indices.exists({ index: this.alias })).body === true;
    if (!exists) return { aliased: [], concrete: false };
    try {
      const res = await this.client.indices.getAlias({ name: this.alias });
      const names = Object.keys(asObject(res.body) ?? {});
      return { aliased: names, concrete: false };
    } catch (err) {
      if (statusOf(err) === 404) return { aliased: [], concrete: true };
      throw err;
    }
  }

  /**
   * Makes sure the alias exists before the first incremental write, so a write never auto-creates
   * an index with dynamic mappings. The first index has a fixed name: two processes racing here
   * collide on it instead of leaving the alias on two indices.
   */
  private ensureIndex(): Promise<void> {
    this.ensured ??= (async () => {
      const exists = (await this.client.indices.exists({ index: this.alias })).body === true;
      if (exists) return;
      try {
        await this.client.indices.create({
          index: `${this.alias}-initial`.toLowerCase(),
          body: { ...indexDefinition(), aliases: { [this.alias]: {} } },
        });
      } catch (err) {
        if (errorTypeOf(err) !== 'resource_already_exists_exception') throw err;
      }
    })().catch((err: unknown) => {
      this.ensured = undefined;
      throw err;
    });
    return this.ensured;
  }
}
