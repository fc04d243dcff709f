import { findServer, registryVersionEntry, toRegistryEntry } from '../../catalog-core';
import { validateQuery } from '../../shared/http/query';
import { json, type HandlerResponse } from '../../shared/http/types';
import type { CatalogDeps } from '../deps';
import { notFound } from '../errors';
import { encodeRegistryCursor, registryFingerprint, resumeRegistryCursor } from '../registry-cursor';
import { RegistryQuerySchema } from '../schemas';
import type { RequestCtx } from './context';

/** GET /api/v0.1/servers: the registry-compatible feed, ordered by name, unwrapped (cursors: `registry-cursor.ts`). */
const PURPOSE = 'catalog:v0.1/servers';

export async function listRegistryServers(ctx: RequestCtx, deps: CatalogDeps): Promise<HandlerResponse> {
  const q = validateQuery(RegistryQuerySchema, { multi: [] }, ctx.query);
  const updatedSince = q.updated_since ? new Date(q.updated_since).toISOString() : undefined;
  const fp = registryFingerprint(q.search, updatedSince);
  const filter = { search: q.search, updatedSince };
  const resume = q.cursor ? await resumeRegistryCursor(deps.cursors, PURPOSE, q.cursor, fp, deps.index, filter) : {};
  const items = await deps.index.registryPage({ ...filter, ...resume, limit: q.limit + 1 });

  const page = items.slice(0, q.limit);
  const hasMore = items.length > q.limit;
  const opts = { brand: deps.config.brand, siteUrlTemplate: deps.config.siteUrlTemplate };
  const body = {
    servers: page.map((r) => toRegistryEntry(r, opts)),
    metadata: {
      count: page.length,
      ...(hasMore && page.length > 0 && { nextCursor: encodeRegistryCursor(deps.cursors, PURPOSE, page[page.length - 1].name, fp) }),
    },
  };
  return json(body);
}

/**
 * GET /api/v0.1/servers/{serverName}/versions and …/versions/{version}: the official registry's
 * version routes over a catalog that mirrors each server's latest version only. The list holds that
 * one version; `{version}` answers it as `latest` or by its own version string, anything else is a
 * 404 (errors in the catalog's envelope, as every `/api` error: spec 1).
 */
export async function listRegistryServerVersions(ctx: RequestCtx, deps: CatalogDeps): Promise<HandlerResponse> {
  const record = await registryServer(ctx, deps);
  const entry = registryVersionEntry(record, { brand: deps.config.brand, siteUrlTemplate: deps.config.siteUrlTemplate });
  return json({ servers: [entry], metadata: { count: 1 } });
}

export async function getRegistryServerVersion(ctx: RequestCtx, deps: CatalogDeps): Promise<HandlerResponse> {
  const record = await registryServer(ctx, deps);
  const version = ctx.params.version;
  if (version !== 'latest' && version !== record.version) throw notFound('Server version not found');
  return json(registryVersionEntry(record, { brand: deps.config.brand, siteUrlTemplate: deps.config.siteUrlTemplate }));
}

async function registryServer(ctx: RequestCtx, deps: CatalogDeps) {
  const name = ctx.params.serverName;
  const found = name.length > 0 && name.length <= 200 ? await findServer(deps, { name }) : undefined;
  if (!found) throw notFound('Server not found');
  return found.record;
}
