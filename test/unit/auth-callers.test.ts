import { BearerCallers } from '../../lambdas/catalog/callers';
import { AuthError, type Principal } from '../../lambdas/identity/principal';
import type { TokenVerifier } from '../../lambdas/identity/verifier';
import { loadCatalogConfig } from '../../lambdas/catalog/config';
import type { HttpEvent } from '../../lambdas/shared/http/types';

const config = loadCatalogConfig();

function event(headers: Record<string, string>): HttpEvent {
  return {
    version: '2.0',
    routeKey: 'GET /api/mcps',
    rawPath: '/api/mcps',
    rawQueryString: '',
    headers,
    isBase64Encoded: false,
    requestContext: {
      accountId: 'local',
      apiId: 'local',
      domainName: 'localhost',
      domainPrefix: 'localhost',
      http: { method: 'GET', path: '/api/mcps', protocol: 'HTTP/1.1', sourceIp: '198.51.100.7', userAgent: 'test' },
      requestId: 'r',
      routeKey: 'GET /api/mcps',
      stage: '$default',
      time: '',
      timeEpoch: 0,
    },
  };
}

class FakeVerifier implements TokenVerifier {
  calls = 0;
  constructor(private readonly outcome: () => Promise<Principal>) {}
  verify(): Promise<Principal> {
    this.calls++;
    return this.outcome();
  }
}

const alice: Principal = { sub: 'alice', scopes: [], kind: 'jwt', expiresAt: 0 };
const anon = { key: 'ip:198.51.100.7', policy: { name: 'catalog-anon', ratePerSecond: 30, burst: 60 } };

describe('BearerCallers (catalog rate-limit tier)', () => {
  it('keys a valid bearer by user with the authenticated policy (100/s, burst 200)', async () => {
    const callers = new BearerCallers(new FakeVerifier(async () => alice), config, () => undefined);
    await expect(callers.resolve(event({ authorization: 'Bearer x.y.z' }))).resolves.toEqual({
      key: 'user:alice',
      policy: { name: 'catalog-user', ratePerSecond: 100, burst: 200 },
    });
  });

  it('gives the anonymous IP tier without calling the verifier when there is no token', async () => {
    const v = new FakeVerifier(async () => alice);
    await expect(new BearerCallers(v, config, () => undefined).resolve(event({}))).resolves.toEqual(anon);
    expect(v.calls).toBe(0);
  });

  it.each([
    ['invalid', () => Promise.reject(new AuthError('bad-signature', 'no'))],
    ['expired', () => Promise.reject(new AuthError('expired', 'no'))],
    ['backend down', () => Promise.reject(new AuthError('jwks-unavailable', 'down'))],
    ['a bug in the verifier', () => Promise.reject(new TypeError('boom'))],
  ])('falls back to the anonymous tier, never throwing, for a token that is %s', async (_what, outcome) => {
    const callers = new BearerCallers(new FakeVerifier(outcome), config, () => undefined);
    await expect(callers.resolve(event({ authorization: 'Bearer x.y.z' }))).resolves.toEqual(anon);
  });
});
