import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, randomUUID, sign, type KeyObject } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { ApiTable } from '../shared/http/route-table';
import type { HttpEvent, HttpResult } from '../shared/http/types';

/**
 * The local stand-in for Cognito: an RSA key kept in the data dir signs access-token JWTs and its
 * public half is served as a JWKS, so the local stack verifies them through exactly the
 * aws-jwt-verify path that verifies Cognito's tokens in AWS. Local development only.
 */

/** `DATA_DIR/keys/issuer.json`. */
export function issuerKeyPath(dataRoot: string): string {
  return join(dataRoot, 'keys', 'issuer.json');
}

interface KeyFile {
  kid: string;
  /** PKCS#8 PEM. */
  privateKey: string;
  createdAt: string;
}

export interface SignOptions {
  sub: string;
  /** Space-separated, e.g. `memory:read memory:write`. */
  scope: string;
  /** The `memories` claim (an array); omitted: every memory of the account. */
  memories?: string[];
  /** Cognito user pool groups (`cognito:groups`, as Cognito puts them in access tokens): `catalog-admins` edits the allow-list. */
  groups?: string[];
  ttlSeconds: number;
  audience: string;
  clientId?: string;
  /** Epoch seconds; defaults to now. */
  issuedAt?: number;
  /** Epoch seconds of `nbf`; defaults to `issuedAt`. */
  notBefore?: number;
}

export interface Jwks {
  keys: Array<Record<string, string>>;
}

export class LocalIssuer {
  private readonly publicJwk: Record<string, string>;

  private constructor(
    readonly issuer: string,
    readonly kid: string,
    private readonly privateKey: KeyObject,
  ) {
    const jwk = createPublicKey(privateKey).export({ format: 'jwk' });
    this.publicJwk = { kty: 'RSA', n: String(jwk.n), e: String(jwk.e), kid, alg: 'RS256', use: 'sig' };
  }

  /**
   * Loads the key, generating it on first use. Creation is atomic (write aside, then hard-link into
   * place, which fails if another process won), so `npm start` and `npm run token` racing on a
   * fresh data dir end up with one key.
   */
  static loadOrCreate(keyFile: string, issuer: string): LocalIssuer {
    let file: KeyFile;
    try {
      file = JSON.parse(readFileSync(keyFile, 'utf8')) as KeyFile;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      file = createKeyFile(keyFile);
    }
    return new LocalIssuer(issuer, file.kid, createPrivateKey(file.privateKey));
  }

  jwks(): Jwks {
    return { keys: [{ ...this.publicJwk }] };
  }

  signAccessToken(o: SignOptions): string {
    const iat = o.issuedAt ?? Math.floor(Date.now() / 1000);
    const payload = {
      iss: this.issuer,
      sub: o.sub,
      aud: o.audience,
      // Shaped like a Cognito access token, so one principal mapping serves both.
      token_use: 'access',
      client_id: o.clientId ?? 'local-cli',
      scope: o.scope,
      ...(o.memories !== undefined && { memories: o.memories }),
      ...(o.groups !== undefined && o.groups.length > 0 && { 'cognito:groups': o.groups }),
      iat,
      nbf: o.notBefore ?? iat,
      exp: iat + o.ttlSeconds,
      jti: randomUUID(),
    };
    return signJwt({ alg: 'RS256', typ: 'JWT', kid: this.kid }, payload, this.privateKey);
  }
}

function createKeyFile(keyFile: string): KeyFile {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwk = publicKey.export({ format: 'jwk' });
  // RFC 7638 thumbprint: a stable kid derived from the key itself.
  const kid = createHash('sha256')
    .update(JSON.stringify({ e: jwk.e, kty: 'RSA', n: jwk.n }))
    .digest('base64url');
  const file: KeyFile = { kid, privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), createdAt: new Date().toISOString() };
  mkdirSync(dirname(keyFile), { recursive: true });
  const aside = `${keyFile}.${process.pid}.${randomUUID()}.tmp`;
  writeFileSync(aside, JSON.stringify(file, null, 2), { mode: 0o600 });
  try {
    linkSync(aside, keyFile);
    return file;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    return JSON.parse(readFileSync(keyFile, 'utf8')) as KeyFile;
  } finally {
    rmSync(aside, { force: true });
  }
}

/** Compact JWS. Exported for tests that need to forge headers; production signing goes through `LocalIssuer`. */
export function signJwt(header: Record<string, unknown>, payload: Record<string, unknown>, key: KeyObject): string {
  const input = `${b64url(header)}.${b64url(payload)}`;
  return `${input}.${sign('RSA-SHA256', Buffer.from(input), key).toString('base64url')}`;
}

function b64url(v: unknown): string {
  return Buffer.from(JSON.stringify(v)).toString('base64url');
}

/** Local-only routes of the issuer (in AWS, Cognito serves its own JWKS). */
export const LOCAL_ISSUER_API: ApiTable = {
  catchAllFn: 'auth',
  prefix: '/.well-known',
  routes: [{ method: 'GET', path: '/.well-known/jwks.json', fn: 'auth', operationId: 'getJwks' }],
};

/** `GET /.well-known/jwks.json` (anything else under the prefix is 404, a wrong verb 405). */
export function createJwksHandler(issuer: LocalIssuer): (event: HttpEvent) => Promise<HttpResult> {
  const body = JSON.stringify(issuer.jwks());
  return async (event) => {
    if (event.rawPath !== '/.well-known/jwks.json') return jsonResult(404, { error: 'not_found' });
    if (event.requestContext.http.method.toUpperCase() !== 'GET') return jsonResult(405, { error: 'method_not_allowed' }, { allow: 'GET' });
    return {
      statusCode: 200,
      headers: { 'content-type': 'application/json', 'cache-control': 'public, max-age=300', 'access-control-allow-origin': '*' },
      body,
    };
  };
}

function jsonResult(status: number, body: unknown, headers: Record<string, string> = {}): HttpResult {
  return { statusCode: status, headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) };
}
