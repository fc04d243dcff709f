import { createHash, randomBytes } from 'node:crypto';
import { ensureTables, authTableDefinitions } from '../../bin/local-stack/provision';
import { createLocalServer, listen, type RunningServer } from '../../bin/local-stack/server';
import { DynamoClientStore } from '../../lambdas/oauth/client-store';
import { createOAuthHandler } from '../../lambdas/oauth/api';
import { loadOAuthFrontConfig } from '../../lambdas/oauth/config';
import type { OAuthDeps } from '../../lambdas/oauth/deps';
import { OAUTH_API, OAUTH_WELL_KNOWN_API } from '../../lambdas/oauth/routes';
import { createOAuthDeps } from '../../lambdas/oauth/wiring';
import { DynamoTokenStore } from '../../lambdas/identity/token-store';
import { documentClient, dynamoClient } from '../../lambdas/shared/aws/clients';
import { forgeRs256, nowSeconds, testIssuer, type TestIssuer } from '../support/auth-jwks';
import { hiddenField, pkcePair, TestBrowser } from '../support/oauth-browser';

/**
 * The AWS mode of the front: the sign-in goes to Cognito's hosted pages with the front's own app
 * client and PKCE, comes back to /oauth/callback, and the front redeems Cognito's code and verifies
 * the ID token before the consent. Cognito (its token endpoint and JWKS) is a fake behind the
 * injected fetch, so nothing leaves the machine.
 */
const REGION = 'eu-west-1';
const POOL = `${REGION}_TestPool1`;
const COGNITO_ISSUER = `https://cognito-idp.${REGION}.amazonaws.com/${POOL}`;
const DOMAIN = 'https://mcp-test.auth.eu-west-1.amazoncognito.com';
const FRONT_CLIENT = 'front-client-id';
const REDIRECT = 'http://127.0.0.1:9/cb';

let server: RunningServer;
let deps: OAuthDeps;
let signer: TestIssuer;
let stranger: TestIssuer;
let tokens: DynamoTokenStore;
/** What the fake Cognito saw and will answer. */
const cognito = { challenge: '', idTokenSub: 'cognito-sub-123', forge: false };

async function fakeCognito(input: string, init?: RequestInit): Promise<Response> {
  if (input === `${COGNITO_ISSUER}/.well-known/jwks.json`) return Response.json(signer.issuer.jwks());
  if (input === `${DOMAIN}/oauth2/token` && init?.method === 'POST') {
    const form = new URLSearchParams(String(init.body));
    const verifierOk =
      createHash('sha256')
        .update(form.get('code_verifier') ?? '')
        .digest('base64url') === cognito.challenge;
    if (form.get('grant_type') !== 'authorization_code' || form.get('client_id') !== FRONT_CLIENT || form.get('code') !== 'cognito-code' || !verifierOk) {
      return Response.json({ error: 'invalid_grant' }, { status: 400 });
    }
    const iat = nowSeconds();
    const idToken = forgeRs256(cognito.forge ? stranger : signer, {
      iss: COGNITO_ISSUER,
      sub: cognito.idTokenSub,
      aud: FRONT_CLIENT,
      token_use: 'id',
      auth_time: iat,
      iat,
      exp: iat + 300,
    });
    return Response.json({ id_token: idToken, access_token: 'unused', token_type: 'Bearer', expires_in: 300 });
  }
  throw new Error(`the test reached for ${input}`);
}

beforeAll(async () => {
  const endpoint = process.env.TEST_DYNAMODB_ENDPOINT;
  if (!endpoint) throw new Error('test backends are not running (jest globalSetup)');
  const id = `${process.pid}-${randomBytes(3).toString('hex')}`;
  const names = { tokens: `oauth-cog-tokens-${id}`, clients: `oauth-cog-clients-${id}`, favorites: `oauth-cog-fav-${id}` };
  const ddb = dynamoClient({ region: 'us-east-1', dynamoEndpoint: endpoint });
  await ensureTables(ddb, authTableDefinitions(names));
  const doc = documentClient(ddb);
  tokens = new DynamoTokenStore(doc, names.tokens);
  signer = testIssuer(COGNITO_ISSUER);
  stranger = testIssuer(COGNITO_ISSUER);
  const oauth = createOAuthHandler(async () => deps);
  server = await listen(
    createLocalServer({
      apis: [
        { table: OAUTH_API, functions: { oauth } },
        { table: OAUTH_WELL_KNOWN_API, functions: { oauth } },
      ],
      ready: () => true,
    }),
    0,
  );
  const config = loadOAuthFrontConfig({
    AUTH_MODE: 'cognito',
    PUBLIC_URL: server.url,
    COGNITO_DOMAIN: DOMAIN,
    OAUTH_COGNITO_CLIENT_ID: FRONT_CLIENT,
    COGNITO_USER_POOL_ID: POOL,
  });
  deps = createOAuthDeps(config, {
    tokens,
    clients: new DynamoClientStore(doc, names.clients),
    keyRing: { current: { id: 3, secret: randomBytes(32) } },
    fetchImpl: fakeCognito,
  });
}, 60_000);

afterAll(() => server?.close());

async function newClient(): Promise<string> {
  const res = await fetch(`${server.url}/oauth/register`, { method: 'POST', body: JSON.stringify({ redirect_uris: [REDIRECT], client_name: 'Cognito test' }) });
  return ((await res.json()) as { client_id: string }).client_id;
}

/** Starts an authorization and returns Cognito's authorize URL the browser was sent to. */
async function start(browser: TestBrowser, clientId: string, challenge: string): Promise<URL> {
  const u = new URL(`${server.url}/oauth/authorize`);
  for (const [k, v] of Object.entries({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: REDIRECT,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    state: 's1',
    resource: deps.config.audience,
  })) {
    u.searchParams.set(k, v);
  }
  const res = await browser.get(u);
  expect(res.status).toBe(302);
  const loc = new URL(res.headers.get('location') as string);
  cognito.challenge = loc.searchParams.get('code_challenge') ?? '';
  return loc;
}

describe('sign-in through Cognito', () => {
  it("redirects to the hosted sign-in with the front's client and PKCE, then redeems Cognito's code and shows the consent for its sub", async () => {
    const clientId = await newClient();
    const browser = new TestBrowser();
    const { verifier, challenge } = pkcePair();
    const loc = await start(browser, clientId, challenge);
    expect(`${loc.origin}${loc.pathname}`).toBe(`${DOMAIN}/oauth2/authorize`);
    expect(Object.fromEntries(loc.searchParams)).toMatchObject({
      response_type: 'code',
      client_id: FRONT_CLIENT,
      redirect_uri: `${server.url}/oauth/callback`,
      scope: 'openid',
      code_challenge_method: 'S256',
    });
    // The front's own challenge, never the MCP client's.
    expect(cognito.challenge).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(cognito.challenge).not.toBe(challenge);

    const back = await browser.get(`${server.url}/oauth/callback?code=cognito-code&state=${encodeURIComponent(loc.searchParams.get('state') as string)}`);
    expect(back.status).toBe(200);
    const page = await back.text();
    expect(page).toContain('cognito-sub-123');
    const done = await browser.postForm(`${server.url}/oauth/consent`, [
      ['consent', hiddenField(page, 'consent')],
      ['scope', 'memory:read'],
      ['scope', 'memory:write'],
      ['memories_mode', 'all'],
      ['decision', 'approve'],
    ]);
    expect(done.status).toBe(302);
    const cb = new URL(done.headers.get('location') as string);
    expect(cb.searchParams.get('state')).toBe('s1');
    const res = await fetch(`${server.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code: cb.searchParams.get('code') as string,
        code_verifier: verifier,
        client_id: clientId,
        redirect_uri: REDIRECT,
      }).toString(),
    });
    expect(res.status).toBe(200);
    const { access_token: access } = (await res.json()) as { access_token: string };
    const found = await tokens.findAccessToken(access);
    expect(found.status).toBe('active');
    expect(found.status === 'active' && found.record.sub).toBe('cognito-sub-123');
  });

  it('refuses a callback in another browser, and an ID token Cognito did not sign', async () => {
    const clientId = await newClient();
    const browser = new TestBrowser();
    const loc = await start(browser, clientId, pkcePair().challenge);
    const state = encodeURIComponent(loc.searchParams.get('state') as string);
    const elsewhere = await new TestBrowser().get(`${server.url}/oauth/callback?code=cognito-code&state=${state}`);
    expect(elsewhere.status).toBe(400);
    cognito.forge = true;
    try {
      const forged = await browser.get(`${server.url}/oauth/callback?code=cognito-code&state=${state}`);
      expect(forged.status).toBe(502);
      expect(await forged.text()).not.toContain('consent');
    } finally {
      cognito.forge = false;
    }
    const badCode = await browser.get(`${server.url}/oauth/callback?code=other-code&state=${state}`);
    expect(badCode.status).toBe(502);
  });

  it('sends a cancelled sign-in back to the client as access_denied, and has no local sign-in', async () => {
    const clientId = await newClient();
    const browser = new TestBrowser();
    const loc = await start(browser, clientId, pkcePair().challenge);
    const res = await browser.get(`${server.url}/oauth/callback?error=access_denied&state=${encodeURIComponent(loc.searchParams.get('state') as string)}`);
    expect(res.status).toBe(302);
    const cb = new URL(res.headers.get('location') as string);
    expect(cb.searchParams.get('error')).toBe('access_denied');
    expect(cb.searchParams.get('state')).toBe('s1');
    expect(
      (
        await browser.postForm(`${server.url}/oauth/login`, [
          ['tx', 'x'],
          ['username', 'alice'],
        ])
      ).status,
    ).toBe(404);
  });
});
