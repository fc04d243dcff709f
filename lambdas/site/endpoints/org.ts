import { orgDecision, type OrgDecision } from '../../catalog-core';
import { logger } from '../../shared/logger';
import type { SiteDeps } from '../deps';
import type { OrgAllowed } from '../render/components';

/**
 * What the organisation's allow-list says, for the badges. A page never fails for it: an allow-list
 * that cannot be read (S3 unreachable) shows no badge and is logged.
 */
async function currentList(deps: SiteDeps) {
  try {
    return await deps.allowList?.current();
  } catch (err) {
    logger.warn('the allow-list could not be read; pages show no organisation badge', { err: err instanceof Error ? err.message : String(err) });
    return undefined;
  }
}

export async function orgAllowed(deps: SiteDeps): Promise<OrgAllowed | undefined> {
  const list = await currentList(deps);
  return list && ((name) => orgDecision(list, name).allowed);
}

export async function orgOf(deps: SiteDeps, name: string): Promise<OrgDecision | undefined> {
  const list = await currentList(deps);
  return list && orgDecision(list, name);
}
