import { isTestEntry, iconPath, type CatalogRecord, type Grade, type NameCount } from '../../catalog-core';
import { compactNumber, fullNumber } from './format';
import { html, type SafeHtml } from './html';

/** Pieces several pages share: server cards, the search box, pagination, grade wording. */

export function serverPath(slug: string): string {
  return `/servers/${encodeURIComponent(slug)}`;
}

export function displayTitle(r: Pick<CatalogRecord, 'title' | 'name'>): string {
  return r.title ?? r.name.split('/').pop() ?? r.name;
}

const TYPE_LABEL: Record<string, string> = { npm: 'npm', pypi: 'PyPI', oci: 'Docker', mcpb: 'Bundle', nuget: 'NuGet' };

/** The distinct ways to run a server, as short labels (`npm`, `Hosted`). */
export function runLabels(r: Pick<CatalogRecord, 'packages' | 'remotes'>): string[] {
  const out = [...new Set(r.packages.map((p) => TYPE_LABEL[p.registryType] ?? p.registryType))];
  if (r.remotes.length > 0) out.unshift('Hosted');
  return out;
}

export function icon(r: Pick<CatalogRecord, 'slug' | 'hasIcon' | 'name' | 'title'>, size: number): SafeHtml {
  if (r.hasIcon) return html`<img class="icon" src="${iconPath(r.slug)}" alt="" width="${size}" height="${size}" loading="lazy" decoding="async">`;
  const letter = displayTitle(r).trim().charAt(0).toUpperCase() || '?';
  return html`<span class="icon icon-letter" aria-hidden="true">${letter}</span>`;
}

export function pinButton(slug: string, title: string): SafeHtml {
  // Hidden until the script knows whether the reader is signed in and what is pinned.
  return html`<button type="button" class="pin" data-pin="${slug}" data-title="${title}" aria-pressed="false" hidden><span class="pin-mark" aria-hidden="true">☆</span> <span class="pin-text">Pin</span><span class="sr-only"> ${title}</span></button>`;
}

/** Whether the organisation's allow-list allows a server (by registry name); absent where no allow-list exists. */
export type OrgAllowed = (name: string) => boolean;

/** The badge of a server the organisation allows (README "Organisation registry"). */
export function orgBadge(pinnedVersion?: string): SafeHtml {
  return html`<li class="badge badge-org" title="On your organisation's allow-list: IDEs pointed at its registry (/org/v0.1) offer it">Allowed in your organisation${pinnedVersion ? html` (pinned to ${pinnedVersion})` : ''}</li>`;
}

export function serverCard(r: CatalogRecord, headingLevel: 2 | 3 = 3, allowed?: OrgAllowed): SafeHtml {
  const title = displayTitle(r);
  const stars = r.github?.stars;
  const facts = [
    allowed?.(r.name) ? orgBadge() : '',
    r.isOfficial ? html`<li class="badge badge-official">Official</li>` : '',
    r.status === 'deprecated' ? html`<li class="badge badge-warn">Deprecated</li>` : '',
    isTestEntry(r) ? html`<li class="badge badge-warn">Test or sample</li>` : '',
    r.demo === true ? html`<li class="badge badge-warn" title="Synthetic data of the local stack">Demo</li>` : '',
    stars !== undefined
      ? html`<li title="${fullNumber(stars)} GitHub stars"><span aria-hidden="true">★</span> ${compactNumber(stars)}<span class="sr-only"> stars</span></li>`
      : '',
    r.downloads !== undefined
      ? html`<li title="${fullNumber(r.downloads)} downloads last month"><span aria-hidden="true">↓</span> ${compactNumber(r.downloads)}<span class="sr-only"> downloads last month</span></li>`
      : '',
    r.health ? html`<li class="${r.health.live ? 'live' : 'down'}">${r.health.live ? 'Live' : 'Not responding'}</li>` : '',
    ...runLabels(r).map((l) => html`<li>${l}</li>`),
  ];
  const heading =
    headingLevel === 2
      ? html`<h2 class="card-title"><a href="${serverPath(r.slug)}">${title}</a></h2>`
      : html`<h3 class="card-title"><a href="${serverPath(r.slug)}">${title}</a></h3>`;
  return html`<li class="card">
${icon(r, 40)}
<div class="card-body">
${heading}
<p class="card-name">${r.name}</p>
<p class="card-desc">${r.description}</p>
<ul class="facts" aria-label="Facts">${facts}</ul>
</div>
${pinButton(r.slug, title)}
</li>`;
}

export function cardList(records: CatalogRecord[], label: string, headingLevel: 2 | 3 = 3, allowed?: OrgAllowed): SafeHtml {
  return html`<ul class="cards" aria-label="${label}">${records.map((r) => serverCard(r, headingLevel, allowed))}</ul>`;
}

/** The search box: a plain GET form; the script adds suggestions (ARIA combobox) from /api/autocomplete. */
export function searchForm(value: string, id: string, opts: { large?: boolean; hidden?: Record<string, string[]> } = {}): SafeHtml {
  const hidden = Object.entries(opts.hidden ?? {}).flatMap(([k, vs]) => vs.map((v) => html`<input type="hidden" name="${k}" value="${v}">`));
  return html`<form class="search${opts.large ? ' search-large' : ''}" method="get" action="/search" role="search">
<label for="${id}" class="sr-only">Search MCP servers</label>
<div class="combo">
<input id="${id}" name="q" type="search" role="combobox" value="${value}" maxlength="100" placeholder="Search servers: postgres, browser, slack…" autocomplete="off" spellcheck="false" data-autocomplete aria-autocomplete="list" aria-expanded="false" aria-controls="${id}-list">
<ul id="${id}-list" class="suggestions" role="listbox" aria-label="Suggestions" hidden></ul>
</div>
${hidden}
<button type="submit">Search</button>
</form>`;
}

/** Previous, numbered (a window around the current page, plus first and last) and next links. */
export function pagination(current: number, totalPages: number, hrefOf: (page: number) => string): SafeHtml {
  if (totalPages <= 1) return html``;
  const pages = new Set<number>([1, totalPages]);
  for (let p = Math.max(1, current - 2); p <= Math.min(totalPages, current + 2); p++) pages.add(p);
  const sorted = [...pages].sort((a, b) => a - b);
  const items: SafeHtml[] = [];
  let last = 0;
  for (const p of sorted) {
    if (p - last > 1) items.push(html`<li class="gap" aria-hidden="true">…</li>`);
    items.push(
      p === current
        ? html`<li><a href="${hrefOf(p)}" aria-current="page">${p}</a></li>`
        : html`<li><a href="${hrefOf(p)}" aria-label="Page ${p}">${p}</a></li>`,
    );
    last = p;
  }
  const prev =
    current > 1 && current <= totalPages ? html`<a href="${hrefOf(current - 1)}" rel="prev">← Previous</a>` : html`<span class="disabled">← Previous</span>`;
  const next = current < totalPages ? html`<a href="${hrefOf(current + 1)}" rel="next">Next →</a>` : html`<span class="disabled">Next →</span>`;
  return html`<nav class="pager" aria-label="Pagination">${prev}<ol>${items}</ol>${next}</nav>`;
}

/** Trust grades: what each letter means, shown beside it on detail pages (spec 1, DECISIONS). */
export const LICENSE_GRADE_TEXT: Record<Grade, string> = {
  A: 'Permissive license (MIT, Apache-2.0, BSD, ISC, …): use it anywhere.',
  B: 'Weak copyleft (MPL, LGPL, EPL): changes to its own files must stay open.',
  C: 'Strong copyleft (GPL, AGPL): derived works must be released under the same license.',
  D: 'Another or a custom license: read it before use.',
  F: 'No license found: by default nobody may reuse the code.',
};

export const MAINTENANCE_GRADE_TEXT: Record<Grade, string> = {
  A: 'Last pushed within 30 days.',
  B: 'Last pushed within 90 days.',
  C: 'Last pushed within 180 days.',
  D: 'Last pushed within a year.',
  F: 'No push for over a year.',
};

export function facetLabel(f: NameCount): string {
  return `${f.name} (${fullNumber(f.count)})`;
}
