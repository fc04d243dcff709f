import { HEALTH_WINDOWS, summarizeChecks, validateSlug } from '../../catalog-core';
import { validateQuery } from '../../shared/http/query';
import { json, type HandlerResponse } from '../../shared/http/types';
import type { CatalogDeps } from '../deps';
import { successBody } from '../envelope';
import { ChangesQuerySchema, HealthQuerySchema } from '../trust-schemas';
import { CursorError } from '../../shared/cursor';
import { invalidQuery, notFound } from '../errors';
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
  const summary = summarizeChecks(month, now);
  // Down is the checker's verdict, after its CHECK_DOWN_AFTER failures in a row (a setting of the
  // check function, not this one's): the record carries it, from the same last check.
  if (record.healthHistory !== undefined && record.healthHistory.lastCheckedAt === summary.lastCheckedAt) summary.down = record.healthHistory.down;
  return json(successBody({ slug, window, summary, checks }));
}

/**
 * GET /api/mcps/{slug}/changes?cursor=&limit=: the changelog, newest first (tool changes with their
 * breaking flag, registry version bumps). The cursor is signed and bound to the slug.
 */
export async function listServerChanges(ctx: RequestCtx, deps: CatalogDeps): Promise<HandlerResponse> {
  const { slug } = validateSlug(ctx.params);
  const q = validateQuery(ChangesQuerySchema, { multi: [] }, ctx.query);
  const purpose = `changes:${slug}`;
  let before: string | undefined;
  if (q.cursor !== undefined) {
    try {
      before = (await deps.cursors.decode(purpose, q.cursor)).toString('utf8');
    } catch (err) {
      if (err instanceof CursorError) throw invalidQuery([{ field: 'cursor', message: 'is not a cursor of this listing' }]);
      throw err;
    }
  }
  if (!(await deps.store.getRecord(slug))) throw notFound(`No server with slug "${truncate(slug)}"`);
  const page = await deps.trust.changes(slug, { limit: q.limit, ...(before !== undefined && { before }) });
  const nextCursor = page.next === undefined ? undefined : deps.cursors.encode(purpose, Buffer.from(page.next, 'utf8'));
  return json(successBody(page.items, nextCursor === undefined ? {} : { nextCursor }));
}
