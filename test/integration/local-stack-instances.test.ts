import { spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../bin/local-stack/backends';
import { interpose, type Interposer } from '../support/git-client';
import { cloneBundle } from '../support/memory-git';
import { ROOT, spawnStack, stopStack, TSX, until as waitFor } from '../support/stack-process';

/**
 * Several instances on one DATA_DIR, as several Lambda instances share DynamoDB and S3: a second
 * `npm start` attaches to the first one's backends. The probes of the storage review, repeated
 * across instances: identical appends from both (every 200 applied exactly once), one If-Match
 * from both (exactly one winner), then faults: DynamoDB Local killed (healthz 503 naming it, the
 * owner restarts it on its port) and the S3 server killed or paused with SIGSTOP during write loops
 * (only 200 or a 503, never a 500); every acknowledged write is there after, and the export passes
 * `git fsck --full --strict`. Each fault starts from a request: the second instance reaches the
 * backends through loopback proxies (its stack file names them) that kill or pause a backend when
 * the instance makes the storage call the test armed, so a request is in flight when the backend
 * dies, and the test asserts which one.
 */
const dataDir = mkdtempSync(join(tmpdir(), 'instances-'));
const children: ChildProcess[] = [];
let log = '';
let a = '';
let b = '';
let token = '';

function start(port: number): ChildProcess {
  const child = spawnStack(
    dataDir,
    port,
    (text) => {
      log += text;
    },
    // Budgets of their own: long enough for a loaded machine (a DynamoDB Local just restarted beside
    // busy cores took over 5 s for a call), short enough that a write meeting a paused backend is
    // refused (503) within the test's REQUEST_MS (S3: 3 attempts, DynamoDB: 2).
    { MEMORY_RATE_LIMIT: '100000', AWS_CONNECT_TIMEOUT_MS: '5000', AWS_DYNAMODB_TIMEOUT_MS: '15000', AWS_S3_TIMEOUT_MS: '15000' },
  );
  children.push(child);
  return child;
}

const until = <T>(what: string, fn: () => Promise<T | undefined>) => waitFor(what, fn, 90000, () => log);
const STARTUP_MS = 300_000;
/** What one request may take: more than an instance's whole storage budget for one call. */
const REQUEST_MS = 60_000;

const healthz = async (base: string) => {
  const res = await fetch(`${base}/healthz`);
  return { status: res.status, body: (await res.json()) as { ok: boolean; down?: string[] } };
};

function v1(base: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  return fetch(`${base}/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body !== undefined && { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(REQUEST_MS),
  });
}

const pidOf = (name: 'dynamodb' | 's3') => Number(readFileSync(join(dataDir, 'run', `${name}.pid`), 'utf8'));

/** A fault armed on the second instance's `nth` matching storage call from now on; `act` kills or pauses the backend. */
interface Fault {
  backend: 'dynamodb' | 's3';
  /** DynamoDB: only the head move of a write without a key (its conditional UpdateItem). */
  headMove?: boolean;
  nth: number;
  act: () => void;
  seen: number;
  /** The second instance's requests in flight when it fired. */
  inflight?: string[];
  fired: Promise<void>;
  fire: () => void;
}
const proxies: Interposer[] = [];
let armed: Fault[] = [];
let firing: Fault | undefined;
/** The second instance's /v1 requests now in flight (method and path). */
const inflight = new Set<string>();

function arm(backend: Fault['backend'], nth: number, act: () => void, headMove = false): Fault {
  let fire: () => void = () => undefined;
  const fired = new Promise<void>((r) => (fire = r));
  const f: Fault = { backend, headMove, nth, act, seen: 0, fired, fire };
  armed.push(f);
  return f;
}

/** Storage calls a write makes: DynamoDB calls on the memory table (or its head move only), S3 object writes. */
function storageCall({ backend, headMove }: Fault, method: string, headers: Record<string, string | string[] | undefined>, body: Buffer): boolean {
  if (backend === 's3') return method === 'PUT';
  if (!String(headers['x-amz-target'] ?? '').startsWith('DynamoDB_')) return false;
  try {
    const call = JSON.parse(body.toString('utf8')) as { TableName?: string; UpdateExpression?: string };
    return call.TableName === 'memories' && (!headMove || String(call.UpdateExpression).startsWith('SET head'));
  } catch {
    return false;
  }
}

async function faultProxy(backend: Fault['backend'], endpoint: string): Promise<Interposer> {
  return interpose(
    endpoint,
    (method, _path, headers, body) => {
      const f = armed.find((x) => x.backend === backend);
      if (!f || !storageCall(f, method, headers, body) || ++f.seen < f.nth) return false;
      armed = armed.filter((x) => x !== f);
      firing = f;
      return true;
    },
    async () => {
      const f = firing;
      firing = undefined;
      if (!f) return;
      f.inflight = [...inflight];
      f.act();
      f.fire();
    },
  );
}

/** `v1` on the second instance, keeping count of what is in flight there. */
async function v1b(method: string, path: string, body?: unknown): Promise<Response> {
  const key = `${method} ${path}`;
  inflight.add(key);
  try {
    return await v1(b, method, path, body);
  } finally {
    inflight.delete(key);
  }
}

beforeAll(async () => {
  const [pa, pb] = [await freePort(), await freePort()];
  a = `http://127.0.0.1:${pa}`;
  b = `http://127.0.0.1:${pb}`;
  start(pa);
  // Its own budget: the first npm start seeds 300 demo servers, which on a loaded machine took over 90 s.
  await waitFor(
    'the first instance',
    async () => ((await healthz(a)).status === 200 ? true : undefined),
    STARTUP_MS,
    () => log,
  );
  // The second instance attaches to the backends its stack file names: the fault proxies, in front of the real ones.
  const stackFile = join(dataDir, 'run', 'stack.json');
  const info = JSON.parse(readFileSync(stackFile, 'utf8')) as { dynamoEndpoint: string; s3Endpoint: string };
  const [ddbProxy, s3Proxy] = [await faultProxy('dynamodb', info.dynamoEndpoint), await faultProxy('s3', info.s3Endpoint)];
  proxies.push(ddbProxy, s3Proxy);
  writeFileSync(stackFile, JSON.stringify({ ...info, dynamoEndpoint: ddbProxy.url, s3Endpoint: s3Proxy.url }));
  start(pb);
  await until('the second instance', async () => ((await healthz(b)).status === 200 ? true : undefined));
  writeFileSync(stackFile, JSON.stringify(info));
  const minted = spawnSync(TSX, ['bin/token.ts', '--sub', 'instances', '--scope', 'memory:read memory:write'], {
    cwd: ROOT,
    env: { ...process.env, DATA_DIR: dataDir, PORT: String(pa) },
    encoding: 'utf8',
  });
  token = minted.stdout.trim().split('\n').pop() ?? '';
  expect((await v1(a, 'POST', '/memories', { name: 'shared' })).status).toBe(201);
}, STARTUP_MS + 120_000);

afterAll(async () => {
  // The attached instance first, then the owner (which stops the backends).
  for (const c of [...children].reverse()) await stopStack(c);
  await Promise.all(proxies.map((p) => p.close()));
  rmSync(dataDir, { recursive: true, force: true });
}, 40000);

test('the second npm start attached to the first one’s backends, and a token of the first works on both', () => {
  expect(log).toMatch(/attached to the backends of the stack at/);
});

test('identical appends from two instances in the same second: every 200 applied exactly once', async () => {
  await v1(a, 'PUT', '/memories/shared/notes/log.md', { body: 'start\n' });
  const codes = await Promise.all(
    Array.from({ length: 24 }, (_, i) =>
      v1(i % 2 ? a : b, 'PATCH', '/memories/shared/notes/log.md', { mode: 'append', body: 'same line\n' }).then((r) => r.status),
    ),
  );
  const ok = codes.filter((c) => c === 200).length;
  expect(codes.every((c) => c === 200 || c === 503)).toBe(true);
  const note = (await (await v1(b, 'GET', '/memories/shared/notes/log.md')).json()) as { body: string };
  expect(note.body.split('same line').length - 1).toBe(ok);
  expect(ok).toBeGreaterThan(0);
}, 300_000);

test('distinct notes written at once from both processes, over /v1 and MCP: every acknowledged write is in the tree and in one linear history', async () => {
  expect((await v1(b, 'POST', '/memories', { name: 'many' })).status).toBe(201);
  const unacknowledged: string[] = [];
  const mcpWrite = (base: string, path: string) =>
    fetch(`${base}/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'memory__write', arguments: { path: `@many/${path}`, body: `# ${path}` } },
      }),
      signal: AbortSignal.timeout(REQUEST_MS),
    }).then(async (r) => {
      if (r.status !== 200) return r.status;
      // Acknowledged is a tool result that is not an error; a JSON-RPC error is no acknowledgement.
      const answer = (await r.json()) as { result?: { isError?: boolean } };
      if (answer.result !== undefined && !answer.result.isError) return 200;
      unacknowledged.push(JSON.stringify(answer).slice(0, 300));
      return answer.result?.isError ? 503 : -1;
    });
  const paths = Array.from({ length: 30 }, (_, i) => `p${i % 3}/note-${i}.md`);
  const codes = await Promise.all(
    paths.map((path, i) =>
      i % 3 === 2 ? mcpWrite(i % 2 ? a : b, path) : v1(i % 2 ? a : b, 'PUT', `/memories/many/notes/${path}`, { body: `# ${path}` }).then((r) => r.status),
    ),
  );
  expect({ codes: codes.filter((c) => c !== 200 && c !== 503), unacknowledged }).toEqual({ codes: [], unacknowledged: expect.any(Array) });
  const acknowledged = paths.filter((_, i) => codes[i] === 200);
  expect(acknowledged.length).toBeGreaterThan(0);
  const bundle = await v1(a, 'GET', '/memories/many/export');
  expect(bundle.status).toBe(200);
  const clone = cloneBundle(new Uint8Array(await bundle.arrayBuffer()));
  try {
    clone.git('fsck', '--strict', '--no-dangling');
    const files = clone.git('ls-files').trim().split('\n');
    for (const p of acknowledged) expect(files).toContain(p);
    // One commit per note that landed, each on top of the one before: nothing merged, nothing lost.
    expect(Number(clone.git('rev-list', '--count', 'HEAD').trim())).toBe(files.length);
    expect(clone.git('rev-list', '--merges', 'HEAD').trim()).toBe('');
    expect(clone.git('log', '--format=%s').trim().split('\n').sort()).toEqual(files.map((f) => `Create ${f}`).sort());
  } finally {
    clone.cleanup();
  }
}, 300_000);

test('one If-Match from both instances: exactly one winner, every other a 409', async () => {
  const base = (await (await v1(a, 'PUT', '/memories/shared/notes/cas.md', { body: 'v0\n' })).json()) as { rev: string };
  const codes = await Promise.all(
    Array.from({ length: 12 }, (_, i) =>
      v1(i % 2 ? a : b, 'PATCH', '/memories/shared/notes/cas.md', { mode: 'append', body: 'same\n' }, { 'if-match': `"${base.rev}"` }).then((r) => r.status),
    ),
  );
  expect(codes.filter((c) => c === 200)).toHaveLength(1);
  expect(codes.filter((c) => c === 409)).toHaveLength(11);
  const note = (await (await v1(b, 'GET', '/memories/shared/notes/cas.md')).json()) as { body: string };
  expect(note.body).toBe('v0\nsame\n');
}, 300_000);

test('Idempotency-Key across instances: a retried append is applied once, whichever instance gets the retry', async () => {
  await v1(a, 'PUT', '/memories/shared/notes/idem.md', { body: 'start\n' });
  const append = (base: string, key: string, body = 'once\n') =>
    v1(base, 'PATCH', '/memories/shared/notes/idem.md', { mode: 'append', body }, { 'idempotency-key': key });
  // The same request sent to both instances at once, as a client retrying a lost answer might.
  const first = await Promise.all([append(a, 'k-1'), append(b, 'k-1'), append(a, 'k-1'), append(b, 'k-1')]);
  const codes = first.map((r) => r.status);
  expect(codes.every((c) => c === 200 || c === 409)).toBe(true);
  const winners = await Promise.all(first.filter((r) => r.status === 200).map(async (r) => ((await r.json()) as { rev: string }).rev));
  expect(new Set(winners).size).toBe(1);
  // A later retry on either instance replays the first answer and writes nothing.
  for (const base of [a, b]) {
    const again = await append(base, 'k-1');
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(((await again.json()) as { rev: string }).rev).toBe(winners[0]);
  }
  const note = (await (await v1(b, 'GET', '/memories/shared/notes/idem.md')).json()) as { body: string };
  expect(note.body).toBe('start\nonce\n');
  // The same key with another request is refused; a new key applies.
  const other = await append(a, 'k-1', 'other\n');
  expect(other.status).toBe(400);
  expect(((await other.json()) as { error: { message: string } }).error.message).toMatch(/different request/);
  expect((await append(b, 'k-2')).status).toBe(200);
  expect(((await (await v1(a, 'GET', '/memories/shared/notes/idem.md')).json()) as { body: string }).body).toBe('start\nonce\nonce\n');
  expect((await append(a, ' bad key')).status).toBe(400);
}, 300_000);

test('DynamoDB Local killed by a write’s own call: that write is answered 200 or 503, healthz names it, the owner brings it back, writes go on', async () => {
  const before = pidOf('dynamodb');
  const fault = arm('dynamodb', 1, () => process.kill(before, 'SIGKILL'));
  const answered = v1b('PUT', '/memories/shared/notes/killed-mid-write.md', { body: 'x\n' });
  await fault.fired;
  expect(fault.inflight).toEqual(['PUT /memories/shared/notes/killed-mid-write.md']);
  // Java takes seconds to start again: until then the second instance's healthz names the table's
  // backend. Watched from the kill on, not from the write's answer: on a loaded machine the answer
  // can come after the owner has already brought the table back.
  const namedDown = until('healthz 503 naming dynamodb', async () => {
    const h = await healthz(b);
    return h.status === 503 && h.body.down?.includes('dynamodb') ? true : undefined;
  });
  const res = await answered;
  expect([200, 503]).toContain(res.status);
  await namedDown;
  await until('dynamodb restarted', async () => ((await healthz(a)).status === 200 && (await healthz(b)).status === 200 ? true : undefined));
  expect(pidOf('dynamodb')).not.toBe(before);
  expect((await v1b('PUT', '/memories/shared/notes/after-kill.md', { body: 'back\n' })).status).toBe(200);
  if (res.status === 200) expect((await v1(a, 'GET', '/memories/shared/notes/killed-mid-write.md')).status).toBe(200);
}, 300_000);

/** A request that got no answer: the client's timeout (REQUEST_MS) or a dropped socket, and after how long. */
interface Unanswered {
  path: string;
  kind: string;
  ms: number;
}

/** The kind of a rejected `fetch`: `TimeoutError` (REQUEST_MS passed), or the socket error under undici's `fetch failed`. */
function failureKind(err: unknown): string {
  const e = err as { name?: string; cause?: { code?: string; name?: string; message?: string } };
  if (e.name === 'TimeoutError') return 'TimeoutError';
  return `${e.name ?? 'Error'}: ${e.cause?.code ?? e.cause?.name ?? ''} ${e.cause?.message ?? String(err)}`.trim();
}

/**
 * Write loops on both instances; `path` of every acknowledged write, every status (0: no answer),
 * and for each unanswered request what the client saw and when (a failure then says which).
 */
function writeLoops(prefix: string, count: number) {
  const statuses: number[] = [];
  const acknowledged: string[] = [];
  const unanswered: Unanswered[] = [];
  const loop = async (base: string, tag: string) => {
    for (let i = 0; i < count; i++) {
      const path = `${prefix}/${tag}-${i}.md`;
      const started = Date.now();
      const res = await (base === b ? v1b : (m: string, p: string, body?: unknown) => v1(a, m, p, body))('PUT', `/memories/shared/notes/${path}`, {
        body: `${tag} ${i}\n`,
      }).catch((err: unknown) => {
        unanswered.push({ path, kind: failureKind(err), ms: Date.now() - started });
        return undefined;
      });
      statuses.push(res?.status ?? 0);
      if (res?.status === 200) acknowledged.push(path);
    }
  };
  return { statuses, acknowledged, unanswered, done: Promise.all([loop(a, 'a'), loop(b, 'b')]) };
}

test('the S3 server killed by an object write of the second instance, then DynamoDB Local paused by its next head move, during write loops on both: 200 or 503 within the client’s patience, never a 500; the owner restarts S3', async () => {
  const s3Before = pidOf('s3');
  const ddb = pidOf('dynamodb');
  const kill = arm('s3', 3, () => process.kill(s3Before, 'SIGKILL'));
  const loops = writeLoops('faults2', 10);
  await kill.fired;
  expect(kill.inflight?.length).toBe(1);
  // At a head move, the worst case: a move in flight is waited for. The checks after it (the record
  // read, the ticket's drop) each waited their own SDK budget too, and the write went unanswered for
  // the client's 60 s; past its budget a write now waits for nothing but that move.
  const pause = arm('dynamodb', 1, () => process.kill(ddb, 'SIGSTOP'), true);
  await Promise.race([pause.fired, loops.done]);
  // Resumed once the request that met the pause has been answered (the instance gave up on the table).
  const stalled = pause.inflight?.[0];
  if (stalled) await until('the paused request answered', async () => (inflight.has(stalled) ? undefined : true));
  process.kill(ddb, 'SIGCONT');
  await loops.done;
  expect(stalled).toBeDefined();
  expect({ statuses: loops.statuses.filter((st) => st !== 200 && st !== 503), unanswered: loops.unanswered }).toEqual({ statuses: [], unanswered: [] });
  await until('both backends answer again', async () => ((await healthz(a)).status === 200 && (await healthz(b)).status === 200 ? true : undefined));
  expect(pidOf('s3')).not.toBe(s3Before);
  for (const path of loops.acknowledged) expect((await v1(b, 'GET', `/memories/shared/notes/${path}`)).status).toBe(200);
  expect((await v1(a, 'PUT', '/memories/shared/notes/faults2/after.md', { body: 'ok\n' })).status).toBe(200);
}, 300_000);

test('the S3 server paused by an object write of the second instance during write loops on both: that write is answered 503 while S3 is still paused, never a 500; every acknowledged write is there after', async () => {
  const s3 = pidOf('s3');
  const pause = arm('s3', 4, () => process.kill(s3, 'SIGSTOP'));
  const loops = writeLoops('faults', 12);
  await pause.fired;
  const stalled = pause.inflight?.[0] as string;
  expect(pause.inflight).toHaveLength(1);
  // The instance answers the request that met the paused server on its own S3 budget, before anyone resumes it.
  await until('the paused request answered', async () => (inflight.has(stalled) ? undefined : true));
  process.kill(s3, 'SIGCONT');
  await loops.done;
  expect({ statuses: loops.statuses.filter((s) => s !== 200 && s !== 503), unanswered: loops.unanswered }).toEqual({ statuses: [], unanswered: [] });
  expect(loops.statuses).toContain(200);
  expect(loops.acknowledged).not.toContain(stalled.replace('PUT /memories/shared/notes/', ''));
  for (const path of loops.acknowledged) expect((await v1(a, 'GET', `/memories/shared/notes/${path}`)).status).toBe(200);

  // The whole history exports and passes git's strictest check.
  const bundle = Buffer.from(await (await v1(b, 'GET', '/memories/shared/export')).arrayBuffer());
  const dir = mkdtempSync(join(tmpdir(), 'instances-clone-'));
  try {
    writeFileSync(join(dir, 'shared.bundle'), bundle);
    expect(spawnSync('git', ['clone', '-q', join(dir, 'shared.bundle'), join(dir, 'c')]).status).toBe(0);
    const fsck = spawnSync('git', ['-C', join(dir, 'c'), 'fsck', '--full', '--strict'], { encoding: 'utf8' });
    expect(fsck.status).toBe(0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 300_000);
