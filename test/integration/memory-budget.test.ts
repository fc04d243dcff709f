import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { HandlerExecutionContext, InitializeHandler, InitializeHandlerArguments, MiddlewareStack } from '@smithy/types';
import type { MemoryService } from '../../lambdas/memory/service';
import type { Caller } from '../../lambdas/memory/types';
import { newCaller, startMemoryHarness, type MemoryHarness } from '../support/memory-harness';
import { GIT_COMMITTER_ENV } from '../support/memory-git';

/**
 * The storage budgets of DESIGN.md, held by counting SDK calls (never by timing), on a memory of
 * 1,000 notes:
 *   a note write = one rev read + one parallel wave of object PUTs + one conditional write;
 *   a read ≤ one rev read + two object GETs when cold;
 *   list and search fetch no object twice across requests;
 *   a cold search reads the index and the segments of packed texts it names, never a note.
 */
let h: MemoryHarness;
let me: Caller;
const NOTES = 1000;

/** Start/end events of every S3 call and the keys of every GetObject, by SDK middleware. */
const events: string[] = [];
const fetched: string[] = [];

beforeAll(async () => {
  h = await startMemoryHarness();
  const stack = h.s3.middlewareStack as MiddlewareStack<object, object>;
  stack.add(
    (next: InitializeHandler<object, object>, context: HandlerExecutionContext) => async (args: InitializeHandlerArguments<object>) => {
      const command = (context.commandName ?? '').replace(/Command$/, '');
      if (command === 'GetObject') fetched.push(String((args.input as { Key?: string }).Key));
      events.push(`start ${command}`);
      try {
        return await next(args);
      } finally {
        events.push(`end ${command}`);
      }
    },
    { step: 'initialize', name: 'budgetEvents' },
  );
  me = newCaller();
  const seeder = h.service();
  await seeder.createMemory(me, 'big');
  for (let batch = 0; batch < 10; batch++) {
    const notes = Array.from({ length: NOTES / 10 }, (_, j) => {
      const i = batch * (NOTES / 10) + j;
      const tags = i % 3 === 0 ? '---\ntags: [triple]\n---\n' : '';
      return {
        path: `area-${i % 10}/topic-${i % 7}/note-${i}.md`,
        markdown: `${tags}# Note ${i}\n\nBody of note ${i} about ${i % 2 ? 'apples' : 'pears'}. #t${i % 5}\n`,
      };
    });
    await seeder.importNotes(me, 'big', notes);
  }
  expect((await seeder.getMemory(me, 'big')).files).toBe(NOTES);
}, 240_000);
afterAll(() => h.close());

async function measure<T>(fn: () => Promise<T>): Promise<{ result: T; calls: Record<string, number>; events: string[]; keys: string[] }> {
  events.length = 0;
  fetched.length = 0;
  const { result, calls } = await h.counter.measure(fn);
  return { result, calls, events: [...events], keys: [...fetched] };
}

/** True when every PutObject started before the first one finished: one parallel wave. */
function oneWave(ev: string[]): boolean {
  const starts = ev.map((e, i) => (e === 'start PutObject' ? i : -1)).filter((i) => i >= 0);
  const firstEnd = ev.indexOf('end PutObject');
  return starts.length > 0 && starts.every((i) => i < firstEnd);
}

describe('write', () => {
  test('warm: one rev read, one wave of PUTs (blob, changed trees, commit, index, lineage), one conditional write', async () => {
    const svc = h.service();
    await svc.writeNote(me, 'big', 'area-1/topic-1/warmup.md', { body: 'warm the cache' });
    const { calls, events: ev } = await measure(() => svc.writeNote(me, 'big', 'area-1/topic-1/new.md', { body: 'hello' }));
    // blob + 3 trees (area-1/topic-1, area-1, root) + commit + index + lineage
    expect(calls).toEqual({ 'dynamodb.GetItem': 1, 's3.PutObject': 7, 'dynamodb.UpdateItem': 1 });
    expect(oneWave(ev)).toBe(true);
  });

  test("cold: the same plus the parent's index and lineage, fetched in parallel", async () => {
    const { calls, events: ev } = await measure(() => h.service().writeNote(me, 'big', 'root-note.md', { body: 'at the root' }));
    // blob + root tree + commit + index + lineage
    expect(calls).toEqual({ 'dynamodb.GetItem': 1, 's3.GetObject': 2, 's3.PutObject': 5, 'dynamodb.UpdateItem': 1 });
    expect(oneWave(ev)).toBe(true);
    // Both GETs were in flight together: one round trip.
    const gets = ev.map((e, i) => (e === 'start GetObject' ? i : -1)).filter((i) => i >= 0);
    expect(gets.every((i) => i < ev.indexOf('end GetObject'))).toBe(true);
  });

  test('edit, cold: plus the old note; delete, warm: no GET', async () => {
    const svc = h.service();
    const edit = await measure(() => svc.editNote(me, 'big', 'area-2/topic-2/note-2.md', { mode: 'append', body: 'more' }));
    expect(edit.calls).toEqual({ 'dynamodb.GetItem': 1, 's3.GetObject': 3, 's3.PutObject': 7, 'dynamodb.UpdateItem': 1 });
    const del = await measure(() => svc.deleteNote(me, 'big', 'area-2/topic-2/note-2.md'));
    // No blob: trees, commit, index and lineage only.
    expect(del.calls).toEqual({ 'dynamodb.GetItem': 1, 's3.PutObject': 6, 'dynamodb.UpdateItem': 1 });
    expect(oneWave(del.events)).toBe(true);
  });

  test('a no-op write: one rev read, nothing else', async () => {
    const svc = h.service();
    await svc.writeNote(me, 'big', 'same.md', { body: 'same' });
    const { calls, result } = await measure(() => svc.writeNote(me, 'big', 'same.md', { body: 'same' }));
    expect(result.changed).toBe(false);
    expect(calls).toEqual({ 'dynamodb.GetItem': 1 });
  });
});

describe('read', () => {
  test('cold: one rev read and two GETs (index, note); warm: the rev read only', async () => {
    const svc = h.service();
    const cold = await measure(() => svc.readNote(me, 'big', 'area-3/topic-3/note-3.md'));
    expect(cold.calls).toEqual({ 'dynamodb.GetItem': 1, 's3.GetObject': 2 });
    const warm = await measure(() => svc.readNote(me, 'big', 'area-3/topic-3/note-3.md'));
    expect(warm.calls).toEqual({ 'dynamodb.GetItem': 1 });
    const other = await measure(() => svc.readNote(me, 'big', 'area-4/topic-4/note-4.md'));
    expect(other.calls).toEqual({ 'dynamodb.GetItem': 1, 's3.GetObject': 1 });
  });

  test('stats: one rev read; the list of memories: one query', async () => {
    const svc = h.service();
    expect((await measure(() => svc.getMemory(me, 'big'))).calls).toEqual({ 'dynamodb.GetItem': 1 });
    expect((await measure(() => svc.listMemories(me))).calls).toEqual({ 'dynamodb.Query': 1 });
  });
});

describe('list and search of 1,000 notes fetch no object twice across requests', () => {
  let svc: MemoryService;
  const allKeys: string[] = [];
  beforeAll(() => {
    svc = h.service();
  });

  test('listing every page: the index once', async () => {
    let cursor: string | undefined;
    let pages = 0;
    let entries = 0;
    do {
      const { result, calls, keys } = await measure(() => svc.listNotes(me, 'big', { depth: 'all', type: 'file', limit: 500, cursor }));
      expect(calls['dynamodb.GetItem']).toBe(1);
      allKeys.push(...keys);
      entries += result.entries.length;
      cursor = result.nextCursor;
      pages++;
    } while (cursor);
    expect(pages).toBeGreaterThanOrEqual(2);
    expect(entries).toBeGreaterThanOrEqual(NOTES);
    expect(allKeys).toHaveLength(1);
  });

  test('searches: each note at most once, ever; later searches and listings fetch nothing', async () => {
    const first = await measure(() => svc.searchNotes(me, 'big', { q: 'apples', limit: 50 }));
    expect(first.result.results).toHaveLength(50);
    expect(first.calls['dynamodb.GetItem']).toBe(1);
    allKeys.push(...first.keys);
    for (const q of [{ q: 'pears' }, { q: 'note 99', folder: 'area-9' }, { q: 'body', tags: ['triple'] }]) {
      const again = await measure(() => svc.searchNotes(me, 'big', q));
      expect(again.calls).toEqual({ 'dynamodb.GetItem': 1 });
    }
    const page2 = await measure(() => svc.searchNotes(me, 'big', { q: 'apples', limit: 50, cursor: first.result.nextCursor }));
    expect(page2.calls).toEqual({ 'dynamodb.GetItem': 1 });
    expect((await measure(() => svc.listNotes(me, 'big', { folder: 'area-1', tags: ['t1'] }))).calls).toEqual({ 'dynamodb.GetItem': 1 });
    expect(new Set(allKeys).size).toBe(allKeys.length);
  });

  test("after another instance writes, only the new index is fetched (the new note's text is in it)", async () => {
    await h.service().writeNote(me, 'big', 'area-5/fresh.md', { body: 'fresh apples' });
    const after = await measure(() => svc.searchNotes(me, 'big', { q: 'apples', limit: 50 }));
    expect(after.calls).toEqual({ 'dynamodb.GetItem': 1, 's3.GetObject': 1 });
    expect(after.result.results.map((r) => r.path)).toContain('area-5/fresh.md');
    allKeys.push(...after.keys);
    expect(new Set(allKeys).size).toBe(allKeys.length);
  });
});

describe('packed search texts (segments)', () => {
  // Small segments, so that 1,000 short notes make several of them.
  const segments = { tailChars: 8 * 1024, segmentChars: 16 * 1024, maxSegments: 6 };

  test('a cold search on a fresh instance: one rev read, the index and its segments, in two round trips', async () => {
    const seeder = h.service({ segments });
    await seeder.createMemory(me, 'packed');
    await seeder.importNotes(
      me,
      'packed',
      Array.from({ length: NOTES }, (_, i) => ({
        path: `area-${i % 10}/note-${i}.md`,
        markdown: `# Note ${i}\n\nAbout ${i % 2 ? 'apples' : 'pears'} and more.\n`,
      })),
    );
    const cold = h.service({ segments });
    const { result, calls, keys, events: ev } = await measure(() => cold.searchNotes(me, 'packed', { q: 'apples', limit: 50 }));
    const segs = keys.filter((k) => k.includes('/segment/'));
    expect(segs.length).toBeGreaterThanOrEqual(2);
    expect(calls).toEqual({ 'dynamodb.GetItem': 1, 's3.GetObject': 1 + segs.length });
    expect(keys.filter((k) => k.includes('/index/'))).toHaveLength(1);
    expect(result.results).toHaveLength(50);
    // Two round trips: the index, then its segments together (each segment GET starts before any ends).
    const gets = ev.filter((e) => e.endsWith('GetObject'));
    expect(segs.length).toBeLessThanOrEqual(4);
    expect(gets).toEqual(['start GetObject', 'end GetObject', ...segs.map(() => 'start GetObject'), ...segs.map(() => 'end GetObject')]);
    expect((await measure(() => cold.searchNotes(me, 'packed', { q: 'pears' }))).calls).toEqual({ 'dynamodb.GetItem': 1 });
  });

  test("links, cold on a fresh instance: a note's links both ways and the memory's orphans read what a cold search reads, no note", async () => {
    const seeder = h.service({ segments });
    await seeder.createMemory(me, 'linked');
    await seeder.importNotes(
      me,
      'linked',
      Array.from({ length: NOTES }, (_, i) => ({
        path: `area-${i % 10}/note-${i}.md`,
        markdown: `# Note ${i}\n\nAfter [[note-${i - 1}]], see [the next](note-${i + 10}.md).\n`,
      })),
    );
    const cold = h.service({ segments });
    const { result, calls, keys } = await measure(() => cold.noteLinks(me, 'linked', 'area-5/note-5.md'));
    const segs = keys.filter((k) => k.includes('/segment/'));
    expect(segs.length).toBeGreaterThanOrEqual(2);
    expect(calls).toEqual({ 'dynamodb.GetItem': 1, 's3.GetObject': 1 + segs.length });
    expect(keys.filter((k) => k.includes('/index/'))).toHaveLength(1);
    expect(result.outgoing.map((l) => l.path)).toEqual(['area-4/note-4.md', 'area-5/note-15.md']);
    expect(result.incoming.map((l) => l.path)).toEqual(['area-6/note-6.md']);
    // The graph is the commit's: the memory-wide view and a read with its links fetch nothing more.
    const all = await measure(() => cold.memoryLinks(me, 'linked'));
    expect(all.calls).toEqual({ 'dynamodb.GetItem': 1 });
    // Every note is linked; note-0's link to note--1 and the last ten's to note-1000… lead nowhere.
    expect(all.result).toMatchObject({ notes: NOTES, links: 2 * NOTES - 11, orphans: [] });
    expect(all.result.dangling).toHaveLength(11);
    expect((await measure(() => cold.readNote(me, 'linked', 'area-7/note-7.md', { includeLinks: true }))).calls).toEqual({
      'dynamodb.GetItem': 1,
      's3.GetObject': 1,
    });
  });

  test('a write that moves the tail into a segment: still one wave of PUTs (the segment in it), one conditional write', async () => {
    const svc = h.service({ segments });
    await svc.writeNote(me, 'packed', 'warm.md', { body: 'warm' });
    let flushed = false;
    for (let i = 0; i < 20 && !flushed; i++) {
      const { calls, events: ev } = await measure(() => svc.writeNote(me, 'packed', `big-${i}.md`, { body: `apples ${'x'.repeat(1500)} ${i}` }));
      expect(calls['dynamodb.GetItem']).toBe(1);
      expect(calls['dynamodb.UpdateItem']).toBe(1);
      expect(calls['s3.GetObject']).toBeUndefined();
      expect(oneWave(ev)).toBe(true);
      // blob + root tree + commit + index + lineage (+ the segment when the tail passed its size)
      if (calls['s3.PutObject'] === 6) flushed = true;
      else expect(calls['s3.PutObject']).toBe(5);
    }
    expect(flushed).toBe(true);
  });

  test('compaction on S3 by two instances at once while a third writes: then a fresh instance reads the index and fewer segments, and finds every note', async () => {
    const many = { ...segments, maxSegments: 2 };
    const seeder = h.service({ segments: many });
    await seeder.createMemory(me, 'compacted');
    for (let b = 0; b < 5; b++) {
      await seeder.importNotes(
        me,
        'compacted',
        Array.from({ length: 200 }, (_, j) => ({ path: `b${b}/n${j}.md`, markdown: `# N ${b}-${j}\n\n${'kiwi '.repeat(20)}${b * 200 + j}\n` })),
      );
    }
    const before = await measure(() => h.service({ segments: many }).searchNotes(me, 'compacted', { q: 'kiwi', limit: 5 }));
    const segsBefore = before.keys.filter((k) => k.includes('/segment/')).length;
    // Each import moved its tail into segments of its own: two each, one of them small.
    expect(segsBefore).toBe(10);
    const a = h.service({ segments: many });
    const b = h.service({ segments: many });
    await Promise.all([
      a.searchNotes(me, 'compacted', { q: 'kiwi' }),
      b.searchNotes(me, 'compacted', { q: 'kiwi' }),
      h.service({ segments: many }).writeNote(me, 'compacted', 'racing.md', { body: 'kiwi racing' }),
    ]);
    await Promise.all([a.idle(), b.idle()]);
    // The racing write may have built on the older layout: the head's own first search compacts it.
    const c = h.service({ segments: many });
    await c.searchNotes(me, 'compacted', { q: 'kiwi' });
    await c.idle();
    const after = await measure(() => h.service({ segments: many }).searchNotes(me, 'compacted', { q: 'kiwi', limit: 50 }));
    expect(after.keys.filter((k) => k.includes('/segment/')).length).toBeLessThan(segsBefore);
    // Whichever layout the writers built on, every note is found.
    let total = 0;
    let cursor: string | undefined;
    const svc = h.service({ segments: many });
    do {
      const page = await svc.searchNotes(me, 'compacted', { q: 'kiwi', limit: 50, cursor });
      total += page.results.length;
      cursor = page.nextCursor;
    } while (cursor);
    expect(total).toBe(1001);
    expect(after.keys.filter((k) => k.includes('/object')).length).toBe(0);
    await svc.idle();
  });
});

describe('push', () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  /** A repository of `n` notes (`text` of each), one commit; `git` runs commands in it. */
  function repo(n: number, text: (i: number) => string): { git: (args: string[], input?: string) => Buffer; write: (text: (i: number) => string) => void } {
    const dir = mkdtempSync(join(process.env.TEST_TMP_DIR ?? tmpdir(), 'budget-push-'));
    dirs.push(dir);
    const git = (args: string[], input?: string) => execFileSync('git', args, { cwd: dir, env: GIT_COMMITTER_ENV, input, maxBuffer: 64 << 20 });
    const write = (t: (i: number) => string) => {
      for (let i = 0; i < n; i++) {
        mkdirSync(join(dir, `f${i % 5}`), { recursive: true });
        writeFileSync(join(dir, `f${i % 5}`, `n${i}.md`), t(i));
      }
      git(['add', '-A']);
      git(['commit', '-q', '-m', `${n} notes`]);
    };
    git(['init', '-q', '-b', 'main']);
    write(text);
    return { git, write };
  }
  const head = (git: (args: string[]) => Buffer): string => git(['rev-parse', 'HEAD']).toString().trim();
  /** A note of about 400 bytes, as the bench's (its search text makes a segment at 1,000 notes). */
  const longer = (round: number) => (i: number) =>
    `---\ntags: [t${i % 10}]\n---\n# Note ${i}\n\n${`Line ${round} of note ${i}, about memory and git. `.repeat(7)}\n`;
  const repos = new Map<number, ReturnType<typeof repo>>();

  test.each([
    [3, 'loose objects: 3 notes, 3 folders, the root, the commit', { 's3.PutObject': 3 + 3 + 1 + 1 + 2 }, (i: number) => `# ${i}\n`],
    [400, 'one pack and its index', { 's3.PutObject': 2 + 2 }, (i: number) => `# ${i}\n`],
    [1000, 'one pack and its index, a segment of search texts', { 's3.PutObject': 2 + 2 + 1 }, longer(1)],
  ])('%i notes: one rev read, one wave of PUTs (%s, an index, a lineage), one conditional UpdateItem on the rev table', async (n, _what, puts, text) => {
    const r = repo(n, text);
    repos.set(n, r);
    const pack = r.git(['pack-objects', '--stdout', '--revs'], 'HEAD\n');
    const svc = h.service();
    const name = `pushed-${n}`;
    await svc.createMemory(me, name);
    events.length = 0;
    const { result, calls, waves, targets } = await h.counter.measure(() =>
      svc.gitPush(me, name, { ref: 'refs/heads/main', old: null, new: head(r.git) }, pack),
    );
    expect(result).toMatchObject({ ok: true, rev: head(r.git) });
    expect(calls).toEqual({ 'dynamodb.GetItem': 1, 'dynamodb.UpdateItem': 1, ...puts });
    expect(waves['s3.PutObject']).toBe(1);
    expect(oneWave(events)).toBe(true);
    expect(Object.entries(targets).filter(([k]) => k.startsWith('dynamodb.UpdateItem'))).toEqual([[expect.stringMatching(/^dynamodb\.UpdateItem /), 1]]);
  });

  test('a cold instance takes a thin push changing all 1,000 notes: their bases read from the packed texts and the pack it lists once, then one wave', async () => {
    const r = repos.get(1000) as ReturnType<typeof repo>;
    const old = head(r.git);
    r.write(longer(2));
    const next = head(r.git);
    // What git push sends (the remote takes ofs-delta): every changed note as a delta against its blob
    // in the memory, or against another note of the pack.
    const pack = r.git(['pack-objects', '--stdout', '--revs', '--thin', '--delta-base-offset'], `${next}\n^${old}\n`);
    const { result, calls, keys, events: ev } = await measure(() => h.service().gitPush(me, 'pushed-1000', { ref: 'refs/heads/main', old, new: next }, pack));
    expect(result).toMatchObject({ ok: true, rev: next });
    // Reads: the rev; the head's index and its segment of search texts (every note's blob base is
    // there); the first other base (a tree), not loose, then the listing of the packs, the pack index
    // and the pack (the other trees are in it); the parent's lineage.
    // Writes: the pack and its index, the index, a segment, the lineage; the head move.
    const fetchedKeys = keys.map((k) => k.replace(/^m\/[^/]+\//, '').replace(/[0-9a-f]{2}\/[0-9a-f]{38}$|[0-9a-f]{20,}/, '…'));
    expect(fetchedKeys).toEqual(['index/…', 'segment/…', 'objects/…', 'objects/pack/pack-….idx', 'objects/pack/pack-….pack', 'lineage/…']);
    expect(calls).toEqual({ 'dynamodb.GetItem': 1, 's3.GetObject': 6, 's3.ListObjectsV2': 1, 's3.PutObject': 5, 'dynamodb.UpdateItem': 1 });
    expect(oneWave(ev)).toBe(true);
    const read = await h.service().readNote(me, 'pushed-1000', 'f3/n8.md');
    expect(read.body).toContain('Line 2 of note 8');
  });

  test('a cold instance reads a packed note: the rev read, the index, the loose object not found, one listing of the packs, the pack index and the pack; then nothing', async () => {
    const svc = h.service();
    const first = await measure(() => svc.readNote(me, 'pushed-400', 'f1/n1.md'));
    expect(first.result.body).toBe('# 1\n');
    expect(first.calls).toEqual({ 'dynamodb.GetItem': 1, 's3.GetObject': 4, 's3.ListObjectsV2': 1 });
    expect(first.keys.filter((k) => k.includes('/objects/pack/')).length).toBe(2);
    const second = await measure(() => svc.readNote(me, 'pushed-400', 'f2/n2.md'));
    expect(second.calls).toEqual({ 'dynamodb.GetItem': 1 });
  });
});
