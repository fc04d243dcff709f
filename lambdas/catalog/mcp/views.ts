import { installOptions, lastModified, type CatalogDetail, type CatalogRecord, type InstallClient } from '../../catalog-core';
import type { InstallOut, ServerHit, ServerOut } from './schemas';

/** The records as the catalog tools answer them: what search results, the detail page and the install box show. */

/** README characters `get_server` returns (the head carries what it does and how to set it up). */
export const README_CHARS = 4000;

/** The server's page on the site (`SITE_URL_TEMPLATE`), as the registry feed's `_meta` url. */
export function pageUrl(slug: string, siteUrlTemplate: string | undefined): string | undefined {
  return siteUrlTemplate ? siteUrlTemplate.replaceAll('{slug}', encodeURIComponent(slug)) : undefined;
}

export function hitOf(r: CatalogRecord, siteUrlTemplate: string | undefined): ServerHit {
  const url = pageUrl(r.slug, siteUrlTemplate);
  return {
    slug: r.slug,
    name: r.name,
    ...(r.title !== undefined && { title: r.title }),
    description: r.description,
    categories: [...r.categories],
    transports: [...new Set([...r.remotes.map((m) => m.type), ...r.packages.map((p) => p.transport.type)])],
    registryTypes: [...new Set([...r.packages.map((p) => p.registryType), ...(r.remotes.length > 0 ? ['remote'] : [])])],
    grades: { license: r.grades.license, maintenance: r.grades.maintenance, quality: r.grades.quality },
    status: r.status,
    live: r.health ? r.health.live : null,
    ...(r.toolCount !== undefined && { toolCount: r.toolCount }),
    ...(r.github?.stars !== undefined && { stars: r.github.stars }),
    isOfficial: r.isOfficial,
    ...(url && { url }),
  };
}

export function detailOf(d: CatalogDetail, siteUrlTemplate: string | undefined): ServerOut {
  const r = d.record;
  const license = r.github?.license ?? r.github?.licenseSpdx;
  return {
    ...hitOf(r, siteUrlTemplate),
    version: r.version,
    ...(r.websiteUrl && { websiteUrl: r.websiteUrl }),
    ...(r.repository?.url && { repositoryUrl: r.repository.url }),
    ...(r.health && { health: { ...r.health } }),
    ...(r.downloads !== undefined && { downloads: r.downloads }),
    ...(r.github?.language !== undefined && { language: r.github.language }),
    ...(license !== undefined && { license }),
    updatedAt: lastModified(r),
    ...(r.publishedAt !== undefined && { publishedAt: r.publishedAt }),
    packages: r.packages.map((p) => ({
      registryType: p.registryType,
      identifier: p.identifier,
      ...(p.version !== undefined && { version: p.version }),
      transport: p.transport.type,
      ...(p.runtimeHint !== undefined && { runtimeHint: p.runtimeHint }),
    })),
    remotes: r.remotes.map((m) => ({ type: m.type, url: m.url })),
    tools: (d.tools ?? []).map((t) => ({
      name: t.name,
      ...(t.description !== undefined && { description: t.description }),
      ...(t.inputSchema !== undefined && { inputSchema: t.inputSchema }),
    })),
    install: installOptions(r).map((o) => ({ id: o.id, title: o.title, kind: o.kind })),
    ...(d.readme && {
      readme: {
        path: d.readme.path,
        text: d.readme.content.slice(0, README_CHARS),
        truncated: d.readme.content.length > README_CHARS || d.readme.truncated === true,
      },
    }),
  };
}

/** Why an install option has no snippet for a client. */
function missingSnippet(kind: string, client: InstallClient): string {
  if (kind === 'bundle') return 'No configuration snippet: an MCP bundle is opened in Claude Desktop (see the other notes).';
  if (client === 'generic')
    return 'No generic snippet for a local (stdio) package: most clients read the "mcpServers" JSON that install_server gives for claude-desktop or cursor.';
  return `No ${client} snippet for this way of installing.`;
}

/** Every way to install the server, each with the snippet the site shows for `client`. */
export function installOf(r: CatalogRecord, client: InstallClient): InstallOut {
  return {
    slug: r.slug,
    name: r.name,
    client,
    options: installOptions(r).map((o) => {
      const s = o.snippets.find((x) => x.client === client);
      const start = o.snippets.find((x) => x.client === 'terminal');
      return {
        id: o.id,
        title: o.title,
        kind: o.kind,
        ...(s && { snippet: { where: s.where, language: s.language, text: s.text } }),
        ...(start && s && { start: { where: start.where, language: start.language, text: start.text } }),
        inputs: o.inputs.map((i) => ({ ...i })),
        notes: s ? [...o.notes] : [missingSnippet(o.kind, client), ...o.notes],
      };
    }),
  };
}
