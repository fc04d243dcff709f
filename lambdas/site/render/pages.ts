import {
  CATEGORIES,
  REGISTRY_TYPES,
  SORTS,
  type CatalogRecord,
  type FacetCounts,
  type Facets,
  type NameCount,
  type SortKey,
  type CatalogFilters,
} from '../../catalog-core';
import { tokensRedirectUri, type SiteConfig } from '../config';
import type { SiteError } from '../errors';
import { cardList, facetLabel, pagination, searchForm, type OrgAllowed } from './components';
import { fullNumber, plural } from './format';
import { html, type SafeHtml } from './html';
import { layout } from './layout';

/** The list pages (home, browse, search, favorites) and the error page. */

export interface ListState {
  filters: CatalogFilters;
  sort?: SortKey;
  q?: string;
  page: number;
}

const SORT_LABEL: Record<SortKey, string> = {
  popularity: 'Popularity',
  name: 'Name (A–Z)',
  stars: 'GitHub stars',
  updated: 'Last changed in this catalog',
  downloads: 'Downloads',
  trending: 'Trending this week',
  published: 'Newest in the registry',
  uptime: 'Uptime (30 days)',
};

const TYPE_LABEL: Record<string, string> = { npm: 'npm', pypi: 'PyPI', oci: 'Docker (OCI)', mcpb: 'MCP bundle', nuget: 'NuGet', remote: 'Hosted endpoint' };

/** The query string of a view, defaults left out so each view has one URL (the canonical one). */
export function queryOf(state: ListState, override: Partial<ListState> = {}): string {
  const s = { ...state, ...override };
  const p = new URLSearchParams();
  if (s.q) p.append('q', s.q);
  for (const key of ['type', 'category', 'language', 'license'] as const) for (const v of s.filters[key] ?? []) p.append(key, v);
  if (s.filters.uptimeMin !== undefined) p.append('uptimeMin', String(s.filters.uptimeMin));
  if (s.filters.up === true) p.append('up', 'true');
  if (s.sort && s.sort !== 'popularity') p.append('sort', s.sort);
  if (s.page > 1) p.append('page', String(s.page));
  const q = p.toString();
  return q ? `?${q}` : '';
}

function filterCount(f: CatalogFilters): number {
  return (
    (f.type?.length ?? 0) +
    (f.category?.length ?? 0) +
    (f.language?.length ?? 0) +
    (f.license?.length ?? 0) +
    (f.uptimeMin !== undefined ? 1 : 0) +
    (f.up === true ? 1 : 0)
  );
}

function checkbox(name: string, value: string, label: string, checked: boolean, id: string): SafeHtml {
  return html`<li><input type="checkbox" id="${id}" name="${name}" value="${value}"${checked ? html` checked` : ''}> <label for="${id}">${label}</label></li>`;
}

/** Facet values worth listing: the most used ones, and every selected one even when rare or unknown. */
function facetOptions(all: NameCount[], selected: string[] | undefined, top: number): NameCount[] {
  const chosen = new Set(selected ?? []);
  const head = all.slice(0, top);
  const extra = all.slice(top).filter((f) => chosen.has(f.name));
  const unknown = [...chosen].filter((v) => !all.some((f) => f.name === v)).map((name) => ({ name, count: 0 }));
  return [...head, ...extra, ...unknown];
}

/**
 * The filters and sort of /servers (and, without sort, of /search): a GET form, state in the URL.
 * Each value's count is what the results would hold with it added to its own filter (the facets
 * of this query: `FacetCounts`).
 */
export function filtersForm(action: '/servers' | '/search', state: ListState, facets: FacetCounts): SafeHtml {
  const f = state.filters;
  const n = filterCount(f);
  const countIn = (list: NameCount[], name: string) => list.find((c) => c.name === name)?.count ?? 0;
  const group = (legend: string, items: SafeHtml[], open: boolean) =>
    html`<details class="facet"${open ? html` open` : ''}><summary>${legend}</summary><fieldset><legend class="sr-only">${legend}</legend><ul>${items}</ul></fieldset></details>`;
  return html`<form class="filters" method="get" action="${action}" aria-labelledby="filters-title">
<h2 id="filters-title">${action === '/servers' ? 'Filter and sort' : 'Filter results'}${n > 0 ? html` <span class="count">(${n} active)</span>` : ''}</h2>
${action === '/search' ? html`<input type="hidden" name="q" value="${state.q ?? ''}">` : ''}
${
  action === '/servers'
    ? html`<p class="field"><label for="sort">Sort by</label>
<select id="sort" name="sort">${SORTS.map((s) => html`<option value="${s}"${(state.sort ?? 'popularity') === s ? html` selected` : ''}>${SORT_LABEL[s]}</option>`)}</select></p>`
    : ''
}
${group(
  'Category',
  CATEGORIES.map((c, i) => checkbox('category', c, `${c} (${fullNumber(countIn(facets.categories, c))})`, f.category?.includes(c) ?? false, `f-cat-${i}`)),
  true,
)}
${group(
  'Install type',
  REGISTRY_TYPES.map((t) =>
    checkbox('type', t, `${TYPE_LABEL[t] ?? t} (${fullNumber(countIn(facets.types, t))})`, f.type?.includes(t) ?? false, `f-type-${t}`),
  ),
  (f.type?.length ?? 0) > 0,
)}
${group(
  'Language',
  facetOptions(facets.languages, f.language, 15).map((l, i) =>
    checkbox('language', l.name, facetLabel(l), f.language?.includes(l.name) ?? false, `f-lang-${i}`),
  ),
  (f.language?.length ?? 0) > 0,
)}
${group(
  'License',
  facetOptions(facets.licenses, f.license, 15).map((l, i) => checkbox('license', l.name, facetLabel(l), f.license?.includes(l.name) ?? false, `f-lic-${i}`)),
  (f.license?.length ?? 0) > 0,
)}
${group(
  'Health',
  [
    checkbox('up', 'true', 'Hide servers marked down', f.up === true, 'f-up'),
    html`<li><label for="f-uptime">Minimum 30-day uptime (%)</label> <input type="number" id="f-uptime" name="uptimeMin" min="0" max="100" step="0.1" value="${f.uptimeMin === undefined ? '' : String(f.uptimeMin)}"></li>`,
  ],
  f.up === true || f.uptimeMin !== undefined,
)}
<p class="actions"><button type="submit">Apply</button> <a href="${action}${action === '/search' && state.q ? `?q=${encodeURIComponent(state.q)}` : ''}">Clear filters</a></p>
</form>`;
}

/** The active filters as removable chips (each a link to the same view without it). */
function activeFilters(base: string, state: ListState): SafeHtml {
  const chips: SafeHtml[] = [];
  for (const key of ['category', 'type', 'language', 'license'] as const) {
    for (const v of state.filters[key] ?? []) {
      const rest = (state.filters[key] ?? []).filter((x) => x !== v);
      const href = `${base}${queryOf(state, { page: 1, filters: { ...state.filters, [key]: rest.length ? rest : undefined } })}`;
      chips.push(
        html`<li><a href="${href}" class="chip">${key === 'type' ? (TYPE_LABEL[v] ?? v) : v} <span aria-hidden="true">×</span><span class="sr-only"> (remove filter)</span></a></li>`,
      );
    }
  }
  const chip = (label: string, filters: CatalogFilters) =>
    html`<li><a href="${base}${queryOf(state, { page: 1, filters })}" class="chip">${label} <span aria-hidden="true">×</span><span class="sr-only"> (remove filter)</span></a></li>`;
  if (state.filters.uptimeMin !== undefined) chips.push(chip(`Uptime ≥ ${state.filters.uptimeMin}%`, { ...state.filters, uptimeMin: undefined }));
  if (state.filters.up === true) chips.push(chip('Not down', { ...state.filters, up: undefined }));
  return chips.length ? html`<ul class="chips" aria-label="Active filters">${chips}</ul>` : html``;
}

export interface ListPageData {
  items: CatalogRecord[];
  total: number;
  /** The facets of this very query and its filters. */
  facets: FacetCounts;
  pageSize: number;
  /** Where an allow-list exists: the servers it allows get their badge. */
  allowed?: OrgAllowed;
}

function listBody(base: '/servers' | '/search', state: ListState, data: ListPageData, empty: SafeHtml): SafeHtml {
  const totalPages = Math.max(1, Math.ceil(data.total / data.pageSize));
  const from = (state.page - 1) * data.pageSize + 1;
  const to = from + data.items.length - 1;
  const summary =
    data.items.length > 0
      ? html`Showing ${fullNumber(from)}–${fullNumber(to)} of ${plural(data.total, 'server')}`
      : data.total > 0
        ? html`Page ${state.page} is past the last page (${totalPages}). <a href="${base}${queryOf(state, { page: 1 })}">Back to page 1</a>`
        : empty;
  return html`<div class="browse">
<aside class="sidebar">${filtersForm(base, state, data.facets)}</aside>
<section class="results" aria-labelledby="results-title">
<h2 id="results-title" class="sr-only">Results</h2>
${activeFilters(base, state)}
<p class="summary" role="status">${summary}</p>
${data.items.length > 0 ? cardList(data.items, 'Servers', 3, data.allowed) : ''}
${pagination(state.page, totalPages, (p) => `${base}${queryOf(state, { page: p })}`)}
</section>
</div>`;
}

function pageLinks(base: string, state: ListState, data: ListPageData): { prev?: string; next?: string } {
  const totalPages = Math.ceil(data.total / data.pageSize);
  return {
    ...(state.page > 1 && state.page <= totalPages && { prev: `${base}${queryOf(state, { page: state.page - 1 })}` }),
    ...(state.page < totalPages && { next: `${base}${queryOf(state, { page: state.page + 1 })}` }),
  };
}

export function serversPage(config: SiteConfig, state: ListState, data: ListPageData): string {
  const onlyCategory = state.filters.category?.length === 1 && filterCount(state.filters) === 1 ? state.filters.category[0] : undefined;
  const title = onlyCategory ? `${onlyCategory} MCP servers` : 'Browse MCP servers';
  const description = onlyCategory
    ? `${plural(data.total, 'MCP server')} in ${onlyCategory}, sorted by ${SORT_LABEL[state.sort ?? 'popularity'].toLowerCase()}.`
    : `Browse ${plural(data.total, 'MCP server')} by category, install type, language and license.`;
  const feeds = (state.filters.category ?? []).map((c) => ({ title: `${config.siteName}: ${c}`, href: `/feed.xml?category=${encodeURIComponent(c)}` }));
  const body = html`<h1>${title}</h1>
${searchForm('', 'q-browse')}
${listBody('/servers', state, data, html`No server matches these filters. <a href="/servers">Clear them</a>.`)}`;
  return layout(config, { title, description, canonicalPath: `/servers${queryOf(state)}`, feeds, nav: 'browse', ...pageLinks('/servers', state, data) }, body);
}

export function searchPage(config: SiteConfig, state: ListState, data: ListPageData | undefined): string {
  const q = state.q ?? '';
  const title = q ? `“${q}”: search results` : 'Search MCP servers';
  const hidden = Object.fromEntries(
    (['type', 'category', 'language', 'license'] as const).filter((k) => state.filters[k]?.length).map((k) => [k, state.filters[k] as string[]]),
  );
  const body = html`<h1>${q ? html`Results for <q>${q}</q>` : 'Search MCP servers'}</h1>
${searchForm(q, 'q-search', { large: true, hidden })}
${
  data
    ? listBody(
        '/search',
        state,
        data,
        html`Nothing matches <q>${q}</q>${filterCount(state.filters) > 0 ? ' with these filters' : ''}. Try fewer words, or <a href="/servers">browse by category</a>.`,
      )
    : html`<p class="hint">Search names, descriptions, tools and READMEs. Or <a href="/servers">browse by category</a>.</p>`
}`;
  return layout(
    config,
    {
      title,
      description: q ? `MCP servers matching “${q}”.` : 'Search the catalog of MCP servers by name, description, tools and README.',
      canonicalPath: `/search${queryOf(state)}`,
      noindex: true,
      nav: 'search',
      ...(data && pageLinks('/search', state, data)),
    },
    body,
  );
}

export interface HomeData {
  total: number;
  /** The whole catalog's counts (the home page has no filter). */
  facets: Facets;
  /** Servers that gained stars this week; empty when none did (the section is then left out). */
  trending: CatalogRecord[];
  /** Newest in the registry (its own publish and update times, not the crawl's). */
  published: CatalogRecord[];
  popular: CatalogRecord[];
  /** Where an allow-list exists: the servers it allows get their badge. */
  allowed?: OrgAllowed;
}

function trendingSection(records: CatalogRecord[], allowed?: OrgAllowed): SafeHtml {
  return html`<section aria-labelledby="trending-title">
<h2 id="trending-title">Trending this week</h2>
${cardList(records, 'Trending servers', 3, allowed)}
<p><a href="/servers?sort=trending">All trending servers →</a></p>
</section>`;
}

function publishedSection(records: CatalogRecord[], allowed?: OrgAllowed): SafeHtml {
  return html`<section aria-labelledby="updated-title">
<h2 id="updated-title">Recently added or updated</h2>
<p class="muted">By the time the registry published or updated them.</p>
${cardList(records, 'Recently published servers', 3, allowed)}
<p><a href="/servers?sort=published">Everything, newest in the registry first →</a></p>
</section>`;
}

export function homePage(config: SiteConfig, data: HomeData): string {
  const categories = CATEGORIES.map((c) => ({ name: c, count: data.facets.categories.find((f) => f.name === c)?.count ?? 0 }));
  const body = html`<section class="hero" aria-labelledby="hero-title">
<h1 id="hero-title">Find an MCP server for the job</h1>
<p class="lead">${plural(data.total, 'server')} from the official MCP registry, with install snippets for Claude, VS Code and Cursor, live checks and trust grades.</p>
${searchForm('', 'q-home', { large: true })}
</section>
<section aria-labelledby="cat-title">
<h2 id="cat-title">Categories</h2>
<ul class="categories">${categories.map(
    (c) =>
      html`<li><a href="/servers?category=${encodeURIComponent(c.name)}"><span class="cat-name">${c.name}</span> <span class="cat-count">${fullNumber(c.count)}</span></a></li>`,
  )}</ul>
</section>
${data.trending.length > 0 ? html`<div class="columns">${trendingSection(data.trending, data.allowed)}${publishedSection(data.published, data.allowed)}</div>` : publishedSection(data.published, data.allowed)}
<section aria-labelledby="popular-title">
<h2 id="popular-title">Most popular</h2>
${cardList(data.popular, 'Popular servers', 3, data.allowed)}
<p><a href="/servers">Browse all ${fullNumber(data.total)} servers →</a></p>
</section>`;
  return layout(
    config,
    {
      title: config.siteName,
      description: `Browse, search and install ${fullNumber(data.total)} Model Context Protocol servers: install snippets per client, live checks, trust grades.`,
      canonicalPath: '/',
      nav: 'home',
      jsonLd: {
        '@context': 'https://schema.org',
        '@type': 'WebSite',
        name: config.siteName,
        url: `${config.publicUrl}/`,
        potentialAction: {
          '@type': 'SearchAction',
          target: `${config.publicUrl}/search?q={search_term_string}`,
          'query-input': 'required name=search_term_string',
        },
      },
    },
    body,
  );
}

/** Favorites need a signed-in reader, so the list is drawn by the script from /api/favorites; the page says so without it. */
export function favoritesPage(config: SiteConfig): string {
  const body = html`<h1>Your favorites</h1>
<div class="favorites" data-favorites>
<noscript><p class="notice">Signing in and pinning servers need JavaScript: the sign-in runs in this page (OAuth with PKCE), then pins are kept with your account.</p></noscript>
<p class="notice" data-auth-status>Pins are kept with your account. Sign in to see and change them.</p>
<p class="auth-actions"><button type="button" data-sign-in hidden>Sign in</button> <button type="button" data-sign-out hidden>Sign out</button></p>
<p class="summary" role="status" data-favorites-status></p>
<ul class="cards" aria-label="Pinned servers" data-favorites-list></ul>
</div>`;
  return layout(
    config,
    { title: 'Your favorites', description: 'The MCP servers you pinned.', noindex: true, nav: 'favorites', canonicalPath: '/favorites' },
    body,
  );
}

/**
 * Personal access tokens (for git and scripts): the page is the same for everyone; the script signs
 * in with memory scopes (apart from the favorites sign-in, which reaches no memory), lists, creates
 * and revokes through `/v1/tokens`, and shows a new token's secret once.
 */
export function tokensPage(config: SiteConfig): string {
  const body = html`<h1>Personal access tokens</h1>
<div class="tokens" data-tokens data-redirect-uri="${tokensRedirectUri(config)}">
<p>A personal access token lets git and your scripts reach your memories without signing in again: the git password (any user name), or a bearer token on <code>/v1</code> and <code>/mcp</code>. It lasts up to a year, reads (or reads and writes) the memories you choose, optionally only the notes in one folder, and is shown once.</p>
<noscript><p class="notice">Managing tokens needs JavaScript: the sign-in runs in this page (OAuth with PKCE), then the page calls <code>/v1/tokens</code>. The same API works with curl.</p></noscript>
<p class="notice" data-auth-status>Sign in to see, create and revoke your tokens.</p>
<p class="auth-actions"><button type="button" data-sign-in hidden>Sign in</button> <button type="button" data-sign-out hidden>Sign out</button></p>
<form class="token-form" data-token-form hidden>
<h2>New token</h2>
<p class="field"><label for="token-name">Name</label> <input id="token-name" name="name" required maxlength="100" autocomplete="off"></p>
<fieldset class="field"><legend>Access</legend>
<label><input type="radio" name="access" value="read" checked> Read</label>
<label><input type="radio" name="access" value="write"> Read and write</label>
</fieldset>
<p class="field"><label for="token-memories">Memories</label> <input id="token-memories" name="memories" autocomplete="off" aria-describedby="token-memories-hint"> <span class="hint" id="token-memories-hint">Names, separated by commas; empty: every memory your sign-in reaches.</span></p>
<p class="field"><label for="token-folder">Folder</label> <input id="token-folder" name="pathPrefix" autocomplete="off" aria-describedby="token-folder-hint"> <span class="hint" id="token-folder-hint">Optional: only the notes in this folder (such a token cannot clone with git or export).</span></p>
<p class="field"><label for="token-days">Expires in (days)</label> <input id="token-days" name="expiresInDays" type="number" inputmode="numeric" min="1" max="366" value="90" required></p>
<p><button type="submit">Create token</button></p>
</form>
<section class="new-token" data-new-token hidden aria-labelledby="new-token-title">
<h2 id="new-token-title" tabindex="-1">Your new token</h2>
<p class="notice">Copy it now: it is shown only this once. Keep it in git's credential helper or a secret store, not in a note (notes refuse it).</p>
<div class="code-block"><pre><code id="new-token-value" data-new-token-value></code></pre><button type="button" class="copy" data-copy="new-token-value" hidden>Copy the token</button></div>
</section>
<p class="summary" role="status" data-tokens-status></p>
<div class="table-wrap" data-token-table hidden>
<table class="token-table">
<caption>Your active tokens</caption>
<thead><tr><th scope="col">Name</th><th scope="col">Id</th><th scope="col">Access</th><th scope="col">Memories</th><th scope="col">Folder</th><th scope="col">Created</th><th scope="col">Expires</th><th scope="col">Last used</th><th scope="col"><span class="sr-only">Revoke</span></th></tr></thead>
<tbody data-token-rows></tbody>
</table>
</div>
</div>`;
  return layout(
    config,
    {
      title: 'Personal access tokens',
      description: 'Tokens for git and scripts to reach your memories.',
      noindex: true,
      nav: 'tokens',
      canonicalPath: '/tokens',
    },
    body,
  );
}

export function errorPage(config: SiteConfig, err: SiteError): string {
  const body = html`<h1>${err.title}</h1>
<p class="notice notice-error">${err.message}</p>
${err.details.length > 0 ? html`<ul class="problems">${err.details.map((d) => html`<li><code>${d.field}</code>: ${d.message}</li>`)}</ul>` : ''}
<p class="error-code">Error ${err.status} · <code data-error-code>${err.code}</code></p>
${searchForm('', 'q-error')}
<p><a href="/">Home</a> · <a href="/servers">Browse all servers</a></p>`;
  return layout(config, { title: err.title, description: err.message, noindex: true }, body);
}
