import * as z from 'zod';
import type { HttpEvent, HttpResult } from '../shared/http/types';
import { logger } from '../shared/logger';
import { FAVORITES_SCOPE, MEMORY_NAME, MEMORY_SCOPES, type MemoryScope } from '../identity/principal';
import type { OAuthClient } from './client-store';
import { isRegisteredRedirect, isUrlClientId } from './clients';
import { UpstreamError } from './cognito';
import { nowSeconds, type OAuthDeps } from './deps';
import { BodyTooLargeError, formParams, htmlResult, queryParams, readCookie, redirectResult, single, singles, withQuery, type Params } from './protocol';
import { consentPage, errorPage, localSignInPage, type ConsentView } from './pages';
import { bindingOf, randomId } from './signed';

/**
 * The authorization endpoint and the pages behind it. A pending authorization (the checked
 * request plus a nonce) travels as a signed value: the sign-in form's hidden field locally, the
 * `state` of the round trip through Cognito in AWS, then the consent form's hidden field with the
 * signed-in subject added. Each is bound to a browser cookie, so a value lifted from one browser
 * (login CSRF, a forwarded link) is refused in another, and the Lambda keeps no session.
 */

const BROWSER_COOKIE = 'mcp_oauth_b';
const PURPOSE_TX = 'authorize-tx';
const PURPOSE_CONSENT = 'authorize-consent';
const PKCE_LABEL = 'cognito-pkce';

const Tx = z.object({
  /** client_id */
  c: z.string(),
  /** Label of the client on the pages. */
  l: z.string(),
  /** redirect_uri (checked against the client's list). */
  r: z.string(),
  /** code_challenge (S256). */
  cc: z.string(),
  /** Memory scopes asked for; empty only for a favorites-only request (`f`). */
  s: z.array(z.enum(MEMORY_SCOPES)),
  /** `scope=favorites` alone: a sign-in that grants no memory at all (the catalog site's pins). */
  f: z.literal(true).optional(),
  /** resource (the audience). */
  res: z.string(),
  st: z.string().optional(),
  /** Hash of the browser cookie. */
  b: z.string(),
  n: z.string(),
});
type Tx = z.infer<typeof Tx>;
const Consent = Tx.extend({ sub: z.string().min(1) });
type Consent = z.infer<typeof Consent>;

const USERNAME = /^[A-Za-z0-9._@-]{1,64}$/;
const CHALLENGE = /^[A-Za-z0-9_-]{43}$/;
const MAX_STATE = 1024;

function page400(title: string, message: string): HttpResult {
  return htmlResult(400, errorPage(title, message));
}

const EXPIRED = 'This sign-in has expired or was started in another browser. Start again from your application (cookies must be enabled).';

export function clientLabel(client: OAuthClient): string {
  if (client.clientName) return client.clientName;
  return isUrlClientId(client.clientId) ? new URL(client.clientId).host : client.clientId;
}

/** The browser-binding cookie: the existing one, or a new one to set. */
function browser(event: HttpEvent, deps: OAuthDeps): { value: string; setCookie?: string } {
  const existing = readCookie(event, BROWSER_COOKIE);
  if (existing && /^[A-Za-z0-9_-]{22}$/.test(existing)) return { value: existing };
  const value = randomId(16);
  const secure = deps.config.secureCookies ? '; Secure' : '';
  // Lax: sent on the top-level redirect back from Cognito and on our own form posts, never on a cross-site POST.
  return { value, setCookie: `${BROWSER_COOKIE}=${value}; Path=/oauth; HttpOnly; SameSite=Lax${secure}` };
}

function boundToThisBrowser(event: HttpEvent, signedBinding: string): boolean {
  const cookie = readCookie(event, BROWSER_COOKIE);
  return cookie !== undefined && bindingOf(cookie) === signedBinding;
}

/**
 * Requested scopes: a subset of the memory scopes, both when absent; `offline_access` is tolerated
 * (refresh tokens come anyway). `favorites` alone asks for a token that reaches no memory: favorites
 * accept any valid token (spec 1), so the catalog site's sign-in need not hold a memory grant. Beside
 * a memory scope it adds nothing (every token may pin).
 */
function parseScopes(raw: string | undefined): { scopes: MemoryScope[]; favoritesOnly: boolean } | { unknown: string } {
  if (raw === undefined) return { scopes: [...MEMORY_SCOPES], favoritesOnly: false };
  const asked = raw.split(' ').filter((s) => s !== '');
  const unknown = asked.find((s) => s !== 'offline_access' && s !== FAVORITES_SCOPE && !(MEMORY_SCOPES as readonly string[]).includes(s));
  if (unknown !== undefined) return { unknown };
  const scopes = MEMORY_SCOPES.filter((s) => asked.includes(s));
  if (scopes.length === 0 && asked.includes(FAVORITES_SCOPE)) return { scopes: [], favoritesOnly: true };
  return { scopes: scopes.length > 0 ? scopes : [...MEMORY_SCOPES], favoritesOnly: false };
}

/** GET /oauth/authorize */
export async function authorize(event: HttpEvent, deps: OAuthDeps): Promise<HttpResult> {
  const q = queryParams(event);
  const ids = singles(q, ['client_id', 'redirect_uri'] as const);
  if (!ids.ok) return page400('Invalid authorization request', `The parameter ${ids.duplicate} was given more than once.`);
  const clientId = ids.values.client_id;
  const redirectUri = ids.values.redirect_uri;
  // Until the client and its redirect URI are known good, nothing is sent anywhere: an error page.
  if (!clientId) return page400('Invalid authorization request', 'The request names no client (client_id is missing).');
  const resolved = await deps.resolver.resolve(clientId);
  if (!resolved.ok) return page400('Unknown application', `This application is not known to this server: ${resolved.reason}.`);
  const client = resolved.client;
  if (!redirectUri) return page400('Invalid authorization request', 'The request has no redirect_uri.');
  if (!isRegisteredRedirect(client.redirectUris, redirectUri)) {
    return page400('Invalid authorization request', 'The redirect_uri is not one this application registered.');
  }

  const { issuer, audience } = deps.config;
  const stateParam = single(q, 'state');
  const state = stateParam.ok ? stateParam.value : undefined;
  const back = (error: string, description: string) => redirectResult(withQuery(redirectUri, { error, error_description: description, state, iss: issuer }));

  const rest = singles(q, ['response_type', 'code_challenge', 'code_challenge_method', 'state', 'scope'] as const);
  if (!rest.ok) return back('invalid_request', `the parameter ${rest.duplicate} was given more than once`);
  const p = rest.values;
  if (p.response_type === undefined) return back('invalid_request', 'response_type is required');
  if (p.response_type !== 'code') return back('unsupported_response_type', 'only response_type=code is supported');
  if (p.code_challenge === undefined) return back('invalid_request', 'code_challenge is required (PKCE with S256)');
  if (p.code_challenge_method !== 'S256') return back('invalid_request', 'code_challenge_method must be S256 (plain is not accepted)');
  if (!CHALLENGE.test(p.code_challenge)) return back('invalid_request', 'code_challenge is not an S256 challenge (43 base64url characters)');
  if (state !== undefined && state.length > MAX_STATE) return back('invalid_request', `state is longer than ${MAX_STATE} characters`);
  const requested = parseScopes(p.scope);
  if ('unknown' in requested)
    return back('invalid_scope', `unknown scope "${requested.unknown.slice(0, 50)}" (supported: ${[...MEMORY_SCOPES, FAVORITES_SCOPE].join(' ')})`);
  // RFC 8707: the resource may be repeated; every value must be this deployment's MCP resource.
  const resources = q.get('resource') ?? [];
  if (resources.some((r) => r !== audience)) return back('invalid_target', `this server grants tokens for ${audience} only`);

  const b = browser(event, deps);
  const now = nowSeconds(deps);
  const tx: Tx = {
    c: client.clientId,
    l: clientLabel(client).slice(0, 200),
    r: redirectUri,
    cc: p.code_challenge,
    s: requested.scopes,
    ...(requested.favoritesOnly && { f: true as const }),
    res: audience,
    ...(state !== undefined && { st: state }),
    b: bindingOf(b.value),
    n: randomId(16),
  };
  const txToken = deps.signer.sign(PURPOSE_TX, tx, now + deps.config.ttl.transaction);
  const cookies = b.setCookie ? [b.setCookie] : undefined;
  if (deps.upstream) {
    const location = deps.upstream.authorizeUrl({
      state: txToken,
      codeVerifier: deps.signer.derive(PKCE_LABEL, tx.n),
      redirectUri: `${issuer}/oauth/callback`,
    });
    return redirectResult(location, cookies);
  }
  return htmlResult(200, localSignInPage({ tx: txToken, clientLabel: tx.l, favoritesOnly: tx.f === true }), cookies);
}

/** POST /oauth/login: the local development sign-in (any user name, no password). */
export async function localLogin(event: HttpEvent, deps: OAuthDeps): Promise<HttpResult> {
  if (deps.upstream) return htmlResult(404, errorPage('Not found', 'Sign-in happens on the hosted sign-in page in this deployment.'));
  const form = readForm(event, deps);
  if (!form) return page400('Invalid request', 'The form is too large.');
  const txToken = single(form, 'tx');
  const tx = deps.signer.verify(PURPOSE_TX, txToken.ok ? txToken.value : undefined, nowSeconds(deps), Tx);
  if (!tx || !boundToThisBrowser(event, tx.b)) return page400('Sign-in expired', EXPIRED);
  const name = single(form, 'username');
  const username = name.ok ? name.value?.trim() : undefined;
  if (!username || !USERNAME.test(username)) {
    return htmlResult(
      400,
      localSignInPage({
        tx: txToken.ok ? (txToken.value ?? '') : '',
        clientLabel: tx.l,
        favoritesOnly: tx.f === true,
        error: 'Enter a user name of 1-64 letters, digits or . _ @ -',
      }),
    );
  }
  return consentFor(tx, username, deps);
}

/** GET /oauth/callback: back from Cognito's hosted sign-in with a code for the front's own client. */
export async function upstreamCallback(event: HttpEvent, deps: OAuthDeps): Promise<HttpResult> {
  if (!deps.upstream) return htmlResult(404, errorPage('Not found', 'This deployment signs users in locally.'));
  const q = queryParams(event);
  const v = singles(q, ['code', 'state', 'error'] as const);
  if (!v.ok) return page400('Invalid sign-in response', `The parameter ${v.duplicate} was given more than once.`);
  const tx = deps.signer.verify(PURPOSE_TX, v.values.state, nowSeconds(deps), Tx);
  if (!tx || !boundToThisBrowser(event, tx.b)) return page400('Sign-in expired', EXPIRED);
  if (v.values.error !== undefined || v.values.code === undefined) {
    return redirectResult(
      withQuery(tx.r, { error: 'access_denied', error_description: 'sign-in was cancelled or refused', state: tx.st, iss: deps.config.issuer }),
    );
  }
  let sub: string;
  try {
    ({ sub } = await deps.upstream.exchange({
      code: v.values.code,
      codeVerifier: deps.signer.derive(PKCE_LABEL, tx.n),
      redirectUri: `${deps.config.issuer}/oauth/callback`,
    }));
  } catch (err) {
    if (!(err instanceof UpstreamError)) throw err;
    logger.warn('upstream sign-in failed', { reason: err.message });
    return htmlResult(502, errorPage('Sign-in failed', 'The sign-in service could not confirm who you are. Start again from your application.'));
  }
  return consentFor(tx, sub, deps);
}

function consentFor(tx: Tx, sub: string, deps: OAuthDeps, extra: Partial<ConsentView> = {}, status = 200, token?: string): HttpResult {
  const consent: Consent = { ...tx, sub };
  const signed = token ?? deps.signer.sign(PURPOSE_CONSENT, consent, nowSeconds(deps) + deps.config.ttl.transaction);
  return htmlResult(
    status,
    consentPage({ consent: signed, sub, clientLabel: tx.l, redirectHost: new URL(tx.r).host, scopes: tx.s, favoritesOnly: tx.f === true, ...extra }),
  );
}

/** POST /oauth/consent: the user's decision, then a single-use code back to the client. */
export async function consent(event: HttpEvent, deps: OAuthDeps): Promise<HttpResult> {
  const form = readForm(event, deps);
  if (!form) return page400('Invalid request', 'The form is too large.');
  const token = single(form, 'consent');
  const signed = token.ok ? token.value : undefined;
  const c = deps.signer.verify(PURPOSE_CONSENT, signed, nowSeconds(deps), Consent);
  if (!c || !boundToThisBrowser(event, c.b)) return page400('Consent expired', EXPIRED);
  const { issuer } = deps.config;
  const decision = single(form, 'decision');
  if (!decision.ok || decision.value !== 'approve') {
    return redirectResult(withQuery(c.r, { error: 'access_denied', error_description: 'the user denied access', state: c.st, iss: issuer }));
  }
  if (c.f) return issueCode(c, [], [], deps);
  const mode = single(form, 'memories_mode');
  const listParam = single(form, 'memories');
  const list = listParam.ok ? (listParam.value ?? '') : '';
  const again = (error: string) =>
    consentFor(c, c.sub, deps, { error, memoriesMode: mode.ok && mode.value === 'some' ? 'some' : 'all', memoriesList: list }, 400, signed);

  const chosen = (form.get('scope') ?? []).filter((s): s is MemoryScope => (c.s as string[]).includes(s));
  const scopes = MEMORY_SCOPES.filter((s) => chosen.includes(s));
  if (scopes.length === 0) return again('Choose at least one permission, or deny.');
  let memories: string[] | undefined;
  if (mode.ok && mode.value === 'some') {
    const names = [...new Set(list.split(/[\s,]+/).filter((n) => n !== ''))];
    if (names.length === 0) return again('Name at least one memory, or choose all memories.');
    if (names.length > 100) return again('Name at most 100 memories.');
    const bad = names.find((n) => !MEMORY_NAME.test(n));
    if (bad !== undefined) return again(`"${bad.slice(0, 70)}" is not a memory name (1-64 characters: a-z 0-9 _ -).`);
    memories = names;
  } else if (!mode.ok || (mode.value !== undefined && mode.value !== 'all')) {
    return again('Choose all memories or name some.');
  }
  return issueCode(c, scopes, memories, deps);
}

/** The single-use code of an approved consent, sent back to the client's redirect URI. */
async function issueCode(c: Consent, scopes: MemoryScope[], memories: string[] | undefined, deps: OAuthDeps): Promise<HttpResult> {
  const code = await deps.tokens.saveCode(
    {
      sub: c.sub,
      clientId: c.c,
      scopes,
      ...(memories !== undefined && { memories }),
      resource: c.res,
      redirectUri: c.r,
      codeChallenge: c.cc,
    },
    deps.config.ttl.code,
  );
  return redirectResult(withQuery(c.r, { code, state: c.st, iss: deps.config.issuer }));
}

function readForm(event: HttpEvent, deps: OAuthDeps): Params | undefined {
  try {
    return formParams(event, deps.config.maxBodyBytes);
  } catch (err) {
    if (err instanceof BodyTooLargeError) return undefined;
    throw err;
  }
}
