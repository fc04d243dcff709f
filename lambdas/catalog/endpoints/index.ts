import type { HandlerResponse } from '../../shared/http/types';
import type { CatalogDeps } from '../deps';
import { autocomplete, getFacets, getIcon, listCategories, listLanguages, listLicenses, listSlugs } from './browse';
import type { RequestCtx } from './context';
import { getServerHealth, listServerChanges } from './history';
import { getOpenApi } from './openapi';
import { getRegistryServerVersion, listRegistryServers, listRegistryServerVersions } from './registry';
import { getServer, listServers, searchServers } from './servers';

export type CatalogEndpoint = (ctx: RequestCtx, deps: CatalogDeps) => Promise<HandlerResponse>;

/** operationId (see `routes.ts`) → handler. */
export const CATALOG_ENDPOINTS: Record<string, CatalogEndpoint> = {
  listServers,
  getServer,
  getServerHealth,
  listServerChanges,
  searchServers,
  autocomplete,
  listCategories,
  listLanguages,
  listLicenses,
  getFacets,
  listSlugs,
  getIcon,
  listRegistryServers,
  listRegistryServerVersions,
  getRegistryServerVersion,
  getOpenApi,
};
