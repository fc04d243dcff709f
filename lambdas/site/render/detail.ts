import {
  iconPath,
  parseGithubRepo,
  isTestEntry,
  lastModified,
  registryTime,
  type CatalogDetail,
  type CatalogRecord,
  type CatalogTool,
  type Grade,
  type RegistryPackage,
  installOptions,
  type InputNote,
  type InstallOption,
  type OrgDecision,
  type ChangeEntry,
  type HealthCheck,
  lintTools,
} from '../../catalog-core';
import type { SiteConfig } from '../config';
import { displayTitle, icon, LICENSE_GRADE_TEXT, MAINTENANCE_GRADE_TEXT, orgBadge, pinButton, serverPath } from './components';
import { compactNumber, fullNumber, isoDate, plural, relativeTime } from './format';
import { html, trusted, type SafeHtml } from './html';
import { absolute, layout } from './layout';
import { changesSection, DESCRIPTION_GRADE_TEXT, descriptionFindings, uptimeSection } from './trust';

/**
 * A server's page: everything the catalog knows, in the order a person deciding whether to
 * install it reads: what it is, how to install it, whether it answers, how far to trust it, what
 * tools it offers, what it ships, and its README.
 */

export interface DetailView {
  detail: CatalogDetail;
  /** The README, already rendered and sanitised (see markdown.ts). */
  readme?: { html: string; truncated: boolean };
  now: number;
  /** What the organisation's allow-list says of the server; absent where no allow-list exists. */
  org?: OrgDecision;
  /** The trust table's history: 30 days of checks and the newest changes (absent where the site has no trust table). */
  history?: { checks: HealthCheck[]; changes: ChangeEntry[]; moreChanges: boolean };
}

const REL = 'noopener nofollow ugc';

/** A link to a URL from registry data: only http(s), marked as user-supplied. */
function outLink(url: string | undefined, text: string): SafeHtml {
  if (!url || !/^https?:\/\//i.test(url)) return html`${text}`;
  return html`<a href="${url}" rel="${REL}">${text}</a>`;
}

function packagePage(p: RegistryPackage): string | undefined {
  const id = encodeURIComponent(p.identifier).replace(/%40/g, '@').replace(/%2F/gi, '/');
  switch (p.registryType) {
    case 'npm':
      return `https://www.npmjs.com/package/${id}`;
    case 'pypi':
      return `https://pypi.org/project/${id}/`;
    case 'nuget':
      return `https://www.nuget.org/packages/${id}`;
    case 'mcpb':
      return /^https:\/\//.test(p.identifier) ? p.identifier : undefined;
    default:
      return undefined;
  }
}

function time(iso: string, now: number): SafeHtml {
  return html`<time datetime="${iso}" title="${iso}">${relativeTime(iso, now)}</time>`;
}

/** A registry date as the date itself (`2025-10-10`): "1 minute ago" of a crawl is not its age. */
function date(iso: string): SafeHtml {
  return html`<time datetime="${iso}" title="${iso}">${isoDate(iso)}</time>`;
}

function gradeRow(label: string, grade: Grade | null, texts: Record<Grade, string>, unknown: string): SafeHtml {
  return html`<tr><th scope="row">${label}</th><td><span class="grade grade-${grade ?? 'none'}">${grade ?? '–'}</span></td><td>${grade ? texts[grade] : unknown}</td></tr>`;
}

/**
 * Why a grade has no letter: there is nothing to read it from (no repository, or one the catalog
 * does not read: only GitHub's), or the catalog has not read it yet (never fetched, or the fetch
 * failed every time so far). "Not checked yet" must never read as "none".
 */
function ungraded(r: CatalogRecord, what: 'license' | 'pushes'): string {
  const url = r.repository?.url;
  if (!url) return what === 'license' ? 'No repository to read a license from.' : 'No repository to read pushes from.';
  if (parseGithubRepo(url) === undefined) return `Not graded: the catalog reads ${what === 'license' ? 'licenses' : 'pushes'} from GitHub repositories only.`;
  if (r.github === undefined) return `Not checked yet: the catalog has not read this repository's ${what === 'license' ? 'license' : 'pushes'}.`;
  return what === 'license' ? 'Not checked yet.' : 'Last push unknown.';
}

function inputsList(inputs: InputNote[]): SafeHtml {
  if (inputs.length === 0) return html``;
  const word = { env: 'Environment variable', argument: 'Argument', header: 'Header', variable: 'Variable' } as const;
  return html`<dl class="inputs">${inputs.map(
    (i) =>
      html`<dt><code>${i.name}</code> <span class="muted">${word[i.kind]}${i.required ? ', required' : ', optional'}${i.secret ? ', secret' : ''}${i.repeated ? ', repeatable' : ''}</span></dt><dd>${i.description ?? ''}${i.choices ? html` One of: ${i.choices.map((c, n) => html`${n > 0 ? ', ' : ''}<code>${c}</code>`)}.` : ''}${i.default ? html` Default: <code>${i.default}</code>.` : ''}</dd>`,
  )}</dl>`;
}

function installSection(options: InstallOption[]): SafeHtml {
  if (options.length === 0) {
    return html`<p class="notice">The registry lists no package or hosted endpoint for this server; see its repository for how to run it.</p>`;
  }
  return html`${options.map(
    (o, oi) => html`<section class="install-option" aria-labelledby="${o.id}">
<h3 id="${o.id}">${o.title}</h3>
${o.snippets.map((s, si) => {
  const id = `snippet-${oi}-${si}`;
  return html`<details class="snippet"${si === 0 ? html` open` : ''}>
<summary>${s.label} <span class="muted">· ${s.where}</span></summary>
<div class="code-block"><pre tabindex="0"><code id="${id}" class="language-${s.language}">${s.text}</code></pre>
<button type="button" class="copy" data-copy="${id}" hidden>Copy<span class="sr-only"> the ${s.label} snippet</span></button></div>
</details>`;
})}
${o.notes.map((n) => html`<p class="note">${n}</p>`)}
${inputsList(o.inputs)}
</section>`,
  )}`;
}

function schemaType(s: unknown): string {
  if (typeof s !== 'object' || s === null) return '';
  const o = s as Record<string, unknown>;
  if (Array.isArray(o.type)) return o.type.join(' | ');
  if (o.type === 'array') {
    const inner = schemaType(o.items);
    return inner ? `array of ${inner}` : 'array';
  }
  if (typeof o.type === 'string') return o.type;
  if (Array.isArray(o.enum)) return 'enum';
  if (Array.isArray(o.anyOf) || Array.isArray(o.oneOf)) return ((o.anyOf ?? o.oneOf) as unknown[]).map(schemaType).filter(Boolean).join(' | ');
  return '';
}

/** Past this much markup, further tools are listed by name and description only (their schemas are in the API). */
const TOOL_MARKUP_BUDGET = 40_000;

function toolParameters(t: CatalogTool, i: number): SafeHtml {
  const schema = t.inputSchema ?? {};
  const props = (typeof schema.properties === 'object' && schema.properties !== null ? schema.properties : {}) as Record<string, unknown>;
  const required = new Set(Array.isArray(schema.required) ? schema.required.filter((r): r is string => typeof r === 'string') : []);
  const rows = Object.entries(props).map(([name, p]) => {
    const o = (typeof p === 'object' && p !== null ? p : {}) as Record<string, unknown>;
    const desc = typeof o.description === 'string' ? o.description : '';
    const choices = Array.isArray(o.enum) ? o.enum.map((v) => JSON.stringify(v)).join(', ') : '';
    const def = o.default !== undefined ? JSON.stringify(o.default) : '';
    return html`<tr><th scope="row"><code>${name}</code></th><td>${schemaType(o)}</td><td>${required.has(name) ? 'yes' : 'no'}</td><td>${desc}${choices ? html` <span class="muted">One of ${choices}.</span>` : ''}${def ? html` <span class="muted">Default ${def}.</span>` : ''}</td></tr>`;
  });
  return html`${
    rows.length > 0
      ? html`<div class="table-wrap" role="region" aria-label="Parameters of ${t.name}" tabindex="0"><table><caption class="sr-only">Parameters of ${t.name}</caption><thead><tr><th scope="col">Parameter</th><th scope="col">Type</th><th scope="col">Required</th><th scope="col">Description</th></tr></thead><tbody>${rows}</tbody></table></div>`
      : html`<p class="muted">No parameters.</p>`
  }
${t.inputSchema ? html`<details class="schema" id="tool-${i}-schema"><summary>Input schema (JSON)</summary><pre tabindex="0"><code>${JSON.stringify(t.inputSchema, null, 2)}</code></pre></details>` : ''}`;
}

function toolSection(tools: CatalogTool[], max: number, slug: string): SafeHtml {
  const shown = tools.slice(0, max);
  let spent = 0;
  let compact = 0;
  const parts = shown.map((t, i) => {
    const params = spent < TOOL_MARKUP_BUDGET ? toolParameters(t, i) : undefined;
    if (params) spent += params.value.length;
    else compact++;
    return html`<section class="tool" aria-labelledby="tool-${i}">
<h3 id="tool-${i}"><code>${t.name}</code></h3>
${t.description ? html`<p>${t.description}</p>` : ''}
${params ?? ''}
</section>`;
  });
  const api = `/api/mcps/${encodeURIComponent(slug)}`;
  return html`${parts}${compact > 0 ? html`<p class="note">The parameters of the last ${plural(compact, 'tool')} are in the <a href="${api}">catalog API</a>.</p>` : ''}${
    tools.length > shown.length
      ? html`<p class="note">${plural(tools.length - shown.length, 'more tool')} not shown; the <a href="${api}">catalog API</a> lists them all.</p>`
      : ''
  }`;
}

function healthSection(r: CatalogRecord, now: number): SafeHtml {
  const h = r.health;
  if (!h) {
    return html`<p>${r.remotes.length > 0 ? 'Its hosted endpoint has not been checked yet.' : 'This server runs on your machine (no hosted endpoint to check).'}</p>`;
  }
  return html`<dl class="facts-list">
<dt>Hosted endpoint</dt><dd><span class="status ${h.live ? 'live' : 'down'}">${h.live ? 'Live: it answered an MCP initialize' : 'Not responding to MCP'}</span></dd>
${h.authRequired !== undefined ? html`<dt>Sign-in</dt><dd>${h.authRequired ? 'Required (it asked for credentials)' : 'Not required to connect'}</dd>` : ''}
${h.toolCount !== undefined ? html`<dt>Tools listed live</dt><dd>${fullNumber(h.toolCount)}</dd>` : ''}
<dt>Checked</dt><dd>${time(h.checkedAt, now)}</dd>
</dl>`;
}

function jsonLd(config: SiteConfig, r: CatalogRecord, url: string): Record<string, unknown> {
  const license = r.github?.licenseSpdx ?? r.github?.license;
  const sameAs = [r.repository?.url, r.websiteUrl].filter((u): u is string => typeof u === 'string' && /^https?:\/\//.test(u));
  return {
    '@context': 'https://schema.org',
    '@type': 'SoftwareApplication',
    name: displayTitle(r),
    alternateName: r.name,
    description: r.description,
    url,
    identifier: r.name,
    softwareVersion: r.version,
    applicationCategory: 'DeveloperApplication',
    ...(r.categories.length > 0 && { applicationSubCategory: r.categories.join(', ') }),
    operatingSystem: r.remotes.length > 0 && r.packages.length === 0 ? 'Any (hosted)' : 'Windows, macOS, Linux',
    dateModified: registryTime(r) ?? lastModified(r),
    ...(r.publishedAt && { datePublished: r.publishedAt }),
    ...(license && { license }),
    ...(r.hasIcon && { image: absolute(config, iconPath(r.slug)) }),
    ...(sameAs.length > 0 && { sameAs }),
    ...(r.github?.language && { programmingLanguage: r.github.language }),
    ...(r.repository?.url && { codeRepository: r.repository.url }),
  };
}

export function detailPage(config: SiteConfig, view: DetailView): string {
  const { record: r, tools = [] } = view.detail;
  const { now } = view;
  const title = displayTitle(r);
  const path = serverPath(r.slug);
  const url = absolute(config, path);
  const options = installOptions(r);
  const g = r.github;
  const license = g?.licenseSpdx ?? g?.license;
  const published = r.publishedAt;
  const registryUpdated = r.registryUpdatedAt !== undefined && r.registryUpdatedAt !== published ? r.registryUpdatedAt : undefined;
  const descriptions = tools.length > 0 ? lintTools(tools) : undefined;
  const feedPath = `${path}/feed.xml`;
  const body = html`<article class="detail" aria-labelledby="server-title">
<header class="detail-head">
${icon(r, 64)}
<div>
<h1 id="server-title">${title}</h1>
<p class="card-name">${r.name}</p>
<p class="lead">${r.description}</p>
<ul class="facts" aria-label="Badges">
${view.org?.allowed ? orgBadge(view.org.pinnedVersion) : ''}
${r.isOfficial ? html`<li class="badge badge-official" title="Published under a domain its publisher proved to the registry">Official namespace</li>` : ''}
${r.status === 'deprecated' ? html`<li class="badge badge-warn">Deprecated</li>` : ''}
${isTestEntry(r) ? html`<li class="badge badge-warn" title="Its name or description says it is a test, sample or greeting server">Test or sample</li>` : ''}
${r.demo === true ? html`<li class="badge badge-warn" title="Synthetic data of the local stack, not a registry entry">Demo data</li>` : ''}
${r.categories.map((c) => html`<li><a href="/servers?category=${encodeURIComponent(c)}">${c}</a></li>`)}
</ul>
</div>
${pinButton(r.slug, title)}
</header>
<section aria-labelledby="glance-title">
<h2 id="glance-title" class="sr-only">At a glance</h2>
<dl class="glance">
<div><dt>Version</dt><dd>${r.version}</dd></div>
${published ? html`<div><dt>Published</dt><dd>${date(published)}${registryUpdated ? html` <span class="muted">(updated in the registry ${date(registryUpdated)})</span>` : ''}</dd></div>` : ''}
${g?.stars !== undefined ? html`<div><dt>GitHub stars</dt><dd title="${fullNumber(g.stars)}">${compactNumber(g.stars)}${r.trending > 0 ? html` <span class="muted">(+${fullNumber(r.trending)} this week)</span>` : ''}</dd></div>` : ''}
${r.downloads !== undefined ? html`<div><dt>Downloads, last month</dt><dd title="${fullNumber(r.downloads)}">${compactNumber(r.downloads)}</dd></div>` : ''}
${license ? html`<div><dt>License</dt><dd>${license}</dd></div>` : ''}
${g?.language ? html`<div><dt>Language</dt><dd><a href="/servers?language=${encodeURIComponent(g.language)}">${g.language}</a></dd></div>` : ''}
${r.toolCount !== undefined ? html`<div><dt>Tools</dt><dd>${fullNumber(r.toolCount)}</dd></div>` : ''}
${r.repository?.url ? html`<div><dt>Repository</dt><dd>${outLink(r.repository.url, r.repository.url.replace(/^https?:\/\//, ''))}</dd></div>` : ''}
${r.websiteUrl ? html`<div><dt>Website</dt><dd>${outLink(r.websiteUrl, r.websiteUrl.replace(/^https?:\/\//, ''))}</dd></div>` : ''}
</dl>
</section>
<section aria-labelledby="install-title">
<h2 id="install-title">Install</h2>
${installSection(options)}
</section>
<section aria-labelledby="health-title">
<h2 id="health-title">Health</h2>
${healthSection(r, now)}
${view.history ? uptimeSection(r, view.history.checks, now) : ''}
</section>
<section aria-labelledby="trust-title">
<h2 id="trust-title">Trust grades</h2>
<div class="table-wrap" role="region" aria-label="Trust grades table" tabindex="0"><table class="grades"><caption class="sr-only">Trust grades and what they mean</caption>
<thead><tr><th scope="col">Grade</th><th scope="col">Value</th><th scope="col">What it means</th></tr></thead>
<tbody>
${gradeRow('License', r.grades.license, LICENSE_GRADE_TEXT, ungraded(r, 'license'))}
${gradeRow('Maintenance', r.grades.maintenance, MAINTENANCE_GRADE_TEXT, ungraded(r, 'pushes'))}
${descriptions ? gradeRow('Tool descriptions', descriptions.grade, DESCRIPTION_GRADE_TEXT, 'No tools captured.') : ''}
<tr><th scope="row">Quality</th><td><span class="grade grade-none">–</span></td><td>Untested: the catalog does not yet run its tools.</td></tr>
</tbody></table></div>
${descriptions ? descriptionFindings(descriptions) : ''}
</section>
${
  tools.length > 0
    ? html`<section aria-labelledby="tools-title">
<h2 id="tools-title">Tools <span class="count">(${fullNumber(tools.length)})</span></h2>
${toolSection(tools, config.maxTools, r.slug)}
</section>`
    : ''
}
${
  view.history
    ? html`<section aria-labelledby="changes-title">
<h2 id="changes-title">Changes</h2>
${changesSection(r.slug, view.history.changes, view.history.moreChanges)}
</section>`
    : ''
}
<section aria-labelledby="ships-title">
<h2 id="ships-title">Packages and endpoints</h2>
${
  r.packages.length > 0
    ? html`<div class="table-wrap" role="region" aria-label="Packages table" tabindex="0"><table><caption class="sr-only">Packages</caption><thead><tr><th scope="col">Registry</th><th scope="col">Package</th><th scope="col">Version</th><th scope="col">Transport</th></tr></thead><tbody>${r.packages.map(
        (p) =>
          html`<tr><td>${p.registryType}</td><td>${outLink(packagePage(p), p.identifier)}</td><td>${p.version ?? '–'}</td><td>${p.transport.type}${p.transport.url ? html` <code>${p.transport.url}</code>` : ''}</td></tr>`,
      )}</tbody></table></div>`
    : ''
}
${
  r.remotes.length > 0
    ? html`<div class="table-wrap" role="region" aria-label="Hosted endpoints table" tabindex="0"><table><caption class="sr-only">Hosted endpoints</caption><thead><tr><th scope="col">Transport</th><th scope="col">URL</th></tr></thead><tbody>${r.remotes.map(
        (m) => html`<tr><td>${m.type}</td><td><code>${m.url}</code></td></tr>`,
      )}</tbody></table></div>`
    : ''
}
${r.packages.length === 0 && r.remotes.length === 0 ? html`<p>None listed.</p>` : ''}
</section>
${
  view.readme
    ? html`<section aria-labelledby="readme-title">
<h2 id="readme-title">README</h2>
<div class="readme">${trusted(view.readme.html)}</div>
${view.readme.truncated ? html`<p class="note">The README is longer than shown here. ${r.repository?.url ? html`Read it all in ${outLink(r.repository.url, 'the repository')}.` : ''}</p>` : ''}
</section>`
    : ''
}
${
  r.demo === true
    ? html`<p class="notice">A synthetic demo server of the local stack: it is not in the MCP registry. A crawl of the registry replaces the demo data.</p>`
    : html`<p class="muted">Data from the official MCP registry. This catalog's entry last changed ${time(lastModified(r), now)} and was last crawled ${time(r.crawledAt, now)} (${isoDate(r.crawledAt)}). As JSON: <a href="/api/mcps/${encodeURIComponent(r.slug)}">/api/mcps/${r.slug}</a>.</p>`
}
</article>`;
  return layout(
    config,
    {
      title: `${title}: MCP server`,
      description: r.description.length > 300 ? `${r.description.slice(0, 297)}…` : r.description,
      canonicalPath: path,
      ogType: 'article',
      ...(r.hasIcon && { image: absolute(config, iconPath(r.slug)) }),
      jsonLd: jsonLd(config, r, url),
      ...(view.history && { feeds: [{ title: `Changes of ${title}`, href: feedPath }] }),
    },
    body,
  );
}
