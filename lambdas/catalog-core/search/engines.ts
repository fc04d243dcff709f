import { s3Config } from '../../shared/aws/clients';
import { traced } from '../../shared/observability/tracing';
import type { CatalogStoreConfig } from '../config';
import type { SearchIndex } from '../domain/ports';
import type { EmbeddedSearchIndex, EmbeddedSearchIndexOptions } from './embedded';
import type { OpenSearchIndex } from './opensearch';
import type { S3SnapshotStore, S3SnapshotWriter } from './s3-snapshot';

/**
 * The search engines of a deployed function, by `SEARCH_BACKEND`: the OpenSearch domain, or the
 * embedded engine over the S3 snapshot (`SEARCH_SNAPSHOT_BUCKET`, the small-catalog mode). The
 * local stack builds its own (the embedded engine over the snapshot file).
 *
 * Both engines are in the function's bundle; each is required only when chosen, so a deployment
 * pays the module init of its own engine only. The core's face (`index.ts`) hands out the engines
 * through these functions and their types only, never the engine modules themselves, so importing
 * the face loads neither.
 */
type OpenSearchModule = typeof import('./opensearch');
type SnapshotModule = typeof import('./s3-snapshot');
type EmbeddedModule = typeof import('./embedded');
const openSearch = (): OpenSearchModule => require('./opensearch') as OpenSearchModule;
const snapshots = (): SnapshotModule => require('./s3-snapshot') as SnapshotModule;
const embedded = (): EmbeddedModule => require('./embedded') as EmbeddedModule;

/** The embedded engine (the local stack, the CLIs, tests): in memory, or over a snapshot file shared with other processes. */
export function embeddedSearchIndex(options: EmbeddedSearchIndexOptions = {}): EmbeddedSearchIndex {
  return new (embedded().EmbeddedSearchIndex)(options);
}

export function snapshotStore(config: CatalogStoreConfig): S3SnapshotStore {
  if (!config.searchSnapshotBucket) throw new Error('SEARCH_SNAPSHOT_BUCKET is required with SEARCH_BACKEND=embedded in AWS');
  const { S3SnapshotStore: Store } = snapshots();
  return new Store((mod) => traced(new mod.S3Client(s3Config(config))), config.searchSnapshotBucket, config.searchSnapshotKey);
}

function openSearchIndex(config: CatalogStoreConfig): OpenSearchIndex {
  if (!config.opensearchUrl) throw new Error('OPENSEARCH_URL is required with SEARCH_BACKEND=opensearch');
  const { OpenSearchIndex: Index, createOpenSearchClient } = openSearch();
  return new Index({ client: createOpenSearchClient(config.opensearchUrl, config.region), index: config.opensearchIndex });
}

/** The catalog function's read side; the embedded one has loaded its first generation when this resolves. */
export async function searchIndexForReads(config: CatalogStoreConfig): Promise<SearchIndex> {
  if (config.searchBackend === 'embedded') {
    const index = new (snapshots().S3SnapshotIndex)(snapshotStore(config), { refreshMs: config.searchSnapshotRefreshSeconds * 1000 });
    await index.start();
    return index;
  }
  return openSearchIndex(config);
}

/** The crawler's and reindex's write side: per-server writes for OpenSearch, whole snapshots for the embedded engine. */
export function searchIndexForWrites(config: CatalogStoreConfig): OpenSearchIndex | S3SnapshotWriter {
  if (config.searchBackend === 'embedded') return new (snapshots().S3SnapshotWriter)(snapshotStore(config));
  return openSearchIndex(config);
}
