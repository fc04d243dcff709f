import { searchIndexForReads } from '../../catalog-core';
import { loadAuthConfig } from '../../identity/config';
import { createIdentity } from '../../identity/wiring';
import { retryingOnce } from '../../shared/concurrency';
import { loadCatalogConfig } from '../config';
import { createCatalogDeps } from '../wiring';
import { createOrgHandler } from './api';
import { createOrgDeps, loadOrgConfig, type OrgDeps } from './deps';

/**
 * The organisation registry Lambda (AWS): `/org/v0.1/*` and the allow-list's admin API, behind
 * CloudFront's `/org/*` behaviour. Reads the catalog like the catalog function; writes only the
 * allow-list object and its lease.
 */
async function init(): Promise<OrgDeps> {
  const config = loadOrgConfig(loadCatalogConfig());
  const index = await searchIndexForReads(config);
  const { verifier } = createIdentity(loadAuthConfig());
  return createOrgDeps(config, await createCatalogDeps(config, index, verifier), verifier);
}

export const handler = createOrgHandler(retryingOnce(init));
