import type { PersonalTokens } from '../identity/personal-token-service';
import { json } from '../shared/http/types';
import { jsonBody } from './body';
import type { MemoryRouteHandler } from './context';
import type { MemoryApiDeps } from './deps';
import { ApiError } from './errors';
import { CreateTokenBody } from './schemas';

/**
 * `/v1/tokens`: the signed-in user's personal access tokens. Thin: the rules (who, what a token may
 * hold, the ceiling) are `identity/personal-token-service.ts`'s. Not idempotent by key (`api.ts`):
 * the secret of a creation must not be remembered anywhere.
 */
function tokensOf(deps: MemoryApiDeps): PersonalTokens {
  if (!deps.personalTokens) throw new ApiError('NOT_FOUND', 'Personal access tokens are managed at /v1/tokens of the API, not here');
  return deps.personalTokens;
}

export const listTokens: MemoryRouteHandler = async (ctx, deps) => json({ tokens: await tokensOf(deps).list(ctx.principal) });

export const createToken: MemoryRouteHandler = async (ctx, deps) => {
  const body = jsonBody(ctx.event, CreateTokenBody, deps.config.maxRequestBytes, { required: true });
  return json(await tokensOf(deps).create(ctx.principal, body), {}, 201);
};

export const revokeToken: MemoryRouteHandler = async (ctx, deps) => {
  const id = ctx.params.id ?? '';
  await tokensOf(deps).revoke(ctx.principal, id);
  return json({ id, deleted: true });
};
