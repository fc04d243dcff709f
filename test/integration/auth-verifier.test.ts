import { ensureTables, authTableDefinitions } from '../../bin/local-stack/provision';
import type { AuthConfig } from '../../lambdas/identity/config';
import type { FetchLike } from '../../lambdas/identity/jwt';
import { mintOpaque, newFamilyId } from '../../lambdas/identity/opaque-tokens';
import { AuthError, type Principal } from '../../lambdas/identity/principal';
import { DynamoTokenStore, type Grant } from '../../lambdas/identity/token-store';
import { createTokenVerifier, type TokenVerifier } from '../../lambdas/identity/verifier';
import { documentClient, dynamoClient } from '../../lambdas/shared/aws/clients';
import {
  claims,
  deadUrl,
  forgeHs256WithPublicKey,
  forgeNone,
  forgeRs256,
  forgeWithStrangerKey,
  nowSeconds,
  randomName,
  startJwksServer,
  tamper,
  testIssuer,
  type JwksServer,
  type TestIssuer,
} from '../support/auth-jwks';

const ISSUER = 'http://localhost:3999';
const AUDIENCE = 'http://localhost:3999/mcp';

const ddb = dynamoClient({ region: 'us-east-1', dynamoEndpoint: process.env.TEST_DYNAMODB_ENDPOINT });
const doc = documentClient(ddb);
const tokenTable = randomName('auth-tokens');

let t: TestIssuer;
let jwks: JwksServer;
let store: DynamoTokenStore;

function localConfig(over: Partial<AuthConfig> = {}): AuthConfig {
  return {
    audience: AUDIENCE,
    jwt: { kind: 'local', issuer: ISSUER, jwksUri: jwks.jwksUri },
    tokenTable,
    clientTable: 'unused',
    opaqueCacheSeconds: 30,
    jwksTimeoutMs: 2000,
    region: 'us-east-1',
    ...over,
  };
}

async function failure(verifier: TokenVerifier, header: string | undefined): Promise<AuthError> {
  try {
    await verifier.verify(header);
  } catch (err) {
    if (err instanceof AuthError) return err;
    throw err;
  }
  throw new Error('expected the token to be refused');
}

beforeAll(async () => {
  t = testIssuer(ISSUER);
  jwks = await startJwksServer(() => t.issuer.jwks());
  await ensureTables(ddb, authTableDefinitions({ tokens: tokenTable, clients: randomName('c'), favorites: randomName('f') }).slice(0, 1));
  store = new DynamoTokenStore(doc, tokenTable);
});
afterAll(async () => {
  await jwks.close();
  ddb.destroy();
});

describe('local-issuer JWTs (the aws-jwt-verify path Cognito tokens take)', () => {
  it('accepts a valid token and maps it to a principal', async () => {
    const verifier = createTokenVerifier(localConfig());
    const token = t.issuer.signAccessToken({ sub: 'alice', scope: 'memory:read memory:write', memories: ['work'], ttlSeconds: 600, audience: AUDIENCE });
    const p = await verifier.verify(`Bearer ${token}`);
    expect(p).toEqual<Principal>({
      sub: 'alice',
      scopes: ['memory:read', 'memory:write'],
      memories: ['work'],
      clientId: 'local-cli',
      kind: 'jwt',
      expiresAt: expect.any(Number),
    });
    expect(p.expiresAt).toBeGreaterThan(nowSeconds());
  });

  it('reads the memories claim as a string too, and its absence as every memory', async () => {
    const verifier = createTokenVerifier(localConfig());
    const base = { issuer: ISSUER, audience: AUDIENCE };
    await expect(verifier.verify(`Bearer ${forgeRs256(t, claims(base, { memories: 'work default' }))}`)).resolves.toMatchObject({
      memories: ['work', 'default'],
    });
    const all = await verifier.verify(`Bearer ${forgeRs256(t, claims(base))}`);
    expect(all.memories).toBeUndefined();
    expect('memories' in all).toBe(false);
  });

  const base = () => ({ issuer: ISSUER, audience: AUDIENCE });
  const attacks: Array<[string, () => string | undefined, AuthError['reason']]> = [
    ['no token', () => undefined, 'missing'],
    ['not a JWT', () => 'Bearer not-a-jwt', 'malformed'],
    ['expired', () => `Bearer ${forgeRs256(t, claims(base(), { iat: nowSeconds() - 7200, exp: nowSeconds() - 60 }))}`, 'expired'],
    ['not yet valid', () => `Bearer ${forgeRs256(t, claims(base(), { nbf: nowSeconds() + 3600 }))}`, 'not-yet-valid'],
    ['of another issuer', () => `Bearer ${forgeRs256(t, claims({ ...base(), issuer: 'http://evil.example' }))}`, 'wrong-issuer'],
    ['for another audience', () => `Bearer ${forgeRs256(t, claims({ ...base(), audience: 'http://localhost:3999/other' }))}`, 'wrong-audience'],
    ['alg none, no signature', () => `Bearer ${forgeNone(t, claims(base()))}`, 'malformed'],
    ['alg none, junk signature', () => `Bearer ${forgeNone(t, claims(base()))}c2lnbmF0dXJl`, 'bad-algorithm'],
    ['HS256 signed with the public key', () => `Bearer ${forgeHs256WithPublicKey(t, claims(base()))}`, 'bad-algorithm'],
    ['tampered payload', () => `Bearer ${tamper(forgeRs256(t, claims(base())), (p) => (p.sub = 'mallory'))}`, 'bad-signature'],
    ['tampered memories claim', () => `Bearer ${tamper(forgeRs256(t, claims(base(), { memories: ['work'] })), (p) => delete p.memories)}`, 'bad-signature'],
    ['signed by a stranger key under our kid', () => `Bearer ${forgeWithStrangerKey(t, claims(base()))}`, 'bad-signature'],
    ['an unknown kid', () => `Bearer ${forgeRs256(t, claims(base()), { kid: 'someone-else' })}`, 'unknown-key'],
    ['no expiry', () => `Bearer ${forgeRs256(t, claims(base(), { exp: undefined }))}`, 'invalid-claims'],
    ['no subject', () => `Bearer ${forgeRs256(t, claims(base(), { sub: '' }))}`, 'invalid-claims'],
    ['an ID token', () => `Bearer ${forgeRs256(t, claims(base(), { token_use: 'id' }))}`, 'invalid-claims'],
    ['a malformed memories claim', () => `Bearer ${forgeRs256(t, claims(base(), { memories: 7 }))}`, 'invalid-claims'],
  ];

  it.each(attacks)('refuses a token %s as unauthenticated', async (_what, header, reason) => {
    const err = await failure(createTokenVerifier(localConfig()), header());
    expect(err).toMatchObject({ kind: 'unauthenticated', reason });
  });

  it('answers unavailable when the JWKS host is down or broken, and recovers', async () => {
    const token = `Bearer ${forgeRs256(t, claims(base()))}`;
    const down = createTokenVerifier(localConfig({ jwt: { kind: 'local', issuer: ISSUER, jwksUri: `${await deadUrl()}/.well-known/jwks.json` } }));
    await expect(failure(down, token)).resolves.toMatchObject({ kind: 'unavailable', reason: 'jwks-unavailable' });

    let now = Date.now();
    const flaky = createTokenVerifier(localConfig(), { clock: () => now });
    jwks.setStatus(500);
    try {
      await expect(failure(flaky, token)).resolves.toMatchObject({ kind: 'unavailable', reason: 'jwks-unavailable' });
    } finally {
      jwks.setStatus(200);
    }
    // Right after a failure the verifier backs off instead of waiting out the host once per request.
    const hits = jwks.hits();
    await expect(failure(flaky, token)).resolves.toMatchObject({ kind: 'unavailable' });
    expect(jwks.hits()).toBe(hits);
    now += 2500;
    await expect(flaky.verify(token)).resolves.toMatchObject({ sub: 'alice' });
  });

  it('refuses forged algorithms and foreign issuers without calling the JWKS host, even while it is down', async () => {
    const down = createTokenVerifier(localConfig({ jwt: { kind: 'local', issuer: ISSUER, jwksUri: `${await deadUrl()}/.well-known/jwks.json` } }));
    await expect(failure(down, `Bearer ${forgeNone(t, claims(base()))}`)).resolves.toMatchObject({ kind: 'unauthenticated' });
    await expect(failure(down, `Bearer ${forgeHs256WithPublicKey(t, claims(base()))}`)).resolves.toMatchObject({ kind: 'unauthenticated' });
    await expect(failure(down, `Bearer ${forgeRs256(t, claims({ ...base(), issuer: 'http://evil.example' }))}`)).resolves.toMatchObject({
      kind: 'unauthenticated',
      reason: 'wrong-issuer',
    });
  });

  it('fetches the JWKS once and then verifies from its cache', async () => {
    const verifier = createTokenVerifier(localConfig());
    const before = jwks.hits();
    for (let i = 0; i < 5; i++) await verifier.verify(`Bearer ${forgeRs256(t, claims(base()))}`);
    expect(jwks.hits() - before).toBe(1);
  });
});

describe('Cognito access tokens', () => {
  const POOL = 'us-east-1_TestPool1';
  const COGNITO_ISS = `https://cognito-idp.us-east-1.amazonaws.com/${POOL}`;
  const RESOURCE_SERVER = 'https://mcp.example.com/mcp';
  let cognito: TestIssuer;
  let cognitoJwks: JwksServer;
  let fetched: string[];
  let verifier: TokenVerifier;

  beforeAll(async () => {
    cognito = testIssuer(COGNITO_ISS);
    cognitoJwks = await startJwksServer(() => cognito.issuer.jwks());
    fetched = [];
    // Cognito's real JWKS URL, answered from loopback: tests never reach the internet.
    const fetchImpl: FetchLike = (url, init) => {
      fetched.push(url);
      return fetch(cognitoJwks.jwksUri, init);
    };
    verifier = createTokenVerifier(localConfig({ jwt: { kind: 'cognito', userPoolId: POOL, clientIds: ['web-client'], resourceServerId: RESOURCE_SERVER } }), {
      fetchImpl,
    });
  });
  afterAll(() => cognitoJwks.close());

  const cognitoClaims = (extra: Record<string, unknown> = {}) => ({
    iss: COGNITO_ISS,
    sub: 'c0ffee00-0000-4000-8000-000000000001',
    token_use: 'access',
    client_id: 'web-client',
    scope: `${RESOURCE_SERVER}/memory:read openid https://other.example/memory:write`,
    auth_time: nowSeconds(),
    iat: nowSeconds(),
    exp: nowSeconds() + 3600,
    username: 'alice',
    ...extra,
  });

  it('verifies issuer, token use and client id, and normalises resource-server scopes', async () => {
    const p = await verifier.verify(`Bearer ${forgeRs256(cognito, cognitoClaims())}`);
    expect(p).toMatchObject({ sub: 'c0ffee00-0000-4000-8000-000000000001', scopes: ['memory:read'], clientId: 'web-client', kind: 'jwt' });
    expect(p.memories).toBeUndefined();
    expect(fetched).toEqual([`${COGNITO_ISS}/.well-known/jwks.json`]);
  });

  it.each<[string, Record<string, unknown>, AuthError['reason']]>([
    ['of another app client', { client_id: 'someone-elses-client' }, 'wrong-audience'],
    ['an ID token', { token_use: 'id', aud: 'web-client', client_id: undefined }, 'invalid-claims'],
    ['of another user pool', { iss: 'https://cognito-idp.us-east-1.amazonaws.com/us-east-1_Other' }, 'wrong-issuer'],
    ['expired', { exp: nowSeconds() - 10 }, 'expired'],
  ])('refuses a Cognito token %s', async (_what, extra, reason) => {
    await expect(failure(verifier, `Bearer ${forgeRs256(cognito, cognitoClaims(extra))}`)).resolves.toMatchObject({ kind: 'unauthenticated', reason });
  });

  it('refuses a local-issuer token: one issuer per deployment', async () => {
    await expect(failure(verifier, `Bearer ${forgeRs256(t, claims({ issuer: ISSUER, audience: AUDIENCE }))}`)).resolves.toMatchObject({
      reason: 'wrong-issuer',
    });
  });
});

describe('opaque access tokens (DynamoDB Local)', () => {
  const grant = (over: Partial<Grant> = {}): Grant => ({
    sub: 'alice',
    clientId: 'mcp-client-1',
    scopes: ['memory:read'],
    memories: ['default', 'work'],
    resource: AUDIENCE,
    ...over,
  });

  it('accepts an issued token and reads its grant', async () => {
    const issued = await store.issueTokens(grant(), { accessTtlSeconds: 600 });
    const p = await createTokenVerifier(localConfig(), { tokens: store }).verify(`Bearer ${issued.accessToken}`);
    expect(p).toEqual<Principal>({
      sub: 'alice',
      scopes: ['memory:read'],
      memories: ['default', 'work'],
      clientId: 'mcp-client-1',
      kind: 'opaque',
      expiresAt: issued.accessExpiresAt,
    });
  });

  it('keeps "every memory" (no memories) distinct from "no memory" (empty list)', async () => {
    const verifier = createTokenVerifier(localConfig(), { tokens: store });
    const all = await store.issueTokens(grant({ memories: undefined }), { accessTtlSeconds: 600 });
    const none = await store.issueTokens(grant({ memories: [] }), { accessTtlSeconds: 600 });
    expect((await verifier.verify(`Bearer ${all.accessToken}`)).memories).toBeUndefined();
    expect((await verifier.verify(`Bearer ${none.accessToken}`)).memories).toEqual([]);
  });

  it.each<[string, () => Promise<string>, AuthError['reason']]>([
    ['never issued', async () => mintOpaque('access', newFamilyId()), 'unknown-token'],
    [
      'revoked',
      async () => {
        const { accessToken } = await store.issueTokens(grant(), { accessTtlSeconds: 600 });
        await store.revoke(accessToken);
        return accessToken;
      },
      'revoked',
    ],
    [
      'of a revoked family',
      async () => {
        const issued = await store.issueTokens(grant(), { accessTtlSeconds: 600, refreshTtlSeconds: 3600 });
        await store.revoke(issued.refreshToken as string);
        return issued.accessToken;
      },
      'revoked',
    ],

    [
      'granted for another resource',
      async () => (await store.issueTokens(grant({ resource: 'https://other.example/mcp' }), { accessTtlSeconds: 600 })).accessToken,
      'wrong-audience',
    ],
    [
      'a refresh token presented as a bearer',
      async () => (await store.issueTokens(grant(), { accessTtlSeconds: 600, refreshTtlSeconds: 3600 })).refreshToken as string,
      'malformed',
    ],
    ['an opaque-looking token of the wrong shape', async () => 'mcpat_short', 'unknown-token'],
  ])('refuses a token %s as unauthenticated', async (_what, make, reason) => {
    const token = await make();
    await expect(failure(createTokenVerifier(localConfig(), { tokens: store }), `Bearer ${token}`)).resolves.toMatchObject({ kind: 'unauthenticated', reason });
  });

  // Expired is seen by a reader whose clock is past the token's expiry, not by a token issued in the
  // past: DynamoDB Local deletes an item within a second of its TTL (the expiry), and the refusal
  // would then be 'unknown-token', not 'expired'.
  it('refuses an expired token as unauthenticated (expired)', async () => {
    const { accessToken } = await store.issueTokens(grant(), { accessTtlSeconds: 3600 });
    const later = new DynamoTokenStore(doc, tokenTable, () => Date.now() + 7200_000);
    await expect(failure(createTokenVerifier(localConfig(), { tokens: later }), `Bearer ${accessToken}`)).resolves.toMatchObject({
      kind: 'unauthenticated',
      reason: 'expired',
    });
  });

  it('refuses opaque tokens where no token table is configured', async () => {
    const { accessToken } = await store.issueTokens(grant(), { accessTtlSeconds: 600 });
    await expect(failure(createTokenVerifier(localConfig()), `Bearer ${accessToken}`)).resolves.toMatchObject({ kind: 'unauthenticated' });
  });

  it('answers unavailable when the token table cannot be reached', async () => {
    const { accessToken } = await store.issueTokens(grant(), { accessTtlSeconds: 600 });
    const downClient = dynamoClient({ region: 'us-east-1', dynamoEndpoint: await deadUrl() });
    try {
      const down = new DynamoTokenStore(documentClient(downClient), tokenTable);
      await expect(failure(createTokenVerifier(localConfig(), { tokens: down }), `Bearer ${accessToken}`)).resolves.toMatchObject({
        kind: 'unavailable',
        reason: 'token-store-unavailable',
      });
      const missing = new DynamoTokenStore(doc, randomName('no-such-table'));
      await expect(failure(createTokenVerifier(localConfig(), { tokens: missing }), `Bearer ${accessToken}`)).resolves.toMatchObject({ kind: 'unavailable' });
    } finally {
      downClient.destroy();
    }
  });

  it('trusts a verified token for the cache period only: a revocation lands once it lapses', async () => {
    let now = Date.now();
    const verifier = createTokenVerifier(localConfig({ opaqueCacheSeconds: 30 }), { tokens: store, clock: () => now });
    const { accessToken } = await store.issueTokens(grant(), { accessTtlSeconds: 600 });
    await expect(verifier.verify(`Bearer ${accessToken}`)).resolves.toMatchObject({ sub: 'alice' });
    await store.revoke(accessToken);
    await expect(verifier.verify(`Bearer ${accessToken}`)).resolves.toMatchObject({ sub: 'alice' });
    now += 31_000;
    await expect(failure(verifier, `Bearer ${accessToken}`)).resolves.toMatchObject({ reason: 'revoked' });
    // A fresh instance (another Lambda) sees the revocation at once.
    await expect(failure(createTokenVerifier(localConfig(), { tokens: store }), `Bearer ${accessToken}`)).resolves.toMatchObject({ reason: 'revoked' });
  });

  it('serves repeated refusals from its cache, so a stuck client costs no reads', async () => {
    let reads = 0;
    const counting = new DynamoTokenStore(doc, tokenTable);
    const original = counting.findAccessToken.bind(counting);
    counting.findAccessToken = (token) => {
      reads++;
      return original(token);
    };
    const verifier = createTokenVerifier(localConfig(), { tokens: counting });
    const token = mintOpaque('access', newFamilyId());
    for (let i = 0; i < 3; i++) await expect(failure(verifier, `Bearer ${token}`)).resolves.toMatchObject({ reason: 'unknown-token' });
    expect(reads).toBe(1);
  });
});
