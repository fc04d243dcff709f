import { SearchWindowError, type PageResult, type FacetCounts, filtersOf } from '../../catalog-core';
import { validateQuery } from '../../shared/http/query';
import type { HandlerResponse } from '../../shared/http/types';
import type { RequestContext } from '../../shared/http/pipeline';
import type { SiteDeps } from '../deps';
import { SiteError } from '../errors';
import { favoritesPage, homePage, searchPage, serversPage, tokensPage, type ListState } from '../render/pages';
import { MULTI_KEYS, SearchPageQuerySchema, ServersQuerySchema } from '../schemas';
import { orgAllowed } from './org';
import { htmlPage } from './respond';

export type SiteCtx = RequestContext<SiteDeps>;

const SHAPE = { multi: MULTI_KEYS };
const HOME_ITEMS = 6;

const NO_FACETS: FacetCounts = { categories: [], types: [], languages: [], licenses: [], missing: { types: 0, languages: 0, licenses: 0 } };

/** The facet counts a list or search answered (asked for with `facets: true`). */
function facetsOf(result: PageResult): FacetCounts {
  return result.facets ?? NO_FACETS;
}

/**
 * GET / (and /index.html): search, categories with counts, trending (only servers that gained
 * stars this week: without that signal the section is left out), recently published in the
 * registry, popular.
 */
export async function home(ctx: SiteCtx): Promise<HandlerResponse> {
  const { deps } = ctx;
  const first = { offset: 0, limit: HOME_ITEMS };
  const [popular, trending, published, facets] = await Promise.all([
    deps.index.list({ filters: {}, sort: 'popularity', page: first }),
    deps.index.list({ filters: {}, sort: 'trending', page: first }),
    deps.index.list({ filters: {}, sort: 'published', page: first }),
    deps.index.facets(),
  ]);
  return htmlPage(
    deps.config,
    homePage(deps.config, {
      total: popular.total,
      facets,
      popular: popular.items,
      trending: trending.items.filter((r) => r.trending > 0),
      published: published.items,
      allowed: await orgAllowed(deps),
    }),
  );
}

/** GET /servers: every filter and sort of /api/mcps, the state in the URL. */
export async function servers(ctx: SiteCtx): Promise<HandlerResponse> {
  const { deps } = ctx;
  const q = validateQuery(ServersQuerySchema, SHAPE, ctx.query);
  const size = deps.config.pageSize;
  const filters = filtersOf(q);
  const result = await deps.index.list({ filters, sort: q.sort, page: { offset: (q.page - 1) * size, limit: size }, facets: true });
  const state: ListState = { filters, sort: q.sort, page: q.page };
  return htmlPage(
    deps.config,
    serversPage(deps.config, state, { items: result.items, total: result.total, facets: facetsOf(result), pageSize: size, allowed: await orgAllowed(deps) }),
  );
}

/** GET /search?q=: ranked results with the same filters; without `q`, the search form. */
export async function search(ctx: SiteCtx): Promise<HandlerResponse> {
  const { deps } = ctx;
  const q = validateQuery(SearchPageQuerySchema, SHAPE, ctx.query);
  const filters = filtersOf(q);
  const state: ListState = { filters, q: q.q, page: q.page };
  if (q.q === '') return htmlPage(deps.config, searchPage(deps.config, state, undefined));
  const size = deps.config.pageSize;
  try {
    const result = await deps.index.search({ q: q.q, filters, page: { offset: (q.page - 1) * size, limit: size }, facets: true });
    return htmlPage(
      deps.config,
      searchPage(deps.config, state, { items: result.items, total: result.total, facets: facetsOf(result), pageSize: size, allowed: await orgAllowed(deps) }),
    );
  } catch (err) {
    if (err instanceof SearchWindowError) {
      throw new SiteError('INVALID_QUERY', 'Page out of reach', 'The requested page is beyond the search window; narrow the query.', [
        { field: 'page', message: err.message },
      ]);
    }
    throw err;
  }
}

/** GET /favorites: the page the script fills in for a signed-in reader. */
export async function favorites(ctx: SiteCtx): Promise<HandlerResponse> {
  return htmlPage(ctx.deps.config, favoritesPage(ctx.deps.config));
}

/** GET /tokens: personal access tokens; the script signs in with memory scopes and calls /v1/tokens. */
export async function tokens(ctx: SiteCtx): Promise<HandlerResponse> {
  return htmlPage(ctx.deps.config, tokensPage(ctx.deps.config));
}
