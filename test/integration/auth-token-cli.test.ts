import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { mintLocalToken } from '../../bin/token';
import { loadAuthConfig } from '../../lambdas/identity/config';
import { createJwksHandler, issuerKeyPath, LocalIssuer } from '../../lambdas/identity/local-issuer';
import { createTokenVerifier } from '../../lambdas/identity/verifier';
import { startJwksServer, type JwksServer } from '../support/auth-jwks';
import { apiEvent } from '../support/auth-harness';

const run = promisify(execFile);
const ROOT = resolve(__dirname, '../..');
/** `npm run token` is `tsx bin/token.ts`; calling tsx directly skips npm's start-up. */
const TSX = join(ROOT, 'node_modules', '.bin', 'tsx');
const tmp = () => mkdtempSync(join(process.env.TEST_TMP_DIR ?? tmpdir(), 'token-cli-'));

/** The environment `npm start` and `npm run token` share (no stack running). */
function envFor(dataDir: string): Record<string, string> {
  return { DATA_DIR: dataDir, PORT: '4567' };
}

let jwks: JwksServer | undefined;
afterEach(async () => {
  await jwks?.close();
  jwks = undefined;
});

async function verifierFor(dataDir: string) {
  const env = envFor(dataDir);
  const config = loadAuthConfig(env);
  if (config.jwt.kind !== 'local') throw new Error('expected the local issuer');
  const issuer = LocalIssuer.loadOrCreate(issuerKeyPath(dataDir), config.jwt.issuer);
  jwks = await startJwksServer(() => issuer.jwks());
  return createTokenVerifier({ ...config, jwt: { ...config.jwt, jwksUri: jwks.jwksUri } });
}

it('`npm run token` prints a token the local stack accepts, creating the issuer key on first use', async () => {
  const dir = tmp();
  const { stdout } = await run(TSX, ['bin/token.ts', '--sub', 'alice', '--scope', 'memory:read memory:write', '--memories', 'work,default', '--ttl', '600'], {
    cwd: ROOT,
    env: { ...process.env, ...envFor(dir) },
  });
  const token = stdout.trim();
  expect(token.split('.')).toHaveLength(3);
  expect(statSync(issuerKeyPath(dir)).mode & 0o777).toBe(0o600);

  const p = await (await verifierFor(dir)).verify(`Bearer ${token}`);
  expect(p).toMatchObject({ sub: 'alice', scopes: ['memory:read', 'memory:write'], memories: ['work', 'default'], kind: 'jwt' });
  expect(p.expiresAt - Math.floor(Date.now() / 1000)).toBeLessThanOrEqual(600);
  const claims = JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString('utf8')) as Record<string, unknown>;
  expect(claims).toMatchObject({ iss: 'http://localhost:4567', aud: 'http://localhost:4567/mcp' });
});

it('exits non-zero with a message on bad arguments', async () => {
  await expect(run(TSX, ['bin/token.ts', '--scope', 'memory:read'], { cwd: ROOT, env: { ...process.env, ...envFor(tmp()) } })).rejects.toMatchObject({
    code: 1,
    stderr: expect.stringContaining('--sub is required'),
  });
});

describe('mintLocalToken', () => {
  it('defaults to both scopes, every memory and an hour', async () => {
    const dir = tmp();
    const p = await (await verifierFor(dir)).verify(`Bearer ${mintLocalToken(['--sub', 'bob'], envFor(dir))}`);
    expect(p).toMatchObject({ sub: 'bob', scopes: ['memory:read', 'memory:write'] });
    expect(p.memories).toBeUndefined();
    expect(p.expiresAt - Math.floor(Date.now() / 1000)).toBeGreaterThan(3500);
  });

  it('reuses the key: tokens minted before and after verify against the one JWKS', async () => {
    const dir = tmp();
    const a = mintLocalToken(['--sub', 'a'], envFor(dir));
    const key = readFileSync(issuerKeyPath(dir), 'utf8');
    const b = mintLocalToken(['--sub', 'b'], envFor(dir));
    expect(readFileSync(issuerKeyPath(dir), 'utf8')).toBe(key);
    const verifier = await verifierFor(dir);
    await expect(verifier.verify(`Bearer ${a}`)).resolves.toMatchObject({ sub: 'a' });
    await expect(verifier.verify(`Bearer ${b}`)).resolves.toMatchObject({ sub: 'b' });
  });

  it('mints for another audience on request, which this deployment refuses', async () => {
    const dir = tmp();
    const foreign = mintLocalToken(['--sub', 'a', '--audience', 'http://elsewhere.example/mcp'], envFor(dir));
    await expect((await verifierFor(dir)).verify(`Bearer ${foreign}`)).rejects.toMatchObject({ reason: 'wrong-audience' });
  });

  it.each([
    [['--scope', 'memory:read'], /--sub/],
    [['--sub', '  '], /--sub/],
    [['--sub', 'a', '--scope', 'memory:read admin'], /--scope/],
    [['--sub', 'a', '--memories', 'Work'], /--memories/],
    [['--sub', 'a', '--memories', 'a,,b'], /--memories/],
    [['--sub', 'a', '--ttl', '0'], /--ttl/],
    [['--sub', 'a', '--ttl', '1.5'], /--ttl/],
    [['--sub', 'a', '--ttl', '99999999'], /--ttl/],
    [['--sub', 'a', '--bogus'], /bogus/],
  ])('refuses %j', (argv, message) => {
    expect(() => mintLocalToken(argv, envFor(tmp()))).toThrow(message);
  });

  it('refuses to mint when the deployment verifies Cognito tokens', () => {
    expect(() => mintLocalToken(['--sub', 'a'], { ...envFor(tmp()), AUTH_MODE: 'cognito' })).toThrow(/local issuer/);
  });
});

describe('local issuer', () => {
  it('creates one key even when two processes race for a fresh data dir', async () => {
    const dir = tmp();
    const runs = await Promise.all([0, 1].map(() => run(TSX, ['bin/token.ts', '--sub', 'racer'], { cwd: ROOT, env: { ...process.env, ...envFor(dir) } })));
    const verifier = await verifierFor(dir);
    for (const r of runs) await expect(verifier.verify(`Bearer ${r.stdout.trim()}`)).resolves.toMatchObject({ sub: 'racer' });
  });

  it('serves its JWKS at /.well-known/jwks.json, public half only', async () => {
    const issuer = LocalIssuer.loadOrCreate(issuerKeyPath(tmp()), 'http://localhost:4567');
    const handler = createJwksHandler(issuer);
    const res = await handler(apiEvent('GET', '/.well-known/jwks.json'));
    expect(res.statusCode).toBe(200);
    const doc = JSON.parse(res.body ?? '') as { keys: Array<Record<string, string>> };
    expect(doc.keys).toEqual([{ kty: 'RSA', n: expect.any(String), e: 'AQAB', kid: issuer.kid, alg: 'RS256', use: 'sig' }]);
    expect(res.body).not.toMatch(/"d"|"p"|"q"/);
    expect((await handler(apiEvent('POST', '/.well-known/jwks.json'))).headers.allow).toBe('GET');
    expect((await handler(apiEvent('GET', '/.well-known/other'))).statusCode).toBe(404);
  });
});
