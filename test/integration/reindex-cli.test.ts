import { embeddedSearchIndex } from '../../lambdas/catalog-core';
import { spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../bin/local-stack/backends';
import { ROOT, spawnStack, stopStack, TSX, until } from '../support/stack-process';

/**
 * `npm run reindex` as a user runs it: it rebuilds the search index from DynamoDB, the source of
 * truth, on its own backends when no stack runs on the DATA_DIR, and attached to the running
 * stack's when one does (which then serves the rebuilt index without a restart).
 */
jest.setTimeout(300_000);
const dataDir = mkdtempSync(join(process.env.TEST_TMP_DIR ?? tmpdir(), 'reindex-'));
const snapshot = join(dataDir, 'search', 'catalog.json');
const env = { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'SILENT' };
let stack: ChildProcess | undefined;
let log = '';
afterAll(async () => {
  await stopStack(stack);
  rmSync(dataDir, { recursive: true, force: true });
});

const cli = (script: string, ...args: string[]) => {
  const out = spawnSync(TSX, [script, ...args], { cwd: ROOT, env, encoding: 'utf8', timeout: 240_000 });
  if (out.status !== 0) throw new Error(`${script} failed (${out.status}): ${out.stderr}`);
  return out.stdout;
};
/** The records of the snapshot on disk, by slug. */
async function indexed(): Promise<Map<string, unknown>> {
  const index = embeddedSearchIndex({ snapshotPath: snapshot });
  const page = await index.list({ filters: {}, sort: 'name', page: { offset: 0, limit: 10_000 } });
  return new Map(page.items.map((r) => [r.slug, r]));
}

let seeded: Map<string, unknown>;
beforeAll(async () => {
  expect(cli('bin/seed.ts', '--count', '40')).toMatch(/seeded 40 servers/);
  seeded = await indexed();
  expect(seeded.size).toBe(40);
});

it('rebuilds a lost index from DynamoDB on its own backends: the same servers, record for record', async () => {
  const before = seeded;
  rmSync(snapshot);
  expect(cli('bin/reindex.ts')).toMatch(/^reindexed 40 servers in \d+ ms/m);
  expect(existsSync(snapshot)).toBe(true);
  expect(await indexed()).toEqual(before);
});

it('attached to a running stack: a corrupt index is rebuilt, and the stack serves it without a restart', async () => {
  const port = await freePort();
  stack = spawnStack(dataDir, port, (t) => {
    log += t;
  });
  const base = `http://127.0.0.1:${port}`;
  await until(
    'the stack',
    async () => ((await fetch(`${base}/healthz`)).status === 200 ? true : undefined),
    120_000,
    () => log,
  );
  const total = async () => ((await (await fetch(`${base}/api/mcps?limit=1`)).json()) as { meta: { pagination: { total: number } } }).meta.pagination.total;
  expect(await total()).toBe(40);
  // The index drifts from the truth (ten servers lost from it), and the running stack serves the drift.
  const drifted = embeddedSearchIndex({ snapshotPath: snapshot });
  await drifted.remove([...(await indexed()).keys()].slice(0, 10));
  await until(
    'the stack to serve the drifted index',
    async () => ((await total()) === 30 ? true : undefined),
    30_000,
    () => log,
  );
  const dynamoPid = readFileSync(join(dataDir, 'run', 'dynamodb.pid'), 'utf8');
  expect(cli('bin/reindex.ts')).toMatch(/reindexed 40 servers/);
  // Rebuilt from DynamoDB, and picked up by the running stack without a restart.
  await until(
    'the stack to serve the rebuilt index',
    async () => ((await total()) === 40 ? true : undefined),
    30_000,
    () => log,
  );
  expect(await indexed()).toHaveProperty('size', 40);
  // It attached to the stack's backends instead of starting its own: the stack's DynamoDB Local is the same process.
  expect(readFileSync(join(dataDir, 'run', 'dynamodb.pid'), 'utf8')).toBe(dynamoPid);
  // A snapshot another writer left broken: the running reader keeps what it had, reindex repairs it.
  writeFileSync(snapshot, '{"broken":');
  expect(await total()).toBe(40);
  expect(cli('bin/reindex.ts')).toMatch(/reindexed 40 servers/);
  expect(await indexed()).toHaveProperty('size', 40);
});
