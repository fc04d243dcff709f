import type { CatalogStore, SearchIndex } from './domain/ports';
import { README_INDEX_CHARS, type SearchDocument } from './domain/types';

export function searchDocumentOf(d: {
  record: SearchDocument['record'];
  readme?: { content: string };
  tools?: Array<{ name: string; description?: string }>;
}): SearchDocument {
  return {
    record: d.record,
    toolText: (d.tools ?? []).map((t) => (t.description ? `${t.name}\n${t.description}` : t.name)).join('\n'),
    readmeText: (d.readme?.content ?? '').slice(0, README_INDEX_CHARS),
  };
}

/** Rebuilds the search index from DynamoDB, the source of truth. */
export async function rebuildIndex(store: CatalogStore, index: SearchIndex): Promise<number> {
  const docs: SearchDocument[] = [];
  for await (const d of store.scanAll()) docs.push(searchDocumentOf(d));
  await index.replaceAll(docs);
  return docs.length;
}
