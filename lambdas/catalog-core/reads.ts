import type { CatalogStore, SearchIndex } from './domain/ports';
import type { CatalogDetail } from './domain/types';

/** A server as a caller names it: by the catalog's slug, or by its registry name (`io.github.acme/weather`). */
export type ServerRef = { slug: string } | { name: string };

/**
 * The server a reference names, with its README and captured tools; undefined when the catalog has
 * none. A name is found through the index's name order (the registry feed's), exactly and
 * case-sensitively as the registry spells it, then read from the store like a slug.
 */
export async function findServer(
  parts: { store: Pick<CatalogStore, 'get'>; index: Pick<SearchIndex, 'registryPage'> },
  ref: ServerRef,
): Promise<CatalogDetail | undefined> {
  if ('slug' in ref) return parts.store.get(ref.slug);
  const [first] = await parts.index.registryPage({ nameFrom: ref.name, limit: 1 });
  return first?.name === ref.name ? parts.store.get(first.slug) : undefined;
}
