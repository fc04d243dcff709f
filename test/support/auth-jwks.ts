import { createHmac, createPrivateKey, createPublicKey, generateKeyPairSync, randomBytes, type KeyObject } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AuthConfig } from '../../lambdas/identity/config';
import { issuerKeyPath, LocalIssuer, signJwt, type Jwks } from '../../lambdas/identity/local-issuer';
import type { AuthTableNames } from '../../lambdas/identity/tables';

/**
 * A JWKS on a loopback `node:http` server (what the local stack serves, what Cognito serves in
 * AWS), plus the means to forge the tokens of the attack table.
 */
export interface JwksServer {
  url: string;
  jwksUri: string;
  /** Requests served so far. */
  hits(): number;
  /** Answer with this status (and a non-JWKS body) from now on; 200 restores the JWKS. */
  setStatus(status: number): void;
  close(): Promise<void>;
}

export async function startJwksServer(jwks: () => Jwks): Promise<JwksServer> {
  let hits = 0;
  let status = 200;
  const server: Server = createServer((_req, res) => {
    hits++;
    if (status !== 200) {
      res.writeHead(status, { 'content-type': 'text/plain' });
      res.end('unavailable');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(jwks()));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    jwksUri: `${url}/.well-known/jwks.json`,
    hits: () => hits,
    setStatus: (s) => {
      status = s;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A loopback URL nothing listens on (a port that was just free). */
export async function deadUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

export interface TestIssuer {
  issuer: LocalIssuer;
  keyFile: string;
  /** The signing key, for forging tokens with arbitrary headers and claims. */
  privateKey: KeyObject;
  publicPem: string;
  kid: string;
}

/** A local issuer on a fresh key in a temporary data dir. */
export function testIssuer(issuerUrl: string, root = mkdtempSync(join(process.env.TEST_TMP_DIR ?? tmpdir(), 'auth-'))): TestIssuer {
  const keyFile = issuerKeyPath(root);
  const issuer = LocalIssuer.loadOrCreate(keyFile, issuerUrl);
  const file = JSON.parse(readFileSync(keyFile, 'utf8')) as { kid: string; privateKey: string };
  const privateKey = createPrivateKey(file.privateKey);
  return {
    issuer,
    keyFile,
    privateKey,
    publicPem: createPublicKey(privateKey).export({ type: 'spki', format: 'pem' }).toString(),
    kid: file.kid,
  };
}

/** The local stack's issuer and audience, which the harnesses' tokens carry. */
export const ISSUER = 'http://localhost:3000';
export const AUDIENCE = 'http://localhost:3000/mcp';

/**
 * The verifier's config for tokens of the local issuer whose JWKS the server at `serverUrl`
 * serves (the harnesses serve it from the server the verifier runs in, as the local stack does).
 */
export function localAuthConfig(serverUrl: string, tables: AuthTableNames, backend: Pick<AuthConfig, 'region' | 'dynamoEndpoint'>): AuthConfig {
  return {
    audience: AUDIENCE,
    jwt: { kind: 'local', issuer: ISSUER, jwksUri: `${serverUrl}/.well-known/jwks.json` },
    tokenTable: tables.tokens,
    clientTable: tables.clients,
    opaqueCacheSeconds: 30,
    jwksTimeoutMs: 2000,
    region: backend.region,
    dynamoEndpoint: backend.dynamoEndpoint,
  };
}

/** A bearer header of `t` for `sub` (read scope, ten minutes), with these user pool groups. */
export function bearerOf(t: TestIssuer, sub: string, groups?: string[]): string {
  return `Bearer ${t.issuer.signAccessToken({ sub, scope: 'memory:read', ttlSeconds: 600, audience: AUDIENCE, groups })}`;
}

export const nowSeconds = (): number => Math.floor(Date.now() / 1000);

/** Claims of a valid local access token, to override one at a time. */
export function claims(o: { issuer: string; audience: string; sub?: string }, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const iat = nowSeconds();
  return {
    iss: o.issuer,
    sub: o.sub ?? 'alice',
    aud: o.audience,
    token_use: 'access',
    client_id: 'test',
    scope: 'memory:read memory:write',
    iat,
    nbf: iat,
    exp: iat + 3600,
    ...extra,
  };
}

export function forgeRs256(t: TestIssuer, payload: Record<string, unknown>, header: Record<string, unknown> = {}): string {
  return signJwt({ alg: 'RS256', typ: 'JWT', kid: t.kid, ...header }, payload, t.privateKey);
}

const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');

/** `alg: none`: no signature at all. */
export function forgeNone(t: TestIssuer, payload: Record<string, unknown>): string {
  return `${b64({ alg: 'none', typ: 'JWT', kid: t.kid })}.${b64(payload)}.`;
}

/** The key-confusion attack: HS256 with the issuer's public key (PEM) as the HMAC secret. */
export function forgeHs256WithPublicKey(t: TestIssuer, payload: Record<string, unknown>): string {
  const input = `${b64({ alg: 'HS256', typ: 'JWT', kid: t.kid })}.${b64(payload)}`;
  return `${input}.${createHmac('sha256', t.publicPem).update(input).digest('base64url')}`;
}

/** A valid token whose payload was edited after signing (the signature no longer matches). */
export function tamper(token: string, edit: (payload: Record<string, unknown>) => void): string {
  const [h, p, s] = token.split('.');
  const payload = JSON.parse(Buffer.from(p, 'base64url').toString('utf8')) as Record<string, unknown>;
  edit(payload);
  return `${h}.${b64(payload)}.${s}`;
}

/** RS256, the right kid, but signed by a key that is not in the JWKS. */
export function forgeWithStrangerKey(t: TestIssuer, payload: Record<string, unknown>): string {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return signJwt({ alg: 'RS256', typ: 'JWT', kid: t.kid }, payload, privateKey);
}

export const randomName = (prefix: string): string => `${prefix}-${randomBytes(4).toString('hex')}`;
