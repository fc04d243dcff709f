import { VIEWS, SlugParamSchema } from '../../catalog-core';
import * as z from 'zod';
// Imported for its side effect too: it extends zod with `.openapi()` before the schemas below use it.
import { CatalogServer, envelope } from '../schemas';

/** The favorites contract (spec 1), written once: validation, types and the OpenAPI fragment. */

export const FavoriteBodySchema = z
  .object({
    slug: z
      .string({ error: 'must be a string' })
      .trim()
      .min(1, { error: 'must not be empty' })
      .max(200, { error: 'must be at most 200 characters' })
      .openapi({ description: 'Catalog identifier of the server to pin, 1-200 characters.' }),
  })
  .openapi('FavoriteRequest');

export const FavoritesQuerySchema = z.object({
  view: z
    .enum(VIEWS, { error: `must be one of ${VIEWS.join(', ')}` })
    .default('card')
    .openapi({ description: '`card` (default): exactly the CatalogServer fields; `full` adds the enrichment fields, as on /mcps.' }),
});

export const FavoriteSlug = z.object({ slug: z.string() }).openapi('FavoriteSlug');

export { SlugParamSchema };

/** The bearer scheme `/openapi.json` declares for the favorites operations. */
export const BEARER_SECURITY_SCHEME = {
  type: 'http' as const,
  scheme: 'bearer',
  description:
    "A session JWT (Cognito access token) or an opaque OAuth access token from this service's authorization server. Only /favorites requires it; elsewhere a valid bearer only raises the rate limit (100/s, burst 200, per user).",
};

export const FAVORITES_ERROR_TEXT: Record<number, string> = {
  400: 'INVALID_QUERY: missing, empty, over-long or non-string slug, a body that is not a JSON object, or the per-user limit reached.',
  401: 'UNAUTHORIZED: missing, malformed, expired, revoked or foreign bearer token. Carries `WWW-Authenticate: Bearer`.',
  404: 'NOT_FOUND: no server with that slug.',
  405: 'METHOD_NOT_ALLOWED: `Allow: GET, POST` on /favorites, `Allow: DELETE` on /favorites/{slug}.',
  503: 'AUTH_UNAVAILABLE: the token could not be checked (signing keys or token store unreachable); retry, do not sign out. Carries `Retry-After`.',
};

export interface FavoritesOperationDoc {
  summary: string;
  description: string;
  query?: z.ZodObject;
  params?: z.ZodObject;
  body?: z.ZodType;
  ok: { description: string; schema: z.ZodType };
  errors: number[];
  security: Array<Record<string, string[]>>;
}

const bearer = [{ bearerAuth: [] as string[] }];

/** operationId → its OpenAPI description, for the catalog document generator to register. */
export const FAVORITES_OPENAPI: Record<string, FavoritesOperationDoc> = {
  listFavorites: {
    summary: 'My pinned servers',
    description: "The signed-in user's favorites, most recently pinned first. Pins of servers that have left the catalog are skipped.",
    query: FavoritesQuerySchema,
    ok: { description: 'Pinned servers', schema: envelope(z.array(CatalogServer)) },
    errors: [400, 401, 503],
    security: bearer,
  },
  addFavorite: {
    summary: 'Pin a server',
    description: 'Idempotent: pinning a pinned server is 200 again. At most 1,000 favorites per user.',
    body: FavoriteBodySchema,
    ok: { description: 'The pinned slug', schema: envelope(FavoriteSlug) },
    errors: [400, 401, 404, 503],
    security: bearer,
  },
  removeFavorite: {
    summary: 'Unpin a server',
    description: 'Idempotent: 200 whether or not it was pinned.',
    params: SlugParamSchema,
    ok: { description: 'The unpinned slug', schema: envelope(FavoriteSlug) },
    errors: [400, 401, 503],
    security: bearer,
  },
};
