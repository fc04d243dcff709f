import { lastModified, registryTime, type CatalogRecord, type SlugEntry } from '../../catalog-core';
import type { SiteConfig } from '../config';
import { displayTitle, serverPath } from './components';
import { escapeXml } from './html';
import { absolute } from './layout';
import { changeAtomEntry } from './trust';
import type { ChangeEntry } from '../../catalog-core';

/**
 * Machine-readable views of the catalog: the Atom feed (RFC 4287) of new and updated servers (all,
 * or one category's), the sitemap (sitemaps.org 0.9, split into an index of parts past the
 * protocol's 50,000 URLs) and robots.txt.
 */

/**
 * A feed entry's time: the registry's publish or update time of the version, which is the news;
 * the catalog's own change time only for an entry the registry gave no time (Atom requires one).
 */
function entryTime(r: CatalogRecord): string {
  return registryTime(r) ?? lastModified(r);
}

export function atomFeed(
  config: SiteConfig,
  records: CatalogRecord[],
  category: string | undefined,
  now: number,
  breaking: Array<{ record: CatalogRecord; entry: ChangeEntry }> = [],
): string {
  const selfPath = category ? `/feed.xml?category=${encodeURIComponent(category)}` : '/feed.xml';
  const listPath = category ? `/servers?category=${encodeURIComponent(category)}&sort=published` : '/servers?sort=published';
  const times = [...records.map(entryTime), ...breaking.map((b) => b.entry.at)];
  const updated = times.length > 0 ? times.reduce((a, b) => (Date.parse(b) > Date.parse(a) ? b : a)) : new Date(now).toISOString();
  const title = category ? `${config.siteName}: ${category}` : `${config.siteName}: new and updated servers`;
  const entries = records.map((r) => {
    const url = absolute(config, serverPath(r.slug));
    const published = r.publishedAt ?? entryTime(r);
    const summary = `${r.description}${r.version ? ` (version ${r.version})` : ''}`;
    return `<entry>
<id>${escapeXml(url)}</id>
<title>${escapeXml(displayTitle(r))}</title>
<link rel="alternate" type="text/html" href="${escapeXml(url)}"/>
<updated>${escapeXml(entryTime(r))}</updated>
<published>${escapeXml(published)}</published>
<author><name>${escapeXml(r.name.split('/')[0] ?? r.name)}</name></author>
${r.categories.map((c) => `<category term="${escapeXml(c)}"/>`).join('')}
<summary type="text">${escapeXml(summary)}</summary>
</entry>`;
  });
  return `<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom">
<id>${escapeXml(absolute(config, selfPath))}</id>
<title>${escapeXml(title)}</title>
<subtitle>MCP servers added to or updated in the official registry, newest first${breaking.length > 0 ? ', and the newest breaking changes of their tools' : ''}.</subtitle>
<link rel="self" type="application/atom+xml" href="${escapeXml(absolute(config, selfPath))}"/>
<link rel="alternate" type="text/html" href="${escapeXml(absolute(config, listPath))}"/>
<updated>${escapeXml(updated)}</updated>
<author><name>${escapeXml(config.siteName)}</name></author>
<generator>${escapeXml(config.siteName)}</generator>
${entries.join('\n')}
${breaking.map((b) => changeAtomEntry(config, b.record, b.entry)).join('\n')}
</feed>
`;
}

/** Pages worth listing beside every server's page. */
const STATIC_PATHS = ['/', '/servers'];

export interface SitemapPlan {
  /** Total URLs (static pages and one per server). */
  total: number;
  parts: number;
}

export function sitemapPlan(slugs: SlugEntry[], maxUrls: number): SitemapPlan {
  const total = STATIC_PATHS.length + slugs.length;
  return { total, parts: Math.ceil(total / maxUrls) };
}

/** The latest `updatedAt` of the catalog (ISO strings order as instants). */
export function newestOf(slugs: SlugEntry[]): string | undefined {
  let newest: string | undefined;
  for (const s of slugs) if (newest === undefined || s.updatedAt > newest) newest = s.updatedAt;
  return newest;
}

/** One urlset: every URL when the sitemap is not split, else part `part` (1-based). */
export function sitemapUrlset(config: SiteConfig, slugs: SlugEntry[], maxUrls: number, part?: number): string {
  const newest = newestOf(slugs);
  const all: Array<{ loc: string; lastmod?: string }> = [
    ...STATIC_PATHS.map((p) => ({ loc: absolute(config, p), ...(newest && { lastmod: newest }) })),
    ...slugs.map((s) => ({ loc: absolute(config, serverPath(s.slug)), lastmod: s.updatedAt })),
  ];
  const slice = part === undefined ? all : all.slice((part - 1) * maxUrls, part * maxUrls);
  return `<?xml version="1.0" encoding="utf-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
${slice.map((u) => `<url><loc>${escapeXml(u.loc)}</loc>${u.lastmod ? `<lastmod>${escapeXml(u.lastmod)}</lastmod>` : ''}</url>`).join('\n')}
</urlset>
`;
}

export function sitemapIndex(config: SiteConfig, parts: number, lastmod: string | undefined): string {
  const items = Array.from({ length: parts }, (_, i) => i + 1).map(
    (p) => `<sitemap><loc>${escapeXml(absolute(config, `/sitemap.xml?part=${p}`))}</loc>${lastmod ? `<lastmod>${escapeXml(lastmod)}</lastmod>` : ''}</sitemap>`,
  );
  return `<?xml version="1.0" encoding="utf-8"?>
<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
${items.join('\n')}
</sitemapindex>
`;
}

/** Crawlers may read the pages; JSON APIs, sign-in, memories and endless search result pages stay out. */
export function robotsTxt(config: SiteConfig): string {
  return `User-agent: *
Allow: /
Disallow: /api/
Disallow: /search
Disallow: /favorites
Disallow: /tokens
Disallow: /oauth/
Disallow: /v1/
Disallow: /mcp

Sitemap: ${config.publicUrl}/sitemap.xml
`;
}
