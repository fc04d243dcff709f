import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { HttpClient, HttpError, KeyedLimiter, parseRetryAfter } from '../../lambdas/crawler/http/http-client';

/** A loopback server answering from a script of responses, one per request. */
async function scripted(responses: Array<{ status: number; headers?: Record<string, string>; body?: string } | 'hang' | 'reset'>) {
  let i = 0;
  let inFlight = 0;
  let maxInFlight = 0;
  let abandoned = 0;
  const server: Server = createServer((req, res) => {
    const r = responses[Math.min(i++, responses.length - 1)];
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    res.on('close', () => inFlight--);
    if (r === 'hang') {
      res.on('close', () => abandoned++); // only the client can end it: it gave up waiting
      return;
    }
    if (r === 'reset') return void req.socket.destroy();
    setTimeout(() => res.writeHead(r.status, r.headers).end(r.body ?? ''), 5);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    count: () => i,
    abandoned: () => abandoned,
    maxInFlight: () => maxInFlight,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((r) => server.close(() => r()));
    },
  };
}

// A timeout no loaded machine reaches on loopback, so request counts are exact; the one test of the
// timeout sets its own.
function client(o: ConstructorParameters<typeof HttpClient>[0] = {}) {
  const sleeps: number[] = [];
  const http = new HttpClient({
    allowPrivateHosts: true,
    timeoutMs: 30_000,
    baseDelayMs: 100,
    maxDelayMs: 1000,
    random: () => 0.5,
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    ...o,
  });
  return { http, sleeps };
}

describe('HttpClient', () => {
  it('retries 5xx with exponential backoff and jitter, then returns the response', async () => {
    const s = await scripted([{ status: 503 }, { status: 500 }, { status: 200, body: 'ok' }]);
    try {
      const { http, sleeps } = client();
      const res = await http.request(`${s.url}/x`);
      expect(res.status).toBe(200);
      expect(Buffer.from(res.body).toString()).toBe('ok');
      // Equal jitter with random() = 0.5: three quarters of each doubling step.
      expect(sleeps).toEqual([75, 150]);
      expect(http.stats.retries).toBe(2);
    } finally {
      await s.close();
    }
  });

  it('honours Retry-After on 429 and gives up (returning the 429) when it is too long', async () => {
    const s = await scripted([{ status: 429, headers: { 'retry-after': '2' } }, { status: 200 }]);
    try {
      const { http, sleeps } = client();
      expect((await http.request(s.url)).status).toBe(200);
      expect(sleeps).toEqual([2000]);
    } finally {
      await s.close();
    }
    const long = await scripted([{ status: 429, headers: { 'retry-after': '3600' } }, { status: 200 }]);
    try {
      const { http, sleeps } = client({ maxRetryAfterMs: 60_000 });
      expect((await http.request(long.url)).status).toBe(429);
      expect(sleeps).toEqual([]);
    } finally {
      await long.close();
    }
  });

  it('does not retry a 404', async () => {
    const s = await scripted([{ status: 404 }, { status: 200 }]);
    try {
      const { http } = client();
      expect((await http.request(s.url)).status).toBe(404);
      expect(s.count()).toBe(1);
    } finally {
      await s.close();
    }
  });

  it('times out a hanging request, retries it, and recovers from a dropped connection', async () => {
    const s = await scripted(['hang', 'reset', { status: 200, body: 'late' }]);
    try {
      // The timeout applies to every attempt: on a loaded machine an answer may come later than it
      // too, and is then retried like the hang (the script repeats its last answer). What must hold:
      // the client gave up on the hanging request, went on past the reset, and returned the answer.
      const { http } = client({ timeoutMs: 1000, retries: 6 });
      const res = await http.request(s.url);
      expect(Buffer.from(res.body).toString()).toBe('late');
      expect(s.abandoned()).toBeGreaterThanOrEqual(1);
      expect(s.count()).toBeGreaterThanOrEqual(3);
      expect(http.stats.retries).toBe(s.count() - 1);
    } finally {
      await s.close();
    }
  });

  it('refuses bodies over the cap (declared or streamed)', async () => {
    const s = await scripted([{ status: 200, body: 'x'.repeat(5000) }]);
    try {
      const { http } = client();
      await expect(http.request(s.url, { maxBytes: 1000 })).rejects.toMatchObject({ kind: 'too_large' });
    } finally {
      await s.close();
    }
  });

  it('fails fast once a host is unreachable (circuit breaker)', async () => {
    const s = await scripted([{ status: 200 }]);
    const url = s.url;
    await s.close();
    const { http } = client({ breakerThreshold: 3, retries: 0 });
    for (let i = 0; i < 3; i++) await expect(http.request(url)).rejects.toMatchObject({ kind: 'network' });
    await expect(http.request(url)).rejects.toMatchObject({ kind: 'circuit_open' });
    expect(http.stats.requests).toBe(3);
  });

  it('refuses private and loopback addresses in URLs from registry data unless allowed', async () => {
    const http = new HttpClient();
    for (const u of ['http://127.0.0.1/x', 'http://10.0.0.1/', 'http://169.254.169.254/latest/meta-data', 'http://[::1]/', 'http://localhost/']) {
      expect(() => http.checkUrl(u, true)).toThrow(HttpError);
      // Configured base URLs (a local registry mirror) are the operator's choice.
      expect(() => http.checkUrl(u)).not.toThrow();
    }
    expect(() => http.checkUrl('file:///etc/passwd')).toThrow(/unsupported scheme/);
    expect(() => http.checkUrl('https://registry.modelcontextprotocol.io/v0.1/servers', true)).not.toThrow();
    expect(() => new HttpClient({ allowPrivateHosts: true }).checkUrl('http://127.0.0.1/x', true)).not.toThrow();
  });

  it('resolves a registry host name once and refuses it when it points inside (127.0.0.1), before any connection', async () => {
    const s = await scripted([{ status: 200, body: 'icon' }]);
    try {
      const port = new URL(s.url).port;
      const asked: string[] = [];
      // `icons.example.test` exists in no DNS: only the injected answer can take a request anywhere.
      const resolveHost = async (host: string) => {
        asked.push(host);
        return ['127.0.0.1'];
      };
      const guarded = new HttpClient({ resolveHost, retries: 0 });
      await expect(guarded.request(`http://icons.example.test:${port}/i.png`, { untrusted: true })).rejects.toMatchObject({ kind: 'blocked_host' });
      expect(s.count()).toBe(0);
      // The same name, private hosts allowed (local fakes): the connection goes to the checked address.
      const { http } = client({ resolveHost });
      const res = await http.request(`http://icons.example.test:${port}/i.png`, { untrusted: true });
      expect(new TextDecoder().decode(res.body)).toBe('icon');
      expect(asked).toEqual(['icons.example.test', 'icons.example.test']);
    } finally {
      await s.close();
    }
  });

  it('follows a redirect from registry data only to an address it may reach', async () => {
    const s = await scripted([{ status: 302, headers: { location: 'http://169.254.169.254/latest/meta-data/' } }]);
    try {
      // The first hop must reach the loopback fake, so its lookup allows private answers; the URL
      // checks then run as in production (private hosts refused), which is where the redirect ends.
      const http = new HttpClient({ resolveHost: async () => ['127.0.0.1'], allowPrivateHosts: true, retries: 0 });
      Object.defineProperty(http.options, 'allowPrivateHosts', { value: false });
      await expect(http.request(`${s.url.replace('127.0.0.1', 'icons.example.test')}/i.png`, { untrusted: true })).rejects.toMatchObject({
        kind: 'blocked_host',
        message: 'refusing private address 169.254.169.254',
      });
      expect(s.count()).toBe(1);
    } finally {
      await s.close();
    }
  });

  it('bounds concurrency per host', async () => {
    const s = await scripted(Array.from({ length: 12 }, () => ({ status: 200 })));
    try {
      const { http } = client({ perHostConcurrency: 3 });
      await Promise.all(Array.from({ length: 12 }, () => http.request(s.url)));
      expect(s.maxInFlight()).toBeLessThanOrEqual(3);
      expect(s.count()).toBe(12);
    } finally {
      await s.close();
    }
  });
});

describe('helpers', () => {
  it('parses Retry-After seconds and dates', () => {
    expect(parseRetryAfter('5', 0)).toBe(5000);
    expect(parseRetryAfter('Wed, 21 Oct 2015 07:28:10 GMT', Date.parse('Wed, 21 Oct 2015 07:28:00 GMT'))).toBe(10_000);
    expect(parseRetryAfter(null, 0)).toBeUndefined();
    expect(parseRetryAfter('soon', 0)).toBeUndefined();
  });

  it('KeyedLimiter queues beyond the limit and releases in order', async () => {
    const l = new KeyedLimiter(1);
    const order: number[] = [];
    let release: () => void = () => undefined;
    const first = l.run('a', () => new Promise<void>((r) => (release = r)).then(() => void order.push(1)));
    const second = l.run('a', async () => void order.push(2));
    const other = l.run('b', async () => void order.push(3));
    await other;
    release();
    await Promise.all([first, second]);
    expect(order).toEqual([3, 1, 2]);
  });
});
