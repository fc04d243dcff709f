import { type ChildProcess, execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { freePort } from '../../bin/local-stack/backends';
import { pkt, PktError, readPackets } from '../../lambdas/memory-api/pkt-line';
import { cloneBundle, GIT_COMMITTER_ENV } from '../support/memory-git';
import { ROOT, spawnStack, stopStack, TSX, until } from '../support/stack-process';

/**
 * The git smart-HTTP endpoints on generated requests: info/refs with any service, upload-pack in
 * protocol v0 and v2, receive-pack with any commands and any pack (garbage, or a real pack of git's
 * with bytes changed), bodies gzipped or not. Whatever the request: never a 5xx; a 4xx is plain text
 * that says what is wrong; a 200 is git's content type with a body that is well-framed pkt-lines
 * (an ERR line or a refused ref being how git shows a refusal); and an answer within a budget. The
 * stack runs as its own process (`npm start`), so a request that hangs it is a timed-out fetch here
 * rather than a frozen test. Nothing refused lands: the memory's head is only ever moved by a push
 * git would accept.
 */
const RUNS = Number(process.env.FUZZ_RUNS ?? 120);
const opts = { numRuns: RUNS, seed: 20261127, endOnFailure: true };
/** An answer later than this is a hang (each request is one small parse and a few storage calls). */
const NO_HANG_MS = 20_000;

const dataDir = mkdtempSync(join(tmpdir(), 'git-fuzz-'));
let stack: ChildProcess | undefined;
let base = '';
let token = '';
let head = '';
let log = '';
let validPack = Buffer.alloc(0);

beforeAll(async () => {
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  stack = spawnStack(dataDir, port, (t) => (log += t), { MEMORY_RATE_LIMIT: '1000000' });
  // Its own budget: npm start seeds 300 demo servers first, which on a loaded machine took over 90 s.
  await until(
    'the stack',
    async () => ((await fetch(`${base}/healthz`)).status === 200 ? true : undefined),
    300_000,
    () => log,
  );
  const minted = spawnSync(TSX, ['bin/token.ts', '--sub', 'fuzz', '--scope', 'memory:read memory:write'], {
    cwd: ROOT,
    env: { ...process.env, DATA_DIR: dataDir, PORT: String(port) },
    encoding: 'utf8',
  });
  token = minted.stdout.trim().split('\n').pop() ?? '';
  expect((await fetch(`${base}/v1/memories`, { method: 'POST', headers: auth('application/json'), body: '{"name":"m"}' })).status).toBe(201);
  expect((await fetch(`${base}/v1/memories/m/notes/a.md`, { method: 'PUT', headers: auth('text/markdown'), body: '# A\n' })).status).toBe(200);
  head = await currentHead();
  // A real pack of git's (a commit of another history): receive-pack must parse it, then refuse or take it.
  const repo = mkdtempSync(join(dataDir, 'repo-'));
  const git = (args: string[], input?: string) => execFileSync('git', args, { cwd: repo, env: GIT_COMMITTER_ENV, input });
  git(['init', '-q', '-b', 'main']);
  execFileSync('sh', ['-c', 'printf "# B\\n" > b.md'], { cwd: repo });
  git(['add', '-A']);
  git(['commit', '-q', '-m', 'b']);
  validPack = git(['pack-objects', '--stdout', '--revs'], 'HEAD\n');
}, 420_000);

afterAll(async () => {
  await stopStack(stack);
  rmSync(dataDir, { recursive: true, force: true });
}, 30_000);

function auth(type?: string): Record<string, string> {
  return { authorization: `Bearer ${token}`, ...(type && { 'content-type': type }) };
}

async function currentHead(): Promise<string> {
  return ((await (await fetch(`${base}/v1/memories/m`, { headers: auth() })).json()) as { rev: string }).rev;
}

/** Statuses answered by the property running now: each must have reached both the refusals and the parsers behind them. */
const seen = new Map<number, number>();
beforeEach(() => seen.clear());
/** With the default number of runs (a fixed seed), each property reaches both a refusal and an answer. */
const reachedBoth = () => RUNS < 100 || expect([...seen.keys()]).toEqual(expect.arrayContaining([200, 400]));

/** Never a 5xx; a 4xx says why in text; a 200 is git's type and well-framed pkt-lines; within the budget. */
async function expectGitAnswer(res: Response, service: string, kind: 'advertisement' | 'result'): Promise<void> {
  seen.set(res.status, (seen.get(res.status) ?? 0) + 1);
  const body = Buffer.from(await res.arrayBuffer());
  const text = body.toString('utf8');
  if (res.status >= 500) throw new Error(`${res.status}: ${text.slice(0, 300)}`);
  if (res.status >= 400) {
    if (res.status !== 401) expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(text.trim()).not.toBe('');
    return;
  }
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe(`application/x-${service}-${kind}`);
  // A pack after NAK/ACK/packfile lines (v0 without side band) is raw: frame only what precedes it.
  const packAt = body.indexOf('PACK');
  const framed = packAt >= 0 ? body.subarray(0, packAt) : body;
  try {
    readPackets(framed);
  } catch (err) {
    if (err instanceof PktError) throw new Error(`badly framed ${service} ${kind}: ${JSON.stringify(text.slice(0, 200))}`);
    throw err;
  }
}

const sha = fc.oneof(fc.constant('0'.repeat(40)), fc.stringMatching(/^[0-9a-f]{40}$/), fc.constant('HEAD'), fc.string({ maxLength: 44 }));
const caps = fc.subarray([
  'multi_ack_detailed',
  'multi_ack',
  'side-band-64k',
  'side-band',
  'no-progress',
  'thin-pack',
  'ofs-delta',
  'report-status',
  'quiet',
  'agent=x/1',
]);
/** Raw bytes, mostly pkt-lines (data, flush, delim), sometimes malformed. */
function body(lines: fc.Arbitrary<string>): fc.Arbitrary<Buffer> {
  const frame = fc.oneof(
    { weight: 6, arbitrary: lines.map((l) => pkt(`${l}\n`)) },
    { weight: 2, arbitrary: fc.constantFrom(Buffer.from('0000'), Buffer.from('0001')) },
    { weight: 1, arbitrary: fc.constantFrom('0002', '0003', 'zzzz', 'fff', '00ff').map((s) => Buffer.from(s, 'latin1')) },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 30 }).map((b) => Buffer.from(b)) },
  );
  return fc.array(frame, { maxLength: 14 }).map((fs) => Buffer.concat(fs));
}
const withHead = <T>(a: fc.Arbitrary<T>) => a.map((v) => (typeof v === 'string' ? v.replaceAll('HEAD', head) : v));
const gz = fc.boolean();

function post(service: string, bytes: Buffer, extra: { gzip?: boolean; v2?: boolean; type?: string } = {}): Promise<Response> {
  return fetch(`${base}/v1/memories/m.git/${service}`, {
    method: 'POST',
    headers: {
      ...auth(extra.type ?? `application/x-${service}-request`),
      ...(extra.gzip && { 'content-encoding': 'gzip' }),
      ...(extra.v2 && { 'git-protocol': 'version=2' }),
    },
    body: extra.gzip ? gzipSync(bytes) : bytes,
    signal: AbortSignal.timeout(NO_HANG_MS),
  });
}

test('info/refs: any service name, any protocol header', async () => {
  await fc.assert(
    fc.asyncProperty(fc.oneof(fc.constantFrom('git-upload-pack', 'git-receive-pack', ''), fc.string({ maxLength: 20 })), fc.boolean(), async (service, v2) => {
      const res = await fetch(`${base}/v1/memories/m.git/info/refs?service=${encodeURIComponent(service)}`, {
        headers: { ...auth(), ...(v2 && { 'git-protocol': 'version=2' }) },
        signal: AbortSignal.timeout(NO_HANG_MS),
      });
      await expectGitAnswer(res, service, 'advertisement');
    }),
    opts,
  );
  reachedBoth();
});

test('upload-pack, protocol v0: any wants, haves, capabilities and framing, gzipped or not', async () => {
  const line = fc.oneof(
    fc.tuple(sha, caps).map(([s, c]) => `want ${s}${c.length ? ` ${c.join(' ')}` : ''}`),
    sha.map((s) => `have ${s}`),
    fc.constantFrom('done', 'deepen 1', 'deepen-since 0', 'filter blob:none', `shallow ${'1'.repeat(40)}`),
    fc.string({ maxLength: 60 }),
  );
  await fc.assert(
    fc.asyncProperty(body(withHead(line)), gz, async (bytes, gzip) => {
      await expectGitAnswer(await post('git-upload-pack', bytes, { gzip }), 'git-upload-pack', 'result');
    }),
    opts,
  );
  reachedBoth();
});

test('upload-pack, protocol v2: any command, capabilities and arguments', async () => {
  const line = fc.oneof(
    fc.constantFrom('command=fetch', 'command=ls-refs', 'command=object-info', 'command=', 'agent=git/2.39', 'object-format=sha1'),
    fc.constantFrom('symrefs', 'unborn', 'ref-prefix refs/heads/', 'ref-prefix ', 'done', 'no-progress', 'thin-pack', 'deepen 1', 'want-ref refs/heads/main'),
    sha.map((s) => `want ${s}`),
    sha.map((s) => `have ${s}`),
    fc.string({ maxLength: 60 }),
  );
  // Mostly shaped as git shapes it (a command, capabilities, a delimiter, arguments), sometimes not.
  const request = fc.oneof(
    fc
      .tuple(
        fc.constantFrom('command=fetch', 'command=ls-refs', 'command=bundle-uri'),
        body(fc.constantFrom('agent=git/2.39', 'object-format=sha1')),
        body(withHead(line)),
      )
      .map(([command, capabilities, args]) => Buffer.concat([pkt(`${command}\n`), capabilities, Buffer.from('0001'), args, Buffer.from('0000')])),
    body(withHead(line)),
  );
  await fc.assert(
    fc.asyncProperty(request, gz, async (bytes, gzip) => {
      await expectGitAnswer(await post('git-upload-pack', bytes, { gzip, v2: true }), 'git-upload-pack', 'result');
    }),
    opts,
  );
  reachedBoth();
});

test('receive-pack: any commands and any pack; only a push git would accept moves the head', async () => {
  const ref = fc.constantFrom('refs/heads/main', 'refs/heads/other', 'refs/tags/v1', 'main', '');
  const command = fc
    .tuple(sha, sha, ref, fc.option(caps))
    .map(([o, n, r, c]) => `${o} ${n} ${r}${c === null ? '' : `\0${c.join(' ')}`}`)
    .map((l) => l.replaceAll('HEAD', head));
  const pack = fc.oneof(
    fc.constant(Buffer.alloc(0)),
    fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.concat([Buffer.from('PACK'), Buffer.from(b)])),
    fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 }), fc.nat()).map(([at, v, cut]) => {
      const p = Buffer.from(validPack);
      if (at % 3 === 0) p[at % p.length] = v;
      return p.subarray(0, at % 2 === 0 ? p.length : cut % (p.length + 1));
    }),
  );
  await fc.assert(
    fc.asyncProperty(fc.array(command, { maxLength: 3 }), fc.boolean(), pack, gz, async (commands, flush, packBytes, gzip) => {
      const before = await currentHead();
      const bytes = Buffer.concat([...commands.map((c) => pkt(`${c}\n`)), flush ? Buffer.from('0000') : Buffer.alloc(0), packBytes]);
      const res = await post('git-receive-pack', bytes, { gzip });
      const text = Buffer.from(await res.clone().arrayBuffer()).toString('latin1');
      await expectGitAnswer(res, 'git-receive-pack', 'result');
      const after = await currentHead();
      // The head moves only with an `ok refs/heads/main` in the report, and only to a command's new id.
      if (after !== before) {
        expect(text).toMatch(/ok refs\/heads\/main/);
        expect(commands.some((c) => c.split(' ')[1] === after)).toBe(true);
      }
    }),
    opts,
  );
  reachedBoth();
});

test('after all of it the memory still exports a history git fscks', async () => {
  const res = await fetch(`${base}/v1/memories/m/export`, { headers: auth() });
  expect(res.status).toBe(200);
  const clone = cloneBundle(new Uint8Array(await res.arrayBuffer()));
  try {
    clone.git('fsck', '--full', '--strict');
  } finally {
    clone.cleanup();
  }
});
