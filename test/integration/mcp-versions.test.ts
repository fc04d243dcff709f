import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ok, startMcpHarness, toolError, type McpHarness } from './mcp-harness';

/**
 * The additive MCP arguments of versions, through the SDK's client over HTTP: `rev` and `history`
 * on memory__read, `expectedRev` on the write tools (stale: `conflict`, as If-Match on /v1), `rev`
 * in write results, `changedSince` on memory__list. An agent sees, reads and restores any earlier
 * version through its tools alone.
 */
let h: McpHarness;
let seq = 0;

beforeAll(async () => {
  h = await startMcpHarness();
}, 180000);
afterAll(() => h?.close());

async function session(): Promise<{ c: Client; sub: string }> {
  const sub = `mcpv-${process.pid}-${++seq}`;
  return { c: await h.connect(h.token({ sub })), sub };
}

type Write = { path: string; updated: string; rev: string };
type Read = {
  body: string;
  frontmatter: Record<string, unknown>;
  rev: string;
  history?: Array<{ rev: string; change: string; message: string; from?: string }>;
};

it('sees the versions of a note, reads any of them, and restores one by writing it back', async () => {
  const { c } = await session();
  const v1 = await ok<Write>(c, 'memory__write', { path: 'plan.md', body: 'first plan', frontmatter: { status: 'draft' } });
  const v2 = await ok<Write>(c, 'memory__edit', { path: 'plan.md', mode: 'append', body: 'more' });
  const v3 = await ok<Write>(c, 'memory__write', { path: 'plan.md', body: 'a bad rewrite', frontmatter: { status: 'final' } });
  const now = await ok<Read>(c, 'memory__read', { path: 'plan.md', history: 10 });
  expect(now.rev).toBe(v3.rev);
  expect(now.history?.map((v) => v.rev)).toEqual([v3.rev, v2.rev, v1.rev]);
  expect(now.history?.map((v) => v.change)).toEqual(['modified', 'modified', 'added']);
  const old = await ok<Read>(c, 'memory__read', { path: 'plan.md', rev: v2.rev });
  expect(old).toMatchObject({ body: 'first plan\nmore', frontmatter: { status: 'draft' }, rev: v2.rev });
  const restored = await ok<Write>(c, 'memory__write', { path: 'plan.md', body: old.body, frontmatter: old.frontmatter, expectedRev: v3.rev });
  expect(restored.rev).not.toBe(v3.rev);
  expect(await ok<Read>(c, 'memory__read', { path: 'plan.md' })).toMatchObject({ body: 'first plan\nmore', frontmatter: { status: 'draft' } });
});

it('follows a note through a move in its history, with the path it had', async () => {
  const { c, sub } = await session();
  await ok(c, 'memory__write', { path: '@work/inbox/a.md', body: 'idea, written long enough to stay itself' });
  const moved = await h.stack.memory.service.moveNote({ account: sub }, 'work', { from: 'inbox/a.md', to: 'done/a.md' });
  const read = await ok<Read>(c, 'memory__read', { path: '@work/done/a.md', history: 5 });
  expect(read.history?.[0]).toMatchObject({ rev: moved.rev, change: 'renamed', from: '@work/inbox/a.md', message: 'Move inbox/a.md to done/a.md' });
  expect(read.history).toHaveLength(2);
});

it('guards writes, edits and deletes with expectedRev: a stale rev is conflict and writes nothing', async () => {
  const { c } = await session();
  const a = await ok<Write>(c, 'memory__write', { path: 'x.md', body: 'one' });
  const b = await ok<Write>(c, 'memory__write', { path: 'x.md', body: 'two', expectedRev: a.rev });
  for (const [tool, args] of [
    ['memory__write', { path: 'x.md', body: 'three' }],
    ['memory__edit', { path: 'x.md', mode: 'append', body: 'three' }],
    ['memory__delete', { path: 'x.md' }],
  ] as const) {
    const err = await toolError(c, tool, { ...args, expectedRev: a.rev });
    expect(err.code).toBe('conflict');
    expect(err.message).toMatch(new RegExp(b.rev));
  }
  expect(await ok<Read>(c, 'memory__read', { path: 'x.md' })).toMatchObject({ body: 'two', rev: b.rev });
  const del = await ok<{ deleted: boolean; rev: string }>(c, 'memory__delete', { path: 'x.md', expectedRev: b.rev.toUpperCase() });
  expect(del.rev).toMatch(/^[0-9a-f]{40}$/);
  // On a vault that does not exist yet, no expected rev can hold: nothing is created.
  expect((await toolError(c, 'memory__write', { path: '@fresh/a.md', body: 'x', expectedRev: a.rev })).code).toBe('conflict');
});

it('lists what changed since a rev, flat, renames and deletions included; the result rev is the next changedSince', async () => {
  const { c, sub } = await session();
  await ok(c, 'memory__write', { path: 'keep.md', body: 'keep' });
  await ok(c, 'memory__write', { path: 'old/name.md', body: 'to be moved, long enough text' });
  const base = await ok<Write>(c, 'memory__write', { path: 'doomed.md', body: 'doomed' });
  await ok(c, 'memory__write', { path: 'new/one.md', body: '# One\n#fresh' });
  await ok(c, 'memory__edit', { path: 'keep.md', mode: 'append', body: 'more' });
  await ok(c, 'memory__delete', { path: 'doomed.md' });
  await h.stack.memory.service.moveNote({ account: sub }, 'default', { from: 'old/name.md', to: 'renamed/name.md' });
  const list = await ok<{ entries: Array<Record<string, unknown>>; rev: string; files: number }>(c, 'memory__list', { changedSince: base.rev });
  expect(list.entries).toEqual([
    { type: 'file', path: 'doomed.md', title: 'doomed', updated: expect.any(String), change: 'deleted' },
    { type: 'file', path: 'keep.md', title: 'keep', updated: expect.any(String), change: 'modified' },
    { type: 'file', path: 'new/one.md', title: 'One', updated: expect.any(String), change: 'added' },
    { type: 'file', path: 'renamed/name.md', title: 'name', updated: expect.any(String), change: 'renamed', from: 'old/name.md' },
  ]);
  expect(list.files).toBe(4);
  expect((await ok<{ entries: unknown[] }>(c, 'memory__list', { changedSince: list.rev })).entries).toEqual([]);
  expect((await ok<{ entries: Array<{ path: string }> }>(c, 'memory__list', { changedSince: base.rev, folder: 'new' })).entries.map((e) => e.path)).toEqual([
    'new/one.md',
  ]);
  expect((await ok<{ entries: Array<{ path: string }> }>(c, 'memory__list', { changedSince: base.rev, tags: ['fresh'] })).entries.map((e) => e.path)).toEqual([
    'new/one.md',
  ]);
});

it('answers bad revs as tool errors: malformed is invalid_argument, unknown or of another memory not_found', async () => {
  const { c } = await session();
  const a = await ok<Write>(c, 'memory__write', { path: 'a.md', body: 'a' });
  const other = await ok<Write>(c, 'memory__write', { path: '@other/b.md', body: 'b' });
  for (const args of [
    { path: 'a.md', rev: 'HEAD' },
    { path: 'a.md', rev: a.rev.slice(0, 10) },
  ]) {
    expect((await toolError(c, 'memory__read', args)).code).toBe('invalid_argument');
  }
  expect((await toolError(c, 'memory__read', { path: 'a.md', rev: '0'.repeat(40) })).code).toBe('not_found');
  expect((await toolError(c, 'memory__read', { path: 'a.md', rev: other.rev })).code).toBe('not_found');
  expect((await toolError(c, 'memory__read', { path: 'a.md', history: 0 })).code).toBe('invalid_argument');
  expect((await toolError(c, 'memory__read', { path: 'a.md', history: 51 })).code).toBe('invalid_argument');
  expect((await toolError(c, 'memory__write', { path: 'a.md', body: 'x', expectedRev: 'nope' })).code).toBe('invalid_argument');
  expect((await toolError(c, 'memory__list', { changedSince: other.rev })).code).toBe('not_found');
  expect((await toolError(c, 'memory__list', { changedSince: 'x' })).code).toBe('invalid_argument');
  // A note that did not exist at that rev.
  expect((await toolError(c, 'memory__read', { path: 'later.md', rev: a.rev })).code).toBe('not_found');
});
