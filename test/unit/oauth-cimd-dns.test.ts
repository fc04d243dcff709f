import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ClientStore, OAuthClient } from '../../lambdas/oauth/client-store';
import { ClientResolver } from '../../lambdas/oauth/clients';
import { AddressRefusedError, guardedLookup, pinnedFetch, type HostResolver } from '../../lambdas/shared/http/pinned-fetch';

/**
 * Client ID Metadata Documents are fetched from a URL the client chose: a host name that resolves
 * to an internal address must not be fetched (SSRF), whatever its name, and the connection must go
 * to the address that was checked (no second lookup a rebinding host could answer differently).
 * DNS is the edge here: an injected resolver. The fetch is the real pinned fetch, and a loopback
 * server records whether anything reached it.
 */
const cimd = { timeoutMs: 1000, maxBytes: 8192, cacheSeconds: 0, allowLoopback: false };
const emptyStore: ClientStore = {
  get: async () => undefined,
  register: async (_c: OAuthClient) => true,
  put: async (_c: OAuthClient) => undefined,
  extend: async () => undefined,
};
const URL_ID = 'https://client.example.org/oauth/client.json';

let server: Server;
let port: number;
const received: Array<{ host: string | undefined; url: string | undefined }> = [];
beforeAll(async () => {
  server = createServer((req, res) => {
    received.push({ host: req.headers.host, url: req.url });
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ ok: true }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));
beforeEach(() => {
  received.length = 0;
});

function dns(addresses: Record<string, string[] | Error>): { resolveHost: HostResolver; asked: string[] } {
  const asked: string[] = [];
  const resolveHost: HostResolver = async (host) => {
    asked.push(host);
    const a = addresses[host];
    if (a instanceof Error) throw a;
    return a ?? [];
  };
  return { resolveHost, asked };
}

describe('the resolver with the pinned fetch', () => {
  const resolverFor = (addresses: Record<string, string[] | Error>) =>
    new ClientResolver(emptyStore, cimd, pinnedFetch(guardedLookup(dns(addresses).resolveHost, false)), Date.now);

  it.each([
    ['loopback', ['127.0.0.1']],
    ['private 10/8', ['10.1.2.3']],
    ['link-local (instance metadata)', ['169.254.169.254']],
    ['carrier-grade NAT', ['100.64.0.1']],
    ['IPv6 unique local', ['fd00::1']],
    ['IPv4-mapped IPv6', ['::ffff:127.0.0.1']],
    ['one public and one private address', ['93.184.216.34', '192.168.1.10']],
  ])('refuses a host name that resolves to %s, without connecting', async (_what, addrs) => {
    expect(await resolverFor({ 'client.example.org': addrs }).resolve(URL_ID)).toEqual({
      ok: false,
      reason: 'client_id resolves to a loopback or private address',
    });
    expect(received).toEqual([]);
  });

  it('refuses a host name that does not resolve, or resolves to nothing', async () => {
    expect(await resolverFor({ 'client.example.org': new Error('ENOTFOUND') }).resolve(URL_ID)).toEqual({
      ok: false,
      reason: 'client_id names a host that could not be resolved',
    });
    expect(await resolverFor({}).resolve(URL_ID)).toEqual({ ok: false, reason: 'client_id names a host that could not be resolved' });
  });
});

describe('guardedLookup', () => {
  const run = (lookup: ReturnType<typeof guardedLookup>, options: { all?: boolean; family?: number }) =>
    new Promise<{ err: NodeJS.ErrnoException | null; address: unknown; family?: number }>((resolve) =>
      lookup('client.example.org', options, (err, address, family) => resolve({ err, address, family })),
    );

  it('hands node:net every public address when it asks for all, the first otherwise, and honours a family', async () => {
    const { resolveHost } = dns({ 'client.example.org': ['93.184.216.34', '2606:2800:220:1::1'] });
    const lookup = guardedLookup(resolveHost, false);
    expect(await run(lookup, { all: true })).toEqual({
      err: null,
      address: [
        { address: '93.184.216.34', family: 4 },
        { address: '2606:2800:220:1::1', family: 6 },
      ],
      family: undefined,
    });
    expect(await run(lookup, {})).toEqual({ err: null, address: '93.184.216.34', family: 4 });
    expect(await run(lookup, { family: 6 })).toEqual({ err: null, address: '2606:2800:220:1::1', family: 6 });
  });

  it('refuses with a typed error naming why', async () => {
    const { err } = await run(guardedLookup(dns({ 'client.example.org': ['10.0.0.1'] }).resolveHost, false), { all: true });
    expect(err).toBeInstanceOf(AddressRefusedError);
    expect((err as AddressRefusedError).why).toBe('private');
  });
});

describe('pinnedFetch', () => {
  it('connects to the address the lookup checked, once per request, and keeps the host name in the Host header', async () => {
    // `doc.test` exists in no DNS: the request can only reach the loopback server through the injected answer.
    const { resolveHost, asked } = dns({ 'doc.test': ['127.0.0.1'] });
    const res = await pinnedFetch(guardedLookup(resolveHost, true))(`http://doc.test:${port}/client.json?x=1`, { headers: { accept: 'application/json' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(await res.json()).toEqual({ ok: true });
    expect(received).toEqual([{ host: `doc.test:${port}`, url: '/client.json?x=1' }]);
    expect(asked).toEqual(['doc.test']);
  });

  it('does not connect when the answer is internal and private addresses are not allowed', async () => {
    const { resolveHost } = dns({ 'doc.test': ['127.0.0.1'] });
    await expect(pinnedFetch(guardedLookup(resolveHost, false))(`http://doc.test:${port}/client.json`)).rejects.toBeInstanceOf(AddressRefusedError);
    expect(received).toEqual([]);
  });

  it('follows no redirect, and sends a string or byte body only', async () => {
    const redirecting = createServer((_req, res) => {
      res.statusCode = 302;
      res.setHeader('location', 'http://169.254.169.254/latest/meta-data/');
      res.end();
    });
    await new Promise<void>((r) => redirecting.listen(0, '127.0.0.1', r));
    try {
      const { resolveHost } = dns({ 'doc.test': ['127.0.0.1'] });
      const fetchDoc = pinnedFetch(guardedLookup(resolveHost, true));
      const res = await fetchDoc(`http://doc.test:${(redirecting.address() as AddressInfo).port}/`);
      expect([res.status, res.headers.get('location')]).toEqual([302, 'http://169.254.169.254/latest/meta-data/']);
      await expect(fetchDoc(`http://doc.test:${port}/`, { method: 'POST', body: new ReadableStream() })).rejects.toThrow(/string or byte body/);
      expect((await fetchDoc(`http://doc.test:${port}/client.json`, { method: 'POST', body: '{}' })).status).toBe(200);
    } finally {
      await new Promise<void>((r) => redirecting.close(() => r()));
    }
  });

  it("gives up at the caller's deadline", async () => {
    const silent = createServer(() => undefined);
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    try {
      const { resolveHost } = dns({ 'doc.test': ['127.0.0.1'] });
      const pending = pinnedFetch(guardedLookup(resolveHost, true))(`http://doc.test:${(silent.address() as AddressInfo).port}/`, {
        signal: AbortSignal.timeout(200),
      });
      await expect(pending).rejects.toThrow(/aborted/);
    } finally {
      silent.closeAllConnections();
      await new Promise<void>((r) => silent.close(() => r()));
    }
  });
});
