import { DiffSchema, ErrorSchema, HistorySchema, MoveResultSchema, NoteSchema, WriteResultSchema } from '../../lambdas/memory-api/response-schemas';
import { body, errorCode, startMemoryStack, type MemoryStack } from './memory-api-harness';

/**
 * History, versions, diff, restore of any version and move over `/v1`, on the local stack, every
 * answer checked against its frozen schema, and every bad input answered with the spec's code:
 * unknown revs, revs of another memory, paths that never existed, moves onto a note or of a deleted one.
 */
let h: MemoryStack;
const revs: Record<string, string> = {};

beforeAll(async () => {
  h = await startMemoryStack({ MEMORY_RATE_LIMIT: '100000' });
  for (const name of ['v', 'other']) {
    expect((await call('POST', '/v1/memories', JSON.stringify({ name }), 'application/json')).status).toBe(201);
  }
  revs.a1 = await put('v', 'notes/a.md', '# A\n\none\n');
  revs.b1 = await put('v', 'notes/b.md', '# B\n\nlinks to [[notes/a]] and [a](a.md)\n');
  revs.a2 = await put('v', 'notes/a.md', '# A\n\none\ntwo\n');
  revs.other = await put('other', 'x.md', '# elsewhere\n');
}, 180000);
afterAll(() => h?.close());

const auth = (sub = 'vera', o: Parameters<MemoryStack['token']>[1] = {}) => h.bearer(sub, o);

function call(method: string, path: string, payload?: string, type?: string, headers: Record<string, string> = {}): Promise<Response> {
  return h.fetch(path, { method, headers: { ...auth(), ...(type && { 'content-type': type }), ...headers }, body: payload });
}

async function put(memory: string, path: string, text: string): Promise<string> {
  const res = await call('PUT', `/v1/memories/${memory}/notes/${path}`, text, 'text/markdown');
  return (await body(res, WriteResultSchema)).rev;
}

describe('history', () => {
  it('lists commits newest first with author, message and changes; ETag is the head', async () => {
    const res = await call('GET', '/v1/memories/v/history');
    expect(res.status).toBe(200);
    expect(res.headers.get('etag')).toBe(`"${revs.a2}"`);
    const { commits, nextCursor } = await body(res, HistorySchema);
    expect(nextCursor).toBeUndefined();
    expect(commits.map((c) => c.rev)).toEqual([revs.a2, revs.b1, revs.a1]);
    expect(commits[0]).toMatchObject({
      parents: [revs.b1],
      author: { name: 'vera (local-cli)', sub: 'vera' },
      message: 'Update notes/a.md',
      changes: [{ path: 'notes/a.md', change: 'modified' }],
    });
    expect(commits[2]).toMatchObject({ parents: [], changes: [{ path: 'notes/a.md', change: 'added' }] });
  });

  it('pages with a signed cursor bound to the memory and the path', async () => {
    const first = await body(await call('GET', '/v1/memories/v/history?limit=2'), HistorySchema);
    expect(first.commits).toHaveLength(2);
    expect(first.nextCursor).toBeDefined();
    const second = await body(await call('GET', `/v1/memories/v/history?limit=2&cursor=${first.nextCursor}`), HistorySchema);
    expect(second.commits.map((c) => c.rev)).toEqual([revs.a1]);
    expect(second.nextCursor).toBeUndefined();
    // The cursor of another listing (the path filter) is refused, as is a forged one.
    expect(await errorCode(await call('GET', `/v1/memories/v/history?limit=2&path=notes/a.md&cursor=${first.nextCursor}`))).toBe('BAD_REQUEST');
    expect(await errorCode(await call('GET', `/v1/memories/v/history?cursor=${first.nextCursor}x`))).toBe('BAD_REQUEST');
  });

  it('with path, only the commits that touched the note', async () => {
    const { commits } = await body(await call('GET', '/v1/memories/v/history?path=notes/a.md'), HistorySchema);
    expect(commits.map((c) => c.rev)).toEqual([revs.a2, revs.a1]);
  });

  it.each([
    ['limit=0', 'BAD_REQUEST'],
    ['limit=101', 'BAD_REQUEST'],
    ['limit=x', 'BAD_REQUEST'],
    ['limit=1&limit=2', 'BAD_REQUEST'],
    ['path=../a.md', 'BAD_REQUEST'],
    ['path=never/was.md', 'NOT_FOUND'],
  ])('answers %s with %s', async (query, code) => {
    expect(await errorCode(await call('GET', `/v1/memories/v/history?${query}`))).toBe(code);
  });

  it('is 404 for a memory that does not exist, 403 for one not granted, 401 without a token', async () => {
    expect(await errorCode(await call('GET', '/v1/memories/nope/history'))).toBe('NOT_FOUND');
    expect(await errorCode(await h.fetch('/v1/memories/v/history', { headers: auth('vera', { memories: ['other'] }) }))).toBe('FORBIDDEN');
    expect(await errorCode(await h.fetch('/v1/memories/v/history'))).toBe('UNAUTHENTICATED');
  });
});

describe('a note at any rev', () => {
  it('reads the note as it was, JSON or raw, with that rev as ETag', async () => {
    const res = await call('GET', `/v1/memories/v/notes/notes/a.md?rev=${revs.a1}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('etag')).toBe(`"${revs.a1}"`);
    expect((await body(res, NoteSchema)).body).toBe('# A\n\none\n');
    const raw = await call('GET', `/v1/memories/v/notes/notes/a.md?rev=${revs.a1.toUpperCase()}`, undefined, undefined, { accept: 'text/markdown' });
    expect(await raw.text()).toBe('# A\n\none\n');
  });

  it.each([
    ['an unknown rev', () => `rev=${'0'.repeat(40)}`, 'NOT_FOUND'],
    ["another memory's rev", () => `rev=${revs.other}`, 'NOT_FOUND'],
    ['a short sha', () => `rev=${revs.a1.slice(0, 12)}`, 'BAD_REQUEST'],
    ['not hex', () => `rev=${'z'.repeat(40)}`, 'BAD_REQUEST'],
    ['two revs', () => `rev=${revs.a1}&rev=${revs.a2}`, 'BAD_REQUEST'],
  ])('answers %s with %s', async (_what, query, code) => {
    expect(await errorCode(await call('GET', `/v1/memories/v/notes/notes/a.md?${query()}`))).toBe(code);
  });

  it('is 404 for a note that did not exist at that rev', async () => {
    expect(await errorCode(await call('GET', `/v1/memories/v/notes/notes/b.md?rev=${revs.a1}`))).toBe('NOT_FOUND');
  });
});

describe('diff', () => {
  it('is a unified diff by default and JSON hunks on request; from defaults to the parent of to', async () => {
    const json = await body(await call('GET', `/v1/memories/v/diff?to=${revs.a2}`, undefined, undefined, { accept: 'application/json' }), DiffSchema);
    expect(json).toMatchObject({ from: revs.b1, to: revs.a2 });
    expect(json.files).toEqual([
      {
        path: 'notes/a.md',
        change: 'modified',
        oldBlob: expect.any(String),
        newBlob: expect.any(String),
        hunks: [{ oldStart: 1, oldLines: 3, newStart: 1, newLines: 4, lines: [' # A', ' ', ' one', '+two'] }],
      },
    ]);
    const f = json.files[0];
    const res = await call('GET', `/v1/memories/v/diff?to=${revs.a2}`);
    expect(res.headers.get('content-type')).toMatch(/^text\/x-diff/);
    expect(await res.text()).toBe(
      `diff --git a/notes/a.md b/notes/a.md\nindex ${f.oldBlob?.slice(0, 12)}..${f.newBlob?.slice(0, 12)} 100644\n--- a/notes/a.md\n+++ b/notes/a.md\n@@ -1,3 +1,4 @@\n # A\n \n one\n+two\n`,
    );
  });

  it('spans several commits, filters by path, and marks new files as git does', async () => {
    const text = await (await call('GET', `/v1/memories/v/diff?from=${revs.a1}`)).text();
    expect(text).toMatch(/^diff --git a\/notes\/a\.md b\/notes\/a\.md\n/);
    expect(text).toMatch(
      /diff --git a\/notes\/b\.md b\/notes\/b\.md\nnew file mode 100644\nindex 0000000\.\.[0-9a-f]{12}\n--- \/dev\/null\n\+\+\+ b\/notes\/b\.md\n@@ -0,0 \+1,3 @@\n/,
    );
    const only = await body(
      await call('GET', `/v1/memories/v/diff?from=${revs.a1}&path=notes/b.md`, undefined, undefined, { accept: 'application/json' }),
      DiffSchema,
    );
    expect(only.files.map((f) => f.path)).toEqual(['notes/b.md']);
  });

  it.each([
    [`from=${'0'.repeat(40)}`, 'NOT_FOUND'],
    ['to=nothex', 'BAD_REQUEST'],
    ['path=a', 'BAD_REQUEST'],
  ])('answers %s with %s', async (query, code) => {
    expect(await errorCode(await call('GET', `/v1/memories/v/diff?${query}`))).toBe(code);
  });

  it("is 404 for another memory's rev and for a memory without history", async () => {
    expect(await errorCode(await call('GET', `/v1/memories/v/diff?from=${revs.other}`))).toBe('NOT_FOUND');
    expect((await call('POST', '/v1/memories', '{"name":"blank"}', 'application/json')).status).toBe(201);
    expect(await errorCode(await call('GET', '/v1/memories/blank/diff'))).toBe('NOT_FOUND');
  });
});

describe('restore of any version', () => {
  it('brings a note back as it was at a rev in one new commit; restoring it again changes nothing', async () => {
    const res = await call('POST', '/v1/memories/v/restore', JSON.stringify({ path: 'notes/a.md', rev: revs.a1 }), 'application/json');
    const out = await body(res, WriteResultSchema);
    expect((await body(await call('GET', '/v1/memories/v/notes/notes/a.md'), NoteSchema)).body).toBe('# A\n\none\n');
    const { commits } = await body(await call('GET', '/v1/memories/v/history?limit=1'), HistorySchema);
    expect(commits[0]).toMatchObject({ rev: out.rev, message: `Restore notes/a.md as of ${revs.a1.slice(0, 12)}`, parents: [revs.a2] });
    const again = await body(
      await call('POST', '/v1/memories/v/restore', JSON.stringify({ path: 'notes/a.md', rev: revs.a1 }), 'application/json'),
      WriteResultSchema,
    );
    expect(again.rev).toBe(out.rev);
    revs.restored = out.rev;
  });

  it('brings back a deleted note from any rev; If-Match applies', async () => {
    expect((await call('DELETE', '/v1/memories/v/notes/notes/b.md')).status).toBe(200);
    expect(
      await errorCode(
        await call('POST', '/v1/memories/v/restore', JSON.stringify({ path: 'notes/b.md', rev: revs.b1 }), 'application/json', { 'if-match': revs.a1 }),
      ),
    ).toBe('CONFLICT');
    const ok = await call('POST', '/v1/memories/v/restore', JSON.stringify({ path: 'notes/b.md', rev: revs.b1 }), 'application/json');
    expect(ok.status).toBe(200);
    expect((await body(await call('GET', '/v1/memories/v/notes/notes/b.md'), NoteSchema)).body).toMatch(/links to/);
  });

  it.each([
    ['a note that did not exist at the rev', () => ({ path: 'notes/b.md', rev: revs.a1 }), 'NOT_FOUND'],
    ['an unknown rev', () => ({ path: 'notes/a.md', rev: 'f'.repeat(40) }), 'NOT_FOUND'],
    ["another memory's rev", () => ({ path: 'notes/a.md', rev: revs.other }), 'NOT_FOUND'],
    ['a malformed rev', () => ({ path: 'notes/a.md', rev: 'HEAD~1' }), 'BAD_REQUEST'],
    ['a rev that is not a string', () => ({ path: 'notes/a.md', rev: 7 }), 'BAD_REQUEST'],
    ['a rev without a path', () => ({ rev: revs.a1 }), 'BAD_REQUEST'],
  ])('answers %s with %s and writes nothing', async (_what, payload, code) => {
    const before = (await (await call('GET', '/v1/memories/v')).json()) as { rev: string };
    expect(await errorCode(await call('POST', '/v1/memories/v/restore', JSON.stringify(payload()), 'application/json'))).toBe(code);
    expect(((await (await call('GET', '/v1/memories/v')).json()) as { rev: string }).rev).toBe(before.rev);
  });
});

describe('move', () => {
  it('renames in one commit, rewriting links in other notes when asked; history follows the note', async () => {
    const res = await call(
      'POST',
      '/v1/memories/v/move',
      JSON.stringify({ from: 'notes/a.md', to: 'archive/alpha.md', updateLinks: true }),
      'application/json',
    );
    const out = await body(res, MoveResultSchema);
    expect(out).toMatchObject({ from: 'notes/a.md', to: 'archive/alpha.md', linksUpdated: ['notes/b.md'] });
    expect((await body(await call('GET', '/v1/memories/v/notes/notes/b.md'), NoteSchema)).body).toBe(
      '# B\n\nlinks to [[archive/alpha]] and [a](../archive/alpha.md)\n',
    );
    expect(await errorCode(await call('GET', '/v1/memories/v/notes/notes/a.md'))).toBe('NOT_FOUND');
    const { commits } = await body(await call('GET', '/v1/memories/v/history?path=archive/alpha.md'), HistorySchema);
    expect(commits[0].changes).toEqual([
      { path: 'archive/alpha.md', change: 'renamed', from: 'notes/a.md' },
      { path: 'notes/b.md', change: 'modified' },
    ]);
    // Followed back through the rename to its first version.
    expect(commits.map((c) => c.rev)).toEqual([out.rev, revs.restored, revs.a2, revs.a1]);
  });

  it('without updateLinks leaves other notes alone; If-Match applies', async () => {
    const head = ((await (await call('GET', '/v1/memories/v')).json()) as { rev: string }).rev;
    expect(
      await errorCode(
        await call('POST', '/v1/memories/v/move', JSON.stringify({ from: 'archive/alpha.md', to: 'x.md' }), 'application/json', { 'if-match': revs.a1 }),
      ),
    ).toBe('CONFLICT');
    const out = await body(
      await call('POST', '/v1/memories/v/move', JSON.stringify({ from: 'archive/alpha.md', to: 'alpha.md' }), 'application/json', { 'if-match': `"${head}"` }),
      MoveResultSchema,
    );
    expect(out.linksUpdated).toEqual([]);
    expect((await body(await call('GET', '/v1/memories/v/notes/notes/b.md'), NoteSchema)).body).toMatch(/\[\[archive\/alpha\]\]/);
  });

  it.each([
    ['onto an existing note', { from: 'alpha.md', to: 'notes/b.md' }, 'CONFLICT'],
    ['of a note that does not exist', { from: 'nothing.md', to: 'y.md' }, 'NOT_FOUND'],
    ['onto itself', { from: 'alpha.md', to: 'alpha.md' }, 'BAD_REQUEST'],
    ['to a path that is not a note', { from: 'alpha.md', to: 'alpha.txt' }, 'BAD_REQUEST'],
    ['to a hostile path', { from: 'alpha.md', to: '../up.md' }, 'BAD_REQUEST'],
    ['without to', { from: 'alpha.md' }, 'BAD_REQUEST'],
    ['with updateLinks not a boolean', { from: 'alpha.md', to: 'z.md', updateLinks: 'yes' }, 'BAD_REQUEST'],
  ])('refuses a move %s (%s) and writes nothing', async (_what, payload, code) => {
    const before = ((await (await call('GET', '/v1/memories/v')).json()) as { rev: string }).rev;
    const res = await call('POST', '/v1/memories/v/move', JSON.stringify(payload), 'application/json');
    expect((await body(res, ErrorSchema)).error.code).toBe(code);
    expect(((await (await call('GET', '/v1/memories/v')).json()) as { rev: string }).rev).toBe(before);
  });

  it('refuses to move a deleted note, saying it was deleted', async () => {
    await put('v', 'gone.md', '# gone\n');
    expect((await call('DELETE', '/v1/memories/v/notes/gone.md')).status).toBe(200);
    const res = await call('POST', '/v1/memories/v/move', JSON.stringify({ from: 'gone.md', to: 'back.md' }), 'application/json');
    expect(res.status).toBe(404);
    expect((await body(res, ErrorSchema)).error.message).toMatch(/was deleted/);
  });

  it('needs memory:write', async () => {
    const res = await h.fetch('/v1/memories/v/move', {
      method: 'POST',
      headers: { ...auth('vera', { scope: 'memory:read' }), 'content-type': 'application/json' },
      body: JSON.stringify({ from: 'alpha.md', to: 'q.md' }),
    });
    expect(await errorCode(res)).toBe('FORBIDDEN');
  });
});
