import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../bin/local-stack/backends';
import { runCli, spawnStack, until } from '../support/stack-process';

/**
 * `npm start`, `npm run seed`, `npm run token` and crash clean-up, as processes: the stack on a
 * fresh DATA_DIR comes up with demo data, a token minted for the same DATA_DIR and PORT pins a
 * favorite, a seed run while it serves is visible at once, and killing the server with SIGKILL
 * takes its Java and S3 children down with it.
 */
const dataDir = mkdtempSync(join(tmpdir(), 'local-stack-'));
let server: ChildProcess | undefined;
/** The server's stderr, shown when an expectation fails (warnings such as an unreadable snapshot). */
let serverLog = '';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Resolves when the process has exited (a graceful stop: the stack stops its backends first), whenever that is. */
function exited(child: ChildProcess | undefined): Promise<void> {
  return new Promise((r) => (!child || child.exitCode !== null || child.signalCode !== null ? r() : child.once('exit', () => r())));
}

function start(port: number): ChildProcess {
  return spawnStack(dataDir, port, (text) => {
    serverLog += text;
  });
}

async function total(base: string): Promise<number> {
  const res = await fetch(`${base}/api/mcps?limit=1`);
  const body = (await res.json()) as { meta: { pagination: { total: number } } };
  return body.meta.pagination.total;
}

afterAll(() => {
  server?.kill('SIGKILL');
  for (const f of ['stack.json', 'dynamodb.pid', 's3.pid']) {
    const p = join(dataDir, 'run', f);
    if (!existsSync(p)) continue;
    // stack.json names the server's own node process (tsx runs it as a child, which a kill of
    // the wrapper would orphan after a failed assertion).
    const pid = f === 'stack.json' ? (JSON.parse(readFileSync(p, 'utf8')) as { pid: number }).pid : Number(readFileSync(p, 'utf8'));
    if (alive(pid)) process.kill(pid, 'SIGKILL');
  }
  rmSync(dataDir, { recursive: true, force: true });
});

it('runs, seeds while running, and leaves no child behind after a crash', async () => {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  server = start(port);
  // Its own budget: the first start seeds 300 demo servers, which on a loaded machine took over 90 s.
  await until('healthz 200', async () => ((await fetch(`${base}/healthz`)).status === 200 ? true : undefined), 300_000);
  expect(await total(base)).toBe(300);

  // `npm run token` with the stack's DATA_DIR and PORT: the local issuer's key, the stack's audience.
  const minted = await runCli(['bin/token.ts', '--sub', 'alice', '--scope', 'memory:read memory:write'], {
    ...process.env,
    DATA_DIR: dataDir,
    PORT: String(port),
  });
  if (minted.status !== 0) console.error(`token CLI:\n${minted.stderr}`);
  expect(minted.status).toBe(0);
  const auth = { authorization: `Bearer ${minted.stdout.trim()}` };
  const first = ((await (await fetch(`${base}/api/mcps?limit=1&sort=name`)).json()) as { data: Array<{ slug: string }> }).data[0].slug;
  const pinned = await fetch(`${base}/api/favorites`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify({ slug: first }),
  });
  if (pinned.status !== 200) console.error(`server log:\n${serverLog}`);
  expect(pinned.status).toBe(200);
  const favorites = await fetch(`${base}/api/favorites`, { headers: auth });
  expect(((await favorites.json()) as { data: Array<{ slug: string }> }).data.map((d) => d.slug)).toEqual([first]);
  // The same token puts catalog reads on the per-user tier; without it they are anonymous.
  expect((await fetch(`${base}/api/facets`, { headers: auth })).headers.get('x-ratelimit-limit')).toBe('200');
  expect((await fetch(`${base}/api/facets`)).headers.get('x-ratelimit-limit')).toBe('60');
  expect((await fetch(`${base}/api/favorites`)).status).toBe(401);

  // The same token on the memory REST API and the MCP endpoint of the same process.
  const created = await fetch(`${base}/v1/memories`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'default' }),
  });
  expect(created.status).toBe(201);
  const note = `${base}/v1/memories/default/notes/inbox%2Fstart.md`;
  const put = await fetch(note, { method: 'PUT', headers: { ...auth, 'content-type': 'text/markdown' }, body: '# Started\nby npm start' });
  expect(put.status).toBe(200);
  const mcp = await fetch(`${base}/mcp`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'memory__read', arguments: { path: 'inbox/start.md' } } }),
  });
  expect(mcp.status).toBe(200);
  expect(((await mcp.json()) as { result: { structuredContent: { title: string } } }).result.structuredContent.title).toBe('Started');
  expect((await fetch(`${base}/.well-known/oauth-protected-resource/mcp`)).status).toBe(200);

  const seeded = await runCli(['bin/seed.ts', '--count', '40'], { ...process.env, DATA_DIR: dataDir });
  expect(seeded.status).toBe(0);
  expect(seeded.stdout).toMatch(/seeded 40 servers/);
  expect(seeded.stderr).toMatch(/using the running local stack/);
  // Not a terminal: progress comes as whole lines, the last one the total.
  expect(seeded.stderr).not.toContain('\r');
  expect(seeded.stderr.trim().split('\n').pop()).toBe('[seed] 40/40 servers');
  const afterSeed = await total(base);
  if (afterSeed !== 40) console.error(`server log:\n${serverLog}`);
  expect(afterSeed).toBe(40);

  const stack = JSON.parse(readFileSync(join(dataDir, 'run', 'stack.json'), 'utf8')) as { pid: number };
  const javaPid = Number(readFileSync(join(dataDir, 'run', 'dynamodb.pid'), 'utf8'));
  const s3Pid = Number(readFileSync(join(dataDir, 'run', 's3.pid'), 'utf8'));
  expect(alive(javaPid) && alive(s3Pid)).toBe(true);
  process.kill(stack.pid, 'SIGKILL');
  // The watchdogs poll their parent every second; under load that and Java's exit take a while (the default budget).
  await until('children to die', async () => (!alive(javaPid) && !alive(s3Pid) ? true : undefined));

  // With no server running, the seed starts backends of its own on the same data dir.
  const alone = await runCli(['bin/seed.ts', '--count', '7'], { ...process.env, DATA_DIR: dataDir });
  expect(alone.status).toBe(0);
  expect(alone.stderr).toMatch(/started local backends/);

  // A restart serves the persisted catalog (not demo data again).
  server = start(port);
  await until('healthz 200 after restart', async () => ((await fetch(`${base}/healthz`)).status === 200 ? true : undefined));
  expect(await total(base)).toBe(7);
  // Memories persist in DATA_DIR across restarts too.
  expect(await (await fetch(note, { headers: { ...auth, accept: 'text/markdown' } })).text()).toBe('# Started\nby npm start');
  server.kill('SIGTERM');
  await exited(server);
  expect(existsSync(join(dataDir, 'run', 'stack.json'))).toBe(false);

  // A search snapshot of an older format (an upgrade) is rebuilt from the catalog table, not
  // replaced by demo data.
  writeFileSync(join(dataDir, 'search', 'catalog.json'), JSON.stringify({ format: 'catalog-embedded-search/2', records: [], text: {} }));
  server = start(port);
  await until('healthz 200 after an upgrade', async () => ((await fetch(`${base}/healthz`)).status === 200 ? true : undefined));
  expect(await total(base)).toBe(7);
  expect(serverLog).toMatch(/search index rebuilt from the catalog table: 7 servers/);
  server.kill('SIGTERM');
  await exited(server);
}, 600_000);
