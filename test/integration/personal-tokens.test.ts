import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { authTableDefinitions, ensureTables } from '../../bin/local-stack/provision';
import { loadPersonalTokenLimits, type AuthConfig } from '../../lambdas/identity/config';
import { PersonalTokenError, PersonalTokens } from '../../lambdas/identity/personal-token-service';
import { DynamoPersonalTokenStore } from '../../lambdas/identity/personal-token-store';
import { PersonalTokenVerifier } from '../../lambdas/identity/personal-token-verifier';
import { AuthError, type Principal } from '../../lambdas/identity/principal';
import { createTokenVerifier } from '../../lambdas/identity/verifier';
import { documentClient, dynamoClient } from '../../lambdas/shared/aws/clients';
import { randomName } from '../support/auth-jwks';

/**
 * Personal access tokens against DynamoDB Local: the store, the verifier and the rules, with the
 * clock held by the test (expiry, the cache's life and the last-used interval are crossed by moving
 * it, never by waiting). "Instances" are separate verifiers over the same table, each with its own
 * cache, as separate Lambda instances are. Over HTTP, MCP and git: personal-tokens-http.test.ts.
 */
const ddb = dynamoClient({ region: 'us-east-1', dynamoEndpoint: process.env.TEST_DYNAMODB_ENDPOINT });
const doc = documentClient(ddb);
const table = randomName('pat-tokens');
// From the real time (to the second), as the README's tests do: DynamoDB Local deletes an item soon after its TTL passes.
const START = Math.floor(Date.now() / 1000) * 1000;
let now = START;
const clock = () => now;
const DAY = 86_400_000;

/** DynamoDB writes sent, by command (counted below the document client). */
const writes: string[] = [];
ddb.middlewareStack.add(
  (next, context) => async (args) => {
    if (/^(Update|Put|TransactWrite|Delete)/.test(context.commandName ?? '')) writes.push(context.commandName ?? '');
    return next(args);
  },
  { step: 'initialize', name: 'countWrites' },
);

const limits = { ...loadPersonalTokenLimits({}), maxPerUser: 3 };
const store = new DynamoPersonalTokenStore(doc, table, clock);

/** One instance: its own verifier (and cache) and a service that makes it forget what it revokes. */
function instance(cacheSeconds = 30) {
  const verifier = new PersonalTokenVerifier(store, { cacheSeconds, lastUsedSeconds: limits.lastUsedSeconds, clock });
  const tokens = new PersonalTokens(store, limits, { clock, onRevoke: (id) => verifier.forget(id) });
  return { verifier, tokens };
}

const signIn = (sub: string, over: Partial<Principal> = {}): Principal => ({
  sub,
  scopes: ['memory:read', 'memory:write'],
  kind: 'jwt',
  expiresAt: 0,
  ...over,
});

async function refusal(p: Promise<unknown>): Promise<{ kind: string; reason?: string }> {
  try {
    await p;
  } catch (err) {
    if (err instanceof AuthError) return { kind: 'auth', reason: err.reason };
    if (err instanceof PersonalTokenError) return { kind: err.kind };
    throw err;
  }
  throw new Error('expected a refusal');
}

beforeAll(async () => {
  await ensureTables(ddb, authTableDefinitions({ tokens: table, clients: randomName('c'), favorites: randomName('f') }).slice(0, 1));
});
afterAll(() => ddb.destroy());
beforeEach(() => {
  now = START;
});

test('the secret is answered once and stored only as its hash; the list shows metadata, newest first', async () => {
  const { tokens } = instance();
  const first = await tokens.create(signIn('ann'), { name: 'laptop', scopes: ['memory:read'], memories: ['work'] });
  now += 1000;
  const second = await tokens.create(signIn('ann'), { name: 'cron', scopes: ['memory:read', 'memory:write'], pathPrefix: 'daily', expiresInDays: 7 });
  expect(second).toEqual({
    id: expect.stringMatching(/^[0-9A-Za-z]{12}$/),
    name: 'cron',
    scopes: ['memory:read', 'memory:write'],
    pathPrefix: 'daily',
    created: new Date(now).toISOString().replace(/\.\d+Z$/, '.000Z'),
    expires: new Date(Math.floor(now / 1000) * 1000 + 7 * DAY).toISOString(),
    token: expect.stringMatching(new RegExp(`^mcpm_pat_${second.id}_`)),
  });
  const listed = await tokens.list(signIn('ann'));
  expect(listed.map((t) => t.name)).toEqual(['cron', 'laptop']);
  expect(JSON.stringify(listed)).not.toMatch(/mcpm_pat_|hash/);
  expect(listed[1]).toEqual({ ...first, token: undefined, memories: ['work'] } as unknown as (typeof listed)[1]);
  const { Items } = await doc.send(new ScanCommand({ TableName: table }));
  const stored = JSON.stringify(Items);
  for (const t of [first.token, second.token]) expect(stored).not.toContain(t.slice(22));
  expect(stored).toContain(first.id);
});

test('verified beside the JWT path: the principal carries the grant, the token id and the folder', async () => {
  const { verifier, tokens } = instance();
  const made = await tokens.create(signIn('bea', { memories: ['work', 'home'] }), { name: 'x', scopes: ['memory:read'], pathPrefix: 'notes/' });
  const bearer = createTokenVerifier(
    {
      audience: 'http://unused/mcp',
      jwt: { kind: 'local', issuer: 'http://unused', jwksUri: 'http://127.0.0.1:9/jwks' },
      clientTable: 'x',
      opaqueCacheSeconds: 30,
      jwksTimeoutMs: 100,
      region: 'us-east-1',
    },
    { personal: verifier },
  );
  await expect(bearer.verify(`Bearer ${made.token}`)).resolves.toEqual({
    sub: 'bea',
    scopes: ['memory:read'],
    memories: ['work', 'home'],
    clientId: `pat:${made.id}`,
    kind: 'pat',
    expiresAt: Math.floor(now / 1000) + 90 * 86400,
    tokenId: made.id,
    pathPrefix: 'notes',
  });
  // A verifier built without personal tokens (the catalog's, favorites') refuses them without a read.
  const elsewhere = createTokenVerifier({
    audience: 'http://unused/mcp',
    jwt: { kind: 'local', issuer: 'http://unused', jwksUri: 'http://127.0.0.1:9/jwks' },
    clientTable: 'x',
    opaqueCacheSeconds: 30,
    jwksTimeoutMs: 100,
    region: 'us-east-1',
  } satisfies AuthConfig);
  await expect(refusal(elsewhere.verify(`Bearer ${made.token}`))).resolves.toEqual({ kind: 'auth', reason: 'unknown-token' });
});

test('a forged secret with a real id is refused, and does not poison the real token on that instance', async () => {
  const { verifier, tokens } = instance();
  const made = await tokens.create(signIn('cid'), { name: 'x', scopes: ['memory:read'] });
  const forged = (await tokens.create(signIn('cid'), { name: 'y', scopes: ['memory:read'] })).token.replace(/^mcpm_pat_[0-9A-Za-z]{12}/, `mcpm_pat_${made.id}`);
  // The id is the real one, the rest another valid-looking token: the checksum no longer holds.
  await expect(refusal(verifier.verify(forged))).resolves.toEqual({ kind: 'auth', reason: 'malformed' });
  const { crc32 } = await import('node:zlib');
  const body = forged.slice(0, -6);
  let v = crc32(body);
  let sum = '';
  for (let i = 0; i < 6; i++) {
    sum = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'[v % 62] + sum;
    v = Math.floor(v / 62);
  }
  const wellFormed = body + sum;
  await expect(refusal(verifier.verify(wellFormed))).resolves.toEqual({ kind: 'auth', reason: 'unknown-token' });
  await expect(verifier.verify(made.token)).resolves.toMatchObject({ sub: 'cid' });
});

test('revoked: refused at once by the instance that revoked it, by another once its cache lapses (the bound), never before', async () => {
  const a = instance();
  const b = instance();
  const made = await a.tokens.create(signIn('dee'), { name: 'x', scopes: ['memory:read'] });
  await a.verifier.verify(made.token);
  await b.verifier.verify(made.token);
  await a.tokens.revoke(signIn('dee'), made.id);
  await expect(refusal(a.verifier.verify(made.token))).resolves.toEqual({ kind: 'auth', reason: 'revoked' });
  // B trusts its cached verification for AUTH_TOKEN_CACHE_SECONDS (30): the stated bound.
  now += 29_000;
  await expect(b.verifier.verify(made.token)).resolves.toMatchObject({ sub: 'dee' });
  now += 1_000;
  await expect(refusal(b.verifier.verify(made.token))).resolves.toEqual({ kind: 'auth', reason: 'revoked' });
  // A new instance sees it at once; it is gone from the list, and a second revocation is 404.
  await expect(refusal(instance().verifier.verify(made.token))).resolves.toEqual({ kind: 'auth', reason: 'revoked' });
  expect((await a.tokens.list(signIn('dee'))).map((t) => t.id)).not.toContain(made.id);
  await expect(refusal(a.tokens.revoke(signIn('dee'), made.id))).resolves.toEqual({ kind: 'not_found' });
});

test('expired: refused from its expiry on, by a cached instance too, and then no longer listed nor counted', async () => {
  const { verifier, tokens } = instance();
  const made = await tokens.create(signIn('eve'), { name: 'x', scopes: ['memory:read'], expiresInDays: 1 });
  const expiry = Math.floor(START / 1000) * 1000 + DAY;
  now = expiry - 1000;
  await expect(verifier.verify(made.token)).resolves.toMatchObject({ sub: 'eve' });
  now = expiry;
  await expect(refusal(verifier.verify(made.token))).resolves.toEqual({ kind: 'auth', reason: 'expired' });
  expect(await tokens.list(signIn('eve'))).toEqual([]);
  await expect(refusal(tokens.revoke(signIn('eve'), made.id))).resolves.toEqual({ kind: 'not_found' });
});

test('another user can neither list nor revoke the token, and it keeps working', async () => {
  const { verifier, tokens } = instance();
  const made = await tokens.create(signIn('fay'), { name: 'x', scopes: ['memory:read'] });
  expect(await tokens.list(signIn('gus'))).toEqual([]);
  await expect(refusal(tokens.revoke(signIn('gus'), made.id))).resolves.toEqual({ kind: 'not_found' });
  await expect(verifier.verify(made.token)).resolves.toMatchObject({ sub: 'fay' });
});

test('managed with a sign-in only: never with a personal access token, nor with the favorites sign-in', async () => {
  const { verifier, tokens } = instance();
  const made = await tokens.create(signIn('hal'), { name: 'x', scopes: ['memory:read', 'memory:write'] });
  const pat = await verifier.verify(made.token);
  await expect(refusal(tokens.create(pat, { name: 'child', scopes: ['memory:read'] }))).resolves.toEqual({ kind: 'forbidden' });
  await expect(refusal(tokens.list(pat))).resolves.toEqual({ kind: 'forbidden' });
  await expect(refusal(tokens.revoke(pat, made.id))).resolves.toEqual({ kind: 'forbidden' });
  const favoritesOnly = signIn('hal', { kind: 'opaque', scopes: [], memories: [] });
  await expect(refusal(tokens.create(favoritesOnly, { name: 'x', scopes: ['memory:read'] }))).resolves.toEqual({ kind: 'forbidden' });
  await expect(refusal(tokens.list(favoritesOnly))).resolves.toEqual({ kind: 'forbidden' });
  // An OAuth front token of a consent with memory scopes may.
  await expect(tokens.create(signIn('hal', { kind: 'opaque' }), { name: 'from mcp', scopes: ['memory:read'] })).resolves.toMatchObject({ name: 'from mcp' });
});

test('the ceiling counts active tokens only, and holds when two instances create at once', async () => {
  const a = instance();
  const b = instance();
  const made = await a.tokens.create(signIn('ida'), { name: 'short', scopes: ['memory:read'], expiresInDays: 1 });
  const two = await a.tokens.create(signIn('ida'), { name: 'two', scopes: ['memory:read'] });
  const raced = await Promise.allSettled([a, b, a, b].map((i, n) => i.tokens.create(signIn('ida'), { name: `race ${n}`, scopes: ['memory:read'] })));
  expect(raced.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
  for (const r of raced.filter((r) => r.status === 'rejected')) expect(r.reason).toMatchObject({ kind: 'ceiling' });
  expect(await a.tokens.list(signIn('ida'))).toHaveLength(3);
  // A revoked one frees its place; so does an expired one. (Revoke one that is not the short one: the
  // listing's order of two tokens made in the same instant is not something to rely on.)
  await a.tokens.revoke(signIn('ida'), two.id);
  await expect(b.tokens.create(signIn('ida'), { name: 'after revoke', scopes: ['memory:read'] })).resolves.toBeDefined();
  await expect(refusal(b.tokens.create(signIn('ida'), { name: 'over', scopes: ['memory:read'] }))).resolves.toEqual({ kind: 'ceiling' });
  now += DAY;
  expect((await a.tokens.list(signIn('ida'))).map((t) => t.id)).not.toContain(made.id);
  await expect(b.tokens.create(signIn('ida'), { name: 'after expiry', scopes: ['memory:read'] })).resolves.toBeDefined();
});

test('last used: written on the first use and then at most once an hour, whatever the requests and instances', async () => {
  const { tokens } = instance();
  const made = await tokens.create(signIn('jo'), { name: 'x', scopes: ['memory:read'] });
  const lastUsed = async () => (await tokens.list(signIn('jo')))[0].lastUsed;
  expect(await lastUsed()).toBeUndefined();
  // No cache, so every request reads the table: only the interval keeps it from writing.
  const a = instance(0);
  const b = instance(0);
  writes.length = 0;
  await a.verifier.verify(made.token);
  expect(writes).toEqual(['UpdateItemCommand']);
  const first = await lastUsed();
  expect(first).toBe(new Date(Math.floor(now / 1000) * 1000).toISOString());
  writes.length = 0;
  for (let i = 0; i < 10; i++) {
    now += 5 * 60_000;
    await (i % 2 ? a : b).verifier.verify(made.token);
  }
  expect(writes).toEqual([]);
  expect(await lastUsed()).toBe(first);
  now = START + 61 * 60_000;
  await Promise.all([a.verifier.verify(made.token), b.verifier.verify(made.token)]);
  // Both instances saw a stale time; one conditional write lands, the other is refused by its condition.
  expect(await lastUsed()).toBe(new Date(START + 61 * 60_000).toISOString());
});
