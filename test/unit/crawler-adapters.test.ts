import { isWebp128 } from '../../lambdas/catalog-core';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PackageDownloads, pep503 } from '../../lambdas/crawler/adapters/downloads';
import { GithubClient, GithubRateLimited, parseGithubRepo, truncateUtf8 } from '../../lambdas/crawler/adapters/github';
import { McpHealthChecker } from '../../lambdas/crawler/adapters/health';
import { IconPipeline, sniffImage, svgProblem } from '../../lambdas/crawler/adapters/icons';
import { RegistryClient, UpstreamError } from '../../lambdas/crawler/adapters/registry-client';
import { HttpClient } from '../../lambdas/crawler/http/http-client';
import { startFakeRegistry, startFakeUpstreams, type FakeUpstreams } from '../support/crawler-fakes';
import { row } from '../support/crawler-memory';

// Timeouts no loopback fake reaches, however loaded the machine (as crawler-env.ts): each fake answers
// or fails of its own accord; the timeouts themselves are tested with small ones (the slow remote below, crawler-http.test.ts).
const http = () => new HttpClient({ allowPrivateHosts: true, timeoutMs: 120_000, baseDelayMs: 1, retries: 2 });

let fakes: FakeUpstreams;

beforeAll(async () => {
  fakes = await startFakeUpstreams();
});
afterAll(() => fakes.close());

describe('icons', () => {
  const pipeline = () => new IconPipeline({ http: http() });

  it('re-encodes PNG and safe SVG to 128x128 webp', async () => {
    for (const kind of ['png', 'svg'] as const) {
      const got = await pipeline().fetchIcon([fakes.icons.icon(kind, 'a')]);
      if ('refused' in got) throw new Error(got.refused.join('; '));
      expect(await isWebp128(got.webp)).toBe(true);
    }
  });

  it('refuses SVG with scripts, oversized bodies and non-images, then takes the next candidate', async () => {
    const got = await pipeline().fetchIcon([
      fakes.icons.icon('svg-script', 'a'),
      fakes.icons.icon('big', 'a'),
      fakes.icons.icon('html', 'a'),
      fakes.icons.icon('png', 'fallback'),
    ]);
    if ('refused' in got) throw new Error(got.refused.join('; '));
    expect(got.source).toBe(fakes.icons.icon('png', 'fallback'));
    const none = await pipeline().fetchIcon([fakes.icons.icon('svg-script', 'a'), fakes.icons.icon('big', 'a'), fakes.icons.icon('html', 'a')]);
    expect('refused' in none && none.refused).toEqual([expect.stringMatching(/script/), expect.stringMatching(/cap/), expect.stringMatching(/not an image/)]);
  });

  it('detects images by their bytes and unsafe SVG constructs', () => {
    expect(sniffImage(new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))).toBe('png');
    expect(sniffImage(new TextEncoder().encode('<?xml version="1.0"?>\n<svg/>'))).toBe('svg');
    expect(sniffImage(new TextEncoder().encode('<html>'))).toBeUndefined();
    expect(svgProblem('<svg onload="x()"/>')).toMatch(/event handler/);
    expect(svgProblem('<svg><a href="javascript:alert(1)"/></svg>')).toMatch(/javascript/);
    expect(svgProblem('<svg><image href="https://evil.example/x.png"/></svg>')).toMatch(/external/);
    expect(svgProblem('<svg><image xlink:href="file:///etc/passwd"/></svg>')).toMatch(/external/);
    expect(svgProblem('<svg><foreignObject/></svg>')).toMatch(/foreignObject/);
    expect(svgProblem('<svg><use href="#a"/><image href="data:image/png;base64,AAAA"/></svg>')).toBeUndefined();
  });
});

describe('GitHub', () => {
  it('parses repository URLs', () => {
    expect(parseGithubRepo('https://github.com/modelcontextprotocol/servers/tree/main/src/git')).toEqual({ owner: 'modelcontextprotocol', repo: 'servers' });
    expect(parseGithubRepo('git+https://github.com/a/b.git')).toEqual({ owner: 'a', repo: 'b' });
    expect(parseGithubRepo('https://gitlab.com/a/b')).toBeUndefined();
    expect(parseGithubRepo('https://github.com/a')).toBeUndefined();
  });

  it('reads repository facts with a token, then answers from the ETag cache (304)', async () => {
    const gh = new GithubClient({ apiUrl: fakes.github.url, http: http(), token: async () => 'secret' });
    fakes.github.override('acme/tools', { stars: 1234, license: { spdx_id: 'NOASSERTION', name: 'Other' } });
    const first = await gh.repository({ owner: 'acme', repo: 'tools' });
    expect(first.value).toMatchObject({ exists: true, stars: 1234, license: 'Other', language: expect.any(String) });
    expect(first.value.licenseSpdx).toBeUndefined();
    expect(first.etag).toBeDefined();
    const before = fakes.github.counts.notModified;
    const second = await gh.repository({ owner: 'acme', repo: 'tools' }, first);
    expect(second.value).toEqual(first.value);
    expect(fakes.github.counts.notModified).toBe(before + 1);
    expect(fakes.github.authorizations.at(-1)).toBe('Bearer secret');
    fakes.github.override('acme/gone', { missing: true });
    expect((await gh.repository({ owner: 'acme', repo: 'gone' })).value.exists).toBe(false);
  });

  it('decodes the README and caps it at the limit on a character boundary', async () => {
    fakes.github.override('acme/big', { readme: `${'é'.repeat(600)}` });
    const gh = new GithubClient({ apiUrl: fakes.github.url, http: http(), readmeMaxBytes: 1001 });
    const { response } = await gh.readme({ owner: 'acme', repo: 'big' }, 'packages/server');
    const r = response.value;
    if (!r) throw new Error('no README');
    expect(r).toMatchObject({ path: 'packages/server/README.md', size: 1200, truncated: true });
    expect(Buffer.byteLength(r.content)).toBe(1000);
    expect(r.content).toBe('é'.repeat(500));
    fakes.github.override('acme/none', { readme: null });
    expect((await gh.readme({ owner: 'acme', repo: 'none' }, undefined)).response.value).toBeNull();
    expect(truncateUtf8(new TextEncoder().encode('abc'), 10)).toEqual({ text: 'abc', truncated: false });
  });

  it('stops calling GitHub once the rate limit is exhausted', async () => {
    let calls = 0;
    const server = createServer((_req, res) => {
      calls++;
      res.writeHead(403, { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(Math.floor(Date.now() / 1000) + 3600) }).end('{}');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const gh = new GithubClient({ apiUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, http: http() });
      await expect(gh.repository({ owner: 'a', repo: 'b' })).rejects.toBeInstanceOf(GithubRateLimited);
      await expect(gh.repository({ owner: 'a', repo: 'c' })).rejects.toBeInstanceOf(GithubRateLimited);
      expect(calls).toBe(1);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    }
  });
});

describe('package downloads', () => {
  it('asks npm (scoped names kept) and PyPI (PEP 503 names); unknown packages are undefined', async () => {
    const d = new PackageDownloads({ npmUrl: fakes.downloads.url, pypiUrl: fakes.downloads.url, http: http() });
    expect(await d.npm('@modelcontextprotocol/server-everything')).toEqual(expect.any(Number));
    expect(fakes.downloads.requests.at(-1)).toBe('GET /downloads/point/last-month/@modelcontextprotocol/server-everything');
    expect(await d.pypi('Mcp_Server.Fetch')).toEqual(expect.any(Number));
    expect(fakes.downloads.requests.at(-1)).toBe('GET /api/packages/mcp-server-fetch/recent');
    expect(pep503('A__b..C')).toBe('a-b-c');
    expect(await d.npm('not a package!')).toBeUndefined();
  });
});

describe('remote health (MCP SDK client)', () => {
  const checker = (timeoutMs = 120_000) => new McpHealthChecker({ http: new HttpClient({ allowPrivateHosts: true, breakerThreshold: 100 }), timeoutMs });

  it('lists tools of a live server over Streamable HTTP and over SSE', async () => {
    for (const type of ['streamable-http', 'sse'] as const) {
      const h = await checker().check({ type, url: fakes.mcp.remote('live', `x-${type}`, type) });
      expect(h).toMatchObject({ live: true, toolCount: 3 });
      expect(h?.tools?.map((t) => t.name)).toEqual(['query_database', 'search_docs', 'send_message']);
      expect(h?.tools?.[0].inputSchema).toEqual({ type: 'object', properties: { q: { type: 'string' } } });
    }
  });

  it('reports 401 as live with auth required, refused and slow servers as not live', async () => {
    expect(await checker().check({ type: 'streamable-http', url: fakes.mcp.remote('auth', 'a', 'streamable-http') })).toMatchObject({
      live: true,
      authRequired: true,
    });
    const dead = await checker().check({ type: 'streamable-http', url: fakes.mcp.remote('dead', 'd', 'streamable-http') });
    expect(dead).toMatchObject({ live: false });
    const slow = await checker(300).check({ type: 'streamable-http', url: fakes.mcp.remote('slow', 's', 'streamable-http') });
    expect(slow).toMatchObject({ live: false, error: expect.stringMatching(/timeout/) });
    expect(await checker().check({ type: 'streamable-http', url: 'https://{tenant}.example.com/mcp' })).toBeUndefined();
  });
});

describe('registry client', () => {
  it('pages with the opaque cursor and passes version, limit, include_deleted and updated_since', async () => {
    const rows = Array.from({ length: 5 }, (_, i) => row(`io.github.u/s${i}`, '1.0.0', { updatedAt: `2025-10-0${i + 1}T00:00:00Z` }));
    const reg = await startFakeRegistry(rows);
    try {
      const client = new RegistryClient({ baseUrl: `${reg.url}/`, pageSize: 2, http: http() });
      const p1 = await client.fetchPage({});
      expect(p1.rows).toHaveLength(2);
      expect(p1.serverDate).toMatch(/Z$/);
      const p2 = await client.fetchPage({ cursor: p1.nextCursor });
      const p3 = await client.fetchPage({ cursor: p2.nextCursor });
      expect(p3.rows).toHaveLength(1);
      expect(p3.nextCursor).toBeUndefined();
      const since = await client.fetchPage({ updatedSince: '2025-10-04T00:00:00.000Z' });
      expect(since.rows).toHaveLength(2);
      expect(reg.requests[0]).toBe('GET /v0.1/servers?version=latest&limit=2&include_deleted=true');
      expect(reg.requests.at(-1)).toContain('updated_since=2025-10-04T00%3A00%3A00.000Z');
      reg.fault({ page: 0, kind: '500', times: 5 });
      await expect(client.fetchPage({})).rejects.toBeInstanceOf(UpstreamError);
    } finally {
      await reg.close();
    }
  });
});
