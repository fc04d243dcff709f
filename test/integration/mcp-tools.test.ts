import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Caller } from '../../lambdas/memory/types';
import { call, ok, startMcpHarness, toolError, type McpHarness, type Structured } from './mcp-harness';

/**
 * The six tools through the SDK's own client over real HTTP on the local stack: every mode and
 * every addressing form, read back through the memory core (same account) and through `/v1`, and
 * the bad-arguments table, which must always come back as tool errors (isError, a code), never as
 * protocol errors. Each test uses a fresh account, so the per-user rate limit (its own test runs in
 * mcp-http.test.ts) and the per-account ceiling never leak between tests.
 */
let h: McpHarness;

beforeAll(async () => {
  h = await startMcpHarness();
}, 180000);
afterAll(() => h?.close());

let seq = 0;
const user = (): string => `mcp-${process.pid}-${++seq}`;

async function session(sub = user(), scope?: string): Promise<{ sub: string; c: Client; caller: Caller; token: string }> {
  const token = h.token({ sub, scope });
  return { sub, c: await h.connect(token), caller: { account: sub }, token };
}

const SHA = /^[0-9a-f]{40}$/;
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;

describe('tools/list', () => {
  it('offers the six tools, each with an input and an output schema and a description', async () => {
    const { c } = await session();
    const { tools } = await c.listTools();
    expect(tools.map((t) => t.name)).toEqual(['memory__search', 'memory__read', 'memory__list', 'memory__write', 'memory__edit', 'memory__delete']);
    for (const t of tools) {
      expect(t.inputSchema.type).toBe('object');
      expect(t.outputSchema?.type).toBe('object');
      expect(t.description?.length).toBeGreaterThan(80);
    }
    expect(tools.find((t) => t.name === 'memory__search')?.inputSchema.required).toEqual(['query']);
    expect(tools.find((t) => t.name === 'memory__write')?.inputSchema.required).toEqual(['path', 'body']);
  });

  it('says who it is and how to use it at initialize', async () => {
    const { c } = await session();
    expect(c.getServerVersion()?.name).toBe('memory');
    expect(c.getInstructions()).toMatch(/@<vault>/);
  });
});

describe('write and read', () => {
  it('creates the default memory on first write; the note reads back over MCP and through the core', async () => {
    const { c, caller } = await session();
    const written = await ok(c, 'memory__write', {
      path: 'projects/acme/decisions.md',
      body: '# Decisions\n\nUse Postgres. #db',
      frontmatter: { status: 'draft', tags: ['acme'] },
    });
    expect(written).toEqual({ path: 'projects/acme/decisions.md', updated: expect.stringMatching(ISO), rev: expect.stringMatching(SHA) });

    const note = await ok(c, 'memory__read', { path: 'projects/acme/decisions.md' });
    expect(note).toEqual({
      path: 'projects/acme/decisions.md',
      title: 'Decisions',
      frontmatter: { status: 'draft', tags: ['acme'] },
      body: '# Decisions\n\nUse Postgres. #db',
      tags: ['acme', 'db'],
      updated: written.updated,
      deleted: false,
      rev: written.rev,
    });

    const core = await h.stack.memory.service.readNote(caller, 'default', 'projects/acme/decisions.md');
    expect(core.body).toBe('# Decisions\n\nUse Postgres. #db');
    expect(core.frontmatter).toEqual({ status: 'draft', tags: ['acme'] });
    expect((await h.stack.memory.service.listMemories(caller)).map((m) => m.name)).toEqual(['default']);
  });

  it('replaces the whole note on a second write (front matter too); the same write again changes nothing', async () => {
    const { c } = await session();
    await ok(c, 'memory__write', { path: 'a.md', body: 'one', frontmatter: { k: 1 } });
    const second = await ok(c, 'memory__write', { path: 'a.md', body: 'two' });
    expect(await ok(c, 'memory__read', { path: 'a.md' })).toMatchObject({ body: 'two', frontmatter: {} });
    expect(await ok(c, 'memory__write', { path: 'a.md', body: 'two' })).toEqual(second);
  });

  it('addresses a named vault with @<vault>/: created on first write, paths come back @-prefixed', async () => {
    const { c, caller } = await session();
    expect(await ok(c, 'memory__write', { path: '@work/todo/today.md', body: 'ship it' })).toEqual({
      path: '@work/todo/today.md',
      updated: expect.any(String),
      rev: expect.stringMatching(SHA),
    });
    expect(await ok(c, 'memory__read', { path: '@work/todo/today.md' })).toMatchObject({ path: '@work/todo/today.md', body: 'ship it' });
    expect((await h.stack.memory.service.readNote(caller, 'work', 'todo/today.md')).body).toBe('ship it');
    // Not in the default memory.
    expect((await toolError(c, 'memory__read', { path: 'todo/today.md' })).code).toBe('not_found');
    // @default is the default memory by its REST name.
    await ok(c, 'memory__write', { path: 'plain.md', body: 'x' });
    expect(await ok(c, 'memory__read', { path: '@default/plain.md' })).toMatchObject({ path: '@default/plain.md', body: 'x' });
  });

  it('reads a deleted note with its last content and deleted: true; a path that never existed is not_found', async () => {
    const { c } = await session();
    await ok(c, 'memory__write', { path: 'gone.md', body: 'last words' });
    expect(await ok(c, 'memory__delete', { path: 'gone.md' })).toEqual({ path: 'gone.md', deleted: true, rev: expect.stringMatching(SHA) });
    expect(await ok(c, 'memory__read', { path: 'gone.md' })).toMatchObject({ path: 'gone.md', body: 'last words', deleted: true });
    expect(await toolError(c, 'memory__read', { path: 'never.md' })).toEqual({ code: 'not_found', message: 'note "never.md" does not exist' });
    expect((await toolError(c, 'memory__read', { path: '@nowhere/a.md' })).code).toBe('not_found');
  });

  it('refuses content that looks like a credential with refused_content', async () => {
    const { c } = await session();
    const err = await toolError(c, 'memory__write', { path: 'keys.md', body: 'aws key AKIAZ7XQ3P5N2K4M6R8T here' });
    expect(err.code).toBe('refused_content');
    expect(err.message).not.toContain('AKIAZ7XQ3P5N2K4M6R8T');
  });

  it('refuses a twin path (case or Unicode normalisation) with conflict naming the note, and non-portable names with invalid_argument', async () => {
    const { c } = await session();
    await ok(c, 'memory__write', { path: 'Ideas/Café.md', body: 'first' });
    const twin = await toolError(c, 'memory__write', { path: 'ideas/cafe\u0301.md', body: 'second' });
    expect(twin.code).toBe('conflict');
    expect(twin.message).toMatch(/collides with the folder "Ideas\/"/);
    const nfd = await toolError(c, 'memory__write', { path: 'Ideas/Cafe\u0301.md', body: 'second' });
    expect(nfd.message).toMatch(/collides with the note "Ideas\/Café\.md"/);
    expect((await toolError(c, 'memory__write', { path: 'CON.md', body: 'x' })).code).toBe('invalid_argument');
    expect((await toolError(c, 'memory__write', { path: 'evil\u202Edm.txt.md', body: 'x' })).code).toBe('invalid_argument');
  });

  it('answers conflict when a new vault would pass the per-account ceiling', async () => {
    const { c, caller } = await session();
    const ceiling = h.stack.memory.service.limits.maxMemoriesPerAccount;
    for (let i = 0; i < ceiling; i++) await h.stack.memory.service.createMemory(caller, `m${i}`);
    expect((await toolError(c, 'memory__write', { path: '@onemore/a.md', body: 'x' })).code).toBe('conflict');
  });
});

describe('edit', () => {
  it('replaces the body, appends on a new line, and str_replaces exactly one occurrence (new_str omitted deletes)', async () => {
    const { c } = await session();
    await ok(c, 'memory__write', { path: 'log.md', body: 'first', frontmatter: { a: 1, nested: { x: 1 } } });
    expect(await ok(c, 'memory__edit', { path: 'log.md', body: 'replaced' })).toEqual({
      path: 'log.md',
      updated: expect.any(String),
      rev: expect.stringMatching(SHA),
    });
    expect((await ok(c, 'memory__read', { path: 'log.md' })).body).toBe('replaced');

    await ok(c, 'memory__edit', { path: 'log.md', mode: 'append', body: 'second line' });
    expect((await ok(c, 'memory__read', { path: 'log.md' })).body).toBe('replaced\nsecond line');

    await ok(c, 'memory__edit', { path: 'log.md', mode: 'str_replace', old_str: 'second', new_str: '2nd' });
    expect((await ok(c, 'memory__read', { path: 'log.md' })).body).toBe('replaced\n2nd line');
    await ok(c, 'memory__edit', { path: 'log.md', mode: 'str_replace', old_str: ' line' });
    expect((await ok(c, 'memory__read', { path: 'log.md' })).body).toBe('replaced\n2nd');

    // Front matter merges shallowly; the body stays.
    await ok(c, 'memory__edit', { path: 'log.md', frontmatter: { b: 2, nested: { y: 2 } } });
    expect(await ok(c, 'memory__read', { path: 'log.md' })).toMatchObject({ body: 'replaced\n2nd', frontmatter: { a: 1, b: 2, nested: { y: 2 } } });
    await ok(c, 'memory__edit', { path: 'log.md', mode: 'append', body: 'more', frontmatter: { c: 3 } });
    expect(await ok(c, 'memory__read', { path: 'log.md' })).toMatchObject({ body: 'replaced\n2nd\nmore', frontmatter: { a: 1, b: 2, c: 3 } });
  });

  it('merges frontmatter in str_replace mode too, as the description says', async () => {
    const { c } = await session();
    await ok(c, 'memory__write', { path: 'fm.md', body: 'status: draft here', frontmatter: { a: 1, status: 'draft' } });
    await ok(c, 'memory__edit', { path: 'fm.md', mode: 'str_replace', old_str: 'draft', new_str: 'final', frontmatter: { status: 'final', b: 2 } });
    expect(await ok(c, 'memory__read', { path: 'fm.md' })).toMatchObject({ body: 'status: final here', frontmatter: { a: 1, status: 'final', b: 2 } });
    const edit = (await c.listTools()).tools.find((t) => t.name === 'memory__edit');
    expect(edit?.description).toMatch(/frontmatter, in any mode \(str_replace included\), merges keys/);
  });

  it('edits in a vault with @-prefixed paths; a missing note is not_found; old_str must occur exactly once', async () => {
    const { c } = await session();
    await ok(c, 'memory__write', { path: '@work/a.md', body: 'dup dup once' });
    expect(await ok(c, 'memory__edit', { path: '@work/a.md', mode: 'str_replace', old_str: 'once', new_str: 'twice' })).toEqual({
      path: '@work/a.md',
      updated: expect.any(String),
      rev: expect.stringMatching(SHA),
    });
    expect((await toolError(c, 'memory__edit', { path: '@work/a.md', mode: 'str_replace', old_str: 'dup', new_str: 'x' })).code).toBe('invalid_argument');
    expect((await toolError(c, 'memory__edit', { path: '@work/a.md', mode: 'str_replace', old_str: 'absent' })).code).toBe('invalid_argument');
    expect(await toolError(c, 'memory__edit', { path: '@work/missing.md', body: 'x' })).toEqual({
      code: 'not_found',
      message: 'note "@work/missing.md" does not exist',
    });
    expect((await toolError(c, 'memory__edit', { path: 'missing.md', body: 'x' })).code).toBe('not_found');
    expect((await toolError(c, 'memory__edit', { path: '@nothere/missing.md', body: 'x' })).code).toBe('not_found');
  });
});

describe('delete', () => {
  it('soft-deletes: gone from list and search, still readable as deleted; deleting again is not_found', async () => {
    const { c, caller } = await session();
    await ok(c, 'memory__write', { path: '@work/old.md', body: 'obsolete plan' });
    await ok(c, 'memory__write', { path: '@work/keep.md', body: 'keep' });
    expect(await ok(c, 'memory__delete', { path: '@work/old.md' })).toEqual({ path: '@work/old.md', deleted: true, rev: expect.stringMatching(SHA) });
    expect((await ok(c, 'memory__search', { query: 'obsolete', folder: '@work' })).results).toEqual([]);
    const listing = await ok<{ entries: Array<{ path: string }> }>(c, 'memory__list', { folder: '@work' });
    expect(listing.entries.map((e) => e.path)).toEqual(['@work/keep.md']);
    expect(await ok(c, 'memory__read', { path: '@work/old.md' })).toMatchObject({ deleted: true, body: 'obsolete plan' });
    expect((await toolError(c, 'memory__delete', { path: '@work/old.md' })).code).toBe('not_found');
    expect((await toolError(c, 'memory__delete', { path: 'never.md' })).code).toBe('not_found');
    await expect(h.stack.memory.service.readNote(caller, 'work', 'old.md')).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });
});

describe('search', () => {
  it('matches one literal keyword; unscoped covers the default memory only; folders and @vault scope it', async () => {
    const { c } = await session();
    await ok(c, 'memory__write', { path: 'db/postgres.md', body: '# Postgres\nWe use postgres 16. POSTGRES is fast.' });
    await ok(c, 'memory__write', { path: 'db/mysql.md', body: 'Not postgres.' });
    await ok(c, 'memory__write', { path: 'other.md', body: 'nothing to see' });
    await ok(c, 'memory__write', { path: '@work/pg.md', body: 'postgres at work' });

    const all = await ok<{ results: Array<{ path: string; score: number; snippet: string; title: string; updated: string }> }>(c, 'memory__search', {
      query: 'postgres',
    });
    // Three occurrences in the body; the title is its heading, not counted a second time.
    expect(all.results.map((r) => [r.path, r.score])).toEqual([
      ['db/postgres.md', 3],
      ['db/mysql.md', 1],
    ]);
    expect(all.results[0]).toMatchObject({ title: 'Postgres', snippet: expect.stringMatching(/postgres/i), updated: expect.stringMatching(ISO) });
    expect(all).not.toHaveProperty('nextCursor');

    expect((await ok<{ results: Array<{ path: string }> }>(c, 'memory__search', { query: 'postgres', folder: '@work' })).results.map((r) => r.path)).toEqual([
      '@work/pg.md',
    ]);
    expect(
      (await ok<{ results: Array<{ path: string }> }>(c, 'memory__search', { query: 'postgres', folder: '@default/db' })).results.map((r) => r.path),
    ).toEqual(['@default/db/postgres.md', '@default/db/mysql.md']);
    expect((await ok<{ results: unknown[] }>(c, 'memory__search', { query: 'postgres', folder: 'nowhere' })).results).toEqual([]);
    expect((await ok<{ results: unknown[] }>(c, 'memory__search', { query: 'we use postgres' })).results).toHaveLength(1);
    expect((await ok<{ results: unknown[] }>(c, 'memory__search', { query: 'use 16' })).results).toHaveLength(0);
    expect((await toolError(c, 'memory__search', { query: 'x', folder: '@absent' })).code).toBe('not_found');
  });

  it('filters by tags (AND) and pages with limit and nextCursor', async () => {
    const { c } = await session();
    for (let i = 0; i < 5; i++)
      await ok(c, 'memory__write', { path: `n${i}.md`, body: `needle ${'needle '.repeat(i)}`, frontmatter: { tags: i % 2 ? ['odd', 'x'] : ['even', 'x'] } });
    const odd = await ok<{ results: Array<{ path: string }> }>(c, 'memory__search', { query: 'needle', tags: ['odd', 'x'] });
    expect(odd.results.map((r) => r.path)).toEqual(['n3.md', 'n1.md']);
    expect((await ok<{ results: unknown[] }>(c, 'memory__search', { query: 'needle', tags: ['odd', 'even'] })).results).toEqual([]);

    const first = await ok<{ results: Array<{ path: string }>; nextCursor?: string }>(c, 'memory__search', { query: 'needle', limit: 2 });
    expect(first.results.map((r) => r.path)).toEqual(['n4.md', 'n3.md']);
    const second = await ok<{ results: Array<{ path: string }>; nextCursor?: string }>(c, 'memory__search', {
      query: 'needle',
      limit: 2,
      cursor: first.nextCursor,
    });
    expect(second.results.map((r) => r.path)).toEqual(['n2.md', 'n1.md']);
    const third = await ok<{ results: Array<{ path: string }>; nextCursor?: string }>(c, 'memory__search', {
      query: 'needle',
      limit: 2,
      cursor: second.nextCursor,
    });
    expect(third.results.map((r) => r.path)).toEqual(['n0.md']);
    expect(third.nextCursor).toBeUndefined();
    // A cursor of another query is refused.
    expect((await toolError(c, 'memory__search', { query: 'other', limit: 2, cursor: first.nextCursor })).code).toBe('invalid_argument');
  });

  it('finds nothing, without an error, before the default memory exists', async () => {
    const { c } = await session();
    expect(await ok(c, 'memory__search', { query: 'anything' })).toEqual({ results: [] });
  });
});

describe('list', () => {
  type Entry = { type: 'file' | 'folder'; path: string; files?: number; entries?: Entry[]; truncated?: boolean; title?: string; updated?: string };
  type Listing = { folder: string; entries: Entry[]; truncated: boolean; files: number };

  it('nests the default root to depth 2 and adds one @<vault>/ folder per other vault', async () => {
    const { c } = await session();
    await ok(c, 'memory__write', { path: 'readme.md', body: '# Read me' });
    await ok(c, 'memory__write', { path: 'projects/acme/plan.md', body: 'plan' });
    await ok(c, 'memory__write', { path: 'projects/index.md', body: 'index' });
    await ok(c, 'memory__write', { path: '@work/todo.md', body: 'todo' });
    await ok(c, 'memory__write', { path: '@work/sub/deep.md', body: 'deep' });

    const top = await ok<Listing>(c, 'memory__list', {});
    expect(top).toEqual({
      folder: '',
      truncated: false,
      files: 5,
      entries: [
        {
          type: 'folder',
          path: '@work/',
          files: 2,
          entries: [
            { type: 'folder', path: '@work/sub', files: 1, entries: [] },
            { type: 'file', path: '@work/todo.md', title: 'todo', updated: expect.stringMatching(ISO) },
          ],
        },
        {
          type: 'folder',
          path: 'projects',
          files: 2,
          entries: [
            { type: 'folder', path: 'projects/acme', files: 1, entries: [] },
            { type: 'file', path: 'projects/index.md', title: 'index', updated: expect.any(String) },
          ],
        },
        { type: 'file', path: 'readme.md', title: 'Read me', updated: expect.any(String) },
      ],
    });

    const shallow = await ok<Listing>(c, 'memory__list', { depth: 1 });
    expect(shallow.entries.map((e) => [e.path, e.entries?.length])).toEqual([
      ['@work/', 0],
      ['projects', 0],
      ['readme.md', undefined],
    ]);

    const vault = await ok<Listing>(c, 'memory__list', { folder: '@work' });
    expect(vault.folder).toBe('@work/');
    expect(vault.entries.map((e) => e.path)).toEqual(['@work/sub', '@work/todo.md']);
    expect(vault.entries[0].entries?.map((e) => e.path)).toEqual(['@work/sub/deep.md']);

    const sub = await ok<Listing>(c, 'memory__list', { folder: 'projects/' });
    expect(sub).toMatchObject({ folder: 'projects', files: 2, truncated: false });
    expect(sub.entries.map((e) => e.path)).toEqual(['projects/acme', 'projects/index.md']);
    expect((await ok<Listing>(c, 'memory__list', { folder: '@work/sub', depth: 1 })).entries.map((e) => e.path)).toEqual(['@work/sub/deep.md']);
  });

  it('filters by tags, counting only matching notes', async () => {
    const { c } = await session();
    await ok(c, 'memory__write', { path: 'a/x.md', body: '#keep' });
    await ok(c, 'memory__write', { path: 'a/y.md', body: 'no tag' });
    await ok(c, 'memory__write', { path: 'b/z.md', body: 'no tag' });
    const listing = await ok<Listing>(c, 'memory__list', { folder: '', tags: ['keep'] });
    expect(listing).toEqual({
      folder: '',
      truncated: false,
      files: 1,
      entries: [{ type: 'folder', path: 'a', files: 1, entries: [expect.objectContaining({ path: 'a/x.md' })] }],
    });
  });

  it('shows at most 100 entries per folder: a fuller subfolder is flagged truncated and not expanded', async () => {
    const { c, caller } = await session();
    const notes = Array.from({ length: 101 }, (_, i) => ({ path: `big/n${String(i).padStart(3, '0')}.md`, markdown: `note ${i}` }));
    await h.stack.memory.service.importNotes(caller, 'default', notes, { createMemory: true });
    await ok(c, 'memory__write', { path: 'small/one.md', body: 'one' });

    const top = await ok<Listing>(c, 'memory__list', {});
    expect(top.entries).toEqual([
      { type: 'folder', path: 'big', files: 101, entries: [], truncated: true },
      { type: 'folder', path: 'small', files: 1, entries: [expect.objectContaining({ path: 'small/one.md' })] },
    ]);
    expect(top.files).toBe(102);

    const big = await ok<Listing>(c, 'memory__list', { folder: 'big' });
    expect(big.truncated).toBe(true);
    expect(big.files).toBe(101);
    expect(big.entries).toHaveLength(100);
    expect(big.entries[99].path).toBe('big/n099.md');
  });

  it('flags a subfolder with more than 100 entries truncated at depth 1 too, by its entries, not its notes', async () => {
    const { c, caller } = await session();
    const many = (folder: string, n: number) =>
      Array.from({ length: n }, (_, i) => ({ path: `${folder}/n${String(i).padStart(3, '0')}.md`, markdown: `note ${i}` }));
    // big: 101 notes side by side; deep: 101 notes, but one entry (its subfolder); exact: 100 notes.
    await h.stack.memory.service.importNotes(caller, 'default', [...many('big', 101), ...many('deep/inner', 101), ...many('exact', 100)], {
      createMemory: true,
    });
    await ok(c, 'memory__write', { path: 'small/one.md', body: 'one' });

    const top = await ok<Listing>(c, 'memory__list', { depth: 1 });
    expect(top).toEqual({
      folder: '',
      truncated: false,
      files: 303,
      entries: [
        { type: 'folder', path: 'big', files: 101, entries: [], truncated: true },
        { type: 'folder', path: 'deep', files: 101, entries: [] },
        { type: 'folder', path: 'exact', files: 100, entries: [] },
        { type: 'folder', path: 'small', files: 1, entries: [] },
      ],
    });
    // The same folders at depth 2 (the default) carry the same flags.
    const two = await ok<Listing>(c, 'memory__list', { depth: 2 });
    expect(two.entries.map((e) => [e.path, (e as { truncated?: boolean }).truncated ?? false])).toEqual([
      ['big', true],
      ['deep', false],
      ['exact', false],
      ['small', false],
    ]);
    // A tag filter counts only the notes that carry the tags: no folder is full then.
    expect((await ok<Listing>(c, 'memory__list', { depth: 1, tags: ['none'] })).entries).toEqual([]);

    // Inside a vault, listed without a folder at depth 2, the vault root's subfolders are flagged too.
    await h.stack.memory.service.createMemory(caller, 'work');
    await h.stack.memory.service.importNotes(caller, 'work', many('big', 101));
    const all = await ok<Listing>(c, 'memory__list', {});
    expect(all.entries[0]).toEqual({
      type: 'folder',
      path: '@work/',
      files: 101,
      entries: [{ type: 'folder', path: '@work/big', files: 101, entries: [], truncated: true }],
    });
  });

  it('lists nothing, without an error, before the default memory exists; an unknown vault is not_found', async () => {
    const { c } = await session();
    expect(await ok(c, 'memory__list', {})).toEqual({ folder: '', entries: [], truncated: false, files: 0 });
    expect(await ok(c, 'memory__list', { folder: 'some/folder' })).toEqual({ folder: 'some/folder', entries: [], truncated: false, files: 0 });
    expect((await toolError(c, 'memory__list', { folder: '@absent' })).code).toBe('not_found');
  });
});

describe('the same notes over /v1', () => {
  const v1 = (token: string, path: string, init: RequestInit = {}) =>
    fetch(`${h.url}/v1${path}`, {
      ...init,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...(init.headers as Record<string, string>) },
    });

  it('a note written over MCP reads back over REST, and one written over REST reads back over MCP', async () => {
    const { c, token } = await session();
    await ok(c, 'memory__write', { path: 'shared/from-mcp.md', body: 'hello REST', frontmatter: { via: 'mcp' } });
    const res = await v1(token, `/memories/default/notes/${encodeURIComponent('shared/from-mcp.md')}`);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ path: 'shared/from-mcp.md', body: 'hello REST', frontmatter: { via: 'mcp' } });

    // REST writes need an existing memory (spec 2: 404 otherwise); MCP creates vaults on first write.
    expect((await v1(token, '/memories', { method: 'POST', body: JSON.stringify({ name: 'work' }) })).status).toBe(201);
    expect(
      (await v1(token, `/memories/work/notes/${encodeURIComponent('from-rest.md')}`, { method: 'PUT', body: JSON.stringify({ body: 'hello MCP' }) })).status,
    ).toBe(200);
    expect(await ok(c, 'memory__read', { path: '@work/from-rest.md' })).toMatchObject({ path: '@work/from-rest.md', body: 'hello MCP', deleted: false });
    const listing = await ok<{ entries: Array<{ path: string }> }>(c, 'memory__list', {});
    expect(listing.entries.map((e) => e.path)).toEqual(['@work/', 'shared']);
  });
});

describe('bad arguments are tool errors, never protocol errors', () => {
  let c: Client;
  beforeAll(async () => {
    ({ c } = await session());
    await ok(c, 'memory__write', { path: 'dup.md', body: 'same same' });
    await ok(c, 'memory__write', { path: '@work/a.md', body: 'x' });
  });

  const tooManyTags = Array.from({ length: 51 }, (_, i) => `t${i}`);
  const rows: Array<[string, Structured, string]> = [
    // memory__search
    ['memory__search', {}, 'invalid_argument'],
    ['memory__search', { query: 5 }, 'invalid_argument'],
    ['memory__search', { query: '' }, 'invalid_argument'],
    ['memory__search', { query: 'x', limit: 0 }, 'invalid_argument'],
    ['memory__search', { query: 'x', limit: 51 }, 'invalid_argument'],
    ['memory__search', { query: 'x', limit: 2.5 }, 'invalid_argument'],
    ['memory__search', { query: 'x', limit: '10' }, 'invalid_argument'],
    ['memory__search', { query: 'x', tags: ['#a'] }, 'invalid_argument'],
    ['memory__search', { query: 'x', tags: tooManyTags }, 'invalid_argument'],
    ['memory__search', { query: 'x', tags: 'a' }, 'invalid_argument'],
    ['memory__search', { query: 'x', cursor: 'not-a-cursor' }, 'invalid_argument'],
    ['memory__search', { query: 'x', folder: '/abs' }, 'invalid_argument'],
    ['memory__search', { query: 'x', folder: '@Not_Valid!' }, 'not_found'],
    ['memory__search', { q: 'x' }, 'invalid_argument'],
    ['memory__search', { query: 'x'.repeat(300) }, 'invalid_argument'],
    // memory__read
    ['memory__read', {}, 'invalid_argument'],
    ['memory__read', { path: 5 }, 'invalid_argument'],
    ['memory__read', { path: '' }, 'invalid_argument'],
    ['memory__read', { path: '@work' }, 'invalid_argument'],
    ['memory__read', { path: '@work/' }, 'invalid_argument'],
    ['memory__read', { path: '/abs.md' }, 'invalid_argument'],
    ['memory__read', { path: 'notes.txt' }, 'invalid_argument'],
    ['memory__read', { path: 'a/../b.md' }, 'invalid_argument'],
    ['memory__read', { path: '@UPPER/a.md' }, 'not_found'],
    ['memory__read', { path: '@export/a.md' }, 'not_found'],
    // memory__list
    ['memory__list', { depth: 0 }, 'invalid_argument'],
    ['memory__list', { depth: 3 }, 'invalid_argument'],
    ['memory__list', { depth: 1.5 }, 'invalid_argument'],
    ['memory__list', { depth: '2' }, 'invalid_argument'],
    ['memory__list', { tags: ['#x'] }, 'invalid_argument'],
    ['memory__list', { tags: tooManyTags }, 'invalid_argument'],
    ['memory__list', { folder: 5 }, 'invalid_argument'],
    ['memory__list', { folder: '@UPPER' }, 'not_found'],
    ['memory__list', { folder: 'a/../b' }, 'invalid_argument'],
    // memory__write
    ['memory__write', { path: 'a.md' }, 'invalid_argument'],
    ['memory__write', { body: 'x' }, 'invalid_argument'],
    ['memory__write', { path: 'a.md', body: 5 }, 'invalid_argument'],
    ['memory__write', { path: '@work', body: 'x' }, 'invalid_argument'],
    ['memory__write', { path: 'a.md', body: 'x', frontmatter: 'k: v' }, 'invalid_argument'],
    ['memory__write', { path: 'a.md', body: 'x', frontmatter: [1] }, 'invalid_argument'],
    ['memory__write', { path: 'a.md', body: '---\nk: v\n---\nbody' }, 'invalid_argument'],
    ['memory__write', { path: '@work/@x.md', body: 'x' }, 'invalid_argument'],
    ['memory__write', { path: 'a.md', body: 'x', content: 'y' }, 'invalid_argument'],
    // memory__edit
    ['memory__edit', { path: 'dup.md', mode: 'bogus', body: 'x' }, 'invalid_argument'],
    ['memory__edit', { path: 'dup.md', mode: 'str_replace' }, 'invalid_argument'],
    ['memory__edit', { path: 'dup.md', mode: 'str_replace', old_str: 'same', new_str: 'x' }, 'invalid_argument'],
    ['memory__edit', { path: 'dup.md', mode: 'str_replace', old_str: '' }, 'invalid_argument'],
    ['memory__edit', { path: 'dup.md', mode: 'str_replace', old_str: 'same same', body: 'x' }, 'invalid_argument'],
    ['memory__edit', { path: 'dup.md', mode: 'append', old_str: 'x' }, 'invalid_argument'],
    ['memory__edit', { path: 'dup.md', mode: 'replace' }, 'invalid_argument'],
    ['memory__edit', { path: '@work', body: 'x' }, 'invalid_argument'],
    ['memory__edit', { body: 'x' }, 'invalid_argument'],
    ['memory__edit', { path: 'dup.md', body: 7 }, 'invalid_argument'],
    // memory__delete
    ['memory__delete', {}, 'invalid_argument'],
    ['memory__delete', { path: '@work' }, 'invalid_argument'],
    ['memory__delete', { path: 7 }, 'invalid_argument'],
    ['memory__delete', { path: '@Bad Name/a.md' }, 'not_found'],
  ];

  it.each(rows)('%s %j → %s', async (tool, args, code) => {
    const res = await call(c, tool, args);
    expect(res.isError).toBe(true);
    const error = (res.structuredContent as { error: { code: string; message: string } }).error;
    expect(error.code).toBe(code);
    expect(error.message.length).toBeGreaterThan(5);
  });

  it('names the argument at fault in the message', async () => {
    expect((await toolError(c, 'memory__search', { query: 'x', limit: 99 })).message).toBe('limit must be from 1 to 50');
    expect((await toolError(c, 'memory__write', { path: 'a.md' })).message).toBe('body is required (string)');
    expect((await toolError(c, 'memory__write', { path: 'a.md', body: 'x', content: 'y' })).message).toMatch(
      /unknown argument "content"; memory__write takes path, body, frontmatter/,
    );
    expect((await toolError(c, 'memory__read', { path: '@work' })).message).toMatch(/names a vault, not a note/);
  });

  it("speaks in the tools' argument names, not /v1's (query, not q; frontmatter, not raw text/markdown)", async () => {
    expect(await toolError(c, 'memory__search', { query: 'x'.repeat(300) })).toEqual({
      code: 'invalid_argument',
      message: 'query is longer than 256 characters',
    });
    expect(await toolError(c, 'memory__search', { query: '   ' })).toEqual({ code: 'invalid_argument', message: 'query is required' });
    for (const [tool, args] of [
      ['memory__write', { path: 'a.md', body: '---\nk: v\n---\nbody' }],
      ['memory__edit', { path: 'dup.md', body: '---\nk: v\n---\nbody' }],
    ] as const) {
      const error = await toolError(c, tool, args);
      expect(error.code).toBe('invalid_argument');
      expect(error.message).not.toMatch(/text\/markdown/);
      expect(error.message).toMatch(/pass the front matter as the frontmatter argument/);
    }
  });

  it('says what type an argument must be in plain words', async () => {
    expect((await toolError(c, 'memory__search', { query: 'x', limit: 2.5 })).message).toBe('limit must be an integer');
    expect((await toolError(c, 'memory__search', { query: 'x', limit: '10' })).message).toBe('limit must be a number');
    expect((await toolError(c, 'memory__list', { depth: 1.5 })).message).toBe('depth must be 1 or 2');
    expect((await toolError(c, 'memory__list', { depth: '2' })).message).toBe('depth must be a number');
    expect((await toolError(c, 'memory__write', { path: 'a.md', body: 'x', frontmatter: [1] })).message).toBe('frontmatter must be an object');
  });

  it.each<[string, unknown]>([
    ['null', null],
    ['a string', 'path=dup.md'],
    ['an array', ['dup.md']],
  ])('answers arguments that are %s with invalid_argument over the wire, not a JSON-RPC error', async (_what, args) => {
    // The SDK's client types arguments as an object; a client that sends anything else is what this guards against.
    const res = (await c.callTool({ name: 'memory__read', arguments: args as Record<string, unknown> })) as CallToolResult;
    expect(res.isError).toBe(true);
    expect(res.structuredContent).toEqual({
      error: {
        code: 'invalid_argument',
        message: expect.stringMatching(
          /^arguments must be an object of named arguments \(path, rev, history, section, lines, frontmatterOnly, includeLinks\), not /,
        ),
      },
    });
  });

  it('leaves the notes untouched', async () => {
    expect(await ok(c, 'memory__read', { path: 'dup.md' })).toMatchObject({ body: 'same same' });
  });

  it('keeps an unknown tool a protocol error (it was never offered)', async () => {
    await expect(c.callTool({ name: 'memory__nope', arguments: {} })).rejects.toThrow(/unknown tool/);
  });
});
