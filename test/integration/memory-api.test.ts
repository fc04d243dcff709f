import { unzipSync } from 'fflate';
import {
  ExportRedirectSchema,
  MemoryListSchema,
  MemorySchema,
  NoteDeletedSchema,
  NoteListingSchema,
  NoteSchema,
  RetiredSchema,
  SearchPageSchema,
  WriteResultSchema,
} from '../../lambdas/memory-api/response-schemas';
import { cloneBundle } from '../support/memory-git';
import { body, errorCode, startMemoryStack, type MemoryStack } from './memory-api-harness';

/**
 * Every `/v1` endpoint over real HTTP on the local stack (`startLocalStack`: the same route table,
 * handlers and adapters as `npm start`). Responses are checked against the frozen schemas. The rate
 * limit is raised here (its own test runs at the default).
 */
let s: MemoryStack;

beforeAll(async () => {
  s = await startMemoryStack({ MEMORY_RATE_LIMIT: '100000' });
}, 120000);
afterAll(() => s?.close());

let userSeq = 0;
/** A fresh account per test: memories, ceilings and history never leak between tests. */
const user = (): string => `user-${process.pid}-${++userSeq}`;

const json = (v: unknown): RequestInit => ({ body: JSON.stringify(v), headers: { 'content-type': 'application/json' } });

function call(sub: string, method: string, path: string, init: RequestInit = {}, headers: Record<string, string> = {}): Promise<Response> {
  return s.fetch(path, { ...init, method, headers: { ...s.bearer(sub), ...(init.headers as Record<string, string>), ...headers } });
}

async function createMemory(sub: string, name: string): Promise<void> {
  const res = await call(sub, 'POST', '/v1/memories', json({ name }));
  expect(res.status).toBe(201);
  await res.arrayBuffer();
}

async function put(sub: string, memory: string, path: string, text: string, headers: Record<string, string> = {}): Promise<{ rev: string; updated: string }> {
  const res = await call(sub, 'PUT', `/v1/memories/${memory}/notes/${path}`, json({ body: text }), headers);
  expect(res.status).toBe(200);
  return body(res, WriteResultSchema);
}

describe('memories', () => {
  it('creates (201, then 200 idempotently), lists, inspects with ETag, retires and restores', async () => {
    const u = user();
    const created = await call(u, 'POST', '/v1/memories', json({ name: 'work' }));
    expect(created.status).toBe(201);
    expect(created.headers.get('location')).toBe('/v1/memories/work');
    expect(await body(created, MemorySchema)).toEqual({ name: 'work', files: 0, folders: 0, sizeBytes: 0, updated: null, empty: true, rev: null });
    const again = await call(u, 'POST', '/v1/memories', json({ name: 'work' }));
    expect(again.status).toBe(200);
    expect((await body(again, MemorySchema)).name).toBe('work');
    await createMemory(u, 'home');

    const list = await call(u, 'GET', '/v1/memories');
    expect(list.status).toBe(200);
    expect((await body(list, MemoryListSchema)).memories.map((m) => m.name)).toEqual(['home', 'work']);

    const empty = await call(u, 'GET', '/v1/memories/work');
    expect(empty.headers.get('etag')).toBeNull();
    const { rev } = await put(u, 'work', 'a.md', 'hello');
    const one = await call(u, 'GET', '/v1/memories/work');
    expect(one.status).toBe(200);
    expect(one.headers.get('etag')).toBe(`"${rev}"`);
    expect(await body(one, MemorySchema)).toMatchObject({ name: 'work', files: 1, folders: 0, empty: false, rev });

    const retired = await call(u, 'DELETE', '/v1/memories/work');
    expect(retired.status).toBe(200);
    expect(await body(retired, RetiredSchema)).toEqual({ name: 'work', deleted: true });
    expect(await errorCode(await call(u, 'GET', '/v1/memories/work'))).toBe('NOT_FOUND');
    const recreate = await call(u, 'POST', '/v1/memories', json({ name: 'work' }));
    expect(recreate.status).toBe(409);
    expect(await recreate.text()).toContain('/v1/memories/work/restore');

    const restored = await call(u, 'POST', '/v1/memories/work/restore');
    expect(restored.status).toBe(200);
    expect(await body(restored, MemorySchema)).toMatchObject({ name: 'work', files: 1, rev });
    expect(await (await call(u, 'GET', '/v1/memories/work/notes/a.md', {}, { accept: 'text/markdown' })).text()).toBe('hello');
  });

  it('lists only what the token grants, and answers 403 for a memory not granted whether it exists or not', async () => {
    const u = user();
    await createMemory(u, 'a');
    await createMemory(u, 'b');
    const narrow = { authorization: `Bearer ${s.token(u, { memories: ['a'] })}` };
    const list = await s.fetch('/v1/memories', { headers: narrow });
    expect((await body(list, MemoryListSchema)).memories.map((m) => m.name)).toEqual(['a']);
    for (const name of ['b', 'nope']) {
      const res = await s.fetch(`/v1/memories/${name}`, { headers: narrow });
      expect(res.status).toBe(403);
      expect(await errorCode(res)).toBe('FORBIDDEN');
    }
  });

  it('compares If-Match on every write, quoted or not, POST /memories included', async () => {
    const u = user();
    await createMemory(u, 'm');
    const first = await put(u, 'm', 'x.md', 'one');
    const stale = first.rev;
    const second = await put(u, 'm', 'x.md', 'two', { 'if-match': `"${first.rev}"` });
    expect(second.rev).not.toBe(first.rev);
    const conflict = await call(u, 'PUT', '/v1/memories/m/notes/x.md', json({ body: 'three' }), { 'if-match': stale });
    expect(conflict.status).toBe(409);
    expect(await errorCode(conflict)).toBe('CONFLICT');
    expect((await call(u, 'POST', '/v1/memories', json({ name: 'm' }), { 'if-match': stale })).status).toBe(409);
    expect((await call(u, 'POST', '/v1/memories', json({ name: 'm' }), { 'if-match': second.rev })).status).toBe(200);
    expect((await call(u, 'PATCH', '/v1/memories/m/notes/x.md', json({ mode: 'append', body: 'x' }), { 'if-match': stale })).status).toBe(409);
    expect((await call(u, 'DELETE', '/v1/memories/m/notes/x.md', {}, { 'if-match': stale })).status).toBe(409);
    expect((await call(u, 'DELETE', '/v1/memories/m', {}, { 'if-match': stale })).status).toBe(409);
    expect((await call(u, 'DELETE', '/v1/memories/m', {}, { 'if-match': `"${second.rev.toUpperCase()}"` })).status).toBe(200);
  });
});

describe('notes', () => {
  it('writes JSON, reads JSON with ETag and the stored markdown with Accept: text/markdown', async () => {
    const u = user();
    await createMemory(u, 'n');
    const res = await call(
      u,
      'PUT',
      '/v1/memories/n/notes/projects/alpha.md',
      json({ body: '# Alpha\n\nFirst #idea here.\n', frontmatter: { tags: ['plan'], status: 'draft' } }),
    );
    expect(res.status).toBe(200);
    const w = await body(res, WriteResultSchema);
    expect(w.path).toBe('projects/alpha.md');

    const read = await call(u, 'GET', '/v1/memories/n/notes/projects/alpha.md');
    expect(read.status).toBe(200);
    expect(read.headers.get('etag')).toBe(`"${w.rev}"`);
    expect(read.headers.get('content-type')).toMatch(/^application\/json/);
    const note = await body(read, NoteSchema);
    expect(note).toMatchObject({
      path: 'projects/alpha.md',
      title: 'Alpha',
      frontmatter: { tags: ['plan'], status: 'draft' },
      body: '# Alpha\n\nFirst #idea here.\n',
    });
    expect(note.tags).toEqual(['plan', 'idea']);

    const raw = await call(u, 'GET', '/v1/memories/n/notes/projects/alpha.md', {}, { accept: 'text/markdown' });
    expect(raw.status).toBe(200);
    expect(raw.headers.get('content-type')).toBe('text/markdown; charset=utf-8');
    expect(raw.headers.get('etag')).toBe(`"${w.rev}"`);
    expect(await raw.text()).toMatch(/^---\n[\s\S]*status: draft[\s\S]*---\n# Alpha\n/);
  });

  it('stores a raw text/markdown PUT exactly (front matter included) and returns it byte for byte', async () => {
    const u = user();
    await createMemory(u, 'raw');
    const text = '---\ntitle:   "kept as sent"   # a comment\ntags: [x, y]\n---\n\n# Heading\n\nbody with ünïcödé and trailing spaces   \n';
    const res = await call(u, 'PUT', '/v1/memories/raw/notes/r.md', { body: text, headers: { 'content-type': 'text/markdown; charset=utf-8' } });
    expect(res.status).toBe(200);
    const first = await body(res, WriteResultSchema);
    const back = await call(u, 'GET', '/v1/memories/raw/notes/r.md', {}, { accept: 'text/markdown, application/json;q=0.5' });
    expect(await back.text()).toBe(text);
    const note = await body(await call(u, 'GET', '/v1/memories/raw/notes/r.md'), NoteSchema);
    expect(note.frontmatter).toEqual({ title: 'kept as sent', tags: ['x', 'y'] });
    expect(note.tags).toEqual(['x', 'y']);
    // A second identical write changes nothing: same rev, no commit.
    const again = await body(
      await call(u, 'PUT', '/v1/memories/raw/notes/r.md', { body: text, headers: { 'content-type': 'text/markdown' } }),
      WriteResultSchema,
    );
    expect(again).toEqual(first);
  });

  it('takes literal slashes and %2F alike in {path}, decoding exactly once', async () => {
    const u = user();
    await createMemory(u, 'enc');
    await put(u, 'enc', 'a%2Fb%2Fc.md', 'encoded');
    const plain = await call(u, 'GET', '/v1/memories/enc/notes/a/b/c.md', {}, { accept: 'text/markdown' });
    expect(await plain.text()).toBe('encoded');
    // %2520 decodes once to a literal "%20" inside one file name, not to a space.
    await put(u, 'enc', 'x%2520y.md', 'literal');
    const listing = await body(await call(u, 'GET', '/v1/memories/enc/notes?depth=all&type=file&fields=path'), NoteListingSchema);
    expect(listing.entries.map((e) => e.path).sort()).toEqual(['a/b/c.md', 'x%20y.md']);
    expect(await (await call(u, 'GET', '/v1/memories/enc/notes/x%2520y.md', {}, { accept: 'text/markdown' })).text()).toBe('literal');
    // %252F would be a literal "%2F": a name that reads as another path once decoded again is refused.
    expect((await call(u, 'PUT', '/v1/memories/enc/notes/x%252Fy.md', json({ body: 'x' }))).status).toBe(400);
    // Spaces and non-ASCII names, percent-encoded by the client.
    await put(u, 'enc', encodeURIComponent('notes/été 2026.md'), 'summer');
    expect(await (await call(u, 'GET', `/v1/memories/enc/notes/notes/${encodeURIComponent('été 2026.md')}`, {}, { accept: 'text/markdown' })).text()).toBe(
      'summer',
    );
  });

  it('edits with PATCH (replace, append, str_replace), deletes softly and restores a note', async () => {
    const u = user();
    await createMemory(u, 'ed');
    await put(u, 'ed', 'e.md', 'alpha beta');
    const patch = (b: unknown) => call(u, 'PATCH', '/v1/memories/ed/notes/e.md', json(b));
    expect((await patch({ mode: 'append', body: 'gamma' })).status).toBe(200);
    const sr = await patch({ mode: 'str_replace', old_str: 'beta', new_str: 'BETA' });
    expect(sr.status).toBe(200);
    await body(sr, WriteResultSchema);
    expect((await patch({ frontmatter: { status: 'done' } })).status).toBe(200);
    const note = await body(await call(u, 'GET', '/v1/memories/ed/notes/e.md'), NoteSchema);
    expect(note.body).toBe('alpha BETA\ngamma');
    expect(note.frontmatter).toEqual({ status: 'done' });
    expect(await errorCode(await patch({ mode: 'str_replace', old_str: 'nowhere' }))).toBe('BAD_REQUEST');
    expect(await errorCode(await patch({ mode: 'sideways', body: 'x' }))).toBe('BAD_REQUEST');
    expect(await errorCode(await call(u, 'PATCH', '/v1/memories/ed/notes/none.md', json({ body: 'x' })))).toBe('NOT_FOUND');

    const del = await call(u, 'DELETE', '/v1/memories/ed/notes/e.md');
    expect(del.status).toBe(200);
    expect(await body(del, NoteDeletedSchema)).toMatchObject({ path: 'e.md', deleted: true });
    expect(await errorCode(await call(u, 'GET', '/v1/memories/ed/notes/e.md'))).toBe('NOT_FOUND');
    expect(await errorCode(await call(u, 'DELETE', '/v1/memories/ed/notes/e.md'))).toBe('NOT_FOUND');

    const restored = await call(u, 'POST', '/v1/memories/ed/restore', json({ path: 'e.md' }));
    expect(restored.status).toBe(200);
    await body(restored, WriteResultSchema);
    expect((await body(await call(u, 'GET', '/v1/memories/ed/notes/e.md'), NoteSchema)).body).toBe('alpha BETA\ngamma');
    expect(await errorCode(await call(u, 'POST', '/v1/memories/ed/restore', json({ path: 'e.md' })))).toBe('CONFLICT');
    expect(await errorCode(await call(u, 'POST', '/v1/memories/ed/restore', json({ path: 'never.md' })))).toBe('NOT_FOUND');
  });

  it('lists with folder, depth, type, fields, tags (repeated or comma), sort, limit and cursor', async () => {
    const u = user();
    await createMemory(u, 'ls');
    await put(u, 'ls', 'root.md', 'root #t1 #t2');
    await put(u, 'ls', 'a/one.md', 'one #t1');
    await put(u, 'ls', 'a/b/two.md', 'two #t1 #t2');
    await put(u, 'ls', 'a/b/c/three.md', 'three');
    const get = async (q: string) => {
      const res = await call(u, 'GET', `/v1/memories/ls/notes${q}`);
      expect(res.status).toBe(200);
      return body(res, NoteListingSchema);
    };
    const def = await get('');
    expect(def.folder).toBe('');
    expect(def.entries.map((e) => e.path)).toEqual(['a', 'a/b', 'a/one.md', 'root.md']);
    expect(def.truncated).toBe(false);
    expect(def.nextCursor).toBeUndefined();
    const file = def.entries.find((e) => e.path === 'root.md');
    expect(file).toMatchObject({ type: 'file', title: 'root', tags: ['t1', 't2'], sizeBytes: 12 });
    expect((await get('?folder=a&depth=1')).entries.map((e) => e.path)).toEqual(['a/b', 'a/one.md']);
    expect((await get('?depth=all&type=file')).entries.map((e) => e.path)).toEqual(['a/b/c/three.md', 'a/b/two.md', 'a/one.md', 'root.md']);
    expect((await get('?depth=all&type=folder')).entries).toEqual([
      { type: 'folder', path: 'a', files: 3 },
      { type: 'folder', path: 'a/b', files: 2 },
      { type: 'folder', path: 'a/b/c', files: 1 },
    ]);
    expect((await get('?depth=all&type=file&fields=path')).entries[0]).toEqual({ type: 'file', path: 'a/b/c/three.md' });
    const both = ['?depth=all&type=file&tags=t1,t2', '?depth=all&type=file&tags=t1&tags=t2'];
    for (const q of both) expect((await get(q)).entries.map((e) => e.path)).toEqual(['a/b/two.md', 'root.md']);
    expect((await get('?depth=all&type=file&sort=updated')).entries[0].path).toBe('a/b/c/three.md');

    // 7 entries (3 folders, 4 files) in pages of 2: 4 pages, the last without a cursor.
    const pages = [await get('?depth=all&limit=2')];
    expect(pages[0].truncated).toBe(true);
    expect(pages[0].files).toBe(4);
    while (pages[pages.length - 1].nextCursor) {
      pages.push(await get(`?depth=all&limit=2&cursor=${encodeURIComponent(pages[pages.length - 1].nextCursor ?? '')}`));
    }
    expect(pages.map((p) => p.entries.length)).toEqual([2, 2, 2, 1]);
    expect(pages[3].truncated).toBe(false);
    expect(pages.flatMap((p) => p.entries).map((e) => e.path)).toEqual((await get('?depth=all')).entries.map((e) => e.path));
  });

  it('searches with q, folder, tags, limit and cursor; snippets, never bodies', async () => {
    const u = user();
    await createMemory(u, 'se');
    await put(u, 'se', 'x.md', 'Kubernetes kubernetes KUBERNETES #ops');
    await put(u, 'se', 'ops/y.md', 'one kubernetes mention #ops');
    await put(u, 'se', 'ops/z.md', 'nothing relevant');
    const get = async (q: string) => {
      const res = await call(u, 'GET', `/v1/memories/se/search${q}`);
      expect(res.status).toBe(200);
      return body(res, SearchPageSchema);
    };
    const all = await get('?q=kubernetes');
    expect(all.results.map((r) => [r.path, r.score])).toEqual([
      ['x.md', 3],
      ['ops/y.md', 1],
    ]);
    expect(all.nextCursor).toBeUndefined();
    expect((await get('?q=kubernetes&folder=ops')).results.map((r) => r.path)).toEqual(['ops/y.md']);
    expect((await get('?q=kubernetes&tags=ops')).results).toHaveLength(2);
    const first = await get('?q=kubernetes&limit=1');
    expect(first.results.map((r) => r.path)).toEqual(['x.md']);
    const second = await get(`?q=kubernetes&limit=1&cursor=${encodeURIComponent(first.nextCursor ?? '')}`);
    expect(second.results.map((r) => r.path)).toEqual(['ops/y.md']);
    expect(second.nextCursor).toBeUndefined();
    expect(await errorCode(await call(u, 'GET', '/v1/memories/se/search'))).toBe('BAD_REQUEST');
  });
});

describe('exports', () => {
  it('exports one memory as a git bundle that git verifies and clones with its full history', async () => {
    const u = user();
    await createMemory(u, 'gitx');
    await put(u, 'gitx', 'a.md', 'first');
    await put(u, 'gitx', 'dir/b.md', 'second');
    await put(u, 'gitx', 'a.md', 'first, edited');
    const res = await call(u, 'GET', '/v1/memories/gitx/export');
    expect(res.status).toBe(200);
    // Streamed, as the local server and the git remote's function URL answer it.
    expect(res.headers.get('content-length')).toBeNull();
    expect(res.headers.get('content-type')).toBe('application/x-git-bundle');
    expect(res.headers.get('content-disposition')).toBe('attachment; filename="gitx.bundle"');
    const clone = cloneBundle(new Uint8Array(await res.arrayBuffer()));
    try {
      expect(clone.git('rev-list', '--count', 'HEAD').trim()).toBe('3');
      expect(clone.git('show', 'HEAD:a.md')).toBe('first, edited');
      expect(clone.git('show', 'HEAD:dir/b.md')).toBe('second');
    } finally {
      clone.cleanup();
    }
    await createMemory(u, 'blank');
    expect(await errorCode(await call(u, 'GET', '/v1/memories/blank/export'))).toBe('NOT_FOUND');
  });

  it('exports every visible memory as a zip of <memory>/<path> with front matter', async () => {
    const u = user();
    await createMemory(u, 'z1');
    await createMemory(u, 'z2');
    await call(u, 'PUT', '/v1/memories/z1/notes/a.md', { body: '---\nk: v\n---\nA', headers: { 'content-type': 'text/markdown' } });
    await put(u, 'z2', 'sub/b.md', 'B');
    const res = await call(u, 'GET', '/v1/memories/export');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/zip');
    expect(res.headers.get('content-disposition')).toBe('attachment; filename="memories.zip"');
    const files = unzipSync(new Uint8Array(await res.arrayBuffer()));
    expect(Object.keys(files).sort()).toEqual(['z1/a.md', 'z2/sub/b.md']);
    expect(Buffer.from(files['z1/a.md']).toString('utf8')).toBe('---\nk: v\n---\nA');
    // A token granted one memory exports that one only.
    const narrow = await s.fetch('/v1/memories/export', { headers: { authorization: `Bearer ${s.token(u, { memories: ['z2'] })}` } });
    expect(Object.keys(unzipSync(new Uint8Array(await narrow.arrayBuffer())))).toEqual(['z2/sub/b.md']);
  });

  it('answers an export over the limit of its delivery with 302 to a short-lived presigned URL of the object under exports/', async () => {
    const u = user();
    await createMemory(u, 'big');
    await put(u, 'big', 'a.md', 'x'.repeat(5000));
    const config = s.stack.memoryApi.config;
    const saved = { ...config };
    const streamed = async (path: string): Promise<Buffer> => {
      Object.assign(config, saved);
      const r = await call(u, 'GET', path);
      expect(r.status).toBe(200);
      return Buffer.from(await r.arrayBuffer());
    };
    // Lowered for this test only: the paths are the same at 4 MiB (buffered) and 190 MiB (streamed).
    for (const lowered of [
      { exportDelivery: 'buffered', exportInlineBytes: 100 },
      { exportDelivery: 'stream', exportStreamMaxBytes: 100 },
    ] as const) {
      try {
        for (const [path, type, filename] of [
          ['/v1/memories/big/export', 'application/x-git-bundle', 'big.bundle'],
          ['/v1/memories/export', 'application/zip', 'memories.zip'],
        ] as const) {
          Object.assign(config, saved, lowered);
          const res = await call(u, 'GET', path);
          expect(res.status).toBe(302);
          const location = res.headers.get('location') ?? '';
          const redirect = await body(res, ExportRedirectSchema);
          expect(redirect.url).toBe(location);
          expect(location).toContain(`/${s.stack.memoryConfig.memoryBucket}/exports/`);
          expect(location).toContain('X-Amz-Signature=');
          expect(location).toContain(`X-Amz-Expires=${config.exportUrlSeconds}`);
          const download = await fetch(location);
          expect(download.status).toBe(200);
          expect(download.headers.get('content-type')).toBe(type);
          expect(download.headers.get('content-disposition')).toBe(`attachment; filename="${filename}"`);
          const bytes = Buffer.from(await download.arrayBuffer());
          if (type === 'application/zip') expect(Object.keys(unzipSync(new Uint8Array(bytes)))).toEqual(['big/a.md']);
          else expect(bytes.equals(await streamed(path))).toBe(true);
        }
      } finally {
        Object.assign(config, saved);
      }
    }
  });

  it('answers a small export inline where answers are buffered (API Gateway), with its length', async () => {
    const u = user();
    await createMemory(u, 'inl');
    await put(u, 'inl', 'a.md', 'inline');
    const config = s.stack.memoryApi.config;
    config.exportDelivery = 'buffered';
    try {
      const res = await call(u, 'GET', '/v1/memories/inl/export');
      expect(res.status).toBe(200);
      const bytes = Buffer.from(await res.arrayBuffer());
      expect(res.headers.get('content-length')).toBe(String(bytes.length));
      const clone = cloneBundle(new Uint8Array(bytes));
      try {
        expect(clone.git('show', 'HEAD:a.md')).toBe('inline');
      } finally {
        clone.cleanup();
      }
    } finally {
      config.exportDelivery = 'stream';
    }
  });
});

describe('the /v1 envelope and headers', () => {
  it('answers unknown paths 404 and wrong verbs 405 with Allow, in the /v1 envelope, with rate-limit headers', async () => {
    const u = user();
    const unknown = await call(u, 'GET', '/v1/nothing/here');
    expect(unknown.status).toBe(404);
    expect(await errorCode(unknown)).toBe('NOT_FOUND');
    expect(unknown.headers.get('ratelimit')).toMatch(/^limit=100000, remaining=\d+, reset=\d+$/);
    expect(unknown.headers.get('ratelimit-policy')).toBe('100000;w=60');
    const wrong = await call(u, 'PUT', '/v1/memories');
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('allow')).toBe('GET, POST');
    expect(await errorCode(wrong)).toBe('METHOD_NOT_ALLOWED');
    const noteVerb = await call(u, 'POST', '/v1/memories/m/notes/a.md');
    expect(noteVerb.status).toBe(405);
    expect(noteVerb.headers.get('allow')).toBe('GET, PUT, PATCH, DELETE');
  });

  it('answers CORS preflights with the headers a browser needs, and exposes ETag and the rate-limit headers', async () => {
    const pre = await s.fetch('/v1/memories/m/notes/a.md', {
      method: 'OPTIONS',
      headers: {
        origin: 'https://app.example',
        'access-control-request-method': 'PUT',
        'access-control-request-headers': 'authorization, if-match, content-type',
      },
    });
    expect(pre.status).toBe(204);
    expect(pre.headers.get('access-control-allow-origin')).toBe('*');
    expect(pre.headers.get('access-control-allow-methods')).toBe('GET, PUT, PATCH, DELETE, OPTIONS');
    expect(pre.headers.get('access-control-allow-headers')).toMatch(/Authorization.*Content-Type.*If-Match/);
    const res = await call(user(), 'GET', '/v1/memories');
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('access-control-expose-headers')).toMatch(/ETag.*RateLimit, RateLimit-Policy, Retry-After/);
    expect(res.headers.get('cache-control')).toBe('no-store');
  });

  it('serves the deprecated /v1/vaults alias with the same bodies and Deprecation, Sunset and Link on every response', async () => {
    const u = user();
    await createMemory(u, 'vv');
    const w = await put(u, 'vv', 'n.md', 'via memories');
    const aliasHeaders = (res: Response) => {
      expect(res.headers.get('deprecation')).toBe('true');
      expect(res.headers.get('sunset')).toBe('Sun, 08 Feb 2027 00:00:00 GMT');
      expect(res.headers.get('link')).toBe('</v1/memories>; rel="successor-version"');
    };
    const list = await call(u, 'GET', '/v1/vaults');
    aliasHeaders(list);
    expect((await body(list, MemoryListSchema)).memories.map((m) => m.name)).toEqual(['vv']);
    const note = await call(u, 'GET', '/v1/vaults/vv/notes/n.md');
    aliasHeaders(note);
    expect(note.headers.get('etag')).toBe(`"${w.rev}"`);
    expect((await body(note, NoteSchema)).body).toBe('via memories');
    const write = await call(u, 'PUT', '/v1/vaults/vv/notes/m.md', json({ body: 'via vaults' }));
    aliasHeaders(write);
    await body(write, WriteResultSchema);
    for (const res of [
      await call(u, 'GET', '/v1/vaults/vv/notes/missing.md'),
      await call(u, 'PUT', '/v1/vaults'),
      await call(u, 'GET', '/v1/vaults/vv/nothing'),
      await s.fetch('/v1/vaults/vv'),
    ]) {
      aliasHeaders(res);
      expect(res.status).toBeGreaterThanOrEqual(400);
      await errorCode(res);
    }
    const plain = await call(u, 'GET', '/v1/memories');
    expect(plain.headers.get('deprecation')).toBeNull();
    expect(plain.headers.get('sunset')).toBeNull();
  });
});

describe('concurrency over HTTP', () => {
  it('lands 50 parallel PUTs to 50 notes without If-Match: 50 notes, 50 commits', async () => {
    const u = user();
    await createMemory(u, 'par');
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) => call(u, 'PUT', `/v1/memories/par/notes/n${String(i).padStart(2, '0')}.md`, json({ body: `note ${i}` }))),
    );
    expect(results.map((r) => r.status)).toEqual(Array(50).fill(200));
    const revs = await Promise.all(results.map((r) => body(r, WriteResultSchema)));
    expect(new Set(revs.map((r) => r.rev)).size).toBe(50);
    const memory = await body(await call(u, 'GET', '/v1/memories/par'), MemorySchema);
    expect(memory.files).toBe(50);
    const clone = cloneBundle(new Uint8Array(await (await call(u, 'GET', '/v1/memories/par/export')).arrayBuffer()));
    try {
      expect(clone.git('rev-list', '--count', 'HEAD').trim()).toBe('50');
      expect(clone.git('ls-files').trim().split('\n')).toHaveLength(50);
      expect(clone.git('show', 'HEAD:n07.md')).toBe('note 7');
    } finally {
      clone.cleanup();
    }
  });

  it('lets exactly one of 20 parallel PUTs with the same If-Match win; the others are 409 and leave nothing', async () => {
    const u = user();
    await createMemory(u, 'race');
    const base = await put(u, 'race', 'base.md', 'base');
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        call(u, 'PUT', `/v1/memories/race/notes/c${i}.md`, json({ body: `contender ${i}` }), { 'if-match': `"${base.rev}"` }),
      ),
    );
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((x) => x === 200)).toHaveLength(1);
    expect(statuses.filter((x) => x === 409)).toHaveLength(19);
    const winner = await body(results[statuses.indexOf(200)], WriteResultSchema);
    for (const r of results) if (r.status === 409) expect(await errorCode(r)).toBe('CONFLICT');
    const memory = await body(await call(u, 'GET', '/v1/memories/race'), MemorySchema);
    expect(memory).toMatchObject({ files: 2, rev: winner.rev });
    const listing = await body(await call(u, 'GET', '/v1/memories/race/notes?type=file'), NoteListingSchema);
    expect(listing.entries.map((e) => e.path)).toEqual(['base.md', winner.path]);
    const clone = cloneBundle(new Uint8Array(await (await call(u, 'GET', '/v1/memories/race/export')).arrayBuffer()));
    try {
      expect(clone.git('rev-list', '--count', 'HEAD').trim()).toBe('2');
    } finally {
      clone.cleanup();
    }
  });
});
