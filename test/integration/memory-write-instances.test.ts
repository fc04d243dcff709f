import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../bin/local-stack/backends';
import type { StackInfo } from '../../bin/local-stack/data-dir';
import { startGatedProxy, type GatedProxy } from '../support/gated-proxy';
import { ROOT, stopStack, TSX, until as waitFor } from '../support/stack-process';

/**
 * Writes across `npm start` processes on one set of backends, as Lambda runs instances of one
 * function: the keyed burst on one instance, a keyed write with DynamoDB paused, an instance killed
 * between its commit and its answer (REST and MCP), and a cold instance writing while a hot one
 * writes all it can. The instance that is killed reaches DynamoDB through a gated proxy
 * (`test/support/gated-proxy.ts`) that withholds the answer of its head move after it landed.
 */
const dataDir = mkdtempSync(join(tmpdir(), 'writes-'));
const children: ChildProcess[] = [];
let log = '';
let owner = '';
let token = '';
let proxy: GatedProxy;

// No demo catalog: these instances serve memories only, and seeding one is most of a loaded start.
const ENV = { MEMORY_RATE_LIMIT: '1000000', MCP_RATE_PER_MINUTE: '1000000', DEMO_DATA: '0' };

/**
 * The test run's own SDK budgets (global-setup.ts: 20 s per DynamoDB call, for a loaded machine's
 * fixtures) are not passed on: these instances answer as a deployed function does, with the
 * stack's defaults, or a paused DynamoDB holds a write past any client's patience.
 */
const { AWS_CONNECT_TIMEOUT_MS, AWS_DYNAMODB_TIMEOUT_MS, AWS_S3_TIMEOUT_MS, ...inherited } = process.env;

/** `npm start` as `spawnStack` runs it, in a process group of its own: a crash kills tsx and the server it runs. */
function start(port: number, dir = dataDir, env: Record<string, string> = {}): ChildProcess {
  const child = spawn(TSX, ['bin/local.ts'], {
    cwd: ROOT,
    env: { ...inherited, DATA_DIR: dir, PORT: String(port), LOG_LEVEL: 'SILENT', ...ENV, ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
    detached: true,
  });
  child.stderr?.on('data', (d: Buffer) => {
    log += d.toString();
  });
  children.push(child);
  return child;
}

const until = <T>(what: string, fn: () => Promise<T | undefined>) => waitFor(what, fn, 120000, () => log.slice(-4000));
const healthy = (base: string) => until(`${base} healthy`, async () => ((await fetch(`${base}/healthz`)).status === 200 ? true : undefined));

/** API Gateway answers 504 to a request its integration has not answered in 29 s: the client never learns what happened. */
const GATEWAY_MS = 29_000;

function v1(base: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}, timeoutMs = 60_000) {
  return fetch(`${base}/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body !== undefined && { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(timeoutMs),
  });
}

async function mcpCall(base: string, name: string, args: Record<string, unknown>, signal?: AbortSignal) {
  const res = await fetch(`${base}/mcp`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
    signal: signal ?? AbortSignal.timeout(60000),
  });
  return (await res.json()) as { result: { isError?: boolean; structuredContent: Record<string, unknown> } };
}

const noteBody = async (base: string, memory: string, path: string): Promise<string> =>
  ((await (await v1(base, 'GET', `/memories/${memory}/notes/${path}`)).json()) as { body: string }).body;

const count = (text: string, line: string): number => text.split('\n').filter((l) => l === line).length;

/**
 * A second instance whose DynamoDB traffic goes through the gated proxy: an attached `npm start`
 * on a data dir of its own that names the owner's backends (the proxy for DynamoDB) and holds the
 * owner's keys, so the owner's tokens work on it.
 */
async function gatedInstance(): Promise<{ base: string; child: ChildProcess }> {
  proxy.disarm();
  const info = JSON.parse(readFileSync(join(dataDir, 'run', 'stack.json'), 'utf8')) as StackInfo;
  const dir = mkdtempSync(join(tmpdir(), 'writes-gated-'));
  cpSync(join(dataDir, 'keys'), join(dir, 'keys'), { recursive: true });
  mkdirSync(join(dir, 'run'), { recursive: true });
  writeFileSync(join(dir, 'run', 'stack.json'), JSON.stringify({ ...info, dynamoEndpoint: proxy.url }));
  const port = await freePort();
  // It waits for the withheld answer as long as it lives: no timeout may answer for it first.
  const child = start(port, dir, { AWS_DYNAMODB_TIMEOUT_MS: '600000', AWS_QUEUE_TIMEOUT_MS: '600000', MEMORY_WRITE_BUDGET_MS: '600000' });
  const base = `http://127.0.0.1:${port}`;
  await healthy(base);
  return { base, child };
}

/** Kills the instance (tsx and the server process it runs) and waits until it is gone: a crash, not a shutdown. */
async function crash(child: ChildProcess): Promise<void> {
  const gone = new Promise((r) => child.once('exit', r));
  process.kill(-(child.pid as number), 'SIGKILL');
  await gone;
}

/** The head move of a write: the conditional update of the rev item (alone or in a transaction). */
const headMove = (target: string, body: string): boolean => /UpdateItem|TransactWriteItems/.test(target) && body.includes('SET head = :h');

beforeAll(async () => {
  const port = await freePort();
  owner = `http://127.0.0.1:${port}`;
  start(port);
  await healthy(owner);
  const minted = spawnSync(TSX, ['bin/token.ts', '--sub', 'writer', '--scope', 'memory:read memory:write'], {
    cwd: ROOT,
    env: { ...process.env, DATA_DIR: dataDir, PORT: String(port) },
    encoding: 'utf8',
  });
  token = minted.stdout.trim().split('\n').pop() ?? '';
  const info = JSON.parse(readFileSync(join(dataDir, 'run', 'stack.json'), 'utf8')) as StackInfo;
  proxy = await startGatedProxy(info.dynamoEndpoint);
}, 240000);

afterAll(async () => {
  for (const c of [...children].reverse()) await stopStack(c);
  await proxy?.close();
  rmSync(dataDir, { recursive: true, force: true });
}, 60000);

test('300 concurrent keyed appends on one instance: 200, 409 or 503, never 500; retried with their keys, each is applied exactly once', async () => {
  expect((await v1(owner, 'POST', '/memories', { name: 'burst' })).status).toBe(201);
  expect((await v1(owner, 'PUT', '/memories/burst/notes/log.md', { body: 'start\n' })).status).toBe(200);
  const append = (i: number) =>
    v1(owner, 'PATCH', '/memories/burst/notes/log.md', { mode: 'append', body: `line ${i}\n` }, { 'idempotency-key': `burst-${i}` }).then(
      (r) => ({ status: r.status, retryAfter: Number(r.headers.get('retry-after') ?? 0) }),
      () => ({ status: 0, retryAfter: 1 }),
    );
  const all = Array.from({ length: 300 }, (_, i) => i);
  const first = await Promise.all(all.map(append));
  const seen = first.map((a) => a.status);
  expect(seen.filter((s) => s !== 200 && s !== 409 && s !== 503)).toEqual([]);
  // A client retries what was not answered 200 with the same key, after its Retry-After: nothing
  // may be applied twice. (A claim whose holder's answer was lost stays in progress for its lease.)
  let pending = all.filter((i) => first[i].status !== 200);
  let wait = Math.max(0, ...first.map((a) => a.retryAfter));
  for (let round = 0; pending.length > 0 && round < 60; round++) {
    await new Promise((r) => setTimeout(r, wait * 1000));
    const again = await Promise.all(pending.map(append));
    seen.push(...again.map((a) => a.status));
    wait = Math.max(0, ...again.map((a) => a.retryAfter));
    pending = pending.filter((_, k) => again[k].status !== 200);
  }
  expect(seen.filter((s) => s !== 200 && s !== 409 && s !== 503)).toEqual([]);
  expect(pending).toEqual([]);
  const text = await noteBody(owner, 'burst', 'log.md');
  expect(all.filter((i) => count(text, `line ${i}`) !== 1)).toEqual([]);
}, 900000);

test('an instance killed between its commit and its answer: the retry on another instance gets the first answer, and the write is applied once (REST and MCP)', async () => {
  expect((await v1(owner, 'POST', '/memories', { name: 'crash' })).status).toBe(201);
  expect((await v1(owner, 'PUT', '/memories/crash/notes/log.md', { body: 'start\n' })).status).toBe(200);

  // REST: the append's head move lands, its answer is withheld, the instance dies.
  let gated = await gatedInstance();
  let gate = proxy.arm(headMove);
  const request = { mode: 'append', body: 'once\n' };
  const lost = v1(gated.base, 'PATCH', '/memories/crash/notes/log.md', request, { 'idempotency-key': 'crash-1' }).then(
    (r) => r.status,
    () => 'no answer',
  );
  expect((await gate.landed).status).toBe(200);
  await crash(gated.child);
  expect(await lost).toBe('no answer');
  expect(count(await noteBody(owner, 'crash', 'log.md'), 'once')).toBe(1);
  const head = ((await (await v1(owner, 'GET', '/memories/crash')).json()) as { rev: string }).rev;
  for (let i = 0; i < 2; i++) {
    const retry = await v1(owner, 'PATCH', '/memories/crash/notes/log.md', request, { 'idempotency-key': 'crash-1' });
    expect(retry.status).toBe(200);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(((await retry.json()) as { rev: string }).rev).toBe(head);
  }
  expect(count(await noteBody(owner, 'crash', 'log.md'), 'once')).toBe(1);

  // MCP: the same with memory__edit and its idempotencyKey.
  gated = await gatedInstance();
  gate = proxy.arm(headMove);
  const args = { path: '@crash/log.md', mode: 'append', body: 'mcp once', idempotencyKey: 'crash-2' };
  const abort = new AbortController();
  const lostCall = mcpCall(gated.base, 'memory__edit', args, abort.signal).then(
    () => 'answered',
    () => 'no answer',
  );
  expect((await gate.landed).status).toBe(200);
  await crash(gated.child);
  expect(await lostCall).toBe('no answer');
  const retried = await mcpCall(owner, 'memory__edit', args);
  expect(retried.result.isError).toBeFalsy();
  expect(retried.result.structuredContent.rev).toBe(((await (await v1(owner, 'GET', '/memories/crash')).json()) as { rev: string }).rev);
  expect(count(await noteBody(owner, 'crash', 'log.md'), 'mcp once')).toBe(1);
}, 300000);

test('a keyed write with DynamoDB paused is a 503 with Retry-After, as the same write without a key', async () => {
  expect((await v1(owner, 'POST', '/memories', { name: 'paused' })).status).toBe(201);
  const ddb = Number(readFileSync(join(dataDir, 'run', 'dynamodb.pid'), 'utf8'));
  process.kill(ddb, 'SIGSTOP');
  try {
    const answers = await Promise.all([
      v1(owner, 'PUT', '/memories/paused/notes/a.md', { body: 'a' }, { 'idempotency-key': 'paused-1' }),
      v1(owner, 'PUT', '/memories/paused/notes/b.md', { body: 'b' }),
    ]);
    for (const r of answers) {
      expect(r.status).toBe(503);
      expect(r.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(((await r.json()) as { error: { code: string } }).error.code).toBe('UPSTREAM_UNAVAILABLE');
    }
  } finally {
    process.kill(ddb, 'SIGCONT');
  }
  // The key was never claimed, or its claim was given up: the retry runs.
  const retry = await until('the keyed write once DynamoDB answers', async () => {
    const r = await v1(owner, 'PUT', '/memories/paused/notes/a.md', { body: 'a' }, { 'idempotency-key': 'paused-1' });
    return r.status === 200 ? r : undefined;
  });
  expect(retry.headers.get('idempotent-replayed')).toBeNull();
}, 180000);

test('four writers on a hot instance and four on a cold one, one memory: every write of the cold one completes, and no write answered an error lands', async () => {
  expect((await v1(owner, 'POST', '/memories', { name: 'fair' })).status).toBe(201);
  expect((await v1(owner, 'PUT', '/memories/fair/notes/warm.md', { body: 'warm\n' })).status).toBe(200);
  const answered = new Map<string, number>();
  const put = async (base: string, path: string) => {
    const status = await v1(base, 'PUT', `/memories/fair/notes/${path}`, { body: `# ${path}\n` }, {}, GATEWAY_MS).then(
      (r) => r.status,
      () => 0,
    );
    answered.set(path, status);
    return status;
  };
  let coldDone = false;
  // The hot instance writes as fast as it is answered until the cold one is done.
  const hot = Promise.all(
    [0, 1, 2, 3].map(async (w) => {
      for (let i = 0; !coldDone; i++) await put(owner, `hot/w${w}-${i}.md`);
    }),
  );
  await until('the hot writers under way', async () => (answered.size >= 8 ? true : undefined));
  const port = await freePort();
  start(port);
  const cold = `http://127.0.0.1:${port}`;
  await healthy(cold);
  const coldStatuses = await Promise.all(
    [0, 1, 2, 3].map(async (w) => {
      const out: number[] = [];
      for (let i = 0; i < 5; i++) out.push(await put(cold, `cold/w${w}-${i}.md`));
      return out;
    }),
  );
  coldDone = true;
  await hot;
  expect(coldStatuses.flat()).toEqual(Array(20).fill(200));
  const statuses = [...answered.values()];
  expect(statuses.filter((s) => s !== 200 && s !== 503)).toEqual([]);
  const present = new Set<string>();
  for (let cursor: string | undefined, first = true; first || cursor; first = false) {
    const page = (await (
      await v1(owner, 'GET', `/memories/fair/notes?depth=all&type=file&limit=500${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`)
    ).json()) as { entries: Array<{ path: string }>; nextCursor?: string };
    for (const e of page.entries) present.add(e.path);
    cursor = page.nextCursor;
  }
  for (const [path, status] of answered) expect([path, status, present.has(path)]).toEqual([path, status, status === 200]);
}, 600000);
