/**
 * Loopback fakes of everything the crawler talks to: the upstream registry (serving real rows
 * page by page), GitHub (with ETag/304), npm and PyPI download stats, icon hosts and remote MCP
 * servers (live over Streamable HTTP and SSE with the SDK's server, 401, dead, slow).
 *
 * Each fake is deterministic: what it answers depends only on the request (hashes of names),
 * so the same crawl gives the same catalog.
 */

import { createHash } from 'node:crypto';
import { readFileSync, existsSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Server as McpServer } from '@modelcontextprotocol/sdk/server/index.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import sharp from 'sharp';

export const SAMPLE_PATH = join(__dirname, '..', '..', '..', 'shared', 'reference', 'registry', 'samples', 'mcp-insights-servers-2025-10-21.json');
export const FIXTURE_ROWS_PATH = join(__dirname, '..', 'fixtures', 'crawler', 'registry-sample-rows.json');

/** The registry sample (1,289 rows), or undefined when ../shared is not checked out. */
export function loadSampleRows(): unknown[] | undefined {
  if (!existsSync(SAMPLE_PATH)) return undefined;
  return JSON.parse(readFileSync(SAMPLE_PATH, 'utf8').replace(/^\uFEFF/, '')) as unknown[];
}

/** The committed ~40 real rows from the sample (always available). */
export function loadFixtureRows(): unknown[] {
  return JSON.parse(readFileSync(FIXTURE_ROWS_PATH, 'utf8')) as unknown[];
}

export function hashOf(s: string): number {
  return createHash('sha256').update(s).digest().readUInt32BE(0);
}

type Handler = (req: IncomingMessage, res: ServerResponse, url: URL) => void | Promise<void>;

export interface Fake {
  url: string;
  requests: string[];
  close(): Promise<void>;
}

async function listen(handler: Handler): Promise<{ server: HttpServer; url: string; requests: string[] }> {
  const requests: string[] = [];
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    requests.push(`${req.method} ${url.pathname}${url.search}`);
    Promise.resolve(handler(req, res, url)).catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(String(err));
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { server, url: `http://127.0.0.1:${port}`, requests };
}

function closeServer(server: HttpServer): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

// ---------------------------------------------------------------------------------------------
// Upstream registry
// ---------------------------------------------------------------------------------------------

export type RegistryFault = { page: number; kind: '500' | '429' | 'timeout' | 'reset'; times?: number };

export interface FakeRegistry extends Fake {
  setRows(rows: unknown[]): void;
  /** Injects a fault on a page (0-based, counted in the current listing); `times` defaults to 1. */
  fault(f: RegistryFault): void;
  pageRequests(): string[];
}

function officialMeta(row: unknown): { updatedAt?: string; isLatest?: boolean } {
  if (typeof row !== 'object' || row === null) return {};
  const meta = (row as { _meta?: Record<string, unknown> })._meta?.['io.modelcontextprotocol.registry/official'];
  return typeof meta === 'object' && meta !== null ? (meta as { updatedAt?: string; isLatest?: boolean }) : {};
}

/**
 * Serves `rows` as `/v0.1/servers` pages. Like the crawl the sample came from, it ignores
 * `version=latest` unless `latestOnly` is set, so every version of a name arrives. Cursors are
 * opaque offsets; `updated_since` keeps rows whose `updatedAt` is at or after it.
 */
export async function startFakeRegistry(initial: unknown[], opts: { latestOnly?: boolean; maxPageSize?: number } = {}): Promise<FakeRegistry> {
  let rows = initial;
  const faults: Array<Required<RegistryFault>> = [];
  const pending = new Set<ServerResponse>();
  const { server, url, requests } = await listen((req, res, u) => {
    if (u.pathname !== '/v0.1/servers') return json(res, 404, { error: 'not found' });
    const limit = Math.min(Number(u.searchParams.get('limit') ?? 30), opts.maxPageSize ?? 100);
    const cursor = u.searchParams.get('cursor');
    const offset = cursor === null ? 0 : Number(Buffer.from(cursor, 'base64url').toString('utf8').replace(/^o:/, ''));
    if (!Number.isInteger(offset) || offset < 0) return json(res, 400, { error: 'bad cursor' });
    const page = Math.floor(offset / limit);
    const fault = faults.find((f) => f.page === page && f.times > 0);
    if (fault) {
      fault.times--;
      if (fault.kind === '500') return json(res, 500, { error: 'injected' });
      if (fault.kind === '429') return json(res, 429, { error: 'slow down' }, { 'retry-after': '0' });
      if (fault.kind === 'reset') {
        req.socket.destroy();
        return;
      }
      pending.add(res); // 'timeout': never answer
      return;
    }
    const since = u.searchParams.get('updated_since');
    let list = rows;
    if (opts.latestOnly && u.searchParams.get('version') === 'latest') list = list.filter((r) => officialMeta(r).isLatest === true);
    if (since !== null) {
      const t = Date.parse(since);
      list = list.filter((r) => {
        const at = officialMeta(r).updatedAt;
        return at !== undefined && Date.parse(at) >= t;
      });
    }
    const slice = list.slice(offset, offset + limit);
    const next = offset + limit < list.length ? Buffer.from(`o:${offset + limit}`).toString('base64url') : undefined;
    json(res, 200, { servers: slice, metadata: { count: slice.length, ...(next && { nextCursor: next }) } });
  });
  return {
    url,
    requests,
    setRows: (r) => {
      rows = r;
    },
    fault: (f) => faults.push({ times: 1, ...f }),
    pageRequests: () => requests.filter((r) => r.includes('/v0.1/servers')),
    close: async () => {
      for (const r of pending) r.destroy();
      await closeServer(server);
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Icons
// ---------------------------------------------------------------------------------------------

export type IconKind = 'png' | 'svg' | 'svg-script' | 'big' | 'html';

export interface FakeIcons extends Fake {
  /** The URL of an icon of the given kind. */
  icon(kind: IconKind, name: string): string;
}

export async function startFakeIcons(): Promise<FakeIcons> {
  const png = await sharp({ create: { width: 200, height: 160, channels: 4, background: { r: 30, g: 120, b: 220, alpha: 1 } } })
    .png()
    .toBuffer();
  const big = Buffer.concat([png.subarray(0, 8), Buffer.alloc(3 * 1024 * 1024, 7)]);
  const svg = '<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64"><circle cx="32" cy="32" r="30" fill="#e11d48"/></svg>';
  const svgScript =
    '<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64"><script>alert(document.cookie)</script><rect width="64" height="64"/></svg>';
  const { server, url, requests } = await listen((_req, res, u) => {
    const kind = u.pathname.split('/')[1];
    if (kind === 'png') return void res.writeHead(200, { 'content-type': 'image/png' }).end(png);
    if (kind === 'svg') return void res.writeHead(200, { 'content-type': 'image/svg+xml' }).end(svg);
    if (kind === 'svg-script') return void res.writeHead(200, { 'content-type': 'image/svg+xml' }).end(svgScript);
    if (kind === 'big') return void res.writeHead(200, { 'content-type': 'image/png' }).end(big);
    if (kind === 'html') return void res.writeHead(200, { 'content-type': 'text/html' }).end('<html><body>not an image</body></html>');
    json(res, 404, { error: 'no such icon' });
  });
  return { url, requests, icon: (kind, name) => `${url}/${kind}/${encodeURIComponent(name)}`, close: () => closeServer(server) };
}

// ---------------------------------------------------------------------------------------------
// GitHub
// ---------------------------------------------------------------------------------------------

export interface RepoOverride {
  stars?: number;
  missing?: boolean;
  readme?: string | null;
  license?: { spdx_id: string; name: string } | null;
  avatar?: IconKind;
}

export interface FakeGithub extends Fake {
  override(ownerRepo: string, o: RepoOverride): void;
  counts: { ok: number; notModified: number; notFound: number };
  authorizations: string[];
}

const LICENSES = [
  { spdx_id: 'MIT', name: 'MIT License' },
  { spdx_id: 'Apache-2.0', name: 'Apache License 2.0' },
  { spdx_id: 'GPL-3.0', name: 'GNU General Public License v3.0' },
  { spdx_id: 'NOASSERTION', name: 'Other' },
  null,
] as const;
const LANGUAGES = ['TypeScript', 'Python', 'Go', 'JavaScript', 'Rust'];
const AVATAR_KINDS: IconKind[] = ['png', 'png', 'png', 'png', 'png', 'png', 'png', 'svg', 'svg-script', 'big', 'html'];

export async function startFakeGithub(icons: FakeIcons, opts: { now?: string } = {}): Promise<FakeGithub> {
  const overrides = new Map<string, RepoOverride>();
  const counts = { ok: 0, notModified: 0, notFound: 0 };
  const authorizations: string[] = [];
  const now = Date.parse(opts.now ?? '2025-10-22T00:00:00Z');
  const send = (req: IncomingMessage, res: ServerResponse, body: unknown) => {
    const text = JSON.stringify(body);
    const etag = `"${createHash('sha1').update(text).digest('hex')}"`;
    if (req.headers['if-none-match'] === etag) {
      counts.notModified++;
      res.writeHead(304, { etag });
      res.end();
      return;
    }
    counts.ok++;
    res.writeHead(200, { 'content-type': 'application/json', etag, 'x-ratelimit-remaining': '4999' });
    res.end(text);
  };
  const { server, url, requests } = await listen((req, res, u) => {
    if (req.headers.authorization) authorizations.push(req.headers.authorization);
    const m = /^\/repos\/([^/]+)\/([^/]+)(\/readme(?:\/(.*))?)?$/.exec(u.pathname);
    if (!m) return json(res, 404, { message: 'Not Found' });
    const [, owner, repo, readmePath, subdir] = m;
    const key = `${owner}/${repo}`.toLowerCase();
    const o = overrides.get(key) ?? {};
    const h = hashOf(key);
    if (o.missing || (o.missing === undefined && h % 17 === 0)) {
      counts.notFound++;
      return json(res, 404, { message: 'Not Found' });
    }
    if (readmePath) {
      const text =
        o.readme !== undefined
          ? o.readme
          : h % 11 === 0
            ? null
            : `# ${repo}\n\nAn MCP server by ${owner}${subdir ? ` (in ${subdir})` : ''}.\n\n## Tools\n\nIt exposes tools for ${['databases and SQL queries', 'web search', 'Slack messages', 'Kubernetes clusters', 'memory and knowledge graphs'][h % 5]}.\n`;
      if (text === null) {
        counts.notFound++;
        return json(res, 404, { message: 'Not Found' });
      }
      const bytes = Buffer.from(text, 'utf8');
      return send(req, res, {
        name: 'README.md',
        path: `${subdir ? `${subdir}/` : ''}README.md`,
        sha: createHash('sha1').update(bytes).digest('hex'),
        size: bytes.byteLength,
        encoding: 'base64',
        content: bytes.toString('base64').replace(/(.{60})/g, '$1\n'),
      });
    }
    const license = o.license !== undefined ? o.license : LICENSES[h % LICENSES.length];
    const avatarKind = o.avatar ?? AVATAR_KINDS[hashOf(owner.toLowerCase()) % AVATAR_KINDS.length];
    send(req, res, {
      full_name: `${owner}/${repo}`,
      stargazers_count: o.stars ?? h % 5000,
      language: LANGUAGES[h % LANGUAGES.length],
      license,
      pushed_at: new Date(now - (h % 400) * 86_400_000).toISOString(),
      default_branch: 'main',
      owner: { login: owner, avatar_url: icons.icon(avatarKind, owner) },
    });
  });
  return {
    url,
    requests,
    counts,
    authorizations,
    override: (k, o) => overrides.set(k.toLowerCase(), { ...overrides.get(k.toLowerCase()), ...o }),
    close: () => closeServer(server),
  };
}

// ---------------------------------------------------------------------------------------------
// npm and PyPI download stats (one server, both APIs)
// ---------------------------------------------------------------------------------------------

export async function startFakeDownloads(): Promise<Fake> {
  const { server, url, requests } = await listen((_req, res, u) => {
    const npm = /^\/downloads\/point\/last-month\/(.+)$/.exec(u.pathname);
    if (npm) {
      const name = decodeURIComponent(npm[1]);
      if (hashOf(name) % 13 === 0) return json(res, 404, { error: 'package not found' });
      return json(res, 200, { downloads: hashOf(name) % 100_000, package: name, start: '2025-09-21', end: '2025-10-20' });
    }
    const pypi = /^\/api\/packages\/([^/]+)\/recent$/.exec(u.pathname);
    if (pypi) {
      const name = pypi[1];
      if (hashOf(name) % 13 === 0) return json(res, 404, { error: 'not found' });
      return json(res, 200, { data: { last_day: 1, last_week: 7, last_month: hashOf(name) % 50_000 }, package: name, type: 'recent_downloads' });
    }
    json(res, 404, { error: 'not found' });
  });
  return { url, requests, close: () => closeServer(server) };
}

// ---------------------------------------------------------------------------------------------
// Remote MCP servers
// ---------------------------------------------------------------------------------------------

export type RemoteKind = 'live' | 'auth' | 'dead' | 'slow';

export interface FakeMcp {
  /** A remote URL of the given kind (SSE remotes get an SSE endpoint). */
  remote(kind: RemoteKind, id: string, type: 'streamable-http' | 'sse'): string;
  /** Tools each live server lists (the same for all). */
  tools: Array<{ name: string; description: string }>;
  counts: { live: number; auth: number; slow: number };
  close(): Promise<void>;
}

export const FAKE_TOOLS = [
  { name: 'query_database', description: 'Run a read-only SQL query against the database' },
  { name: 'search_docs', description: 'Search the documentation' },
  { name: 'send_message', description: 'Send a chat message to a channel' },
];

function mcpServer(): McpServer {
  const server = new McpServer({ name: 'fake-remote', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: FAKE_TOOLS.map((t) => ({ ...t, inputSchema: { type: 'object' as const, properties: { q: { type: 'string' } } } })),
  }));
  return server;
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text === '' ? undefined : (JSON.parse(text) as unknown);
}

/** Four endpoints on separate ports, as separate hosts would be (so one host's breaker spares the others). */
/**
 * `slowDropAfterMs`: a slow remote drops the connection after this long instead of never answering.
 * Unset, only the client's timeout ends the request (the timeout's own test); set, the outcome is
 * the fake's, whatever the machine's load, and a crawl can use a timeout no live fake ever reaches.
 */
export async function startFakeMcp(opts: { slowDropAfterMs?: number } = {}): Promise<FakeMcp> {
  const counts = { live: 0, auth: 0, slow: 0 };
  const sse = new Map<string, SSEServerTransport>();
  const live = await listen(async (req, res, u) => {
    if (u.pathname.startsWith('/sse-messages')) {
      const t = sse.get(u.searchParams.get('sessionId') ?? '');
      if (!t) return json(res, 404, { error: 'unknown session' });
      return t.handlePostMessage(req, res);
    }
    if (u.pathname.startsWith('/sse/')) {
      counts.live++;
      const t = new SSEServerTransport('/sse-messages', res);
      sse.set(t.sessionId, t);
      res.on('close', () => sse.delete(t.sessionId));
      await mcpServer().connect(t);
      return;
    }
    if (req.method !== 'POST') return json(res, 405, { error: 'method not allowed' }, { allow: 'POST' });
    counts.live++;
    const server = mcpServer();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, await readBody(req));
  });
  const auth = await listen((_req, res) => {
    counts.auth++;
    json(res, 401, { error: 'unauthorized' }, { 'www-authenticate': 'Bearer realm="fake"' });
  });
  const held = new Set<ServerResponse>();
  const slow = await listen((_req, res) => {
    counts.slow++;
    held.add(res); // never answers: the client's timeout decides, or the drop below
    if (opts.slowDropAfterMs !== undefined) {
      const timer = setTimeout(() => res.destroy(), opts.slowDropAfterMs);
      res.on('close', () => clearTimeout(timer));
    }
  });
  // A port that was just closed: connections are refused.
  const deadServer = await listen(() => undefined);
  const deadUrl = deadServer.url;
  await closeServer(deadServer.server);
  return {
    tools: FAKE_TOOLS,
    counts,
    remote: (kind, id, type) => {
      const path = encodeURIComponent(id);
      if (kind === 'live') return type === 'sse' ? `${live.url}/sse/${path}` : `${live.url}/mcp/${path}`;
      if (kind === 'auth') return `${auth.url}/mcp/${path}`;
      if (kind === 'slow') return `${slow.url}/mcp/${path}`;
      return `${deadUrl}/mcp/${path}`;
    },
    close: async () => {
      for (const r of held) r.destroy();
      for (const t of sse.values()) await t.close().catch(() => undefined);
      await Promise.all([closeServer(live.server), closeServer(auth.server), closeServer(slow.server)]);
    },
  };
}

// ---------------------------------------------------------------------------------------------
// All the enrichment upstreams at once
// ---------------------------------------------------------------------------------------------

/** The upstreams the crawler enriches from (icon hosts, GitHub, download stats, remote MCP servers). */
export interface FakeUpstreams {
  icons: FakeIcons;
  github: FakeGithub;
  downloads: Fake;
  mcp: FakeMcp;
  close(): Promise<void>;
}

export async function startFakeUpstreams(mcpOpts: { slowDropAfterMs?: number } = {}): Promise<FakeUpstreams> {
  const icons = await startFakeIcons();
  const github = await startFakeGithub(icons);
  const downloads = await startFakeDownloads();
  const mcp = await startFakeMcp(mcpOpts);
  return {
    icons,
    github,
    downloads,
    mcp,
    close: async () => {
      await Promise.all([icons.close(), github.close(), downloads.close(), mcp.close()]);
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Pointing real rows at the fakes
// ---------------------------------------------------------------------------------------------

/** Remote kind of an upstream URL (deterministic): about 55% live, 20% auth, 15% dead, 10% slow. */
export function remoteKindOf(originalUrl: string): RemoteKind {
  const h = hashOf(originalUrl) % 20;
  return h < 11 ? 'live' : h < 15 ? 'auth' : h < 18 ? 'dead' : 'slow';
}

/**
 * A deep copy of `rows` whose remote URLs point at the fake MCP servers and whose icons point at
 * the fake icon host (SVG icons stay SVG; one in three becomes an SVG with a script). Repository
 * URLs stay as they are: the crawler reaches "GitHub" through GITHUB_API_URL.
 */
export function pointRowsAtFakes(rows: unknown[], mcp: FakeMcp, icons: FakeIcons): unknown[] {
  const copy = structuredClone(rows) as Array<Record<string, unknown>>;
  for (const row of copy) {
    const server = (typeof row.server === 'object' && row.server !== null ? row.server : row) as Record<string, unknown>;
    if (Array.isArray(server.remotes)) {
      for (const r of server.remotes as Array<Record<string, unknown>>) {
        if (typeof r.url !== 'string' || /[{}]/.test(r.url) || !/^https?:\/\//.test(r.url)) continue;
        r.url = mcp.remote(remoteKindOf(r.url), r.url, r.type === 'sse' ? 'sse' : 'streamable-http');
      }
    }
    if (Array.isArray(server.icons)) {
      for (const i of server.icons as Array<Record<string, unknown>>) {
        // Only web URLs point at the fake icon host: a `javascript:` or `data:` icon stays as hostile as it came.
        if (typeof i.src !== 'string' || !/^https?:\/\//i.test(i.src)) continue;
        const isSvg = i.mimeType === 'image/svg+xml' || i.src.endsWith('.svg');
        i.src = icons.icon(isSvg ? (hashOf(i.src) % 3 === 0 ? 'svg-script' : 'svg') : 'png', i.src);
      }
    }
  }
  return copy;
}

// ---------------------------------------------------------------------------------------------
// A remote MCP server whose state changes between checks
// ---------------------------------------------------------------------------------------------

export interface FakeTool {
  name: string;
  description?: string;
  inputSchema: { type: 'object'; properties?: Record<string, unknown>; required?: string[] };
  annotations?: Record<string, unknown>;
}

/**
 * One hosted MCP server (Streamable HTTP at `url`) that a test turns down and up and whose tools it
 * changes between checks: `up` answers, `down` answers 503, `refusing` drops every connection.
 */
export interface SwitchableMcp {
  url: string;
  state: 'up' | 'down' | 'refusing';
  tools: FakeTool[];
  /** Requests seen, any state. */
  requests: number;
  close(): Promise<void>;
}

export async function startSwitchableMcp(tools: FakeTool[]): Promise<SwitchableMcp> {
  const fake = { state: 'up' as SwitchableMcp['state'], tools, requests: 0 };
  const { server, url } = await listen(async (req, res) => {
    fake.requests++;
    if (fake.state === 'refusing') return void req.socket.destroy();
    if (fake.state === 'down') return json(res, 503, { error: 'unavailable' });
    if (req.method !== 'POST') return json(res, 405, { error: 'method not allowed' }, { allow: 'POST' });
    const mcp = new McpServer({ name: 'switchable', version: '1.0.0' }, { capabilities: { tools: {} } });
    const listed = fake.tools.map((t) => ({ ...t }));
    mcp.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: listed }));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on('close', () => {
      void transport.close();
      void mcp.close();
    });
    await mcp.connect(transport);
    await transport.handleRequest(req, res, await readBody(req));
  });
  return Object.assign(fake, { url: `${url}/mcp`, close: () => closeServer(server) });
}
