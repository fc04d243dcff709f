import { CachedAllowList, S3AllowListStore } from '../../catalog-core';
import type { TokenVerifier } from '../../identity/verifier';
import { documentClient, dynamoClient, s3Config } from '../../shared/aws/clients';
import { envString } from '../../shared/env';
import { logger } from '../../shared/logger';
import { traced } from '../../shared/observability/tracing';
import type { CatalogConfig } from '../config';
import type { CatalogDeps } from '../deps';
import { DEFAULT_ADMIN_GROUP } from './config';

export interface OrgConfig extends CatalogConfig {
  adminGroup: string;
}

export function loadOrgConfig(base: CatalogConfig, env: Readonly<Record<string, string | undefined>> = process.env): OrgConfig {
  return { ...base, adminGroup: envString(env, 'ORG_ADMIN_GROUP') ?? DEFAULT_ADMIN_GROUP };
}

/** The catalog's reads and limits, the allow-list file (with the writers' lease), its cache, and a verifier for the admin API. */
export interface OrgDeps extends CatalogDeps {
  config: OrgConfig;
  allowListStore: S3AllowListStore;
  allowList: CachedAllowList;
  verifier: TokenVerifier;
}

/** Over the catalog's dependencies (`createCatalogDeps`): the local stack shares one set between both APIs. */
export function createOrgDeps(config: OrgConfig, catalog: CatalogDeps, verifier: TokenVerifier): OrgDeps {
  const clientOpts = { region: config.region, dynamoEndpoint: config.dynamoEndpoint, s3Endpoint: config.s3Endpoint };
  const allowListStore = new S3AllowListStore((mod) => traced(new mod.S3Client(s3Config(clientOpts))), config.allowList, {
    doc: documentClient(dynamoClient(clientOpts)),
    table: config.rateLimitTable,
  });
  const allowList = new CachedAllowList(allowListStore, config.allowListRefreshSeconds * 1000, (err) =>
    logger.warn('the allow-list file does not parse; serving the last good one', { err: err instanceof Error ? err.message : String(err) }),
  );
  return { ...catalog, config, allowListStore, allowList, verifier };
}
