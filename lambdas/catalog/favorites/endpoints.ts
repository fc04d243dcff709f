import { validateSlug, type CatalogRecord } from '../../catalog-core';
import type { RequestCtx } from '../endpoints/context';
import { truncate } from '../endpoints/servers';
import { toCatalogServer } from '../views';
import { invalidQuery, notFound } from '../errors';
import { successBody } from '../envelope';
import { validateQuery } from '../../shared/http/query';
import { json, type HandlerResponse } from '../../shared/http/types';
import type { Principal } from '../../identity/principal';
import { mapLimit } from '../../shared/concurrency';
import type { FavoritesDeps } from './deps';
import { FavoriteBodySchema, FavoritesQuerySchema } from './schemas';

/** What a favorites handler sees: the request and the caller the pipeline verified. */
export type FavoritesCtx = RequestCtx & { principal: Principal };

export type FavoritesEndpoint = (ctx: FavoritesCtx, deps: FavoritesDeps) => Promise<HandlerResponse>;

/** GET /api/favorites */
export async function listFavorites(ctx: FavoritesCtx, deps: FavoritesDeps): Promise<HandlerResponse> {
  const { principal } = ctx;
  const q = validateQuery(FavoritesQuerySchema, { multi: [] }, ctx.query);
  const pins = await deps.favorites.list(principal.sub);
  const records = await mapLimit(pins, 16, (p) => deps.catalog.getRecord(p.slug));
  // Pins of servers that left the catalog are skipped, not deleted: they come back if the server does.
  const present = records.filter((r): r is CatalogRecord => r !== undefined);
  return json(successBody(present.map((r) => toCatalogServer(r, q.view))));
}

/** POST /api/favorites `{ slug }` */
export async function addFavorite(ctx: FavoritesCtx, deps: FavoritesDeps): Promise<HandlerResponse> {
  const { principal } = ctx;
  const { slug } = parseBody(ctx);
  if (!(await deps.catalog.getRecord(slug))) throw notFound(`No server with slug "${truncate(slug)}"`);
  const max = deps.favoritesConfig.maxFavorites;
  let result = await deps.favorites.pin(principal.sub, slug, max);
  // Pins of departed servers still count; at the cap they make room before the request is refused.
  if (result === 'full' && (await pruneDeparted(principal.sub, deps)) > 0) {
    result = await deps.favorites.pin(principal.sub, slug, max);
  }
  if (result === 'full') {
    throw invalidQuery([{ field: 'slug', message: `at most ${max} favorites per user; unpin one first` }], 'Favorites limit reached');
  }
  return json(successBody({ slug }));
}

/** DELETE /api/favorites/{slug} */
export async function removeFavorite(ctx: FavoritesCtx, deps: FavoritesDeps): Promise<HandlerResponse> {
  const { principal } = ctx;
  const { slug } = validateSlug(ctx.params);
  await deps.favorites.unpin(principal.sub, slug);
  return json(successBody({ slug }));
}

/** operationId (see `routes.ts`) → handler. */
export const FAVORITES_ENDPOINTS: Record<string, FavoritesEndpoint> = { listFavorites, addFavorite, removeFavorite };

function parseBody(ctx: RequestCtx): { slug: string } {
  const { body, isBase64Encoded } = ctx.event;
  if (body === undefined || body === '') throw invalidQuery([{ field: 'body', message: 'a JSON body { "slug": … } is required' }]);
  let parsed: unknown;
  try {
    parsed = JSON.parse(isBase64Encoded ? Buffer.from(body, 'base64').toString('utf8') : body);
  } catch {
    throw invalidQuery([{ field: 'body', message: 'must be valid JSON' }], 'The request body is not valid JSON');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw invalidQuery([{ field: 'body', message: 'must be a JSON object' }]);
  }
  if ((parsed as Record<string, unknown>).slug === undefined) throw invalidQuery([{ field: 'slug', message: 'is required' }]);
  const result = FavoriteBodySchema.safeParse(parsed);
  if (!result.success) throw invalidQuery([{ field: 'slug', message: result.error.issues[0]?.message ?? 'is invalid' }]);
  return result.data;
}

async function pruneDeparted(sub: string, deps: FavoritesDeps): Promise<number> {
  const pins = await deps.favorites.list(sub);
  const records = await mapLimit(pins, 16, (p) => deps.catalog.getRecord(p.slug));
  const departed = pins.filter((_, i) => records[i] === undefined);
  await mapLimit(departed, 16, (p) => deps.favorites.unpin(sub, p.slug));
  return departed.length;
}
