import { assets } from '../assets';
import { oauthClientId, oauthRedirectUri, type SiteConfig } from '../config';
import { html, jsonScriptBody, type SafeHtml } from './html';

/** The shell every page shares: head (title, description, canonical, OpenGraph, feeds), header, footer. */
export interface PageMeta {
  title: string;
  description: string;
  /** Path and query of the canonical URL (`/servers/x`); absent for pages that should not be indexed. */
  canonicalPath?: string;
  /** `noindex` for search results, errors and favorites. */
  noindex?: boolean;
  /** OpenGraph image (absolute URL). */
  image?: string;
  ogType?: 'website' | 'article';
  /** schema.org data for `<script type="application/ld+json">` (a data block: CSP does not execute it). */
  jsonLd?: unknown;
  /** Extra feed links (a category's feed on its filtered list). */
  feeds?: Array<{ title: string; href: string }>;
  /** `<link rel=prev/next>` of paginated lists. */
  prev?: string;
  next?: string;
  /** The navigation item to mark as current. */
  nav?: 'browse' | 'search' | 'favorites' | 'tokens' | 'home';
}

export function absolute(config: SiteConfig, path: string): string {
  return `${config.publicUrl}${path}`;
}

export function layout(config: SiteConfig, meta: PageMeta, body: SafeHtml): string {
  const a = assets();
  const fullTitle = meta.title === config.siteName ? meta.title : `${meta.title} · ${config.siteName}`;
  const canonical = meta.canonicalPath !== undefined ? absolute(config, meta.canonicalPath) : undefined;
  const feeds = [{ title: `${config.siteName}: new and updated servers`, href: '/feed.xml' }, ...(meta.feeds ?? [])];
  const current = (item: PageMeta['nav']) => (meta.nav === item ? html` aria-current="page"` : '');
  const page = html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1">
<title>${fullTitle}</title>
<meta name="description" content="${meta.description}">
<meta name="color-scheme" content="light dark">
${meta.noindex ? html`<meta name="robots" content="noindex">` : ''}
${canonical ? html`<link rel="canonical" href="${canonical}">` : ''}
${meta.prev ? html`<link rel="prev" href="${meta.prev}">` : ''}
${meta.next ? html`<link rel="next" href="${meta.next}">` : ''}
<meta property="og:site_name" content="${config.siteName}">
<meta property="og:type" content="${meta.ogType ?? 'website'}">
<meta property="og:title" content="${meta.title}">
<meta property="og:description" content="${meta.description}">
${canonical ? html`<meta property="og:url" content="${canonical}">` : ''}
${meta.image ? html`<meta property="og:image" content="${meta.image}"><meta property="og:image:width" content="128"><meta property="og:image:height" content="128">` : ''}
<meta name="twitter:card" content="summary">
${feeds.map((f) => html`<link rel="alternate" type="application/atom+xml" title="${f.title}" href="${f.href}">`)}
<link rel="icon" href="${a.icon.url}" type="image/svg+xml">
<link rel="stylesheet" href="${a.css.url}">
<script src="${a.theme.url}"></script>
<script src="${a.js.url}" defer></script>
${meta.jsonLd !== undefined ? html`<script type="application/ld+json">${jsonScriptBody(meta.jsonLd)}</script>` : ''}
</head>
<body data-client-id="${oauthClientId(config)}" data-redirect-uri="${oauthRedirectUri(config)}">
<a class="skip" href="#main">Skip to content</a>
<header class="top">
<div class="wrap top-row">
<a class="brand" href="/"${current('home')}>${config.siteName}</a>
<nav aria-label="Site">
<ul class="nav-list">
<li><a class="nav-link" href="/servers"${current('browse')}>Browse</a></li>
<li><a class="nav-link" href="/search"${current('search')}>Search</a></li>
<li><a class="nav-link" href="/favorites"${current('favorites')}>Favorites</a></li>
<li><a class="nav-link" href="/tokens"${current('tokens')}>Tokens</a></li>
</ul>
</nav>
<button type="button" class="theme-toggle" data-theme-toggle hidden aria-label="Dark theme" aria-pressed="false">◐</button>
</div>
</header>
<main id="main" class="wrap">
${body}
</main>
<footer class="bottom">
<div class="wrap">
<p>A mirror of the <a href="https://registry.modelcontextprotocol.io" rel="noopener">official MCP registry</a>, enriched every few hours. The same data as JSON: <a href="/api/openapi.json">catalog API</a> · <a href="/api/v0.1/servers">registry feed</a> · <a href="/feed.xml">Atom feed</a> · <a href="/sitemap.xml">sitemap</a>.</p>
</div>
</footer>
<div class="toast" role="status" aria-live="polite" data-toast></div>
</body>
</html>
`;
  return page.value;
}
