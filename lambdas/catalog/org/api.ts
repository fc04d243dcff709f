import { AllowListBusy, AllowListConflict, AllowListError } from '../../catalog-core';
import { isAuthError, refusalMessage, type Principal } from '../../identity/principal';
import { createPipeline, lambdaEntry, operationsOf, type ApiPolicy, type Problem } from '../../shared/http/pipeline';
import { ValidationError } from '../../shared/http/query';
import type { HttpResult } from '../../shared/http/types';
import { EXPOSED_HEADERS } from '../cors';
import { rateHeaders } from '../envelope';
import { getAllowList, putAllowList } from './admin';
import type { OrgDeps } from './deps';
import { OrgError, orgErrorResult } from './errors';
import { getOrgServerVersion, listOrgServers, listOrgServerVersions } from './registry';
import { ORG_ADMIN_OPERATIONS, ORG_API, ORG_FN } from './routes';

/**
 * The organisation registry's policy for the shared pipeline: the registry's error shape, open
 * CORS (IDEs' web views and the gallery call it cross-origin), the catalog's per-IP limits. The
 * registry routes are anonymous; the admin routes need a verified token of a member of the admin
 * group (401 without a good one, 403 outside the group, 503 while the sign-in keys cannot be read).
 */
const operations = operationsOf<OrgDeps, Principal | undefined>({ listOrgServers, listOrgServerVersions, getOrgServerVersion, getAllowList, putAllowList });

function cors(): Record<string, string> {
  return { 'access-control-allow-origin': '*', 'access-control-expose-headers': `${EXPOSED_HEADERS}, ETag` };
}

function problem(p: Problem): HttpResult {
  switch (p.kind) {
    case 'not_found':
      return orgErrorResult(new OrgError(404, 'Not found'));
    case 'method_not_allowed':
      return orgErrorResult(new OrgError(405, `${p.method} is not allowed here`, undefined, { allow: p.allowed.join(', ') }));
    case 'rate_limited':
      return orgErrorResult(
        new OrgError(429, 'Too many requests; retry after the delay in Retry-After', undefined, { 'retry-after': String(p.retryAfterSeconds) }),
      );
    case 'internal':
      return orgErrorResult(new OrgError(500, 'An internal error occurred; please retry later'));
    case 'too_large':
      return orgErrorResult(new OrgError(413, `The request body is larger than ${p.maxBytes} bytes`));
    case 'forbidden_origin':
      return orgErrorResult(new OrgError(403, 'This origin answers requests through the public URL only'));
    case 'starting':
      return orgErrorResult(new OrgError(503, 'The service is starting or a dependency is unavailable; retry shortly', undefined, { 'retry-after': '1' }));
  }
}

function error(err: unknown): HttpResult | undefined {
  if (err instanceof OrgError) return orgErrorResult(err);
  if (err instanceof ValidationError) return orgErrorResult(new OrgError(400, err.message, err.details));
  if (err instanceof AllowListError) return orgErrorResult(new OrgError(400, err.message, err.details));
  if (err instanceof AllowListConflict) return orgErrorResult(new OrgError(412, err.message, undefined, err.current ? { etag: err.current } : {}));
  if (err instanceof AllowListBusy) return orgErrorResult(new OrgError(503, err.message, undefined, { 'retry-after': '1' }));
  if (isAuthError(err)) {
    if (err.kind === 'unavailable')
      return orgErrorResult(new OrgError(503, 'The sign-in service cannot be reached; retry shortly', undefined, { 'retry-after': '5' }));
    const challenge = err.reason === 'missing' ? 'Bearer' : 'Bearer error="invalid_token"';
    return orgErrorResult(new OrgError(401, refusalMessage(err), undefined, { 'www-authenticate': challenge }));
  }
  return undefined;
}

export const ORG_POLICY: ApiPolicy<OrgDeps, Principal | undefined> = {
  name: 'org',
  fn: ORG_FN,
  routes: ORG_API.routes,
  preflightFallback: ['GET'],
  operations,
  // Only the admin routes verify the bearer (a failure is answered 401/503); the registry is anonymous.
  auth: {
    mode: 'required',
    verify: async (deps, authorization, route) => (ORG_ADMIN_OPERATIONS.has(route.operationId) ? deps.verifier.verify(authorization) : undefined),
  },
  authorize: (ctx) => {
    if (!ORG_ADMIN_OPERATIONS.has(ctx.route.operationId)) return;
    const group = ctx.deps.config.adminGroup;
    if (!ctx.principal?.groups?.includes(group)) throw new OrgError(403, `Only members of the ${group} group may read or replace the allow-list`);
  },
  limit: {
    limiter: (deps) => deps.limiter,
    bucket: ({ event, deps }) => deps.callers.resolve(event),
    // The admin API writes: the limiter decides before the operation runs.
    timing: 'first',
    headers: rateHeaders,
  },
  preflight: (allowed) => ({
    statusCode: 204,
    headers: {
      ...cors(),
      'access-control-allow-methods': [...allowed, 'OPTIONS'].join(', '),
      'access-control-allow-headers': 'Authorization, Content-Type, If-Match, If-None-Match',
      'access-control-max-age': '86400',
    },
    body: '',
  }),
  problem,
  error,
  headers: cors,
  originSecret: (deps) => deps.originSecret,
};

export const handleOrgRequest = createPipeline(ORG_POLICY);

/** The Lambda entry. */
export function createOrgHandler(getDeps: () => Promise<OrgDeps>) {
  return lambdaEntry(ORG_POLICY, getDeps, handleOrgRequest);
}
