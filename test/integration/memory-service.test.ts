import { DEFAULT_LIMITS } from '../../lambdas/memory/config';
import { parseIfMatch } from '../../lambdas/memory-api/if-match';
import type { MemoryService } from '../../lambdas/memory/service';
import type { Caller, FileListEntry } from '../../lambdas/memory';
import { tickingClock } from '../support/memory-clock';
import { expectMemoryError, newCaller, startMemoryHarness, type MemoryHarness } from '../support/memory-harness';

let h: MemoryHarness;
let svc: MemoryService;

beforeAll(async () => {
  h = await startMemoryHarness();
  svc = h.service({ clock: tickingClock() });
});
afterAll(() => h.close());

async function withMemory(name = 'm'): Promise<Caller> {
  const me = newCaller();
  await svc.createMemory(me, name);
  return me;
}

describe('memories', () => {
  test('create is 201-like the first time and 200-like after; a new memory is empty with rev null', async () => {
    const me = newCaller();
    const first = await svc.createMemory(me, 'notes');
    expect(first).toEqual({ created: true, memory: { name: 'notes', files: 0, folders: 0, sizeBytes: 0, updated: null, empty: true, rev: null } });
    const again = await svc.createMemory(me, 'notes');
    expect(again.created).toBe(false);
    expect(again.memory).toEqual(first.memory);
  });

  test('names: invalid and reserved are BAD_REQUEST', async () => {
    const me = newCaller();
    await expectMemoryError(svc.createMemory(me, 'Bad Name'), 'BAD_REQUEST', 'invalid_name');
    await expectMemoryError(svc.createMemory(me, ''), 'BAD_REQUEST', 'invalid_name');
    await expectMemoryError(svc.createMemory(me, 'x'.repeat(65)), 'BAD_REQUEST', 'invalid_name');
    await expectMemoryError(svc.createMemory(me, 'export'), 'BAD_REQUEST', 'reserved_name');
  });

  test('the per-account ceiling (default 20) is CONFLICT; retired memories do not count', async () => {
    expect(svc.limits.maxMemoriesPerAccount).toBe(DEFAULT_LIMITS.maxMemoriesPerAccount);
    const me = newCaller();
    for (let i = 0; i < DEFAULT_LIMITS.maxMemoriesPerAccount; i++) await svc.createMemory(me, `m${i}`);
    await expectMemoryError(svc.createMemory(me, 'one-too-many'), 'CONFLICT', 'ceiling');
    // An existing name is still 200 at the ceiling.
    expect((await svc.createMemory(me, 'm0')).created).toBe(false);
    await svc.retireMemory(me, 'm0');
    expect((await svc.createMemory(me, 'one-more')).created).toBe(true);
    // Restoring would exceed the ceiling again.
    await expectMemoryError(svc.restoreMemory(me, 'm0'), 'CONFLICT', 'ceiling');
    // Another account is unaffected.
    expect((await svc.createMemory(newCaller(), 'm0')).created).toBe(true);
  });

  test('a retired name cannot be created again: CONFLICT naming the restore procedure', async () => {
    const me = await withMemory('old');
    await svc.retireMemory(me, 'old');
    const err = await expectMemoryError(svc.createMemory(me, 'old'), 'CONFLICT', 'retired_name');
    expect(err.message).toMatch(/restore/);
    // A write that creates its memory on first use (MCP vaults) meets the retired name the same way;
    // a plain write to it stays NOT_FOUND (a retired memory is 404).
    const viaWrite = await expectMemoryError(svc.writeNote(me, 'old', 'a.md', { body: 'x' }, { createMemory: true }), 'CONFLICT', 'retired_name');
    expect(viaWrite.message).toMatch(/restore/);
    await expectMemoryError(svc.writeNote(me, 'old', 'a.md', { body: 'x' }), 'NOT_FOUND', 'memory_not_found');
  });

  test('create with If-Match compares it like every write', async () => {
    const me = await withMemory('c');
    const { rev } = await svc.writeNote(me, 'c', 'a.md', { body: 'x' });
    expect((await svc.createMemory(me, 'c', { expectedRev: rev })).created).toBe(false);
    expect((await svc.createMemory(me, 'c', { expectedRev: parseIfMatch(`"${rev}"`) })).memory.rev).toBe(rev);
    expect((await svc.createMemory(me, 'c', { expectedRev: parseIfMatch('*') })).created).toBe(false);
    await expectMemoryError(svc.createMemory(me, 'c', { expectedRev: 'f'.repeat(40) }), 'CONFLICT', 'stale_rev');
    await expectMemoryError(svc.createMemory(me, 'c', { expectedRev: 'not-a-rev' }), 'BAD_REQUEST', 'invalid_rev');
    await expectMemoryError(svc.createMemory(me, 'nope', { expectedRev: rev }), 'CONFLICT', 'stale_rev');
    await expectMemoryError(svc.getMemory(me, 'nope'), 'NOT_FOUND');
  });

  test('list shows only active memories granted to the token, in name order', async () => {
    const me = newCaller();
    for (const n of ['b', 'a', 'c', 'gone']) await svc.createMemory(me, n);
    await svc.retireMemory(me, 'gone');
    expect((await svc.listMemories(me)).map((m) => m.name)).toEqual(['a', 'b', 'c']);
    const narrow: Caller = { ...me, grants: ['b', 'gone', 'zzz'] };
    expect((await svc.listMemories(narrow)).map((m) => m.name)).toEqual(['b']);
    expect(await svc.listMemories(newCaller())).toEqual([]);
  });

  test('a memory not granted is FORBIDDEN whether it exists or not', async () => {
    const me = await withMemory('mine');
    const narrow: Caller = { ...me, grants: ['other'] };
    for (const name of ['mine', 'missing']) {
      await expectMemoryError(svc.getMemory(narrow, name), 'FORBIDDEN', 'not_granted');
      await expectMemoryError(svc.createMemory(narrow, name), 'FORBIDDEN');
      await expectMemoryError(svc.retireMemory(narrow, name), 'FORBIDDEN');
      await expectMemoryError(svc.readNote(narrow, name, 'a.md'), 'FORBIDDEN');
      await expectMemoryError(svc.writeNote(narrow, name, 'a.md', { body: 'x' }), 'FORBIDDEN');
      await expectMemoryError(svc.editNote(narrow, name, 'a.md', { body: 'x' }), 'FORBIDDEN');
      await expectMemoryError(svc.deleteNote(narrow, name, 'a.md'), 'FORBIDDEN');
      await expectMemoryError(svc.listNotes(narrow, name), 'FORBIDDEN');
      await expectMemoryError(svc.searchNotes(narrow, name, { q: 'x' }), 'FORBIDDEN');
      await expectMemoryError(svc.exportBundle(narrow, name), 'FORBIDDEN');
    }
    // Another account's memory of the same name is simply absent.
    await expectMemoryError(svc.getMemory(newCaller(), 'mine'), 'NOT_FOUND', 'memory_not_found');
  });

  test('stats follow the notes; updated is null when empty', async () => {
    const me = await withMemory('s');
    await svc.writeNote(me, 's', 'a.md', { body: 'hello' });
    const w = await svc.writeNote(me, 's', 'x/y/b.md', { body: 'world!' });
    expect(await svc.getMemory(me, 's')).toEqual({ name: 's', files: 2, folders: 2, sizeBytes: 11, updated: w.updated, empty: false, rev: w.rev });
    await svc.deleteNote(me, 's', 'a.md');
    const d = await svc.deleteNote(me, 's', 'x/y/b.md');
    expect(await svc.getMemory(me, 's')).toEqual({ name: 's', files: 0, folders: 0, sizeBytes: 0, updated: null, empty: true, rev: d.rev });
  });

  test('retire: optional If-Match, then NOT_FOUND everywhere; restore brings back the history', async () => {
    const me = await withMemory('r');
    const { rev } = await svc.writeNote(me, 'r', 'keep.md', { body: 'kept' });
    await expectMemoryError(svc.retireMemory(me, 'r', { expectedRev: 'a'.repeat(40) }), 'CONFLICT', 'stale_rev');
    await expectMemoryError(svc.retireMemory(me, 'r', { expectedRev: 'zz' }), 'BAD_REQUEST', 'invalid_rev');
    expect(await svc.retireMemory(me, 'r', { expectedRev: parseIfMatch(`"${rev}"`) })).toEqual({ name: 'r', deleted: true });
    await expectMemoryError(svc.retireMemory(me, 'r'), 'NOT_FOUND');
    await expectMemoryError(svc.getMemory(me, 'r'), 'NOT_FOUND');
    await expectMemoryError(svc.readNote(me, 'r', 'keep.md'), 'NOT_FOUND', 'memory_not_found');
    await expectMemoryError(svc.writeNote(me, 'r', 'new.md', { body: 'x' }), 'NOT_FOUND', 'memory_not_found');
    await expectMemoryError(svc.writeNote(me, 'r', 'new.md', { body: 'x' }, { createMemory: true }), 'CONFLICT', 'retired_name');
    expect((await svc.listMemories(me)).map((m) => m.name)).toEqual([]);
    const back = await svc.restoreMemory(me, 'r');
    expect(back.rev).toBe(rev);
    expect((await svc.readNote(me, 'r', 'keep.md')).body).toBe('kept');
    // Restoring an active memory is a no-op; a missing one is NOT_FOUND.
    expect((await svc.restoreMemory(me, 'r')).rev).toBe(rev);
    await expectMemoryError(svc.restoreMemory(me, 'never'), 'NOT_FOUND');
  });

  test('retire of an empty memory with If-Match can never match', async () => {
    const me = await withMemory('e');
    await expectMemoryError(svc.retireMemory(me, 'e', { expectedRev: 'a'.repeat(40) }), 'CONFLICT', 'stale_rev');
    expect((await svc.retireMemory(me, 'e', { expectedRev: parseIfMatch('*') })).deleted).toBe(true);
  });
});

describe('writing and reading notes', () => {
  test('JSON write, read as JSON and as the exact stored markdown', async () => {
    const me = await withMemory();
    const w = await svc.writeNote(me, 'm', 'projects/alpha.md', {
      body: '# Alpha\n\nFirst #idea here.\n',
      frontmatter: { tags: ['work'], status: 'draft', n: 3 },
    });
    expect(w).toMatchObject({ path: 'projects/alpha.md', changed: true });
    expect(w.rev).toMatch(/^[0-9a-f]{40}$/);
    expect(w.updated).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.000Z$/);
    const note = await svc.readNote(me, 'm', 'projects/alpha.md');
    expect(note).toEqual({
      path: 'projects/alpha.md',
      title: 'Alpha',
      frontmatter: { tags: ['work'], status: 'draft', n: 3 },
      body: '# Alpha\n\nFirst #idea here.\n',
      tags: ['work', 'idea'],
      sizeBytes: Buffer.byteLength(note.markdown),
      updated: w.updated,
      deleted: false,
      markdown: '---\ntags:\n  - work\nstatus: draft\nn: 3\n---\n# Alpha\n\nFirst #idea here.\n',
      rev: w.rev,
    });
    expect((await svc.getMemory(me, 'm')).rev).toBe(w.rev);
  });

  test('raw markdown: the leading YAML block is the front matter, stored byte for byte', async () => {
    const me = await withMemory();
    const raw = '---\r\n# a comment\r\ntitle: "Kept as written"\r\ntags: [a, b]\r\n---\r\nNo heading, so the title is the file name.\r\n';
    await svc.writeNote(me, 'm', 'raw note.md', { markdown: raw });
    const note = await svc.readNote(me, 'm', 'raw note.md');
    expect(note.markdown).toBe(raw);
    expect(note.frontmatter).toEqual({ title: 'Kept as written', tags: ['a', 'b'] });
    expect(note.body).toBe('No heading, so the title is the file name.\r\n');
    expect(note.title).toBe('raw note');
    expect(note.tags).toEqual(['a', 'b']);
  });

  test('bad bodies are BAD_REQUEST', async () => {
    const me = await withMemory();
    await expectMemoryError(svc.writeNote(me, 'm', 'a.md', { body: '---\ntitle: x\n---\nbody' }), 'BAD_REQUEST', 'invalid_argument');
    await expectMemoryError(svc.writeNote(me, 'm', 'a.md', {} as never), 'BAD_REQUEST', 'invalid_argument');
    await expectMemoryError(svc.writeNote(me, 'm', 'a.md', { body: 42 } as never), 'BAD_REQUEST', 'invalid_argument');
    await expectMemoryError(svc.writeNote(me, 'm', 'a.md', { body: 'x', frontmatter: [] as never }), 'BAD_REQUEST', 'invalid_frontmatter');
    await expectMemoryError(svc.writeNote(me, 'm', 'a.md', { markdown: '---\nbroken: [\n---\n' }), 'BAD_REQUEST', 'invalid_frontmatter');
    await expectMemoryError(svc.writeNote(me, 'm', 'a.md', { markdown: '---\nnever closed\n' }), 'BAD_REQUEST', 'invalid_frontmatter');
    await expectMemoryError(svc.writeNote(me, 'm', 'a.md', { markdown: '---\n- a list\n---\n' }), 'BAD_REQUEST', 'invalid_frontmatter');
    await expectMemoryError(svc.writeNote(me, 'm', '../a.md', { body: 'x' }), 'BAD_REQUEST', 'invalid_path');
    await expectMemoryError(svc.writeNote(me, 'm', 'a.txt', { body: 'x' }), 'BAD_REQUEST', 'invalid_path');
    expect((await svc.getMemory(me, 'm')).rev).toBeNull();
  });

  test('the note size cap (default 1 MiB) is BAD_REQUEST', async () => {
    const me = await withMemory();
    const max = DEFAULT_LIMITS.maxNoteBytes;
    expect(max).toBe(1024 * 1024);
    await expectMemoryError(svc.writeNote(me, 'm', 'big.md', { body: 'x'.repeat(max + 1) }), 'BAD_REQUEST', 'too_large');
    // Multi-byte characters count as bytes.
    await expectMemoryError(svc.writeNote(me, 'm', 'big.md', { body: 'é'.repeat(max / 2 + 1) }), 'BAD_REQUEST', 'too_large');
    await svc.writeNote(me, 'm', 'big.md', { body: 'x'.repeat(max) });
    expect((await svc.readNote(me, 'm', 'big.md')).sizeBytes).toBe(max);
  });

  test('a credential is refused, naming the kind and never echoing it', async () => {
    const me = await withMemory();
    const key = ['AKIA', 'Q3EGRKQPXYZ7ABCD'].join('');
    const err = await expectMemoryError(svc.writeNote(me, 'm', 'a.md', { body: `keys\nmy key is ${key}` }), 'BAD_REQUEST', 'refused_content');
    expect(err.message).toContain('AWS access key ID');
    expect(err.message).toContain('line 2');
    expect(err.message).not.toContain(key);
    expect((err as unknown as { extra: { credentialKind: string } }).extra.credentialKind).toBe('aws-access-key-id');
    // In front matter too.
    await expectMemoryError(svc.writeNote(me, 'm', 'a.md', { body: 'x', frontmatter: { password: 'hunter22' } }), 'BAD_REQUEST', 'refused_content');
    await expectMemoryError(svc.writeNote(me, 'm', 'a.md', { markdown: '---\napi_key: "abc123def456"\n---\n' }), 'BAD_REQUEST', 'refused_content');
  });

  test('a write that changes nothing makes no commit and returns the current rev', async () => {
    const me = await withMemory();
    const w1 = await svc.writeNote(me, 'm', 'a.md', { body: 'same', frontmatter: { k: 1 } });
    await svc.writeNote(me, 'm', 'b.md', { body: 'other' });
    const head = (await svc.getMemory(me, 'm')).rev;
    const again = await svc.writeNote(me, 'm', 'a.md', { body: 'same', frontmatter: { k: 1 } });
    expect(again).toEqual({ path: 'a.md', rev: head, updated: w1.updated, changed: false });
    expect((await svc.getMemory(me, 'm')).rev).toBe(head);
    const edit = await svc.editNote(me, 'm', 'a.md', { frontmatter: { k: 1 } });
    expect(edit.changed).toBe(false);
    expect(edit.rev).toBe(head);
  });

  test('If-Match on note writes: stale is CONFLICT, current passes, the memory must exist', async () => {
    const me = await withMemory();
    const w = await svc.writeNote(me, 'm', 'a.md', { body: 'one' });
    await expectMemoryError(svc.writeNote(me, 'm', 'a.md', { body: 'two' }, { expectedRev: 'b'.repeat(40) }), 'CONFLICT', 'stale_rev');
    const w2 = await svc.writeNote(me, 'm', 'a.md', { body: 'two' }, { expectedRev: w.rev });
    await expectMemoryError(svc.editNote(me, 'm', 'a.md', { body: 'three' }, { expectedRev: w.rev }), 'CONFLICT', 'stale_rev');
    await expectMemoryError(svc.deleteNote(me, 'm', 'a.md', { expectedRev: w.rev }), 'CONFLICT', 'stale_rev');
    await svc.editNote(me, 'm', 'a.md', { body: 'three' }, { expectedRev: parseIfMatch(`"${w2.rev}"`) });
    await expectMemoryError(svc.writeNote(me, 'nope', 'a.md', { body: 'x' }), 'NOT_FOUND', 'memory_not_found');
    // The MCP default memory: created on first write.
    const created = await svc.writeNote(me, 'default', 'a.md', { body: 'x' }, { createMemory: true });
    expect((await svc.getMemory(me, 'default')).rev).toBe(created.rev);
  });

  test('reading a missing note is NOT_FOUND; paths are case-sensitive, and a twin by case is refused', async () => {
    const me = await withMemory();
    await expectMemoryError(svc.readNote(me, 'm', 'a.md'), 'NOT_FOUND', 'note_not_found');
    await svc.writeNote(me, 'm', 'Case.md', { body: 'upper' });
    // A clone on macOS or Windows could keep only one of Case.md and case.md.
    const twin = await expectMemoryError(svc.writeNote(me, 'm', 'case.md', { body: 'lower' }), 'CONFLICT', 'path_collision');
    expect(twin.message).toMatch(/collides with the note "Case\.md"/);
    expect((await svc.readNote(me, 'm', 'Case.md')).body).toBe('upper');
    await expectMemoryError(svc.readNote(me, 'm', 'case.md'), 'NOT_FOUND');
    await expectMemoryError(svc.readNote(me, 'm', 'CASE.md'), 'NOT_FOUND');
    await expectMemoryError(svc.readNote(me, 'm', '/Case.md'), 'BAD_REQUEST', 'invalid_path');
  });
});

describe('editing notes', () => {
  async function note(body: string, frontmatter?: Record<string, unknown>): Promise<Caller> {
    const me = await withMemory();
    await svc.writeNote(me, 'm', 'n.md', { body, ...(frontmatter ? { frontmatter: frontmatter as never } : {}) });
    return me;
  }
  const read = async (me: Caller) => svc.readNote(me, 'm', 'n.md');

  test('replace (the default) replaces the body and keeps the front matter', async () => {
    const me = await note('old', { a: 1 });
    await svc.editNote(me, 'm', 'n.md', { body: 'new' });
    expect(await read(me)).toMatchObject({ body: 'new', frontmatter: { a: 1 } });
  });

  test('front matter is shallow-merged: keys added or replaced, nested values wholesale, none removed', async () => {
    const me = await note('body', { a: 1, nested: { x: 1, y: 2 }, keep: true });
    await svc.editNote(me, 'm', 'n.md', { frontmatter: { a: 2, nested: { z: 3 }, added: 'yes', keep: null } });
    expect((await read(me)).frontmatter).toEqual({ a: 2, nested: { z: 3 }, keep: null, added: 'yes' });
    expect((await read(me)).body).toBe('body');
  });

  test('a front matter edit keeps the body; a body edit keeps raw front matter text verbatim', async () => {
    const me = await withMemory();
    await svc.writeNote(me, 'm', 'n.md', { markdown: '---\n# keep this comment\nk: v\n---\nbody' });
    await svc.editNote(me, 'm', 'n.md', { mode: 'append', body: 'more' });
    expect((await read(me)).markdown).toBe('---\n# keep this comment\nk: v\n---\nbody\nmore');
  });

  test('append joins with a newline', async () => {
    const me = await note('line one');
    await svc.editNote(me, 'm', 'n.md', { mode: 'append', body: 'line two' });
    expect((await read(me)).body).toBe('line one\nline two');
    await svc.editNote(me, 'm', 'n.md', { mode: 'append', body: '\n' });
    await svc.editNote(me, 'm', 'n.md', { mode: 'append', body: 'line three' });
    expect((await read(me)).body).toBe('line one\nline two\n\nline three');
  });

  test('str_replace works on the body only and exactly once', async () => {
    const me = await note('alpha beta gamma beta', { word: 'alpha' });
    await svc.editNote(me, 'm', 'n.md', { mode: 'str_replace', old_str: 'alpha', new_str: 'ALPHA' });
    expect(await read(me)).toMatchObject({ body: 'ALPHA beta gamma beta', frontmatter: { word: 'alpha' } });
    await expectMemoryError(svc.editNote(me, 'm', 'n.md', { mode: 'str_replace', old_str: 'beta', new_str: 'x' }), 'BAD_REQUEST', 'no_unique_match');
    await expectMemoryError(svc.editNote(me, 'm', 'n.md', { mode: 'str_replace', old_str: 'word: alpha', new_str: 'x' }), 'BAD_REQUEST', 'no_unique_match');
    await expectMemoryError(svc.editNote(me, 'm', 'n.md', { mode: 'str_replace', old_str: 'absent' }), 'BAD_REQUEST', 'no_unique_match');
    // Omitting new_str deletes old_str; whitespace is matched verbatim.
    await svc.editNote(me, 'm', 'n.md', { mode: 'str_replace', old_str: ' gamma' });
    expect((await read(me)).body).toBe('ALPHA beta beta');
  });

  test('overlapping occurrences are not unique', async () => {
    const me = await note('aaa');
    await expectMemoryError(svc.editNote(me, 'm', 'n.md', { mode: 'str_replace', old_str: 'aa', new_str: 'b' }), 'BAD_REQUEST', 'no_unique_match');
  });

  test('arguments foreign to the mode, bad modes and empty edits are BAD_REQUEST', async () => {
    const me = await note('x');
    const bad: Array<Parameters<MemoryService['editNote']>[3]> = [
      { mode: 'bogus', body: 'x' },
      { mode: 'replace', body: 'x', old_str: 'x' },
      { mode: 'replace', new_str: 'x' },
      { mode: 'append', body: 'x', new_str: 'y' },
      { mode: 'str_replace', old_str: 'x', body: 'y' },
      { mode: 'str_replace', new_str: 'y' },
      { mode: 'str_replace', old_str: '' },
      { mode: 'replace' },
      { mode: 'append' },
      { body: '---\na: 1\n---\n' },
      { body: 5 as never },
      { frontmatter: 'x' as never },
    ];
    for (const edit of bad) await expectMemoryError(svc.editNote(me, 'm', 'n.md', edit), 'BAD_REQUEST');
  });

  test('an edit of a missing note is NOT_FOUND; an edit adding a credential is refused', async () => {
    const me = await note('x');
    await expectMemoryError(svc.editNote(me, 'm', 'missing.md', { body: 'x' }), 'NOT_FOUND', 'note_not_found');
    await expectMemoryError(svc.editNote(me, 'm', 'n.md', { mode: 'append', body: `-----BEGIN ${'EC'} PRIVATE KEY-----` }), 'BAD_REQUEST', 'refused_content');
  });
});

describe('deleting and restoring notes', () => {
  test('soft delete: gone from reads and listings, its last content kept in history', async () => {
    const me = await withMemory();
    await svc.writeNote(me, 'm', 'a/x.md', { body: '# X\nlast words' });
    await svc.writeNote(me, 'm', 'b.md', { body: 'stays' });
    const d = await svc.deleteNote(me, 'm', 'a/x.md');
    expect(d).toMatchObject({ path: 'a/x.md', deleted: true });
    expect((await svc.getMemory(me, 'm')).rev).toBe(d.rev);
    await expectMemoryError(svc.readNote(me, 'm', 'a/x.md'), 'NOT_FOUND', 'note_not_found');
    await expectMemoryError(svc.deleteNote(me, 'm', 'a/x.md'), 'NOT_FOUND', 'note_not_found');
    await expectMemoryError(svc.deleteNote(me, 'm', 'never.md'), 'NOT_FOUND', 'note_not_found');
    expect((await svc.listNotes(me, 'm', { depth: 'all' })).entries.map((e) => e.path)).toEqual(['b.md']);
    // The MCP read of a soft-deleted note: its last content, flagged.
    expect(await svc.readNote(me, 'm', 'a/x.md', { includeDeleted: true })).toMatchObject({ body: '# X\nlast words', deleted: true, title: 'X' });
    await expectMemoryError(svc.readNote(me, 'm', 'never.md', { includeDeleted: true }), 'NOT_FOUND');
  });

  test('restoreNote brings the last content back as a new commit', async () => {
    const me = await withMemory();
    await svc.writeNote(me, 'm', 'n.md', { body: 'v1' });
    await svc.deleteNote(me, 'm', 'n.md');
    const r = await svc.restoreNote(me, 'm', 'n.md');
    expect(r.changed).toBe(true);
    expect((await svc.readNote(me, 'm', 'n.md')).body).toBe('v1');
    await expectMemoryError(svc.restoreNote(me, 'm', 'n.md'), 'CONFLICT', 'note_exists');
    await expectMemoryError(svc.restoreNote(me, 'm', 'other.md'), 'NOT_FOUND');
    // Writing a deleted path again clears its tombstone.
    await svc.deleteNote(me, 'm', 'n.md');
    await svc.writeNote(me, 'm', 'n.md', { body: 'v2' });
    await svc.deleteNote(me, 'm', 'n.md');
    await svc.restoreNote(me, 'm', 'n.md');
    expect((await svc.readNote(me, 'm', 'n.md')).body).toBe('v2');
  });
});

describe('listing notes', () => {
  let me: Caller;
  beforeAll(async () => {
    me = await withMemory();
    // Written in this order, one second apart (the ticking clock).
    const notes: Array<[string, string, string[]]> = [
      ['root.md', '# Root', ['a']],
      ['p/one.md', '# One', ['a', 'b']],
      ['p/two.md', '# Two', ['b']],
      ['p/q/three.md', '# Three', ['a', 'b']],
      ['p/q/r/four.md', '# Four', []],
      ['z/five.md', '# Five', ['a']],
    ];
    for (const [path, body, tags] of notes) await svc.writeNote(me, 'm', path, { body, frontmatter: tags.length ? { tags } : {} });
  });

  const tag = (e: { type: string; path: string }): string => `${e.type === 'folder' ? 'd' : 'f'}:${e.path}`;
  const paths = async (q: Parameters<MemoryService['listNotes']>[2]) => (await svc.listNotes(me, 'm', q)).entries.map(tag);

  test('defaults: root, depth 2, all types, name order, full file entries', async () => {
    const l = await svc.listNotes(me, 'm');
    expect(l.folder).toBe('');
    expect(l.entries.map(tag)).toEqual(['d:p', 'f:p/one.md', 'd:p/q', 'f:p/two.md', 'f:root.md', 'd:z', 'f:z/five.md']);
    expect(l.files).toBe(4);
    expect(l.truncated).toBe(false);
    expect(l.nextCursor).toBeUndefined();
    const one = l.entries.find((e) => e.path === 'p/one.md') as FileListEntry;
    expect(one).toEqual({
      type: 'file',
      path: 'p/one.md',
      title: 'One',
      tags: ['a', 'b'],
      excerpt: '',
      sizeBytes: expect.any(Number),
      updated: expect.any(String),
    });
    expect(l.entries.find((e) => e.path === 'p')).toEqual({ type: 'folder', path: 'p', files: 4 });
  });

  test('folder, depth 1..n and all', async () => {
    expect(await paths({ folder: 'p', depth: 1 })).toEqual(['f:p/one.md', 'd:p/q', 'f:p/two.md']);
    expect(await paths({ folder: 'p/', depth: 'all', type: 'file' })).toEqual(['f:p/one.md', 'f:p/q/r/four.md', 'f:p/q/three.md', 'f:p/two.md']);
    expect((await svc.listNotes(me, 'm', { folder: 'p', depth: 1 })).files).toBe(2);
    expect((await svc.listNotes(me, 'm', { depth: 'all' })).files).toBe(6);
    expect(await paths({ folder: 'missing' })).toEqual([]);
  });

  test('type, fields=path and tags (AND, case-sensitive)', async () => {
    expect(await paths({ type: 'folder', depth: 'all' })).toEqual(['d:p', 'd:p/q', 'd:p/q/r', 'd:z']);
    const trimmed = await svc.listNotes(me, 'm', { fields: 'path', type: 'file', depth: 1 });
    expect(trimmed.entries).toEqual([{ type: 'file', path: 'root.md' }]);
    expect(await paths({ tags: ['a', 'b'], depth: 'all', type: 'file' })).toEqual(['f:p/one.md', 'f:p/q/three.md']);
    expect(await paths({ tags: ['A'], depth: 'all' })).toEqual([]);
    const folders = await svc.listNotes(me, 'm', { tags: ['b'], type: 'folder', depth: 'all' });
    expect(folders.entries).toEqual([
      { type: 'folder', path: 'p', files: 3 },
      { type: 'folder', path: 'p/q', files: 1 },
    ]);
  });

  test('sort=updated: newest first', async () => {
    expect(await paths({ sort: 'updated', type: 'file', depth: 'all' })).toEqual([
      'f:z/five.md',
      'f:p/q/r/four.md',
      'f:p/q/three.md',
      'f:p/two.md',
      'f:p/one.md',
      'f:root.md',
    ]);
  });

  test('limit and cursor page through everything once; the cursor pins the snapshot', async () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await svc.listNotes(me, 'm', { depth: 'all', limit: 3, cursor });
      seen.push(...page.entries.map((e) => e.path));
      expect(page.truncated).toBe(page.nextCursor !== undefined);
      expect(page.files).toBe(6);
      if (page.nextCursor) expect(page.nextCursor.length).toBeLessThanOrEqual(200);
      cursor = page.nextCursor;
      if (pages++ === 0) await svc.writeNote(me, 'm', 'zz-late.md', { body: 'written after page one' });
    } while (cursor);
    expect(seen).toEqual((await svc.listNotes(me, 'm', { depth: 'all', limit: 500 })).entries.map((e) => e.path).filter((p) => p !== 'zz-late.md'));
    expect(pages).toBe(4);
    await svc.deleteNote(me, 'm', 'zz-late.md');
  });

  test('bad parameters and cursors are BAD_REQUEST', async () => {
    const page = await svc.listNotes(me, 'm', { depth: 'all', limit: 2 });
    const bad: Array<Parameters<MemoryService['listNotes']>[2]> = [
      { limit: 0 },
      { limit: 501 },
      { limit: 1.5 },
      { depth: 0 },
      { depth: -1 },
      { depth: 'deep' as never },
      { type: 'dir' as never },
      { fields: 'title' as never },
      { sort: 'size' as never },
      { tags: ['#a'] },
      { tags: [''] },
      { tags: Array.from({ length: 51 }, (_, i) => `t${i}`) },
      { folder: '../x' },
      { cursor: 'garbage' },
      { cursor: `${page.nextCursor}x` },
      // A cursor of another query is foreign.
      { depth: 1, limit: 2, cursor: page.nextCursor },
    ];
    for (const q of bad) await expectMemoryError(svc.listNotes(me, 'm', q), 'BAD_REQUEST');
    expect((await svc.listNotes(me, 'm', { limit: 500 })).entries.length).toBeGreaterThan(0);
    expect((await svc.listNotes(me, 'm', { tags: Array.from({ length: 50 }, (_, i) => `t${i}`) })).entries).toEqual([]);
  });

  test('an empty memory lists nothing', async () => {
    const other = await withMemory('empty');
    expect(await svc.listNotes(other, 'empty')).toEqual({ folder: '', entries: [], files: 0, truncated: false, rev: null });
  });
});

describe('search', () => {
  let me: Caller;
  beforeAll(async () => {
    me = await withMemory();
    await svc.writeNote(me, 'm', 'fox.md', { body: '# The Quick Fox\nThe quick brown fox. QUICK quick!', frontmatter: { tags: ['quick'] } });
    await svc.writeNote(me, 'm', 'deep/dog.md', { body: '# Dog\nA lazy dog, not quick at all.' });
    await svc.writeNote(me, 'm', 'deep/er/cat.md', { body: '# Cat\nquick cat', frontmatter: { tags: ['pet'] } });
    await svc.writeNote(me, 'm', 'deep/er/cow.md', { body: '# Cow\nquick cow', frontmatter: { tags: ['pet', 'farm'] } });
    await svc.writeNote(me, 'm', 'regex.md', { body: 'literal a.c and (x) here' });
  });

  test('case-insensitive literal substring; score counts title, body and tags; ties newest first', async () => {
    const page = await svc.searchNotes(me, 'm', { q: 'Quick' });
    // fox.md: four in the body (the heading that is its title among them) and its front-matter tag.
    expect(page.results.map((r) => [r.path, r.score])).toEqual([
      ['fox.md', 5],
      ['deep/er/cow.md', 1],
      ['deep/er/cat.md', 1],
      ['deep/dog.md', 1],
    ]);
    expect(page.nextCursor).toBeUndefined();
    const fox = page.results[0];
    // The first match is in the title heading: its section is that heading's.
    expect(fox).toEqual({
      path: 'fox.md',
      title: 'The Quick Fox',
      snippet: expect.stringContaining('Quick Fox'),
      score: 5,
      updated: expect.any(String),
      section: 'The Quick Fox',
    });
  });

  test('spaces around the query are part of the literal', async () => {
    expect((await svc.searchNotes(me, 'm', { q: ' brown' })).results.map((r) => r.path)).toEqual(['fox.md']);
    expect((await svc.searchNotes(me, 'm', { q: 'uick' })).results.length).toBeGreaterThan(0);
    expect((await svc.searchNotes(me, 'm', { q: ' uick' })).results).toEqual([]);
    await expectMemoryError(svc.searchNotes(me, 'm', { q: '   ' }), 'BAD_REQUEST');
  });

  test('the query is one literal, never split into words nor a pattern', async () => {
    expect((await svc.searchNotes(me, 'm', { q: 'quick fox' })).results.map((r) => r.path)).toEqual(['fox.md']);
    expect((await svc.searchNotes(me, 'm', { q: 'brown quick' })).results).toEqual([]);
    expect((await svc.searchNotes(me, 'm', { q: 'a.c' })).results.map((r) => r.path)).toEqual(['regex.md']);
    expect((await svc.searchNotes(me, 'm', { q: '(x)' })).results.map((r) => r.path)).toEqual(['regex.md']);
    expect((await svc.searchNotes(me, 'm', { q: 'a?c' })).results).toEqual([]);
  });

  test('snippets are a window around the first match, never the full body', async () => {
    const me2 = await withMemory('long');
    const body = `${'lorem ipsum '.repeat(50)}NEEDLE${' dolor sit'.repeat(50)}`;
    await svc.writeNote(me2, 'long', 'l.md', { body });
    const [hit] = (await svc.searchNotes(me2, 'long', { q: 'needle' })).results;
    expect(hit.snippet).toContain('NEEDLE');
    expect(hit.snippet.startsWith('…')).toBe(true);
    expect(hit.snippet.endsWith('…')).toBe(true);
    expect(hit.snippet.length).toBeLessThan(200);
  });

  test('folder includes subfolders; tags are AND-matched', async () => {
    expect((await svc.searchNotes(me, 'm', { q: 'quick', folder: 'deep' })).results.map((r) => r.path).sort()).toEqual([
      'deep/dog.md',
      'deep/er/cat.md',
      'deep/er/cow.md',
    ]);
    expect((await svc.searchNotes(me, 'm', { q: 'quick', folder: 'deep/er', tags: ['pet', 'farm'] })).results.map((r) => r.path)).toEqual(['deep/er/cow.md']);
  });

  test('limit and cursor', async () => {
    const first = await svc.searchNotes(me, 'm', { q: 'quick', limit: 3 });
    expect(first.results).toHaveLength(3);
    expect(first.nextCursor).toBeDefined();
    const second = await svc.searchNotes(me, 'm', { q: 'quick', limit: 3, cursor: first.nextCursor });
    expect(second.results.map((r) => r.path)).toEqual(['deep/dog.md']);
    expect(second.nextCursor).toBeUndefined();
    await expectMemoryError(svc.searchNotes(me, 'm', { q: 'other', cursor: first.nextCursor }), 'BAD_REQUEST', 'invalid_cursor');
  });

  test('bad queries are BAD_REQUEST', async () => {
    for (const q of [
      { q: '' },
      { q: '   ' },
      { q: undefined as never },
      { q: 'x'.repeat(257) },
      { q: 'x', limit: 0 },
      { q: 'x', limit: 51 },
      { q: 'x', tags: ['#a'] },
      { q: 'x', folder: '/abs' },
      { q: 'x', cursor: 'nope' },
    ]) {
      await expectMemoryError(svc.searchNotes(me, 'm', q), 'BAD_REQUEST');
    }
    expect((await svc.searchNotes(me, 'm', { q: 'x', limit: 50 })).results).toBeDefined();
  });
});

describe('import', () => {
  test('many notes in one commit; unchanged notes are skipped; each note is checked', async () => {
    const me = await withMemory();
    const before = await svc.writeNote(me, 'm', 'a.md', { body: 'A' });
    const out = await svc.importNotes(me, 'm', [
      { path: 'a.md', markdown: 'A' },
      { path: 'x/b.md', markdown: '# B' },
      { path: 'x/y/c.md', markdown: '---\ntags: [t]\n---\nC' },
    ]);
    expect(out).toMatchObject({ changed: true, count: 2 });
    expect((await svc.getMemory(me, 'm')).files).toBe(3);
    expect((await svc.readNote(me, 'm', 'a.md')).updated).toBe(before.updated);
    expect((await svc.importNotes(me, 'm', [{ path: 'a.md', markdown: 'A' }])).changed).toBe(false);
    await expectMemoryError(
      svc.importNotes(me, 'm', [
        { path: 'ok.md', markdown: 'x' },
        { path: 'bad.md', markdown: 'password=hunter22' },
      ]),
      'BAD_REQUEST',
      'refused_content',
    );
    await expectMemoryError(svc.importNotes(me, 'm', []), 'BAD_REQUEST');
    expect((await svc.getMemory(me, 'm')).files).toBe(3);
  });
});
