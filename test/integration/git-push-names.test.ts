import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { basicUrl, gitSandbox, type GitSandbox } from '../support/git-client';
import { startMemoryStack, type MemoryStack } from './memory-api-harness';

/**
 * Names and limits of a push, with the real `git` client against the local stack, and the same name
 * rules over REST: a name a push may not bring is one a REST write may not create (invalid UTF-8,
 * twins by case or Unicode normalisation, Windows device names, bidi controls, encoded dots), and
 * every refusal reaches the person as git prints it (`remote: …` on the side band, never "protocol
 * error: bad band"). Limits are lowered here so that small pushes cross them.
 */
let h: MemoryStack;
let g: GitSandbox;
let token: string;
const MAX_PUSH_BYTES = 256 * 1024;
const MAX_PUSH_OBJECTS = 60;

beforeAll(async () => {
  h = await startMemoryStack({
    MEMORY_RATE_LIMIT: '100000',
    MEMORY_GIT_MAX_PUSH_BYTES: String(MAX_PUSH_BYTES),
    MEMORY_MAX_PUSH_OBJECTS: String(MAX_PUSH_OBJECTS),
  });
  g = gitSandbox('git-push-names');
  token = h.token('nina');
  expect((await post('/v1/memories', '{"name":"names"}')).status).toBe(201);
  expect((await rest('PUT', '/notes/Ideas/Café.md', '# Café\n')).status).toBe(200);
  await g.ok('', ['clone', '-q', basicUrl(h.url, 'names', token), 'base']);
}, 180000);
afterAll(async () => {
  g?.cleanup();
  await h?.close();
});

const auth = () => ({ authorization: `Bearer ${token}` });
const post = (path: string, body: string) => h.fetch(path, { method: 'POST', headers: { ...auth(), 'content-type': 'application/json' }, body });

function rest(method: string, path: string, body?: string): Promise<Response> {
  return h.fetch(`/v1/memories/names${path}`, { method, headers: { ...auth(), ...(body !== undefined && { 'content-type': 'text/markdown' }) }, body });
}

async function head(): Promise<string | null> {
  return ((await (await h.fetch('/v1/memories/names', { headers: auth() })).json()) as { rev: string | null }).rev;
}

let seq = 0;
/** A fresh clone, `prepare` writes into it, one commit, a push: git's stderr; the memory must not move. */
async function refusedPush(prepare: (dir: string) => void | Promise<void>): Promise<string> {
  const dir = `push-${++seq}`;
  await g.ok('', ['clone', '-q', basicUrl(h.url, 'names', token), dir]);
  await prepare(join(g.root, dir));
  await g.ok(dir, ['add', '-A']);
  await g.ok(dir, ['commit', '-q', '-m', `refused ${dir}`]);
  const before = await head();
  const push = await g.run(dir, ['push', 'origin', 'main']);
  expect(push.status).not.toBe(0);
  expect(push.stderr).not.toMatch(/protocol error|bad band/);
  expect(await head()).toBe(before);
  return push.stderr;
}

const file = (dir: string, path: string | Buffer, text = '# note\n') => {
  if (typeof path !== 'string') {
    // A name that is not UTF-8: Linux file names are bytes, and git adds them as they are.
    writeFileSync(Buffer.concat([Buffer.from(`${dir}/`), path]), text);
    return;
  }
  mkdirSync(join(dir, path, '..'), { recursive: true });
  writeFileSync(join(dir, path), text);
};

describe('names a push brings are held to the REST rules', () => {
  it('refuses a tree entry whose name is not UTF-8 (a\\xC0\\x80b.md), as REST refuses it', async () => {
    const err = await refusedPush((d) => file(d, Buffer.from([0x61, 0xc0, 0x80, 0x62, 0x2e, 0x6d, 0x64])));
    expect(err).toMatch(/remote: refused: tree [0-9a-f]{12} has an entry whose name is not UTF-8 \(bytes 61c080622e6d64\)/);
    expect(err).toMatch(/\[remote rejected\] main -> main \(refused tree\)/);
  });

  it('refuses twins in one push and twins of a note already there, naming the note they collide with', async () => {
    const both = await refusedPush((d) => {
      file(d, 'Note.md');
      file(d, 'note.md');
    });
    expect(both).toMatch(/remote: refused: path "note\.md" collides with the note "Note\.md": they differ only by case or Unicode normalisation/);
    const nfd = await refusedPush((d) => file(d, 'Ideas/Cafe\u0301.md'));
    expect(nfd).toMatch(
      /path "(Cafe\u0301|Café)\.md" collides with the note "(Café|Cafe\u0301)\.md": they are the same characters, composed differently \(Unicode NFC and NFD\)/,
    );
    const folder = await refusedPush((d) => file(d, 'ideas/other.md'));
    expect(folder).toMatch(/path "ideas\/" collides with the folder "Ideas\/"/);
  });

  it('refuses Windows device names, bidi controls, characters Windows forbids and encoded dots, on every path', async () => {
    const err = await refusedPush((d) => {
      file(d, 'CON.md');
      file(d, 'aux/x.md');
      file(d, 'invoice\u202Edm.exe.md');
      file(d, '%2e%2e/y.md');
      file(d, 'what?.md');
    });
    expect(err).toMatch(/refused: CON\.md: path segment "CON\.md" is the Windows device name CON/);
    expect(err).toMatch(/refused: aux\/: folder segment "aux" is the Windows device name AUX/);
    expect(err).toMatch(/path segment "invoice\\u\{202e\}dm\.exe\.md" contains the invisible or reordering character U\+202E/);
    expect(err).toMatch(/folder segment "%2e%2e" contains a percent-encoded dot/);
    expect(err).toMatch(/path segment "what\?\.md" contains "\?", which Windows does not allow/);
  });

  it('refuses a credential in a pushed path', async () => {
    const err = await refusedPush((d) => file(d, 'keys/AKIAZ7XQ3P5N2K4M6R8T.md'));
    expect(err).toMatch(/refused: keys\/AKIAZ7XQ3P5N2K4M6R8T\.md: path refused: it looks like an AWS access key ID/);
  });
});

describe('the same names over REST', () => {
  it('answers 409 CONFLICT naming the note a twin collides with, for PUT and move; an exact path is an update', async () => {
    const twin = await rest('PUT', '/notes/ideas/café.md', 'x');
    expect(twin.status).toBe(409);
    expect(((await twin.json()) as { error: { code: string; message: string } }).error.message).toMatch(/collides with the folder "Ideas\/"/);
    const nfd = await rest('PUT', `/notes/${encodeURIComponent('Ideas/Cafe\u0301.md')}`, 'x');
    expect(nfd.status).toBe(409);
    expect(((await nfd.json()) as { error: { message: string } }).error.message).toMatch(/collides with the note "Ideas\/Café\.md"/);
    expect((await rest('PUT', '/notes/Ideas/Café.md', '# Café, again\n')).status).toBe(200);
    expect((await rest('PUT', '/notes/b.md', '# b\n')).status).toBe(200);
    const move = await h.fetch('/v1/memories/names/move', {
      method: 'POST',
      headers: { ...auth(), 'content-type': 'application/json' },
      body: JSON.stringify({ from: 'b.md', to: 'IDEAS/b.md' }),
    });
    expect(move.status).toBe(409);
    // A rename by case alone moves the note away from its old name: no twin is left.
    const rename = await h.fetch('/v1/memories/names/move', {
      method: 'POST',
      headers: { ...auth(), 'content-type': 'application/json' },
      body: JSON.stringify({ from: 'b.md', to: 'B.md' }),
    });
    expect(rename.status).toBe(200);
  });

  it.each([
    ['%252e%252e/y.md', /percent-encoded dot/],
    ['CON.md', /Windows device name CON/],
    ['nul/x.md', /Windows device name NUL/],
    ['com1.txt.md', /Windows device name COM1/],
    [encodeURIComponent('a\u202Eb.md'), /U\+202E/],
    [encodeURIComponent('zero\u200Bwidth.md'), /U\+200B/],
    ['trailing./x.md', /ends in a dot or a space/],
    ['a%3Ab.md', /contains ":"/],
  ])('PUT %s is 400 invalid_path', async (path, why) => {
    const res = await rest('PUT', `/notes/${path}`, 'x');
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(why);
  });

  it('refuses a credential in a path, on PUT and on move, without echoing it', async () => {
    const put = await rest('PUT', '/notes/keys/ghp_0123456789abcdefghijABCDEFGHIJ012345.md', 'x');
    expect(put.status).toBe(400);
    const body = await put.text();
    expect(body).toMatch(/github-token/);
    expect(body).not.toMatch(/ghp_0123456789/);
    const move = await h.fetch('/v1/memories/names/move', {
      method: 'POST',
      headers: { ...auth(), 'content-type': 'application/json' },
      body: JSON.stringify({ from: 'B.md', to: 'xoxb-1234567890-abcdefghijkl.md' }),
    });
    expect(move.status).toBe(400);
    expect(await move.text()).toMatch(/slack-token/);
  });
});

describe('push limits, refused in words git prints', () => {
  it('refuses a push over the body limit with a remote: line, not "bad band #117"', async () => {
    const err = await refusedPush((d) => {
      // Random letters do not compress: the pack is about as large as the notes.
      for (let i = 0; i < 4; i++) file(d, `big-${i}.md`, `# Big ${i}\n\n${randomBytes(96 * 1024).toString('hex')}\n`);
    });
    expect(err).toMatch(new RegExp(`remote: refused: this push sends about \\d+ bytes; a push may send at most ${MAX_PUSH_BYTES}`));
    expect(err).toMatch(/\[remote rejected\] main -> main \(push too large\)/);
  });

  it('refuses a push of more objects than a push may bring, saying so', async () => {
    const err = await refusedPush((d) => {
      for (let i = 0; i < MAX_PUSH_OBJECTS; i++) file(d, `many/n-${i}.md`, `# ${i}\n`);
    });
    expect(err).toMatch(new RegExp(`remote: refused: the push brings \\d+ objects; a push may bring at most ${MAX_PUSH_OBJECTS}`));
    expect(err).toMatch(/\[remote rejected\] main -> main \(too many objects\)/);
  });
});
