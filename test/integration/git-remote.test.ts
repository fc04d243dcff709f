import type { ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from '../../bin/local-stack/backends';
import { basicUrl, gitSandbox, interpose, type GitSandbox, type Interposer } from '../support/git-client';
import { spawnStack, stopStack, until } from '../support/stack-process';
import { startMemoryStack, type MemoryStack } from './memory-api-harness';

/**
 * The memory as a git remote, driven by the real `git` client (2.39 here) against the local stack
 * over HTTP: clone, commit, push, REST write, pull (only the new objects travel), refusals that land
 * nothing, races with REST writes, and `git fsck --full --strict` after every step. The tests run in
 * order on one memory, as a person editing it in their own editor would.
 */
let h: MemoryStack;
let g: GitSandbox;
let token: string;
const SHA = /^[0-9a-f]{40}$/;

beforeAll(async () => {
  // Not a test of the rate limit (memory-api-rate-limit.test.ts is): raised so git's several requests per command all pass.
  h = await startMemoryStack({ MEMORY_RATE_LIMIT: '100000' });
  g = gitSandbox('git-remote');
  token = h.token('alice');
  const res = await h.fetch('/v1/memories', { method: 'POST', headers: { ...auth(), 'content-type': 'application/json' }, body: '{"name":"work"}' });
  expect(res.status).toBe(201);
}, 180000);
afterAll(async () => {
  g?.cleanup();
  await h?.close();
});

const auth = (t = token) => ({ authorization: `Bearer ${t}` });

async function rest(method: string, path: string, body?: string, headers: Record<string, string> = {}): Promise<Response> {
  return h.fetch(`/v1/memories/work${path}`, {
    method,
    headers: { ...auth(), ...(body !== undefined && { 'content-type': 'text/markdown' }), ...headers },
    body,
  });
}

async function head(): Promise<string | null> {
  return ((await (await h.fetch('/v1/memories/work', { headers: auth() })).json()) as { rev: string | null }).rev;
}

/** Objects in a clone's object store (loose, as fetches below unpack them). */
async function objectCount(dir: string): Promise<number> {
  const out = await g.ok(dir, ['count-objects', '-v']);
  return Number(/^count: (\d+)$/m.exec(out)?.[1]) + Number(/^in-pack: (\d+)$/m.exec(out)?.[1] ?? 0);
}

describe('an empty memory', () => {
  it("clones as an empty repository on main (protocol v2 says so, whatever the client's default branch) and takes a first push", async () => {
    const url = basicUrl(h.url, 'work', token);
    const clone = await g.run('', ['-c', 'init.defaultBranch=master', 'clone', url, 'first']);
    expect(clone.status).toBe(0);
    expect(clone.stderr).toMatch(/cloned an empty repository/);
    expect((await g.ok('first', ['symbolic-ref', 'HEAD'])).trim()).toBe('refs/heads/main');
    g.write('first', 'ideas/today.md', '# Today\n\nTry the #mcp tools\n');
    g.write('first', 'README.md', '# Work\n');
    await g.ok('first', ['add', '-A']);
    await g.ok('first', ['commit', '-q', '-m', 'First notes from git']);
    const push = await g.run('first', ['push', 'origin', 'main']);
    expect(push.status).toBe(0);
    expect(await head()).toBe((await g.ok('first', ['rev-parse', 'HEAD'])).trim());
    await g.fsck('first');
  });
});

describe('clone, edit, push', () => {
  it('clones with the token as the Basic password and with http.extraHeader, both fsck-clean', async () => {
    expect((await g.run('', ['clone', '-q', basicUrl(h.url, 'work', token), 'a'])).status).toBe(0);
    expect((await g.run('', ['-c', `http.extraHeader=Authorization: Bearer ${token}`, 'clone', '-q', `${h.url}/v1/memories/work.git`, 'b'])).status).toBe(0);
    // The URL without `.git` is the same repository.
    expect((await g.run('', ['clone', '-q', basicUrl(h.url, 'work', token).replace('.git', ''), 'c'])).status).toBe(0);
    for (const d of ['a', 'b', 'c']) {
      await g.fsck(d);
      expect(await g.ok(d, ['show', 'HEAD:ideas/today.md'])).toBe('# Today\n\nTry the #mcp tools\n');
      expect((await g.ok(d, ['symbolic-ref', 'HEAD'])).trim()).toBe('refs/heads/main');
    }
  });

  it('lands a pushed commit as it is (sha, author, message) and REST, search and history see it at once', async () => {
    g.write('a', 'projects/alpha.md', '---\ntags: [alpha]\n---\n# Alpha\n\nThe alpha plan, edited in my editor.\n');
    await g.ok('a', ['add', '-A']);
    await g.ok('a', ['-c', 'user.name=Ada Editor', '-c', 'user.email=ada@example.com', 'commit', '-q', '-m', 'Plan alpha\n\nWritten offline.']);
    const local = (await g.ok('a', ['rev-parse', 'HEAD'])).trim();
    expect((await g.run('a', ['push', '-q'])).status).toBe(0);
    await g.fsck('a');
    expect(await head()).toBe(local);
    const note = (await (await rest('GET', '/notes/projects/alpha.md')).json()) as { title: string; tags: string[] };
    expect(note).toMatchObject({ title: 'Alpha', tags: ['alpha'] });
    const found = (await (await rest('GET', '/search?q=editor')).json()) as { results: Array<{ path: string }> };
    expect(found.results.map((r) => r.path)).toEqual(['projects/alpha.md']);
    const listed = (await (await rest('GET', '/notes?tags=alpha')).json()) as { entries: Array<{ path: string }> };
    expect(listed.entries.map((e) => e.path)).toEqual(['projects', 'projects/alpha.md']);
    const history = (await (await rest('GET', '/history?limit=1')).json()) as { commits: Array<Record<string, unknown>> };
    expect(history.commits[0]).toMatchObject({
      rev: local,
      author: { name: 'Ada Editor', sub: 'alice' },
      message: 'Plan alpha\n\nWritten offline.',
      changes: [{ path: 'projects/alpha.md', change: 'added' }],
    });
  });

  it("pulls an agent's REST write, and only the new objects travel: one commit, the trees on its path, one note", async () => {
    const put = await rest('PUT', '/notes/projects/beta.md', '# Beta\n\nWritten by an agent.\n');
    expect(put.status).toBe(200);
    const before = await objectCount('a');
    expect((await g.run('a', ['-c', 'fetch.unpackLimit=100000', 'pull', '-q'])).status).toBe(0);
    // commit + root tree + projects/ tree + the note
    expect((await objectCount('a')) - before).toBe(4);
    expect(await g.ok('a', ['log', '-1', '--format=%s'])).toBe('Create projects/beta.md\n');
    await g.fsck('a');
  });

  it('speaks protocol v0 to a client that asks for it: clone and pull, only the new objects', async () => {
    const v0 = ['-c', 'protocol.version=0'];
    expect((await g.run('', [...v0, 'clone', '-q', basicUrl(h.url, 'work', token), 'v0'])).status).toBe(0);
    await g.fsck('v0');
    expect((await rest('PUT', '/notes/v0/note.md', '# v0\n')).status).toBe(200);
    const before = await objectCount('v0');
    expect((await g.run('v0', [...v0, '-c', 'fetch.unpackLimit=100000', 'pull', '-q'])).status).toBe(0);
    expect((await objectCount('v0')) - before).toBe(4);
    expect(await g.ok('v0', ['show', 'HEAD:v0/note.md'])).toBe('# v0\n');
    await g.fsck('v0');
  });
});

describe('refusals land nothing', () => {
  /** Commits `files` on top of a fresh clone of the head and pushes; the memory must not move. */
  async function refusedPush(dir: string, files: Record<string, string>, extra: (d: string) => Promise<void> = async () => undefined) {
    await g.ok('', ['clone', '-q', basicUrl(h.url, 'work', token), dir]);
    for (const [p, text] of Object.entries(files)) g.write(dir, p, text);
    await extra(dir);
    await g.ok(dir, ['add', '-A']);
    await g.ok(dir, ['commit', '-q', '-m', `refused ${dir}`]);
    const sha = (await g.ok(dir, ['rev-parse', 'HEAD'])).trim();
    const before = await head();
    const push = await g.run(dir, ['push']);
    expect(push.status).not.toBe(0);
    expect(await head()).toBe(before);
    // The refused commit is not part of the memory: no read at it.
    expect((await rest('GET', `/notes/README.md?rev=${sha}`)).status).toBe(404);
    await g.fsck(dir);
    return push.stderr;
  }

  it('refuses a pushed credential, naming the file and the kind, and lands nothing', async () => {
    const err = await refusedPush('cred', { 'ok.md': '# fine\n', 'keys/aws.md': '# Keys\n\naws_access_key_id = AKIAIOSFODNN7EXAMPLE\n' });
    expect(err).toMatch(/remote: refused: keys\/aws\.md: content refused: line 3 looks like an AWS access key ID \(aws-access-key-id\)/);
    expect(err).toMatch(/\[remote rejected\] main -> main \(refused content\)/);
    // Not even the harmless note of the same push landed.
    expect((await rest('GET', '/notes/ok.md')).status).toBe(404);
  });

  it('refuses files that are not notes, naming each, and the names git gives a meaning to', async () => {
    const err = await refusedPush('nonmd', { 'diagram.png': 'PNG', 'notes/data.json': '{}', 'good.md': '# good\n' });
    expect(err).toMatch(/refused: diagram\.png: path must name a markdown file ending in \.md/);
    expect(err).toMatch(/refused: notes\/data\.json: path must name a markdown file ending in \.md/);
    expect(err).toMatch(/\[remote rejected\] main -> main \(refused content\)/);
    const ignore = await refusedPush('ignore', { '.gitignore': '*.tmp\n', 'fine.md': '# fine\n' });
    expect(ignore).toMatch(/refused: "\.gitignore" names git's own \.gitignore file/);
    const folder = await refusedPush('mdfolder', { 'a.md/b.md': '# b\n' });
    expect(folder).toMatch(/refused: a\.md\/b\.md: folder names may not end in \.md/);
  });

  it('refuses a symbolic link and an executable note', async () => {
    const link = await refusedPush('link', { 'target.md': '# t\n' }, async (d) => {
      await g.ok(d, ['config', 'core.symlinks', 'true']);
      const { symlinkSync } = await import('node:fs');
      symlinkSync('target.md', `${g.root}/${d}/alias.md`);
    });
    expect(link).toMatch(/alias\.md: mode 120000 \(a symbolic link\) is not a note/);
    const exec = await refusedPush('exec', { 'run.md': '# run\n' }, async (d) => {
      const { chmodSync } = await import('node:fs');
      chmodSync(`${g.root}/${d}/run.md`, 0o755);
    });
    expect(exec).toMatch(/run\.md: mode 100755 \(an executable file\) is not a note/);
  });

  it('refuses oversized notes and front matter a write refuses', async () => {
    const big = await refusedPush('big', { 'big.md': `# Big\n\n${'x'.repeat(1024 * 1024)}\n` });
    expect(big).toMatch(/big\.md: note is \d+ bytes; the maximum is 1048576 bytes/);
    const fm = await refusedPush('fm', { 'tagged.md': '---\nx: !!js/function "() => 1"\n---\n# t\n' });
    expect(fm).toMatch(/refused: tagged\.md: /);
  });

  it('refuses a non-fast-forward push (a rewritten history), leaving main where it was', async () => {
    await g.ok('', ['clone', '-q', basicUrl(h.url, 'work', token), 'nff']);
    await g.ok('nff', ['reset', '-q', '--hard', 'HEAD~1']);
    g.write('nff', 'rewritten.md', '# another past\n');
    await g.ok('nff', ['add', '-A']);
    await g.ok('nff', ['commit', '-q', '-m', 'rewrite history']);
    const before = await head();
    const push = await g.run('nff', ['push', '--force']);
    expect(push.status).not.toBe(0);
    expect(push.stderr).toMatch(/\[remote rejected\] main -> main \(non-fast-forward\)/);
    expect(push.stderr).toMatch(/remote: refused: main is at [0-9a-f]{12}, which your push does not build on/);
    expect(await head()).toBe(before);
    await g.fsck('nff');
  });

  it('refuses other branches and the deletion of main', async () => {
    await g.ok('', ['clone', '-q', basicUrl(h.url, 'work', token), 'branches']);
    await g.ok('branches', ['switch', '-q', '-c', 'topic']);
    g.write('branches', 'topic.md', '# topic\n');
    await g.ok('branches', ['add', '-A']);
    await g.ok('branches', ['commit', '-q', '-m', 'topic']);
    const other = await g.run('branches', ['push', 'origin', 'topic']);
    expect(other.stderr).toMatch(/\[remote rejected\] topic -> topic \(only main can be pushed\)/);
    expect(other.stderr).toMatch(/git push origin HEAD:main/);
    const del = await g.run('branches', ['push', 'origin', ':main']);
    expect(del.status).not.toBe(0);
    expect((await rest('GET', '/notes/topic.md')).status).toBe(404);
  });
});

describe('races with REST writes: exactly one wins, nothing is lost', () => {
  it('a push behind a REST write is told to fetch first by git itself; after a pull it lands', async () => {
    await g.ok('', ['clone', '-q', basicUrl(h.url, 'work', token), 'behind']);
    expect((await rest('PUT', '/notes/agent/log.md', '# Log\n\nan agent was here\n')).status).toBe(200);
    g.write('behind', 'mine.md', '# mine\n');
    await g.ok('behind', ['add', '-A']);
    await g.ok('behind', ['commit', '-q', '-m', 'mine']);
    const push = await g.run('behind', ['push']);
    expect(push.stderr).toMatch(/\[rejected\] +main -> main \(fetch first\)/);
    expect((await g.run('behind', ['pull', '-q', '--no-rebase', '--no-edit'])).status).toBe(0);
    expect((await g.run('behind', ['push', '-q'])).status).toBe(0);
    expect((await rest('GET', '/notes/agent/log.md')).status).toBe(200);
    expect((await rest('GET', '/notes/mine.md')).status).toBe(200);
    await g.fsck('behind');
  });

  it('a REST write landing between the advertisement and the pack wins; the push is refused (fetch first) and lands nothing', async () => {
    await g.ok('', ['clone', '-q', basicUrl(h.url, 'work', token), 'race']);
    g.write('race', 'race.md', '# raced\n');
    await g.ok('race', ['add', '-A']);
    await g.ok('race', ['commit', '-q', '-m', 'raced push']);
    const pushed = (await g.ok('race', ['rev-parse', 'HEAD'])).trim();
    let written = '';
    const proxy = await interpose(
      h.url,
      (method, path) => method === 'POST' && path.endsWith('/git-receive-pack'),
      async () => {
        const res = await rest('PUT', '/notes/agent/raced.md', '# the agent got there first\n');
        written = ((await res.json()) as { rev: string }).rev;
      },
    );
    try {
      const push = await g.run('race', ['push', basicUrl(proxy.url, 'work', token), 'main']);
      expect(push.status).not.toBe(0);
      // git words the remote's "fetch first" as its own usual rejection.
      expect(push.stderr).toMatch(/\[rejected\] +main -> main \(fetch first\)/);
      expect(push.stderr).toMatch(/remote: refused: memory "work" is at [0-9a-f]{12} now/);
    } finally {
      await proxy.close();
    }
    expect(written).toMatch(SHA);
    expect(await head()).toBe(written);
    expect((await rest('GET', '/notes/agent/raced.md')).status).toBe(200);
    expect((await rest('GET', '/notes/race.md')).status).toBe(404);
    expect((await rest('GET', `/notes/race.md?rev=${pushed}`)).status).toBe(404);
    expect((await g.run('race', ['pull', '-q', '--no-rebase', '--no-edit'])).status).toBe(0);
    expect((await g.run('race', ['push', '-q'])).status).toBe(0);
    await g.fsck('race');
  });

  // Four clones, three pushes and a fresh clone: a dozen git processes, which a loaded machine
  // runs well past the default 60 s.
  it('concurrent pushes and REST writes: every acknowledged change is in the history, no refused one is', async () => {
    const dirs = ['p1', 'p2', 'p3'];
    for (const d of dirs) {
      await g.ok('', ['clone', '-q', basicUrl(h.url, 'work', token), d]);
      g.write(d, `conc/${d}.md`, `# ${d}\n`);
      await g.ok(d, ['add', '-A']);
      await g.ok(d, ['commit', '-q', '-m', `concurrent ${d}`]);
    }
    const results = await Promise.all([
      ...dirs.map(async (d) => ({ kind: 'push' as const, d, ok: (await g.run(d, ['push', '-q'])).status === 0 })),
      ...[1, 2, 3].map(async (i) => ({ kind: 'rest' as const, d: `r${i}`, ok: (await rest('PUT', `/notes/conc/r${i}.md`, `# r${i}\n`)).status === 200 })),
    ]);
    // REST writes without If-Match rebase, so each lands; pushes are fast-forward only, so at least one lands.
    expect(results.filter((r) => r.kind === 'rest').every((r) => r.ok)).toBe(true);
    for (const r of results) expect((await rest('GET', `/notes/conc/${r.d}.md`)).status).toBe(r.ok ? 200 : 404);
    const fresh = await g.run('', ['clone', '-q', basicUrl(h.url, 'work', token), 'after-race']);
    expect(fresh.status).toBe(0);
    await g.fsck('after-race');
  }, 240_000);
});

describe('authentication and grants', () => {
  it('challenges for HTTP Basic without credentials; a bad token is refused', async () => {
    const res = await h.fetch('/v1/memories/work.git/info/refs?service=git-upload-pack');
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(/^Basic realm=/);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    const none = await g.run('', ['clone', `${h.url}/v1/memories/work.git`, 'anon']);
    expect(none.status).not.toBe(0);
    const bad = await g.run('', ['clone', basicUrl(h.url, 'work', `${token}x`), 'bad']);
    expect(bad.status).not.toBe(0);
    expect(bad.stderr).toMatch(/401|Authentication failed/);
  });

  it('a read-only token clones but cannot push (403, said by the remote); a token without the memory gets 403', async () => {
    const reader = h.token('alice', { scope: 'memory:read' });
    await g.ok('', ['clone', '-q', basicUrl(h.url, 'work', reader), 'reader']);
    g.write('reader', 'nope.md', '# nope\n');
    await g.ok('reader', ['add', '-A']);
    await g.ok('reader', ['commit', '-q', '-m', 'nope']);
    const push = await g.run('reader', ['push', '-q']);
    expect(push.status).not.toBe(0);
    expect(push.stderr).toMatch(/FORBIDDEN: This token lacks the memory:write scope|403/);
    const stranger = h.token('alice', { memories: ['other'] });
    const clone = await g.run('', ['clone', basicUrl(h.url, 'work', stranger), 'stranger']);
    expect(clone.status).not.toBe(0);
    expect(clone.stderr).toMatch(/FORBIDDEN: memory "work" is not granted to this token/);
    // Another account's memory of the same name does not exist for it.
    const bob = h.token('bob');
    const theirs = await g.run('', ['clone', basicUrl(h.url, 'work', bob), 'bob']);
    expect(theirs.stderr).toMatch(/NOT_FOUND: memory "work" does not exist/);
  });
});

describe('history seen both ways', () => {
  it('takes a pushed merge as it is; a fresh clone has the same graph, fsck-clean', async () => {
    await g.ok('', ['clone', '-q', basicUrl(h.url, 'work', token), 'merge']);
    await g.ok('merge', ['switch', '-q', '-c', 'side']);
    g.write('merge', 'side/one.md', '# side one\n');
    await g.ok('merge', ['add', '-A']);
    await g.ok('merge', ['commit', '-q', '-m', 'side one']);
    const side = (await g.ok('merge', ['rev-parse', 'HEAD'])).trim();
    await g.ok('merge', ['switch', '-q', 'main']);
    g.write('merge', 'main-line.md', '# main line\n');
    await g.ok('merge', ['add', '-A']);
    await g.ok('merge', ['commit', '-q', '-m', 'main line']);
    await g.ok('merge', ['merge', '-q', '--no-edit', 'side']);
    const merge = (await g.ok('merge', ['rev-parse', 'HEAD'])).trim();
    expect((await g.run('merge', ['push', '-q', 'origin', 'main'])).status).toBe(0);
    expect(await head()).toBe(merge);
    // The side branch's commit is part of the history: readable at its rev.
    expect(((await (await rest('GET', `/notes/side/one.md?rev=${side}`)).json()) as { body: string }).body).toBe('# side one\n');
    const history = (await (await rest('GET', '/history?limit=1')).json()) as { commits: Array<{ parents: string[]; changes: unknown[] }> };
    expect(history.commits[0].parents).toHaveLength(2);
    expect(history.commits[0].changes).toEqual([{ path: 'side/one.md', change: 'added' }]);
    await g.ok('', ['clone', '-q', basicUrl(h.url, 'work', token), 'merge-clone']);
    expect(await g.ok('merge-clone', ['log', '--format=%H', '--graph'])).toBe(await g.ok('merge', ['log', '--format=%H', '--graph']));
    await g.fsck('merge-clone');
  });

  it('a REST move is a rename to git: git log --follow goes through it, and links were rewritten in the same commit', async () => {
    expect((await rest('PUT', '/notes/inbox/idea.md', '# Idea\n\nA long enough note about an idea, so that it stays itself.\n')).status).toBe(200);
    expect((await rest('PUT', '/notes/index.md', '# Index\n\n- [[inbox/idea]]\n- [the idea](inbox/idea.md)\n')).status).toBe(200);
    const moved = await h.fetch('/v1/memories/work/move', {
      method: 'POST',
      headers: { ...auth(), 'content-type': 'application/json' },
      body: JSON.stringify({ from: 'inbox/idea.md', to: 'projects/idea.md', updateLinks: true }),
    });
    expect(moved.status).toBe(200);
    expect(((await moved.json()) as { linksUpdated: string[] }).linksUpdated).toEqual(['index.md']);
    await g.ok('', ['clone', '-q', basicUrl(h.url, 'work', token), 'follow']);
    const log = await g.ok('follow', ['log', '--follow', '--format=%s', '--', 'projects/idea.md']);
    expect(log).toBe('Move inbox/idea.md to projects/idea.md\nCreate inbox/idea.md\n');
    expect(await g.ok('follow', ['show', '--format=', '--name-status', '-M', 'HEAD'])).toBe('M\tindex.md\nR100\tinbox/idea.md\tprojects/idea.md\n');
    expect(await g.ok('follow', ['show', 'HEAD:index.md'])).toBe('# Index\n\n- [[projects/idea]]\n- [the idea](projects/idea.md)\n');
    await g.fsck('follow');
  });

  it('a diff from /v1 applies with git apply, turning the older version into the newer', async () => {
    const log = (await (await rest('GET', '/history?limit=5')).json()) as { commits: Array<{ rev: string }> };
    const from = log.commits[4].rev;
    const to = log.commits[0].rev;
    const patch = await (await rest('GET', `/diff?from=${from}&to=${to}`)).text();
    await g.ok('', ['clone', '-q', basicUrl(h.url, 'work', token), 'apply']);
    await g.ok('apply', ['checkout', '-q', from]);
    g.write('apply', '../patch.diff', patch);
    await g.ok('apply', ['apply', '--index', '../patch.diff']);
    expect(await g.ok('apply', ['diff', '--cached', '--stat', to])).toBe('');
  });
});

describe('across two instances on the same backends', () => {
  let second: ChildProcess | undefined;
  let b = '';
  let log = '';
  /** The second instance reaches DynamoDB through this proxy, which can hold its conditional writes. */
  let ddbProxy: Interposer | undefined;
  let holdNext: { arrived: () => void; released: Promise<void> } | undefined;

  beforeAll(async () => {
    // The second npm start attaches to the backends named in the stack file: DynamoDB through the proxy.
    const stackFile = join(h.dataDir, 'run', 'stack.json');
    const info = JSON.parse(readFileSync(stackFile, 'utf8')) as { dynamoEndpoint: string };
    ddbProxy = await interpose(
      info.dynamoEndpoint,
      (_m, _p, headers, body) =>
        holdNext !== undefined &&
        String(headers['x-amz-target']).endsWith('.UpdateItem') &&
        (JSON.parse(body.toString('utf8')) as { TableName?: string }).TableName === h.stack.memoryConfig.memoryTable,
      async () => {
        const hold = holdNext;
        holdNext = undefined;
        hold?.arrived();
        await hold?.released;
      },
    );
    writeFileSync(stackFile, JSON.stringify({ ...info, dynamoEndpoint: ddbProxy.url }));
    const port = await freePort();
    b = `http://127.0.0.1:${port}`;
    second = spawnStack(
      h.dataDir,
      port,
      (t) => {
        log += t;
      },
      { MEMORY_RATE_LIMIT: '100000' },
    );
    await until(
      'the second instance',
      async () => ((await fetch(`${b}/healthz`)).status === 200 ? true : undefined),
      120000,
      () => log,
    );
    writeFileSync(stackFile, JSON.stringify(info));
  }, 150000);
  afterAll(async () => {
    await stopStack(second);
    await ddbProxy?.close();
  });

  it('a push held at its conditional write while the other instance takes a push and REST writes: one push wins, nothing acknowledged is lost', async () => {
    const instances = [h.url, b];
    for (const [i, base] of instances.entries()) {
      await g.ok('', ['clone', '-q', basicUrl(base, 'work', token), `inst-${i}`]);
      g.write(`inst-${i}`, `instances/from-${i}.md`, `# from instance ${i}\n`);
      await g.ok(`inst-${i}`, ['add', '-A']);
      await g.ok(`inst-${i}`, ['commit', '-q', '-m', `push through instance ${i}`]);
    }
    const base = await head();
    // The push through the second instance stops at the conditional write that would move the head…
    let release: () => void = () => undefined;
    const arrived = new Promise<void>((arrive) => {
      holdNext = { arrived: arrive, released: new Promise((r) => (release = r)) };
    });
    const pushB = g.run('inst-1', ['push', '-q', basicUrl(b, 'work', token), 'main']);
    await arrived;
    // …and while it is held there, the first instance takes the other push and a REST write lands on each.
    const pushA = await g.run('inst-0', ['push', '-q', basicUrl(h.url, 'work', token), 'main']);
    const writes = await Promise.all(
      instances.map((url, i) =>
        fetch(`${url}/v1/memories/work/notes/instances/rest-${i}.md`, {
          method: 'PUT',
          headers: { ...auth(), 'content-type': 'text/markdown' },
          body: `# rest ${i}\n`,
        }),
      ),
    );
    expect(pushA.status).toBe(0);
    expect(writes.map((w) => w.status)).toEqual([200, 200]);
    const moved = await head();
    expect(moved).not.toBe(base);
    // The held write goes on against a head that moved twice: it must not land, and git says why.
    release();
    const pushed = await pushB;
    expect(pushed.status).not.toBe(0);
    expect(pushed.stderr).toMatch(/\(fetch first\)|non-fast-forward|stale/);
    expect(await head()).toBe(moved);
    expect((await rest('GET', '/notes/instances/from-0.md')).status).toBe(200);
    expect((await rest('GET', '/notes/instances/from-1.md')).status).toBe(404);
    for (const i of [0, 1]) expect((await rest('GET', `/notes/instances/rest-${i}.md`)).status).toBe(200);
    // Each instance serves the same history, which git fscks; the losing push lands after a pull.
    for (const url of instances) {
      await g.ok('', ['clone', '-q', basicUrl(url, 'work', token), `inst-check-${url.slice(-5)}`]);
      await g.fsck(`inst-check-${url.slice(-5)}`);
    }
    expect(await g.ok(`inst-check-${h.url.slice(-5)}`, ['rev-parse', 'HEAD'])).toBe(await g.ok(`inst-check-${b.slice(-5)}`, ['rev-parse', 'HEAD']));
    await g.ok('inst-1', ['pull', '-q', '--no-rebase', basicUrl(b, 'work', token), 'main']);
    expect((await g.run('inst-1', ['push', '-q', basicUrl(b, 'work', token), 'main'])).status).toBe(0);
    expect((await rest('GET', '/notes/instances/from-1.md')).status).toBe(200);
  });
});

describe('protocol edges answered in git terms, never a 500', () => {
  const pktLine = (s: string) => `${(s.length + 4).toString(16).padStart(4, '0')}${s}`;
  const post = (service: string, body: string | Buffer, type = service) =>
    h.fetch(`/v1/memories/work.git/${service}`, { method: 'POST', headers: { ...auth(), 'content-type': `application/x-${type}-request` }, body });

  it('refuses a want outside the history with git’s ERR line, and shallow requests with a message', async () => {
    const res = await post('git-upload-pack', `${pktLine(`want ${'1'.repeat(40)} side-band-64k\n`)}0000${pktLine('done\n')}`);
    expect(res.status).toBe(200);
    expect(await res.text()).toMatch(/ERR upload-pack: not our ref 1{40}/);
    const head = ((await (await h.fetch('/v1/memories/work', { headers: auth() })).json()) as { rev: string }).rev;
    const shallow = await post('git-upload-pack', `${pktLine(`want ${head}\n`)}${pktLine('deepen 1\n')}0000${pktLine('done\n')}`);
    expect(await shallow.text()).toMatch(/ERR shallow and partial clones are not supported/);
  });

  it('answers malformed requests 400 as text, dumb HTTP 400, an unknown memory 404', async () => {
    for (const res of [
      await post('git-upload-pack', 'zzzz'),
      await post('git-receive-pack', `${pktLine('not a command\0report-status\n')}0000`),
      await h.fetch('/v1/memories/work.git/info/refs', { headers: auth() }),
    ]) {
      expect(res.status).toBe(400);
      expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
      expect(await res.text()).toMatch(/^BAD_REQUEST: /);
    }
    const missing = await h.fetch('/v1/memories/nothing.git/info/refs?service=git-upload-pack', { headers: auth() });
    expect(missing.status).toBe(404);
    expect(await missing.text()).toBe('NOT_FOUND: memory "nothing" does not exist\n');
  });

  it('answers a garbage pack with an unpack error and lands nothing', async () => {
    const head = ((await (await h.fetch('/v1/memories/work', { headers: auth() })).json()) as { rev: string }).rev;
    const res = await post(
      'git-receive-pack',
      Buffer.concat([Buffer.from(`${pktLine(`${head} ${'2'.repeat(40)} refs/heads/main\0report-status\n`)}0000`), Buffer.from('PACKgarbage')]),
    );
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toMatch(/unpack (not a pack|pack checksum mismatch)/);
    expect(text).toMatch(/ng refs\/heads\/main unpacker error/);
    expect(((await (await h.fetch('/v1/memories/work', { headers: auth() })).json()) as { rev: string }).rev).toBe(head);
  });
});
