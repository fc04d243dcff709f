import { ICON_CACHE_CONTROL, validateSlug } from '../../catalog-core';
import { validateQuery } from '../../shared/http/query';
import { json, type HandlerResponse } from '../../shared/http/types';
import { notFound } from '../errors';
import { successBody } from '../envelope';
import type { CatalogDeps } from '../deps';
import { AutocompleteQuerySchema } from '../schemas';
import { toAutocompleteItem } from '../views';
import type { RequestCtx } from './context';
import { truncate } from './servers';

/** GET /api/autocomplete */
export async function autocomplete(ctx: RequestCtx, deps: CatalogDeps): Promise<HandlerResponse> {
  const q = validateQuery(AutocompleteQuerySchema, { multi: [] }, ctx.query);
  const items = await deps.index.autocomplete(q.q, q.limit);
  return json(successBody(items.map(toAutocompleteItem)));
}

/** GET /api/categories */
export async function listCategories(_ctx: RequestCtx, deps: CatalogDeps): Promise<HandlerResponse> {
  return json(successBody((await deps.index.facets()).categories));
}

/** GET /api/languages */
export async function listLanguages(_ctx: RequestCtx, deps: CatalogDeps): Promise<HandlerResponse> {
  return json(successBody((await deps.index.facets()).languages));
}

/** GET /api/licenses */
export async function listLicenses(_ctx: RequestCtx, deps: CatalogDeps): Promise<HandlerResponse> {
  return json(successBody((await deps.index.facets()).licenses));
}

/** GET /api/facets */
export async function getFacets(_ctx: RequestCtx, deps: CatalogDeps): Promise<HandlerResponse> {
  return json(successBody(await deps.index.facets()));
}

/** GET /api/slugs */
export async function listSlugs(_ctx: RequestCtx, deps: CatalogDeps): Promise<HandlerResponse> {
  return json(successBody(await deps.index.slugs()));
}

/** GET /api/icons/{slug}: webp bytes from S3 (in AWS CloudFront serves these from S3 directly). */
export async function getIcon(ctx: RequestCtx, deps: CatalogDeps): Promise<HandlerResponse> {
  const { slug } = validateSlug(ctx.params);
  const bytes = await deps.icons.get(slug);
  if (!bytes) throw notFound(`No icon for slug "${truncate(slug)}"`);
  return { kind: 'binary', body: bytes, contentType: 'image/webp', headers: { 'cache-control': ICON_CACHE_CONTROL } };
}
