import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../bin/local-stack/backends';
import { isRejection, rowIdentity } from '../../lambdas/crawler/domain/normalise';
import { loadFixtureRows, loadSampleRows, startFakeRegistry, type FakeRegistry } from '../support/crawler-fakes';
import { runCli, spawnStack, stopStack, until } from '../support/stack-process';

/**
 * Demo data is for an empty catalog only (DECISIONS), as a user meets it: `npm start` on a fresh
 * DATA_DIR seeds demo servers, `npm run crawl` of the real registry sample (served by the loopback
 * fake registry, `--steps none`) into that running stack removes them first and says so, and only
 * real servers are left; `npm run seed -- --count 0` empties the catalog, and `--no-demo` or
 * `DEMO_DATA=0` starts an empty one. Without ../shared the committed rows of the sample stand in.
 */
jest.setTimeout(600_000);

const sample = loadSampleRows();
if (!sample) console.log('demo-to-real: ../shared/reference/registry/samples not found; crawling the committed fixture rows of the sample instead');
const rows = sample ?? loadFixtureRows();
const names = new Set(
  rows.flatMap((r) => {
    const id = rowIdentity(r);
    return isRejection(id) ? [] : [id.name];
  }),
);

const dataDir = mkdtempSync(join(tmpdir(), 'demo-to-real-'));
let server: ChildProcess | undefined;
let registry: FakeRegistry | undefined;
let log = '';

const run = (args: string[], env: NodeJS.ProcessEnv = {}) => runCli(args, { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'SILENT', ...env });

async function start(port: number, args: string[] = [], env: Record<string, string> = {}): Promise<string> {
  server = spawnStack(dataDir, port, (t) => (log += t), env, args);
  const base = `http://127.0.0.1:${port}`;
  await until(
    'healthz 200',
    async () => ((await fetch(`${base}/healthz`)).status === 200 ? true : undefined),
    180_000,
    () => log,
  );
  return base;
}

interface Listed {
  data: Array<{ name: string; demo?: true }>;
  meta: { pagination: { total: number; hasMore: boolean } };
}

/** Every server the API lists, in full view (`demo` is a full-view field). */
async function everything(base: string): Promise<Listed['data']> {
  const out: Listed['data'] = [];
  for (let page = 1; ; page++) {
    const body = (await (await fetch(`${base}/api/mcps?view=full&sort=name&limit=100&page=${page}`)).json()) as Listed;
    out.push(...body.data);
    if (!body.meta.pagination.hasMore) return out;
  }
}

afterAll(async () => {
  await stopStack(server);
  await registry?.close();
  const stackFile = join(dataDir, 'run', 'stack.json');
  if (existsSync(stackFile)) {
    const { pid } = JSON.parse(readFileSync(stackFile, 'utf8')) as { pid: number };
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  rmSync(dataDir, { recursive: true, force: true });
});

it('a crawl of the real registry into a started demo stack leaves only real servers; seed --count 0, --no-demo and DEMO_DATA=0 leave it empty', async () => {
  const port = await freePort();
  let base = await start(port);
  const demo = await everything(base);
  expect(demo.length).toBe(300);
  expect(demo.every((s) => s.demo === true)).toBe(true);

  registry = await startFakeRegistry(rows);
  const crawl = await run(['bin/crawl.ts', '--registry', registry.url, '--steps', 'none']);
  expect([crawl.status, crawl.stderr.split('\n').slice(-5).join('\n')]).toEqual([0, expect.anything()]);
  expect(crawl.stderr).toMatch(/using the running local stack/);
  expect(crawl.stdout).toContain('removed 300 demo servers first: demo data is for an empty catalog only');
  const real = await everything(base);
  expect(real.filter((s) => s.demo === true)).toEqual([]);
  expect(real.filter((s) => !names.has(s.name))).toEqual([]);
  // Every name of the sample is served but those the crawl rejected (with a reason in its summary).
  const rejected = Number(/rejected (\d+)/.exec(crawl.stdout)?.[1] ?? NaN);
  expect(real.length).toBe(names.size - rejected);
  // Search ranks real servers only: no synthetic server in the way.
  const search = (await (await fetch(`${base}/api/search?q=postgres&view=full`)).json()) as Listed;
  expect(search.data.length).toBeGreaterThan(0);
  expect(search.data.every((s) => names.has(s.name) && s.demo === undefined)).toBe(true);

  // `npm run seed -- --count 0` empties the catalog (the running stack sees it at once).
  const emptied = await run(['bin/seed.ts', '--count', '0']);
  expect(emptied.status).toBe(0);
  expect(emptied.stdout).toMatch(new RegExp(`seeded 0 servers \\(0 icons, ${real.length} removed\\)`));
  expect(await everything(base)).toEqual([]);
  await stopStack(server);

  // An empty catalog stays empty when demo data is turned off, by flag or by variable.
  base = await start(port, ['--no-demo']);
  expect(await everything(base)).toEqual([]);
  expect(log).toContain('empty catalog: no demo data');
  await stopStack(server);
  base = await start(port, [], { DEMO_DATA: '0' });
  expect(await everything(base)).toEqual([]);
  await stopStack(server);
});
