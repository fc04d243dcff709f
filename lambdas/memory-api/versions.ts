import { validateQuery } from '../shared/http/query';
import { header, json } from '../shared/http/types';
import { jsonBody } from './body';
import { writeOptions, type MemoryCtx, type MemoryRouteHandler } from './context';
import { unifiedDiff } from './patch';
import { DiffQuery, HistoryQuery, MoveBody } from './schemas';

/**
 * History, diff and move over `/v1`: thin, the rules are the memory core's (`history.ts`,
 * `diffs.ts`, `writes.ts`).
 */
const memoryOf = (ctx: MemoryCtx): string => ctx.params.memory ?? '';

export const history: MemoryRouteHandler = async (ctx, deps) => {
  const q = validateQuery(HistoryQuery, { multi: [] }, ctx.query);
  const page = await deps.service.historyPage(ctx.caller, memoryOf(ctx), { path: q.path, limit: q.limit, cursor: q.cursor });
  return json({ commits: page.commits, ...(page.nextCursor !== undefined && { nextCursor: page.nextCursor }) }, page.rev ? { etag: `"${page.rev}"` } : {});
};

/** Does the client ask for JSON hunks rather than the unified text (the default)? */
export function wantsJsonDiff(accept: string | undefined): boolean {
  if (!accept) return false;
  let jsonQ = 0;
  let diffQ = 0;
  for (const range of accept.split(',')) {
    const [type, ...params] = range.split(';').map((s) => s.trim().toLowerCase());
    const qParam = params.find((x) => x.startsWith('q='));
    const q = qParam === undefined ? 1 : Number(qParam.slice(2));
    if (!Number.isFinite(q)) continue;
    if (type === 'application/json') jsonQ = Math.max(jsonQ, q);
    if (type === 'text/x-diff' || type === 'text/x-patch' || type === 'text/plain' || type === '*/*' || type === 'text/*') diffQ = Math.max(diffQ, q);
  }
  return jsonQ > 0 && jsonQ >= diffQ;
}

export const diff: MemoryRouteHandler = async (ctx, deps) => {
  const q = validateQuery(DiffQuery, { multi: [] }, ctx.query);
  const out = await deps.service.diff(ctx.caller, memoryOf(ctx), { from: q.from, to: q.to, path: q.path });
  const headers = { vary: 'Accept', 'cache-control': 'no-store' };
  if (wantsJsonDiff(header(ctx.event, 'accept'))) return json(out, headers);
  return { kind: 'text', body: unifiedDiff(out), contentType: 'text/x-diff; charset=utf-8', headers };
};

export const move: MemoryRouteHandler = async (ctx, deps) => {
  const body = jsonBody(ctx.event, MoveBody, deps.config.maxRequestBytes, { required: true });
  const out = await deps.service.moveNote(ctx.caller, memoryOf(ctx), { from: body.from, to: body.to, updateLinks: body.updateLinks }, writeOptions(ctx));
  return json({ from: out.from, to: out.to, rev: out.rev, updated: out.updated, linksUpdated: out.linksUpdated });
};
