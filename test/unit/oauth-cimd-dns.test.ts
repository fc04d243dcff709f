import { ClientResolver, type HostResolver } from '../../lambdas/auth/oauth/clients';
import type { ClientStore, OAuthClient } from '../../lambdas/auth/client-store';

/**
 * Client ID Metadata Documents are fetched from a URL the client chose: a host name that resolves
 * to an internal address must not be fetched (SSRF), whatever its name. The resolver and the fetch
 * are the edges here (DNS and the document host); the document fetch records whether it ran.
 */
const cimd = { timeoutMs: 1000, maxBytes: 8192, cacheSeconds: 0, allowLoopback: false };
const emptyStore: ClientStore = {
  get: async () => undefined,
  register: async (_c: OAuthClient) => true,
  put: async (_c: OAuthClient) => undefined,
};
const URL_ID = 'https://client.example.org/oauth/client.json';

function resolverWith(addresses: Record<string, string[] | Error>) {
  const fetched: string[] = [];
  const resolveHost: HostResolver = async (host) => {
    const a = addresses[host];
    if (a instanceof Error) throw a;
    return a ?? [];
  };
  const fetchImpl = async (url: string | URL | Request) => {
    fetched.push(String(url));
    return new Response(JSON.stringify({ client_id: URL_ID, client_name: 'Example', redirect_uris: ['https://client.example.org/cb'] }), { status: 200 });
  };
  return { resolver: new ClientResolver(emptyStore, cimd, fetchImpl, Date.now, resolveHost), fetched };
}

it.each([
  ['loopback', ['127.0.0.1']],
  ['private 10/8', ['10.1.2.3']],
  ['link-local (instance metadata)', ['169.254.169.254']],
  ['IPv6 unique local', ['fd00::1']],
  ['one public and one private address', ['93.184.216.34', '192.168.1.10']],
])('refuses a host name that resolves to %s, without fetching', async (_what, addrs) => {
  const { resolver, fetched } = resolverWith({ 'client.example.org': addrs });
  expect(await resolver.resolve(URL_ID)).toEqual({ ok: false, reason: 'client_id resolves to a loopback or private address' });
  expect(fetched).toEqual([]);
});

it('refuses a host name that does not resolve', async () => {
  const { resolver, fetched } = resolverWith({ 'client.example.org': new Error('ENOTFOUND') });
  expect(await resolver.resolve(URL_ID)).toEqual({ ok: false, reason: 'client_id names a host that could not be resolved' });
  expect(fetched).toEqual([]);
});

it('fetches the document of a host with public addresses only', async () => {
  const { resolver, fetched } = resolverWith({ 'client.example.org': ['93.184.216.34', '2606:2800:220:1::1'] });
  const out = await resolver.resolve(URL_ID);
  expect(out.ok).toBe(true);
  expect(fetched).toEqual([URL_ID]);
});
