import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { CATEGORIES, installOptions } from '../../lambdas/catalog-core';
import { startTestCatalog, type TestCatalog } from '../support/catalog-harness';
import { makeRecord, type Entry } from '../support/records';
import { FIXTURE, loadFixture } from './catalog-fixture';

/**
 * The catalog over MCP (`/api/mcp`) through the SDK's own client over real HTTP, on the catalog
 * function as the local server mounts it (its `/api` catch-all hands the path to the endpoint):
 * every tool, every bad argument as a tool error (never a protocol error), and the three calls of
 * an agent that finds, inspects and installs a server.
 */

/** A server with every kind of input: a hosted endpoint with a secret header, an npm package with a secret and a plain variable. */
const WEATHER: Entry = {
  record: makeRecord('acme-weather', {
    name: 'io.github.acme/weather',
    title: 'Acme Weather',
    description: 'Forecasts and storm alerts from the xylophonic weather service',
    categories: ['Search & Web'],
    remotes: [
      {
        type: 'streamable-http',
        url: 'https://weather.acme.example/mcp',
        headers: [{ name: 'X-Api-Key', description: 'Your Acme API key', isRequired: true, isSecret: true }],
      },
    ],
    packages: [
      {
        registryType: 'npm',
        identifier: '@acme/weather-mcp',
        version: '2.1.0',
        transport: { type: 'stdio' },
        environmentVariables: [
          { name: 'ACME_TOKEN', description: 'API token', isRequired: true, isSecret: true },
          { name: 'ACME_UNITS', description: 'metric or imperial', default: 'metric' },
        ],
      },
    ],
    health: { live: true, checkedAt: '2026-11-20T00:00:00.000Z', toolCount: 1 },
    toolCount: 1,
    popularity: 0.95,
  }),
  readme: { content: `# Acme Weather\n\n${'Forecasts. '.repeat(600)}`, path: 'README.md', size: 6613, sha: 'w1' },
  tools: [
    {
      name: 'forecast',
      description: 'The forecast for a place',
      inputSchema: { type: 'object', properties: { place: { type: 'string' }, days: { type: 'integer' } }, required: ['place'] },
    },
  ],
};

/** Enough servers on one word for several pages. */
const MANY: Entry[] = Array.from({ length: 7 }, (_, i) => ({
  record: makeRecord(`paged-${i}`, { description: `Quillwort helper number ${i}`, popularity: 0.1 + i / 100 }),
}));

let cat: TestCatalog;
const clients: Client[] = [];

beforeAll(async () => {
  cat = await startTestCatalog({ config: { siteUrlTemplate: 'https://catalog.example/servers/{slug}' } });
  await loadFixture(cat, [...FIXTURE, WEATHER, ...MANY]);
}, 120000);
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
  await cat?.close();
});

async function connect(headers: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: 'catalog-mcp-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${cat.url}/api/mcp`), { requestInit: { headers } }));
  clients.push(client);
  return client;
}

// biome-ignore lint/suspicious/noExplicitAny: assertions read the structured content loosely
type Structured = Record<string, any>;

async function call(c: Client, name: string, args: unknown): Promise<CallToolResult> {
  return (await c.callTool({ name, arguments: args as Record<string, unknown> })) as CallToolResult;
}

async function ok(c: Client, name: string, args: unknown): Promise<{ s: Structured; text: string }> {
  const res = await call(c, name, args);
  if (res.isError) throw new Error(`${name} failed: ${JSON.stringify(res.structuredContent)}`);
  const text = res.content.find((b) => b.type === 'text');
  if (text?.type !== 'text') throw new Error('no text content');
  return { s: res.structuredContent as Structured, text: text.text };
}

async function toolError(c: Client, name: string, args: unknown): Promise<{ code: string; message: string }> {
  const res = await call(c, name, args);
  if (!res.isError) throw new Error(`${name} succeeded unexpectedly: ${JSON.stringify(res.structuredContent)}`);
  return (res.structuredContent as { error: { code: string; message: string } }).error;
}

let c: Client;
beforeAll(async () => {
  c = await connect();
});

describe('initialize and tools/list', () => {
  it('names the server with its icon and tells an agent how to use the tools', () => {
    const info = c.getServerVersion();
    expect(info).toMatchObject({ name: 'mcp-catalog', title: 'MCP server catalog' });
    expect(info?.icons?.[0]).toMatchObject({ mimeType: 'image/svg+xml', src: expect.stringMatching(/^data:image\/svg\+xml;base64,/) });
    const instructions = c.getInstructions() ?? '';
    for (const tool of ['search_servers', 'get_server', 'install_server', 'list_categories']) expect(instructions).toContain(tool);
    expect(c.getServerCapabilities()).toEqual({ tools: { listChanged: false } });
  });

  it('offers four read-only tools, each with an icon, an input and an output schema', async () => {
    const { tools } = await c.listTools();
    expect(tools.map((t) => t.name)).toEqual(['search_servers', 'get_server', 'install_server', 'list_categories']);
    for (const t of tools) {
      expect(t.annotations).toMatchObject({ readOnlyHint: true, openWorldHint: false });
      expect(t.icons?.[0].src).toMatch(/^data:image\/svg\+xml;base64,/);
      expect(Buffer.from(t.icons?.[0].src.split(',')[1] ?? '', 'base64').toString()).toMatch(/^<svg /);
      expect(t.outputSchema?.type).toBe('object');
      expect(t.description?.length).toBeGreaterThan(60);
    }
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    expect(byName.search_servers.inputSchema.required).toEqual(['query']);
    expect(byName.install_server.inputSchema.required).toEqual(['client']);
    expect((byName.search_servers.inputSchema.properties as Structured).category.enum).toEqual([...CATEGORIES]);
  });
});

describe('the three calls of an agent: find, inspect, install', () => {
  it('finds the weather server, reads its tools, and gets the Claude Desktop snippet with its secret', async () => {
    const found = await ok(c, 'search_servers', { query: 'xylophonic forecasts' });
    const hit = found.s.servers[0];
    expect(hit).toEqual({
      slug: 'acme-weather',
      name: 'io.github.acme/weather',
      title: 'Acme Weather',
      description: 'Forecasts and storm alerts from the xylophonic weather service',
      categories: ['Search & Web'],
      transports: ['streamable-http', 'stdio'],
      registryTypes: ['npm', 'remote'],
      grades: { license: 'A', maintenance: 'A', quality: 'untested' },
      status: 'active',
      live: true,
      toolCount: 1,
      stars: 10,
      isOfficial: true,
      url: 'https://catalog.example/servers/acme-weather',
    });
    expect(found.text).toContain('Acme Weather — io.github.acme/weather (slug: acme-weather)');

    const shown = await ok(c, 'get_server', { slug: hit.slug });
    expect(shown.s.tools).toEqual(WEATHER.tools);
    expect(shown.s.text).toBeUndefined();
    expect(shown.text).toContain('- forecast(place, days?): The forecast for a place');

    const installed = await ok(c, 'install_server', { slug: hit.slug, client: 'claude-desktop' });
    const site = installOptions(WEATHER.record);
    expect(installed.s.options.map((o: Structured) => o.snippet.text)).toEqual(site.map((o) => o.snippets.find((s) => s.client === 'claude-desktop')?.text));
    expect(installed.s.options[0]).toMatchObject({
      title: 'Hosted endpoint (Streamable HTTP)',
      kind: 'remote',
      snippet: { where: 'claude_desktop_config.json', language: 'json' },
      inputs: [{ kind: 'header', name: 'X-Api-Key', required: true, secret: true }],
    });
    expect(installed.s.options[1].inputs).toEqual([
      expect.objectContaining({ kind: 'env', name: 'ACME_TOKEN', required: true, secret: true }),
      expect.objectContaining({ kind: 'env', name: 'ACME_UNITS', secret: false, default: 'metric' }),
    ]);
    expect(installed.text).toContain('Put this in claude_desktop_config.json:');
    expect(installed.text).toContain('ACME_TOKEN (env, required, SECRET');
    expect(installed.text).toContain(installed.s.options[1].snippet.text);
  });
});

describe('search_servers', () => {
  it('filters by category, type and remoteOnly', async () => {
    const cloud = await ok(c, 'search_servers', { query: 'hosted deployment helper', category: 'Cloud & DevOps' });
    expect(cloud.s.servers.map((s: Structured) => s.slug)).toEqual(['gamma-remote']);
    const none = await ok(c, 'search_servers', { query: 'hosted deployment helper', category: 'Security' });
    expect(none.s).toEqual({ query: 'hosted deployment helper', total: 0, servers: [] });
    expect(none.text).toMatch(/^No server matches/);
    const remote = await ok(c, 'search_servers', { query: 'postgres', remoteOnly: true });
    expect(remote.s.servers.every((s: Structured) => s.registryTypes.includes('remote'))).toBe(true);
    expect(remote.s.servers.map((s: Structured) => s.slug)).toContain('alpha-db');
    const pypi = await ok(c, 'search_servers', { query: 'search the web', type: 'pypi' });
    expect(pypi.s.servers.map((s: Structured) => s.slug)).toEqual(['beta-search']);
  });

  it('pages with an opaque cursor bound to its query; the last page has none', async () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await ok(c, 'search_servers', { query: 'quillwort', limit: 3, ...(cursor && { cursor }) });
      expect(page.s.total).toBe(7);
      seen.push(...page.s.servers.map((s: Structured) => s.slug));
      cursor = page.s.nextCursor;
      if (cursor) expect(page.text).toContain(`cursor "${cursor}"`);
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen.sort()).toEqual(MANY.map((e) => e.record.slug).sort());
  });
});

describe('get_server and install_server', () => {
  it('finds a server by its registry name too, and shows the beginning of its README', async () => {
    const { s, text } = await ok(c, 'get_server', { name: 'io.github.acme/weather' });
    expect(s).toMatchObject({
      slug: 'acme-weather',
      version: '1.0.0',
      health: { live: true, checkedAt: '2026-11-20T00:00:00.000Z', toolCount: 1 },
      packages: [{ registryType: 'npm', identifier: '@acme/weather-mcp', version: '2.1.0', transport: 'stdio' }],
      remotes: [{ type: 'streamable-http', url: 'https://weather.acme.example/mcp' }],
      install: [
        { id: 'remote-0', title: 'Hosted endpoint (Streamable HTTP)', kind: 'remote' },
        { id: 'pkg-1', title: 'npm @acme/weather-mcp 2.1.0', kind: 'package' },
      ],
      license: 'MIT License',
      repositoryUrl: 'https://github.com/example/acme-weather',
    });
    expect(s.readme.text).toHaveLength(4000);
    expect(s.readme.truncated).toBe(true);
    expect(text).toContain('README (README.md, beginning):');
  });

  it('gives every client its own snippet; generic has none for a local package and says why', async () => {
    for (const client of ['claude-code', 'vscode', 'cursor'] as const) {
      const { s } = await ok(c, 'install_server', { name: 'io.github.acme/weather', client });
      expect(s.options.map((o: Structured) => o.snippet.text)).toEqual(
        installOptions(WEATHER.record).map((o) => o.snippets.find((x) => x.client === client)?.text),
      );
    }
    const { s } = await ok(c, 'install_server', { slug: 'acme-weather', client: 'generic' });
    expect(s.options[0].snippet.text).toContain('URL: https://weather.acme.example/mcp');
    expect(s.options[1].snippet).toBeUndefined();
    expect(s.options[1].notes[0]).toMatch(/No generic snippet for a local \(stdio\) package/);
  });
});

describe('list_categories', () => {
  it('lists every category with its count, most first', async () => {
    const { s, text } = await ok(c, 'list_categories', {});
    expect(s.total).toBe(FIXTURE.length + 1 + MANY.length);
    expect(s.categories.map((x: Structured) => x.name).sort()).toEqual([...CATEGORIES].sort());
    const counts = s.categories.map((x: Structured) => x.count);
    expect(counts).toEqual([...counts].sort((a, b) => b - a));
    expect(s.categories.find((x: Structured) => x.name === 'Search & Web').count).toBeGreaterThanOrEqual(2);
    expect(s.categories.find((x: Structured) => x.name === 'Security').count).toBe(0);
    expect(text).toMatch(/^\d+ servers in 14 categories/);
  });
});

describe('bad arguments are tool errors with clear messages, never protocol errors', () => {
  it.each([
    ['search_servers', {}, 'invalid_argument', /^query is required/],
    ['search_servers', { query: '   ' }, 'invalid_argument', /^query may not be empty/],
    ['search_servers', { query: 'x'.repeat(101) }, 'invalid_argument', /^query must be at most 100 characters/],
    ['search_servers', { query: 42 }, 'invalid_argument', /^query must be a string/],
    ['search_servers', { query: 'x', category: 'Weather' }, 'invalid_argument', /^category must be one of the 14 labels/],
    ['search_servers', { query: 'x', type: 'cargo' }, 'invalid_argument', /^type must be one of npm, pypi/],
    ['search_servers', { query: 'x', type: 'npm', remoteOnly: true }, 'invalid_argument', /cannot be combined with type "npm"/],
    ['search_servers', { query: 'x', limit: 0 }, 'invalid_argument', /^limit must be from 1 to 50/],
    ['search_servers', { query: 'x', limit: 2.5 }, 'invalid_argument', /^limit must be an integer/],
    ['search_servers', { query: 'x', cursor: 'not-a-cursor' }, 'invalid_argument', /^cursor is not a cursor of this search/],
    ['search_servers', { query: 'x', sort: 'stars' }, 'invalid_argument', /^unknown argument "sort"; search_servers takes query, category/],
    ['search_servers', { query: 'x', orgOnly: 'yes' }, 'invalid_argument', /orgOnly/],
    // This catalog has no allow-list file (catalog-mcp-org.test.ts has one).
    ['search_servers', { query: 'x', orgOnly: true }, 'invalid_argument', /^orgOnly needs an organisation allow-list, and this deployment has none/],
    ['search_servers', 'weather', 'invalid_argument', /^arguments must be an object/],
    ['get_server', { slug: 'no-such-server' }, 'not_found', /^no server with slug "no-such-server" in the catalog; search_servers finds/],
    ['get_server', { name: 'io.github.nobody/nothing' }, 'not_found', /^no server with name "io.github.nobody\/nothing"/],
    ['get_server', {}, 'invalid_argument', /^slug or name is required/],
    ['get_server', { slug: 'acme-weather', name: 'io.github.acme/weather' }, 'invalid_argument', /^give slug or name, not both/],
    ['get_server', { slug: 'x'.repeat(201) }, 'invalid_argument', /^slug must be at most 200 characters/],
    [
      'install_server',
      { slug: 'acme-weather', client: 'emacs' },
      'invalid_argument',
      /^client must be one of claude-desktop, claude-code, vscode, cursor, generic/,
    ],
    ['install_server', { slug: 'acme-weather' }, 'invalid_argument', /^client is required/],
    ['install_server', { slug: 'no-such-server', client: 'cursor' }, 'not_found', /^no server with slug "no-such-server"/],
    ['list_categories', { all: true }, 'invalid_argument', /^unknown argument "all"/],
  ])('%s %j is %s', async (tool, args, code, message) => {
    const err = await toolError(c, tool, args);
    expect(err.code).toBe(code);
    expect(err.message).toMatch(message);
  });

  it('a cursor of another search does not continue this one', async () => {
    const first = await ok(c, 'search_servers', { query: 'quillwort', limit: 2 });
    const err = await toolError(c, 'search_servers', { query: 'quillwort', category: 'Other', limit: 2, cursor: first.s.nextCursor });
    expect(err).toEqual({ code: 'invalid_argument', message: expect.stringMatching(/^cursor is not a cursor of this search/) });
    // The same search goes on with it, at another page size too.
    expect((await ok(c, 'search_servers', { query: 'quillwort', limit: 5, cursor: first.s.nextCursor })).s.servers).toHaveLength(5);
  });
});
