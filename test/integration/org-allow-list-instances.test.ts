import { spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../bin/local-stack/backends';
import { ROOT, spawnStack, stopStack, TSX, until as waitFor } from '../support/stack-process';

/**
 * The allow-list edited from two `npm start` instances on one DATA_DIR (as two Lambda instances
 * share the bucket and the table): one If-Match from both at once has exactly one winner and one
 * 412; writers on both instances that each reread and retry on 412 lose no edit; and the other
 * instance's registry serves the file the first one wrote.
 */
const dataDir = mkdtempSync(join(tmpdir(), 'org-instances-'));
const children: ChildProcess[] = [];
let log = '';
let a = '';
let b = '';
let admin = '';
const STARTUP_MS = 300_000;
const ENV = { ORG_ALLOW_LIST_REFRESH_SECONDS: '0', RATE_ANON_RPS: '100000', RATE_ANON_BURST: '100000', RATE_USER_RPS: '100000', RATE_USER_BURST: '100000' };

const healthy = async (base: string) => ((await fetch(`${base}/healthz`)).status === 200 ? true : undefined);
const read = async (base: string) => {
  for (let attempt = 1; ; attempt++) {
    const res = await fetch(`${base}/org/admin/allow-list`, { headers: { authorization: admin } });
    // 503: the read kept meeting an edit half made (the loopback S3 server writes objects in place);
    // a client reads again after its Retry-After. Never a 200 with half a file.
    if (res.status === 503 && attempt < 10) {
      await res.arrayBuffer();
      await new Promise((r) => setTimeout(r, Number(res.headers.get('retry-after') ?? '1') * 1000));
      continue;
    }
    expect(res.status).toBe(200);
    return { etag: res.headers.get('etag') as string, list: JSON.parse(await res.text()) as { allow: string[] } };
  }
};
const write = (base: string, list: unknown, condition: Record<string, string>) =>
  fetch(`${base}/org/admin/allow-list`, {
    method: 'PUT',
    headers: { authorization: admin, 'content-type': 'application/json', ...condition },
    body: JSON.stringify(list),
  });

beforeAll(async () => {
  const [pa, pb] = [await freePort(), await freePort()];
  a = `http://127.0.0.1:${pa}`;
  b = `http://127.0.0.1:${pb}`;
  const onLog = (text: string) => {
    log += text;
  };
  children.push(spawnStack(dataDir, pa, onLog, ENV));
  // Its own budget: the first npm start seeds 300 demo servers, which on a loaded machine takes long.
  await waitFor(
    'the first instance',
    () => healthy(a),
    STARTUP_MS,
    () => log,
  );
  children.push(spawnStack(dataDir, pb, onLog, ENV));
  await waitFor(
    'the second instance',
    () => healthy(b),
    STARTUP_MS,
    () => log,
  );
  const minted = spawnSync(TSX, ['bin/token.ts', '--sub', 'ops', '--groups', 'catalog-admins'], {
    cwd: ROOT,
    env: { ...process.env, DATA_DIR: dataDir, PORT: String(pa) },
    encoding: 'utf8',
  });
  admin = `Bearer ${minted.stdout.trim().split('\n').pop() ?? ''}`;
}, 2 * STARTUP_MS);

afterAll(async () => {
  // The attached instance first, then the owner (which stops the backends).
  for (const c of [...children].reverse()) await stopStack(c);
  rmSync(dataDir, { recursive: true, force: true });
}, 40000);

test('one If-Match sent to both instances at once: exactly one replace, one 412', async () => {
  const names = ((await (await fetch(`${a}/api/v0.1/servers?limit=2`)).json()) as { servers: Array<{ server: { name: string } }> }).servers.map(
    (s) => s.server.name,
  );
  expect((await write(a, { allow: [names[0]] }, { 'if-none-match': '*' })).status).toBe(200);
  // The other instance serves the file the first one wrote: its registry allows exactly that server.
  expect((await fetch(`${b}/org/v0.1/servers/${encodeURIComponent(names[0])}/versions/latest`)).status).toBe(200);
  expect((await fetch(`${b}/org/v0.1/servers/${encodeURIComponent(names[1])}/versions/latest`)).status).toBe(404);

  for (let round = 0; round < 5; round++) {
    const { etag } = await read(b);
    const [ra, rb] = await Promise.all([
      write(a, { allow: [names[0], `io.race/a-${round}`] }, { 'if-match': etag }),
      write(b, { allow: [names[0], `io.race/b-${round}`] }, { 'if-match': etag }),
    ]);
    expect([ra.status, rb.status].sort()).toEqual([200, 412]);
    const winner = ra.status === 200 ? 'a' : 'b';
    expect((await read(a)).list.allow).toEqual([names[0], `io.race/${winner}-${round}`]);
  }
});

test('writers on both instances that reread on 412 lose no edit', async () => {
  const EDITS = 6;
  const writer = async (base: string, id: string) => {
    for (let i = 0; i < EDITS; i++) {
      for (;;) {
        const { etag, list } = await read(base);
        const res = await write(base, { ...list, allow: [...list.allow, `io.edit/${id}-${i}`] }, { 'if-match': etag });
        if (res.status === 200) break;
        // 412: someone else's edit landed first; 503: their edit is in progress. Reread either way.
        expect([412, 503]).toContain(res.status);
      }
    }
  };
  await Promise.all([writer(a, 'a1'), writer(a, 'a2'), writer(b, 'b1'), writer(b, 'b2')]);
  const { list } = await read(b);
  for (const id of ['a1', 'a2', 'b1', 'b2']) for (let i = 0; i < EDITS; i++) expect(list.allow).toContain(`io.edit/${id}-${i}`);
}, 120_000);
