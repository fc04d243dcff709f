import type { RequestCtx } from '../handlers/context';
import { truncate, validateSlug } from '../handlers/servers';
import type { CatalogRecord } from '../domain/types';
import { toCatalogServer } from '../views';
import { AppError, invalidQuery, notFound } from '../../shared/errors';
import { successBody } from '../../shared/http/catalog-envelope';
import { validateQuery } from '../../shared/http/query';
import { header, json, type HandlerResponse } from '../../shared/http/types';
import { isAuthError, type Principal } from '../../identity/principal';
import type { FavoritesDeps } from './deps';
import { FavoriteBodySchema, FavoritesQuerySchema } from './schemas';

export type FavoritesRouteHandler = (ctx: RequestCtx, deps: FavoritesDeps) => Promise<HandlerResponse>;

/** Seconds a client waits before retrying when the token could not be checked. */
const AUTH_RETRY_AFTER = '5';

/**
 * A verifier failure in the catalog's envelope: 401 UNAUTHORIZED (with the RFC 6750 challenge) or
 * 503 AUTH_UNAVAILABLE (with Retry-After), so a client retries an outage instead of signing out.
 */
export function catalogAuthError(err: unknown): unknown {
  if (!isAuthError(err)) return err;
  if (err.kind === 'unavailable') {
    return new AppError('AUTH_UNAVAILABLE', 'The sign-in service cannot be reached; retry shortly', undefined, {
      'retry-after': AUTH_RETRY_AFTER,
    });
  }
  const challenge = err.reason === 'missing' ? 'Bearer' : 'Bearer error="invalid_token"';
  return new AppError('UNAUTHORIZED', err.reason === 'missing' ? 'A bearer token is required' : 'The bearer token is not valid', undefined, {
    'www-authenticate': challenge,
  });
}

/** Favorites need a valid token of any scope (DECISIONS). */
export async function authenticate(ctx: RequestCtx, deps: FavoritesDeps): Promise<Principal> {
  try {
    return await deps.verifier.verify(header(ctx.event, 'authorization'));
  } catch (err) {
    throw catalogAuthError(err);
  }
}

/** GET /api/favorites */
export async function listFavorites(ctx: RequestCtx, deps: FavoritesDeps): Promise<HandlerResponse> {
  const principal = await authenticate(ctx, deps);
  const q = validateQuery(FavoritesQuerySchema, { multi: [] }, ctx.query);
  const pins = await deps.favorites.list(principal.sub);
  const records = await mapBounded(pins, 16, (p) => deps.catalog.getRecord(p.slug));
  // Pins of servers that left the catalog are skipped, not deleted: they come back if the server does.
  const present = records.filter((r): r is CatalogRecord => r !== undefined);
  return json(successBody(present.map((r) => toCatalogServer(r, q.view))));
}

/** POST /api/favorites `{ slug }` */
export async function addFavorite(ctx: RequestCtx, deps: FavoritesDeps): Promise<HandlerResponse> {
  const principal = await authenticate(ctx, deps);
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
export async function removeFavorite(ctx: RequestCtx, deps: FavoritesDeps): Promise<HandlerResponse> {
  const principal = await authenticate(ctx, deps);
  const { slug } = validateSlug(ctx.params);
  await deps.favorites.unpin(principal.sub, slug);
  return json(successBody({ slug }));
}

/** operationId (see `routes.ts`) → handler. */
export const FAVORITES_HANDLERS: Record<string, FavoritesRouteHandler> = { listFavorites, addFavorite, removeFavorite };

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
  const records = await mapBounded(pins, 16, (p) => deps.catalog.getRecord(p.slug));
  const departed = pins.filter((_, i) => records[i] === undefined);
  await mapBounded(departed, 16, (p) => deps.favorites.unpin(sub, p.slug));
  return departed.length;
}

/** `Promise.all` over `items` with at most `limit` calls in flight (up to 1,000 pins per user). */
async function mapBounded<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}
