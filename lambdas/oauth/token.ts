import { timingSafeEqual } from 'node:crypto';
import type { HttpEvent, HttpResult } from '../shared/http/types';
import { logger } from '../shared/logger';
import type { OAuthClient } from './client-store';
import { FAVORITES_SCOPE, MEMORY_SCOPES } from '../identity/principal';
import { FamilyRevokedError, type Grant, type IssuedTokens } from '../identity/token-store';
import { ClientMetadataError, registerClient } from './clients';
import { nowSeconds, type OAuthDeps } from './deps';
import { BodyTooLargeError, bodyText, formParams, isForm, jsonResult, oauthError, singles, type Params } from './protocol';
import { s256 } from './signed';

/** The JSON endpoints of the front: token (RFC 6749 §3.2, OAuth 2.1), revocation (RFC 7009), registration (RFC 7591). */

/** RFC 7636 §4.1: 43-128 characters of the unreserved set. */
const VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;

const invalidRequest = (description: string) => oauthError(400, 'invalid_request', description);
const invalidGrant = (description: string) => oauthError(400, 'invalid_grant', description);

function readForm(event: HttpEvent, deps: OAuthDeps): Params | HttpResult {
  if (!isForm(event)) return invalidRequest('the body must be application/x-www-form-urlencoded');
  try {
    return formParams(event, deps.config.maxBodyBytes);
  } catch (err) {
    if (err instanceof BodyTooLargeError) return invalidRequest(`the body exceeds ${err.limit} bytes`);
    throw err;
  }
}

function tokenResponse(tokens: IssuedTokens, grant: Grant): HttpResult {
  return jsonResult(200, {
    access_token: tokens.accessToken,
    token_type: 'Bearer',
    expires_in: tokens.accessExpiresAt - tokens.issuedAt,
    ...(tokens.refreshToken !== undefined && { refresh_token: tokens.refreshToken }),
    // A grant without memory scopes is a favorites-only sign-in (`scope=favorites`).
    scope: grant.scopes.length > 0 ? grant.scopes.join(' ') : FAVORITES_SCOPE,
  });
}

/** POST /oauth/token */
export async function token(event: HttpEvent, deps: OAuthDeps): Promise<HttpResult> {
  const form = readForm(event, deps);
  if (!(form instanceof Map)) return form;
  const g = singles(form, ['grant_type'] as const);
  if (!g.ok) return invalidRequest(`the parameter ${g.duplicate} was given more than once`);
  switch (g.values.grant_type) {
    case undefined:
      return invalidRequest('grant_type is required');
    case 'authorization_code':
      return authorizationCode(form, deps);
    case 'refresh_token':
      return refreshToken(form, deps);
    default:
      return oauthError(400, 'unsupported_grant_type', 'grant_type must be authorization_code or refresh_token');
  }
}

/** A resource indicator at the token endpoint, when given, must name this deployment's MCP resource. */
function wrongResource(form: Params, deps: OAuthDeps): HttpResult | undefined {
  const resources = form.get('resource') ?? [];
  if (resources.some((r) => r !== deps.config.audience)) return oauthError(400, 'invalid_target', `this server grants tokens for ${deps.config.audience} only`);
  return undefined;
}

async function authorizationCode(form: Params, deps: OAuthDeps): Promise<HttpResult> {
  const v = singles(form, ['code', 'redirect_uri', 'client_id', 'code_verifier'] as const);
  if (!v.ok) return invalidRequest(`the parameter ${v.duplicate} was given more than once`);
  const { code, redirect_uri: redirectUri, client_id: clientId, code_verifier: verifier } = v.values;
  if (clientId === undefined) return invalidRequest('client_id is required');
  if (code === undefined) return invalidRequest('code is required');
  if (redirectUri === undefined) return invalidRequest('redirect_uri is required');
  if (verifier === undefined) return invalidRequest('code_verifier is required (PKCE)');
  if (!VERIFIER.test(verifier)) return invalidRequest('code_verifier must be 43-128 characters of A-Z a-z 0-9 - . _ ~');
  const target = wrongResource(form, deps);
  if (target) return target;
  const client = await deps.resolver.resolve(clientId);
  if (!client.ok) return oauthError(401, 'invalid_client', 'unknown client_id');

  const redemption = await deps.tokens.redeemCode(code, clientId);
  if (redemption.status === 'invalid') return invalidGrant('the code is invalid, expired, or was issued to another client');
  if (redemption.status === 'replayed') return invalidGrant('the code was already used; every token issued from it is now revoked');
  const { grant, familyId } = redemption;
  // The code is spent either way; a failed check also closes its family, so nothing is ever issued from it.
  if (grant.redirectUri !== redirectUri) {
    await deps.tokens.revokeFamily(familyId);
    return invalidGrant('redirect_uri does not match the authorization request');
  }
  if (!sameString(s256(verifier), grant.codeChallenge)) {
    await deps.tokens.revokeFamily(familyId);
    return invalidGrant('code_verifier does not match the code_challenge');
  }
  const plain: Grant = {
    sub: grant.sub,
    clientId: grant.clientId,
    scopes: grant.scopes,
    ...(grant.memories !== undefined && { memories: grant.memories }),
    resource: grant.resource,
  };
  let tokens: IssuedTokens;
  try {
    tokens = await deps.tokens.issueTokens(plain, {
      familyId,
      accessTtlSeconds: deps.config.ttl.access,
      ...(client.client.grantTypes.includes('refresh_token') && { refreshTtlSeconds: deps.config.ttl.refresh }),
    });
  } catch (err) {
    // A replay of the same code revoked the family between the redemption and this issue.
    if (err instanceof FamilyRevokedError) return invalidGrant('the code was already used; every token issued from it is now revoked');
    throw err;
  }
  await keepClientAlive(client.client, deps);
  return tokenResponse(tokens, plain);
}

async function refreshToken(form: Params, deps: OAuthDeps): Promise<HttpResult> {
  const v = singles(form, ['refresh_token', 'client_id', 'scope'] as const);
  if (!v.ok) return invalidRequest(`the parameter ${v.duplicate} was given more than once`);
  const { refresh_token: refresh, client_id: clientId, scope } = v.values;
  if (clientId === undefined) return invalidRequest('client_id is required');
  if (refresh === undefined) return invalidRequest('refresh_token is required');
  // RFC 6749 §6 lets a refresh narrow the scope, never widen it. The grant is what the user
  // consented to, so the response always carries the grant's scope; asking for an unknown scope,
  // or for one the grant does not hold, is invalid_scope (and leaves the refresh token usable).
  // `favorites` is held by every grant (any token may pin), so asking for it again narrows nothing.
  const requested = (scope ?? '').split(' ').filter((s) => s !== '' && s !== 'offline_access' && s !== FAVORITES_SCOPE);
  const unknown = requested.find((s) => !(MEMORY_SCOPES as readonly string[]).includes(s));
  if (unknown !== undefined) return oauthError(400, 'invalid_scope', `unknown scope "${unknown.slice(0, 50)}"`);
  const target = wrongResource(form, deps);
  if (target) return target;
  const client = await deps.resolver.resolve(clientId);
  if (!client.ok) return oauthError(401, 'invalid_client', 'unknown client_id');
  const rotation = await deps.tokens.rotateRefreshToken(
    refresh,
    clientId,
    { accessTtlSeconds: deps.config.ttl.access, refreshTtlSeconds: deps.config.ttl.refresh },
    requested,
  );
  if (rotation.status === 'scope_not_granted') {
    return oauthError(400, 'invalid_scope', `the grant holds ${rotation.granted.join(' ') || 'no memory scope'}; a refresh cannot add scopes`);
  }
  if (rotation.status === 'invalid') return invalidGrant('the refresh token is invalid, expired, revoked, or was issued to another client');
  if (rotation.status === 'reused') return invalidGrant('the refresh token was already used; the whole grant is now revoked');
  await keepClientAlive(client.client, deps);
  return tokenResponse(rotation.tokens, rotation.grant);
}

/**
 * A registered client lives `idleClient` past its last grant. The extension is written only once
 * the remaining life drops below the refresh lifetime plus half the slack between the two, so an
 * active client costs one write a month at the defaults and never expires under a live refresh
 * token. Metadata-document clients are fetched again instead. The tokens are already issued: a
 * failed extension is logged, not turned into a failed grant.
 */
async function keepClientAlive(client: OAuthClient, deps: OAuthDeps): Promise<void> {
  if (client.metadataExpiresAt !== undefined) return;
  const now = nowSeconds(deps);
  const { refresh, idleClient } = deps.config.ttl;
  if (client.expiresAt !== undefined && client.expiresAt >= now + refresh + (idleClient - refresh) / 2) return;
  try {
    await deps.clients.extend(client.clientId, now + idleClient);
  } catch (err) {
    logger.warn('could not extend the client registration', { clientId: client.clientId, err: err instanceof Error ? err.message : String(err) });
  }
}

/** POST /oauth/revoke (RFC 7009): 200 for every well-formed request, known token or not. */
export async function revoke(event: HttpEvent, deps: OAuthDeps): Promise<HttpResult> {
  const form = readForm(event, deps);
  if (!(form instanceof Map)) return form;
  const v = singles(form, ['token', 'token_type_hint', 'client_id'] as const);
  if (!v.ok) return invalidRequest(`the parameter ${v.duplicate} was given more than once`);
  if (v.values.token === undefined) return invalidRequest('token is required');
  // A public client proves nothing by naming itself; when it does name itself, only its own tokens go.
  await deps.tokens.revoke(v.values.token, v.values.client_id);
  return { statusCode: 200, headers: { 'cache-control': 'no-store' }, body: '' };
}

/** POST /oauth/register (RFC 7591). */
export async function register(event: HttpEvent, deps: OAuthDeps): Promise<HttpResult> {
  let text: string;
  try {
    text = bodyText(event, deps.config.maxBodyBytes);
  } catch (err) {
    if (err instanceof BodyTooLargeError) return oauthError(400, 'invalid_client_metadata', `the body exceeds ${err.limit} bytes`);
    throw err;
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return oauthError(400, 'invalid_client_metadata', 'the body is not valid JSON');
  }
  try {
    const { response } = await registerClient(deps.clients, body, nowSeconds(deps), deps.config.ttl.unusedClient);
    return jsonResult(201, response);
  } catch (err) {
    if (err instanceof ClientMetadataError) return oauthError(400, err.error, err.message);
    throw err;
  }
}

function sameString(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
