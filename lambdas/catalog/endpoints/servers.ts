import { validateQuery } from '../../shared/http/query';
import { json, type HandlerResponse } from '../../shared/http/types';
import { invalidQuery, notFound } from '../errors';
import { successBody } from '../envelope';
import { filtersOf, MULTI_KEYS, SearchWindowError, validateSlug, type PageResult } from '../../catalog-core';
import type { CatalogDeps } from '../deps';
import { ListQuerySchema, SearchQuerySchema } from '../schemas';
import { catalogServerJson, listEnvelopeJson, toDetail } from '../views';
import type { RequestCtx } from './context';

const SHAPE = { multi: MULTI_KEYS };

/** GET /api/mcps */
export async function listServers(ctx: RequestCtx, deps: CatalogDeps): Promise<HandlerResponse> {
  const q = validateQuery(ListQuerySchema, SHAPE, ctx.query);
  const offset = (q.page - 1) * q.limit;
  const result = await deps.index.list({ filters: filtersOf(q), sort: q.sort, page: { offset, limit: q.limit }, facets: true });
  return jsonText(
    listEnvelopeJson(
      result.items.map((r) => catalogServerJson(r, q.view)),
      { pagination: pagination(q.page, q.limit, result) },
      result.facets,
    ),
  );
}

function jsonText(body: string): HandlerResponse {
  return { kind: 'text', body, contentType: 'application/json; charset=utf-8', headers: { 'cache-control': 'no-store' } };
}

/** GET /api/search */
export async function searchServers(ctx: RequestCtx, deps: CatalogDeps): Promise<HandlerResponse> {
  const q = validateQuery(SearchQuerySchema, SHAPE, ctx.query);
  const offset = (q.page - 1) * q.limit;
  let result: PageResult;
  try {
    result = await deps.index.search({ q: q.q, filters: filtersOf(q), page: { offset, limit: q.limit }, facets: true });
  } catch (err) {
    if (err instanceof SearchWindowError) {
      throw invalidQuery([{ field: 'page', message: err.message }], 'The requested page is beyond the search window');
    }
    throw err;
  }
  return jsonText(
    listEnvelopeJson(
      result.items.map((r) => catalogServerJson(r, q.view)),
      { pagination: pagination(q.page, q.limit, result), search: { query: q.q } },
      result.facets,
    ),
  );
}

/** GET /api/mcps/{slug} */
export async function getServer(ctx: RequestCtx, deps: CatalogDeps): Promise<HandlerResponse> {
  const { slug } = validateSlug(ctx.params);
  const detail = await deps.store.get(slug);
  if (!detail) throw notFound(`No server with slug "${truncate(slug)}"`);
  return json(successBody(toDetail(detail)));
}

function pagination(page: number, limit: number, r: PageResult) {
  const totalPages = Math.ceil(r.total / limit);
  return { page, limit, total: r.total, totalPages, hasMore: page < totalPages };
}

export function truncate(s: string, n = 80): string {
  return s.length > n ? `${s.slice(0, n)}…` : s;
}
