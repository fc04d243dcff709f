import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { countStorageCalls, createMemoryRuntime, type CallCounts } from '../../lambdas/memory';
import { ImmutableCache } from '../../lambdas/memory/cache';
import { DEFAULT_LIMITS } from '../../lambdas/memory/config';
import { PUSH_STEPS_CHANNEL, type PushReport } from '../../lambdas/memory/push-steps';
import { BASE_READS } from '../../lambdas/memory/push';
import { PACK_MIN_OBJECTS } from '../../lambdas/memory/packed-objects';
import { startLocalStack } from '../local-stack/stack';
import { ms, summarize, timeEach, verdict, type BenchSection } from './stats';

/**
 * `npm run bench -- git`: the memory as a git remote, with the real `git` client over HTTP against
 * the local stack (`npm start`'s code in-process: DynamoDB Local, the loopback S3 server): a clone,
 * pushes and a pull of a 1,000-note memory with a history of 110 commits, and the history endpoint.
 */
const NOTES = 1000;
/** Whole-repository pushes timed, each into a new empty memory. */
const PUSHES = 3;
const BIG_FILES = 15_000;
const HUGE_FILES = 50_000;
const BIG_FOLDERS = 150;
const PUSH_SECONDS = DEFAULT_LIMITS.pushSeconds;
const MAX_OBJECTS = DEFAULT_LIMITS.maxPushObjects;
const GIT_ENV = { GIT_CONFIG_NOSYSTEM: '1', GIT_TERMINAL_PROMPT: '0', LC_ALL: 'C' };

function noteText(i: number, round = 0): string {
  return `---\ntags: [area-${i % 10}]\n---\n# Note ${i}\n\n${`Line ${round} of note ${i}, about memory, git and notes. `.repeat(6)}\n`;
}

function git(cwd: string, args: string[], home: string): Promise<string> {
  return gitBytes(cwd, args, home).then((b) => b.toString());
}

/** `git`'s output as bytes (a pack); `input` on its stdin. */
function gitBytes(cwd: string, args: string[], home: string, input?: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', args, {
      cwd,
      env: { ...process.env, ...GIT_ENV, HOME: home, GIT_CONFIG_GLOBAL: join(home, 'gitconfig') },
      stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    let err = '';
    child.stdout?.on('data', (d: Buffer) => out.push(d));
    child.stderr?.on('data', (d: Buffer) => {
      err += d.toString();
    });
    child.stdin?.end(input);
    child.on('close', (code) => (code === 0 ? resolve(Buffer.concat(out)) : reject(new Error(`git ${args.join(' ')}: ${code}\n${err}`))));
  });
}

function dirBytes(dir: string): number {
  let n = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) n += e.isDirectory() ? dirBytes(join(dir, e.name)) : statSync(join(dir, e.name)).size;
  return n;
}

const fmt = (c: CallCounts): string =>
  Object.entries(c)
    .sort()
    .map(([k, v]) => `${v} ${k}`)
    .join(', ') || 'none';

type Measured = { calls: CallCounts; waves: CallCounts; targets: CallCounts };
/** The rev-lock table's name, set once the stack runs. */
let MEMORY_TABLE = 'memories';

/** What a push may cost: a rev read per request (info/refs, receive-pack), one wave of PUTs, one conditional move of the head. */
function onePushBudget(m: Measured): boolean {
  return m.targets[`dynamodb.GetItem ${MEMORY_TABLE}`] === 2 && m.waves['s3.PutObject'] === 1 && m.targets[`dynamodb.UpdateItem ${MEMORY_TABLE}`] === 1;
}

const waves = (m: Measured): string =>
  `PutObject in ${m.waves['s3.PutObject'] ?? 0} wave(s), ${m.targets[`dynamodb.UpdateItem ${MEMORY_TABLE}`] ?? 0} UpdateItem and ${m.targets[`dynamodb.GetItem ${MEMORY_TABLE}`] ?? 0} GetItem on the rev table`;

/** The server's total of the median push, and its steps that took 10 ms or more. */
function steps(reports: readonly PushReport[]): string {
  const sorted = [...reports].sort((a, b) => a.total - b.total);
  const mid = sorted[Math.floor((sorted.length - 1) / 2)];
  if (!mid) return 'not reported';
  const parts = Object.entries(mid.ms)
    .filter(([, v]) => (v ?? 0) >= 10)
    .map(([k, v]) => `${k} ${(v ?? 0).toFixed(0)}`);
  return `${ms(mid.total)} (${parts.join(', ')} ms)`;
}

const mib = (bytes: number): string => `${(bytes / 2 ** 20).toFixed(0)} MiB`;

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const t = performance.now();
  await fn();
  return performance.now() - t;
}

/** `fn`'s result and the peak of this process's RSS above its value before, sampled every 50 ms. */
async function peakRss<T>(fn: () => Promise<T>): Promise<{ result: T; peak: number }> {
  const base = process.memoryUsage().rss;
  let peak = 0;
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss - base);
  }, 50);
  try {
    return { result: await fn(), peak };
  } finally {
    clearInterval(timer);
  }
}

/** A repository of `n` one-line notes in BIG_FOLDERS folders, one commit. */
async function tinyFiles(tmp: string, name: string, n: number, home: string): Promise<string> {
  const dir = join(tmp, name);
  await git(tmp, ['init', '-q', name], home);
  for (let i = 0; i < n; i++) {
    const folder = join(dir, `f${i % BIG_FOLDERS}`);
    if (i < BIG_FOLDERS) mkdirSync(folder);
    writeFileSync(join(folder, `n${i}.md`), `# ${i}\n`);
  }
  await git(dir, ['add', '-A'], home);
  await git(dir, ['commit', '-q', '-m', `${n} tiny notes`], home);
  return dir;
}

export async function runGitBench(log: (m: string) => void): Promise<BenchSection> {
  const tmp = mkdtempSync(join(tmpdir(), 'git-bench-'));
  const home = join(tmp, 'home');
  mkdirSync(home);
  writeFileSync(join(home, 'gitconfig'), '[init]\n\tdefaultBranch = main\n[user]\n\tname = Bench\n\temail = bench@example.com\n');
  // Not a benchmark of the rate limit: raised so that every git request is served.
  const saved = process.env.MEMORY_RATE_LIMIT;
  process.env.MEMORY_RATE_LIMIT = '1000000';
  const stack = await startLocalStack({ dataDir: join(tmp, 'data'), port: 0, demoCount: 0, host: '127.0.0.1' });
  if (saved === undefined) delete process.env.MEMORY_RATE_LIMIT;
  else process.env.MEMORY_RATE_LIMIT = saved;
  MEMORY_TABLE = stack.memoryConfig.memoryTable;
  try {
    const token = stack.issuer.signAccessToken({ sub: 'bench', scope: 'memory:read memory:write', ttlSeconds: 3600, audience: stack.auth.audience });
    const url = (memory: string) => {
      const u = new URL(`${stack.url}/v1/memories/${memory}.git`);
      u.username = 'git';
      u.password = token;
      return u.toString();
    };
    const svc = stack.memory.service;
    const caller = { account: 'bench' };
    await svc.createMemory(caller, 'big');
    log(`seeding ${NOTES} notes in 10 imports, then 100 single edits`);
    for (let b = 0; b < 10; b++) {
      await svc.importNotes(
        caller,
        'big',
        Array.from({ length: NOTES / 10 }, (_, j) => {
          const i = b * (NOTES / 10) + j;
          return { path: `area-${i % 10}/topic-${i % 37}/note-${i}.md`, markdown: noteText(i) };
        }),
      );
    }
    for (let k = 0; k < 100; k++) await svc.editNote(caller, 'big', `area-${k % 10}/topic-${k % 37}/note-${k}.md`, { mode: 'append', body: `edit ${k}` });
    const counter = countStorageCalls({ s3: stack.memory.s3, dynamodb: stack.memory.dynamodb });

    log('clones');
    const clones = await timeEach(5, (i) => git(tmp, ['clone', '-q', url('big'), `clone-${i}`], home));
    const packBytes = dirBytes(join(tmp, 'clone-0', '.git', 'objects', 'pack'));
    const objects = Number(/in-pack: (\d+)/.exec(await git(join(tmp, 'clone-0'), ['count-objects', '-v'], home))?.[1]);
    const cloneCalls = (await counter.measure(() => git(tmp, ['clone', '-q', url('big'), 'clone-counted'], home))).calls;

    log('pull after one REST write');
    await svc.writeNote(caller, 'big', 'area-1/fresh.md', { body: 'one new note' });
    const before = Number(/count: (\d+)/.exec(await git(join(tmp, 'clone-0'), ['count-objects', '-v'], home))?.[1]);
    const t0 = performance.now();
    await git(join(tmp, 'clone-0'), ['-c', 'fetch.unpackLimit=100000', 'pull', '-q'], home);
    const pullMs = performance.now() - t0;
    const pulled = Number(/count: (\d+)/.exec(await git(join(tmp, 'clone-0'), ['count-objects', '-v'], home))?.[1]) - before;

    log('pushes: a whole 1,000-note repository into empty memories, and 1,000 changed notes');
    const fresh = join(tmp, 'fresh');
    await git(tmp, ['init', '-q', 'fresh'], home);
    for (let i = 0; i < NOTES; i++) {
      const p = join(fresh, `area-${i % 10}`, `topic-${i % 37}`, `note-${i}.md`);
      mkdirSync(dirname(p), { recursive: true });
      writeFileSync(p, noteText(i, 1));
    }
    await git(fresh, ['add', '-A'], home);
    await git(fresh, ['commit', '-q', '-m', 'a whole memory, written elsewhere'], home);
    // The server's own time per step of each push (`memory:push-steps`), next to the wall time.
    const reports: PushReport[] = [];
    const onReport = (r: unknown) => reports.push(r as PushReport);
    subscribe(PUSH_STEPS_CHANNEL, onReport);
    for (let i = 0; i < PUSHES; i++) await svc.createMemory(caller, `pushed-${i}`);
    const pushNew: Array<Measured & { result: number }> = [];
    for (let i = 0; i < PUSHES; i++) pushNew.push(await counter.measure(() => timed(() => git(fresh, ['push', '-q', url(`pushed-${i}`), 'HEAD:main'], home))));
    const wholeSteps = reports.filter((r) => r.memory.startsWith('pushed-') && r.outcome === 'landed');
    const work = join(tmp, 'clone-1');
    await git(work, ['pull', '-q'], home);
    for (let i = 0; i < NOTES; i++) writeFileSync(join(work, `area-${i % 10}`, `topic-${i % 37}`, `note-${i}.md`), noteText(i, 2));
    await git(work, ['commit', '-q', '-a', '-m', 'every note changed'], home);
    const pushAll = await counter.measure(async () => {
      const t = performance.now();
      await git(work, ['push', '-q'], home);
      return performance.now() - t;
    });

    log(`a thin push of ${NOTES} changed notes to a cold instance of a memory written by REST (loose objects)`);
    await svc.createMemory(caller, 'rest');
    for (let b = 0; b < 10; b++) {
      await svc.importNotes(
        caller,
        'rest',
        Array.from({ length: NOTES / 10 }, (_, j) => {
          const i = b * (NOTES / 10) + j;
          return { path: `area-${i % 10}/topic-${i % 37}/note-${i}.md`, markdown: noteText(i) };
        }),
      );
    }
    await git(tmp, ['clone', '-q', url('rest'), 'rest'], home);
    const rest = join(tmp, 'rest');
    const restOld = (await git(rest, ['rev-parse', 'HEAD'], home)).trim();
    for (let i = 0; i < NOTES; i++) writeFileSync(join(rest, `area-${i % 10}`, `topic-${i % 37}`, `note-${i}.md`), noteText(i, 3));
    await git(rest, ['commit', '-q', '-a', '-m', 'every note changed'], home);
    const restNew = (await git(rest, ['rev-parse', 'HEAD'], home)).trim();
    // What git push sends this remote (it takes ofs-delta): the changed notes as deltas against their blobs in the memory.
    const thin = await gitBytes(rest, ['pack-objects', '-q', '--stdout', '--revs', '--thin', '--delta-base-offset'], home, `${restNew}\n^${restOld}\n`);
    const cold = createMemoryRuntime(
      stack.memoryConfig,
      { current: { id: 1, secret: randomBytes(32) } },
      { s3: stack.memory.s3, dynamodb: stack.memory.dynamodb, overrides: { cache: new ImmutableCache(stack.memoryConfig.cacheMegabytes * 2 ** 20) } },
    );
    const coldPush = await counter.measure(() =>
      timed(async () => {
        const out = await cold.service.gitPush(caller, 'rest', { ref: 'refs/heads/main', old: restOld, new: restNew }, thin);
        if (!out.ok) throw new Error(`cold push refused: ${out.reason}`);
      }),
    );
    const coldSteps = reports.find((r) => r.memory === 'rest');
    unsubscribe(PUSH_STEPS_CHANNEL, onReport);

    log(`a push of ${BIG_FILES.toLocaleString('en')} tiny files into an empty memory, and one of ${HUGE_FILES.toLocaleString('en')}`);
    const big = await tinyFiles(tmp, 'big-push', BIG_FILES, home);
    await svc.createMemory(caller, 'tiny');
    const bigPush = await peakRss(() => counter.measure(() => timed(() => git(big, ['push', '-q', url('tiny'), 'HEAD:main'], home))));
    const bigLanded = (await svc.getMemory(caller, 'tiny')).rev === (await git(big, ['rev-parse', 'HEAD'], home)).trim();
    const huge = await tinyFiles(tmp, 'huge-push', HUGE_FILES, home);
    await svc.createMemory(caller, 'huge');
    const hugeT = performance.now();
    const hugeErr = await git(huge, ['push', url('huge'), 'HEAD:main'], home).then(
      () => 'landed',
      // git pads a remote: line with spaces (to clear progress output): trimmed.
      (err: Error) => /remote: refused: [^\n]*/.exec(err.message)?.[0].trimEnd() ?? err.message.slice(0, 200),
    );
    const hugeMs = performance.now() - hugeT;

    log('history');
    const auth = { authorization: `Bearer ${token}` };
    const get = async (q: string) => {
      const res = await fetch(`${stack.url}/v1/memories/big/history${q}`, { headers: auth });
      if (res.status !== 200) throw new Error(`history ${q}: ${res.status}`);
      await res.arrayBuffer();
    };
    const history = await timeEach(20, () => get('?limit=20'));
    const pathHistory = await timeEach(10, () => get('?path=area-0/topic-0/note-0.md'));
    counter.detach();

    const c = summarize(clones);
    const pn = summarize(pushNew.map((p) => p.result));
    const pnMax = Math.max(...pushNew.map((p) => p.result));
    const wholeCalls = pushNew[pushNew.length - 1];
    const hs = summarize(history);
    const hp = summarize(pathHistory);
    const rows: BenchSection['rows'] = [
      [`git clone, ${NOTES} notes, 110 commits, p50 / p99 (5 clones)`, `${ms(c.p50)} / ${ms(c.p99)}`, '< 30 s (API Gateway)', verdict(c.p99 < 30000)],
      [
        'its pack',
        `${(packBytes / 1024).toFixed(0)} KiB, ${objects} objects`,
        '≤ 4 MiB: answered by the buffered function too',
        verdict(packBytes <= 4 * 1024 * 1024),
      ],
      [
        'storage calls of a clone (protocol v2: info/refs, ls-refs, fetch; instance cache warm)',
        fmt(cloneCalls),
        'a rev read per request, no object fetched twice',
        verdict((cloneCalls['dynamodb.GetItem'] ?? 0) === 3 && !cloneCalls['s3.GetObject']),
      ],
      [
        `git push of a whole ${NOTES}-note repository into an empty memory, p50 / max (${PUSHES}); the server's share, p50`,
        `${ms(pn.p50)} / ${ms(pnMax)}; server ${steps(wholeSteps)}`,
        '< 3 s',
        verdict(pnMax < 3000 && wholeSteps.length === PUSHES),
      ],
      [
        'storage calls of that push (info/refs + receive-pack; the last of them)',
        `${fmt(wholeCalls.calls)}; ${waves(wholeCalls)}`,
        'a rev read per request, no GetObject, 1 wave of PutObject (the pack, its index, the note index, a segment of search texts, the lineage), 1 conditional UpdateItem',
        verdict(onePushBudget(wholeCalls) && !wholeCalls.calls['s3.GetObject'] && wholeCalls.calls['s3.PutObject'] === 5),
      ],
      [`git push of one commit changing all ${NOTES} notes`, ms(pushAll.result), '< 30 s', verdict(pushAll.result < 30000)],
      [
        'storage calls of that push (info/refs + receive-pack)',
        `${fmt(pushAll.calls)}; ${waves(pushAll)}`,
        'a rev read per request, 1 wave of PutObject, 1 conditional UpdateItem',
        verdict(onePushBudget(pushAll)),
      ],
      [
        `a thin push of ${NOTES} changed notes (one commit) to a cold instance, of a memory written by REST (server side)`,
        `${ms(coldPush.result)}, server ${coldSteps ? steps([coldSteps]) : 'not reported'}; ${fmt(coldPush.calls)}; GetObject in ${coldPush.waves['s3.GetObject'] ?? 0} wave(s)`,
        `lands; the notes' bases from the packed search texts, not a GET per note (fewer GETs than the ${NOTES} notes); other objects read ${BASE_READS} at a time: at most 1 + ⌈GETs / ${BASE_READS}⌉ waves of GetObject`,
        verdict(
          (coldPush.calls['s3.GetObject'] ?? 0) < NOTES &&
            (coldPush.waves['s3.GetObject'] ?? 0) <= 1 + Math.ceil((coldPush.calls['s3.GetObject'] ?? 0) / BASE_READS) &&
            coldPush.targets[`dynamodb.UpdateItem ${MEMORY_TABLE}`] === 1 &&
            coldPush.waves['s3.PutObject'] === 1,
        ),
      ],
      [
        `git push of ${BIG_FILES.toLocaleString('en')} tiny files (${BIG_FOLDERS} folders, one commit) into an empty memory`,
        `${ms(bigPush.result.result)}; ${fmt(bigPush.result.calls)}; ${waves(bigPush.result)}; server RSS +${mib(bigPush.peak)} at peak`,
        `lands within the server's ${PUSH_SECONDS} s (MEMORY_PUSH_SECONDS; the wall time adds git's own), 1 wave of PutObject (a pack and its index), 1 conditional UpdateItem`,
        verdict(bigLanded && onePushBudget(bigPush.result) && (bigPush.result.calls['s3.PutObject'] ?? 0) < 100),
      ],
      [
        `git push of ${HUGE_FILES.toLocaleString('en')} tiny files (over the ${MAX_OBJECTS.toLocaleString('en')} objects a push may bring)`,
        `${hugeErr} (after ${ms(hugeMs)}, git's own time to pack and send included)`,
        'refused with a readable remote: line, nothing stored',
        verdict(/remote: refused: the push brings \d+ objects/.test(hugeErr)),
      ],
      ['git pull after one REST write', `${ms(pullMs)}, ${pulled} objects received`, 'only the new objects (4: commit, 2 trees, note)', verdict(pulled === 4)],
      ['GET history, 20 commits, p50 / p99', `${ms(hs.p50)} / ${ms(hs.p99)}`, '', ''],
      ['GET history?path= (a note edited early: 111 commits examined), p50 / p99', `${ms(hp.p50)} / ${ms(hp.p99)}`, '', ''],
    ];
    return {
      title: 'Git remote (/v1/memories/<name>.git)',
      method: [
        `- Data: a memory of ${NOTES} notes (about 400 bytes each) written as 10 imports of 100 notes and 100 single edits (110 commits), on DynamoDB Local and the loopback S3 server, served by the local stack in this process over HTTP.`,
        '- Client: the real `git` (2.39 here; fetches in protocol v2, its default), HTTP Basic with the token as password, `-q`. Wall times include git itself (pack indexing, checkout of 1,000 files) and the local backends.',
        "- Storage calls counted by SDK middleware on the core's clients for one git command each (its HTTP requests together); the rate limiter shares the DynamoDB client here, and a lease it takes adds one UpdateItem. The instance cache is warm (the same process wrote the objects), so a cold Lambda instance adds one GetObject per object it has not seen.",
        `- The whole-repository push goes into a new empty memory each time (a person bringing an existing folder of notes; memories created before the timing); the other push changes every note of a clone in one commit. "The server's share" is the push's own time (\`receive\` of the memory core, from the rev read to the head move) that the core publishes on the diagnostics channel \`${PUSH_STEPS_CHANNEL}\`, with its steps of 10 ms or more: head (rev read), unpack (inflate, deltas, ids), commits (ancestry, every tree checked), notes (the diff and every note checked like a write), indexes, pack (the objects as one pack), wave (the parallel PUTs), move (the conditional head move).`,
        `- The cold-instance push: a memory of ${NOTES} notes written by REST (10 imports: every note a loose object), cloned, every note changed in one commit; the pack \`git push\` would send (\`pack-objects --thin --delta-base-offset\`: the changed notes as deltas against the memory's blobs) handed to a second memory runtime on the same clients with an empty cache (a Lambda instance that has not read this memory), \`gitPush\` of the core timed. A changed note's base (its blob in the memory) is taken from the head's packed search texts (the index and its segments); every other object the push reads (old trees: bases of the new ones, and the diff's old side) is a GET of a loose object; their waves are counted as above.`,
        `- Waves: the call counter counts a wave each time a PutObject starts while none is in flight (a parallel wave counts once, two waves in a row twice); UpdateItem and GetItem are counted on the rev-lock table only (the rate limiter's calls share the client). A push of ${PACK_MIN_OBJECTS} objects or more stores them as one git pack and its index (\`objects/pack/\`), so its wave is those two PUTs plus an index and a lineage per commit and the packed texts of search.`,
        `- The tiny-file pushes: ${BIG_FILES.toLocaleString('en')} and ${HUGE_FILES.toLocaleString('en')} one-line notes in ${BIG_FOLDERS} folders, one commit, made by \`git\` in the script; server RSS is this process's (the stack runs in it), sampled every 50 ms during the push, above its value before.`,
      ].join('\n'),
      rows,
    };
  } finally {
    await stack.close();
    rmSync(tmp, { recursive: true, force: true });
  }
}
