import { HEALTH_WINDOWS, summarizeChecks, validateSlug } from '../../catalog-core';
import { validateQuery } from '../../shared/http/query';
import { json, type HandlerResponse } from '../../shared/http/types';
import type { CatalogDeps } from '../deps';
import { successBody } from '../envelope';
import { notFound } from '../errors';
import { HealthQuerySchema } from '../trust-schemas';
import type { RequestCtx } from './context';
import { truncate } from './servers';

/**
 * GET /api/mcps/{slug}/health?window=24h|7d|30d: the checks of the window (oldest first) and the
 * summary as of now. A server without remotes, or not checked yet, has an empty series; an unknown
 * slug is 404.
 */
export async function getServerHealth(ctx: RequestCtx, deps: CatalogDeps): Promise<HandlerResponse> {
  const { slug } = validateSlug(ctx.params);
  const { window } = validateQuery(HealthQuerySchema, { multi: [] }, ctx.query);
  const record = await deps.store.getRecord(slug);
  if (!record) throw notFound(`No server with slug "${truncate(slug)}"`);
  const now = new Date();
  const since = (ms: number) => new Date(now.getTime() - ms).toISOString();
  const month = await deps.trust.checks(slug, since(HEALTH_WINDOWS['30d']));
  const from = since(HEALTH_WINDOWS[window]);
  const checks = month.filter((c) => c.at > from);
  return json(successBody({ slug, window, summary: summarizeChecks(month, now), checks }));
}
