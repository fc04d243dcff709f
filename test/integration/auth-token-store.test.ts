import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { ensureTables, authTableDefinitions } from '../../bin/local-stack/provision';
import { DynamoClientStore, type OAuthClient } from '../../lambdas/oauth/client-store';
import { hashToken } from '../../lambdas/identity/opaque-tokens';
import { DynamoTokenStore, type AuthorizationCodeGrant, type Grant } from '../../lambdas/identity/token-store';
import { documentClient, dynamoClient } from '../../lambdas/shared/aws/clients';
import { randomName } from '../support/auth-jwks';

/** The store the OAuth front (next round) writes: codes, refresh rotation, reuse detection, revocation. */
const ddb = dynamoClient({ region: 'us-east-1', dynamoEndpoint: process.env.TEST_DYNAMODB_ENDPOINT });
const doc = documentClient(ddb);
const tables = { tokens: randomName('tokens'), clients: randomName('clients'), favorites: randomName('fav') };
const store = new DynamoTokenStore(doc, tables.tokens);
const TTL = { accessTtlSeconds: 600, refreshTtlSeconds: 3600 };

const grant: Grant = {
  sub: 'alice',
  clientId: 'client-a',
  scopes: ['memory:read', 'memory:write'],
  memories: ['default'],
  resource: 'https://mcp.example.com/mcp',
};
const codeGrant: AuthorizationCodeGrant = {
  ...grant,
  redirectUri: 'http://127.0.0.1:33418/callback',
  codeChallenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
};

beforeAll(async () => {
  await ensureTables(ddb, authTableDefinitions(tables));
});
afterAll(() => ddb.destroy());

async function status(token: string): Promise<string> {
  return (await store.findAccessToken(token)).status;
}

it('stores only hashes of the credentials it issues', async () => {
  const issued = await store.issueTokens(grant, TTL);
  const raw = await doc.send(new GetCommand({ TableName: tables.tokens, Key: { pk: `at#${hashToken(issued.accessToken)}` } }));
  expect(raw.Item).toMatchObject({ kind: 'access', sub: 'alice', familyId: issued.familyId, expiresAt: issued.accessExpiresAt });
  expect(JSON.stringify(raw.Item)).not.toContain(issued.accessToken.split('.')[1]);
});

it('counts lifetimes from the moment of issue, so expires_in is the TTL even when the clock ticks during the write', async () => {
  let t = 1_800_000_000_999;
  const ticking = new DynamoTokenStore(doc, tables.tokens, () => (t += 700));
  const issued = await ticking.issueTokens(grant, TTL);
  expect(issued.accessExpiresAt - issued.issuedAt).toBe(TTL.accessTtlSeconds);
  expect((issued.refreshExpiresAt as number) - issued.issuedAt).toBe(TTL.refreshTtlSeconds);
});

describe('authorization codes', () => {
  it('redeems once for the client it was issued to; a replay revokes every token issued from it', async () => {
    const code = await store.saveCode(codeGrant, 60);
    await expect(store.redeemCode(code, 'client-b')).resolves.toEqual({ status: 'invalid' });
    const first = await store.redeemCode(code, 'client-a');
    expect(first).toMatchObject({ status: 'redeemed', grant: codeGrant });
    if (first.status !== 'redeemed') throw new Error('unreachable');
    const tokens = await store.issueTokens(first.grant, { familyId: first.familyId, ...TTL });
    expect(await status(tokens.accessToken)).toBe('active');

    await expect(store.redeemCode(code, 'client-a')).resolves.toEqual({ status: 'replayed' });
    expect(await status(tokens.accessToken)).toBe('revoked');
    await expect(store.rotateRefreshToken(tokens.refreshToken as string, 'client-a', TTL)).resolves.toEqual({ status: 'invalid' });
  });

  it('refuses an expired code', async () => {
    const past = new DynamoTokenStore(doc, tables.tokens, () => Date.now() - 120_000);
    const code = await past.saveCode(codeGrant, 60);
    await expect(store.redeemCode(code, 'client-a')).resolves.toEqual({ status: 'invalid' });
  });
});

describe('refresh tokens', () => {
  it('rotate: each is single use, the new pair works, the family lives on', async () => {
    const first = await store.issueTokens(grant, TTL);
    const rotated = await store.rotateRefreshToken(first.refreshToken as string, 'client-a', TTL);
    expect(rotated).toMatchObject({ status: 'rotated', grant });
    if (rotated.status !== 'rotated') throw new Error('unreachable');
    expect(rotated.tokens.familyId).toBe(first.familyId);
    expect(rotated.tokens.refreshToken).not.toBe(first.refreshToken);
    expect(await status(rotated.tokens.accessToken)).toBe('active');
    expect(await status(first.accessToken)).toBe('active');
  });

  it('reuse of a rotated refresh token revokes the whole family', async () => {
    const first = await store.issueTokens(grant, TTL);
    const rotated = await store.rotateRefreshToken(first.refreshToken as string, 'client-a', TTL);
    if (rotated.status !== 'rotated') throw new Error('rotation failed');
    await expect(store.rotateRefreshToken(first.refreshToken as string, 'client-a', TTL)).resolves.toEqual({ status: 'reused' });
    expect(await status(first.accessToken)).toBe('revoked');
    expect(await status(rotated.tokens.accessToken)).toBe('revoked');
    await expect(store.rotateRefreshToken(rotated.tokens.refreshToken as string, 'client-a', TTL)).resolves.toEqual({ status: 'invalid' });
  });

  it("refuses another client's refresh token without touching it", async () => {
    const first = await store.issueTokens(grant, TTL);
    await expect(store.rotateRefreshToken(first.refreshToken as string, 'client-b', TTL)).resolves.toEqual({ status: 'invalid' });
    await expect(store.rotateRefreshToken(first.refreshToken as string, 'client-a', TTL)).resolves.toMatchObject({ status: 'rotated' });
  });

  // Strict OAuth 2.1 rotation, no grace period (README): of two concurrent rotations exactly one spends
  // the token; the other is a reuse, which revokes the whole family, the winner's new tokens included.
  // The winner answers `rotated` when it issued before the revocation, `invalid` when after.
  it('of two concurrent rotations of the same token exactly one spends it, and the reuse revokes the family', async () => {
    for (let round = 0; round < 5; round++) {
      const first = await store.issueTokens(grant, TTL);
      const results = await Promise.all([
        store.rotateRefreshToken(first.refreshToken as string, 'client-a', TTL),
        store.rotateRefreshToken(first.refreshToken as string, 'client-a', TTL),
      ]);
      const statuses = results.map((r) => r.status);
      expect(statuses.filter((s) => s === 'reused')).toHaveLength(1);
      expect(statuses.filter((s) => s === 'rotated' || s === 'invalid')).toHaveLength(1);
      const winner = results.find((r) => r.status === 'rotated');
      if (winner?.status === 'rotated') expect(await status(winner.tokens.accessToken)).toBe('revoked');
      expect(await status(first.accessToken)).toBe('revoked');
    }
  });
});

describe('revocation (RFC 7009)', () => {
  it('revokes an access token alone, but only for its own client', async () => {
    const issued = await store.issueTokens(grant, TTL);
    await store.revoke(issued.accessToken, 'client-b');
    expect(await status(issued.accessToken)).toBe('active');
    await store.revoke(issued.accessToken, 'client-a');
    expect(await status(issued.accessToken)).toBe('revoked');
    await expect(store.rotateRefreshToken(issued.refreshToken as string, 'client-a', TTL)).resolves.toMatchObject({ status: 'rotated' });
  });

  it('revokes the family with a refresh token, and ignores unknown or junk tokens', async () => {
    const issued = await store.issueTokens(grant, TTL);
    await store.revoke('not-a-token');
    await store.revoke(issued.refreshToken as string);
    expect(await status(issued.accessToken)).toBe('revoked');
    await expect(store.issueTokens(grant, { familyId: issued.familyId, ...TTL })).rejects.toThrow(/revoked/);
  });
});

describe('client store', () => {
  it('registers a client once and reads it back', async () => {
    const clients = new DynamoClientStore(doc, tables.clients);
    const client: OAuthClient = {
      clientId: randomName('client'),
      redirectUris: ['http://127.0.0.1:33418/callback'],
      clientName: 'Test MCP client',
      grantTypes: ['authorization_code', 'refresh_token'],
      tokenEndpointAuthMethod: 'none',
      createdAt: 1_800_000_000,
    };
    await expect(clients.register(client)).resolves.toBe(true);
    await expect(clients.register({ ...client, clientName: 'Impostor' })).resolves.toBe(false);
    await expect(clients.get(client.clientId)).resolves.toEqual(client);
    await expect(clients.get('nobody')).resolves.toBeUndefined();
  });

  it("extends a client's expiry only later, and never brings back one that is gone", async () => {
    const clients = new DynamoClientStore(doc, tables.clients);
    // Expiries in the future of the real clock: DynamoDB Local deletes an item as soon as its TTL has
    // passed (fixed dates would turn this test into a race once the calendar reaches them).
    const base = Math.floor(Date.now() / 1000) + 10 * 24 * 3600;
    const client: OAuthClient = {
      clientId: randomName('client'),
      redirectUris: ['https://c.example/cb'],
      grantTypes: ['authorization_code'],
      tokenEndpointAuthMethod: 'none',
      createdAt: 1_800_000_000,
    };
    await clients.register(client);
    await clients.extend(client.clientId, base + 1000);
    expect((await clients.get(client.clientId))?.expiresAt).toBe(base + 1000);
    await clients.extend(client.clientId, base + 500);
    expect((await clients.get(client.clientId))?.expiresAt).toBe(base + 1000);
    await clients.extend('gone', base + 1000);
    await expect(clients.get('gone')).resolves.toBeUndefined();
  });
});
