import fc from 'fast-check';
import { firstInOrder } from '../../lambdas/shared/first-in-order';
import { randomBytes } from 'node:crypto';
import { InMemoryBlobStore, InMemoryRevLock } from '../../lambdas/memory/adapters/in-memory';
import { ImmutableCache } from '../../lambdas/memory/cache';
import { StorageError } from '../../lambdas/memory/errors';
import { compareHits, comparePaths, literalMatcher, makeSnippet, pageOfHits, rankNote, scoreNote, type RankedHit } from '../../lambdas/memory/listing';
import type { BlobItem, HeadMove, MoveOutcome } from '../../lambdas/memory/ports';
import { MemoryService } from '../../lambdas/memory/service';
import type { Caller } from '../../lambdas/memory/types';
import { CursorCodec } from '../../lambdas/shared/cursor';
import { expectMemoryError } from '../support/memory-harness';

const me: Caller = { account: 'acct', author: { name: 'T', email: 't@example.com' } };
const cursors = new CursorCodec({ current: { id: 1, secret: randomBytes(32) } });
const noWait = async (): Promise<void> => undefined;

function service(over: Partial<ConstructorParameters<typeof MemoryService>[0]> = {}): { svc: MemoryService; blobs: InMemoryBlobStore; lock: InMemoryRevLock } {
  const blobs = new InMemoryBlobStore();
  const lock = new InMemoryRevLock();
  return { svc: new MemoryService({ blobs, lock, cursors, backoff: noWait, ...over }), blobs, lock };
}

describe('the write loop', () => {
  test('a head move whose answer was lost but which landed counts as success', async () => {
    const lock = new InMemoryRevLock();
    // Moves the head, then answers as if the condition had failed (an SDK retry of a move that landed).
    const lossy = Object.assign(Object.create(lock) as InMemoryRevLock, {
      moveHead: async (a: string, n: string, e: string | null, next: HeadMove): Promise<MoveOutcome> => {
        await lock.moveHead(a, n, e, next);
        return { ok: false, current: await lock.get(a, n) };
      },
    });
    const { svc } = service({ lock: lossy });
    await svc.createMemory(me, 'm');
    const w = await svc.writeNote(me, 'm', 'a.md', { body: 'x' });
    expect(w.changed).toBe(true);
    expect((await svc.getMemory(me, 'm')).rev).toBe(w.rev);
  });

  /**
   * Two instances (two services on one rev lock and one object store, as two Lambda instances on
   * DynamoDB and S3) make the same change in the same second: both build the very same commit. The
   * gate holds every head move until both instances have built, so the race is certain.
   */
  function twoInstances(): { a: MemoryService; b: MemoryService; arm: () => void } {
    const blobs = new InMemoryBlobStore();
    const lock = new InMemoryRevLock();
    const clock = () => new Date('2026-11-24T10:00:00.500Z');
    let armed = false;
    let waiting: (() => void) | undefined;
    const gated = Object.assign(Object.create(lock) as InMemoryRevLock, {
      moveHead: async (a: string, n: string, e: string | null, next: HeadMove): Promise<MoveOutcome> => {
        if (armed) {
          if (waiting === undefined) await new Promise<void>((resolve) => (waiting = resolve));
          else {
            armed = false;
            waiting();
          }
        }
        return lock.moveHead(a, n, e, next);
      },
    });
    const make = () => new MemoryService({ blobs, lock: gated, cursors, backoff: noWait, clock });
    return { a: make(), b: make(), arm: () => (armed = true) };
  }

  test('two instances appending the same line in the same second: both acknowledged, both applied', async () => {
    const { a, b, arm } = twoInstances();
    await a.createMemory(me, 'm');
    await a.writeNote(me, 'm', 'log.md', { body: 'start\n' });
    arm();
    const results = await Promise.all([a, b].map((svc) => svc.editNote(me, 'm', 'log.md', { mode: 'append', body: 'same line\n' })));
    expect(results.map((r) => r.changed)).toEqual([true, true]);
    expect(results[0].rev).not.toBe(results[1].rev);
    const note = await a.readNote(me, 'm', 'log.md');
    expect(note.body.split('same line').length - 1).toBe(2);
  });

  test('two instances with the same If-Match and the same change: exactly one wins, the other is told its rev is stale', async () => {
    const { a, b, arm } = twoInstances();
    await a.createMemory(me, 'm');
    const base = await a.writeNote(me, 'm', 'log.md', { body: 'start\n' });
    arm();
    const settled = await Promise.allSettled(
      [a, b].map((svc) => svc.editNote(me, 'm', 'log.md', { mode: 'append', body: 'same line\n' }, { expectedRev: base.rev })),
    );
    expect(settled.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const lost = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    await expectMemoryError(Promise.reject(lost?.reason), 'CONFLICT', 'stale_rev');
    expect((await a.readNote(me, 'm', 'log.md')).body.split('same line').length - 1).toBe(1);
  });

  test('endless contention gives up with UPSTREAM_UNAVAILABLE after maxWriteAttempts', async () => {
    const lock = new InMemoryRevLock();
    let moves = 0;
    const busy = Object.assign(Object.create(lock) as InMemoryRevLock, {
      moveHead: async (a: string, n: string): Promise<MoveOutcome> => {
        moves++;
        return { ok: false, current: await lock.get(a, n) };
      },
    });
    const { svc } = service({ lock: busy, limits: { maxWriteAttempts: 3 } });
    await svc.createMemory(me, 'm');
    await expectMemoryError(svc.writeNote(me, 'm', 'a.md', { body: 'x' }), 'UPSTREAM_UNAVAILABLE', 'contention');
    expect(moves).toBe(3);
  });

  test('storage failures are UPSTREAM_UNAVAILABLE with a Retry-After', async () => {
    const blobs = new InMemoryBlobStore();
    const failing = Object.assign(Object.create(blobs) as InMemoryBlobStore, {
      putMany: async (_id: string, _items: readonly BlobItem[]): Promise<void> => {
        throw new StorageError('s3.PutObject', new Error('boom'));
      },
    });
    const { svc } = service({ blobs: failing });
    await svc.createMemory(me, 'm');
    const err = await expectMemoryError(svc.writeNote(me, 'm', 'a.md', { body: 'x' }), 'UPSTREAM_UNAVAILABLE', 'storage');
    expect((err as unknown as { extra: { retryAfterSeconds: number } }).extra.retryAfterSeconds).toBeGreaterThan(0);
    expect((await svc.getMemory(me, 'm')).rev).toBeNull();
  });

  test('a missing index (a commit brought in by git) is rebuilt from the tree once', async () => {
    const { svc, blobs, lock } = service();
    await svc.createMemory(me, 'm');
    await svc.writeNote(me, 'm', 'a/b.md', { body: '# Title\ntext #tag', frontmatter: { tags: ['fm'] } });
    const w = await svc.writeNote(me, 'm', 'c.md', { body: 'c' });
    for (const key of [...blobs.items.keys()]) if (key.includes('/index/')) blobs.items.delete(key);
    const fresh = new MemoryService({ blobs, lock, cursors });
    const listing = await fresh.listNotes(me, 'm', { depth: 'all', type: 'file' });
    expect(listing.entries).toEqual([
      { type: 'file', path: 'a/b.md', title: 'Title', tags: ['fm', 'tag'], excerpt: 'text #tag', sizeBytes: expect.any(Number), updated: w.updated },
      { type: 'file', path: 'c.md', title: 'c', tags: [], excerpt: 'c', sizeBytes: 1, updated: w.updated },
    ]);
    expect([...blobs.items.keys()].some((k) => k.endsWith(`/index/${w.rev}`))).toBe(true);
    // Writes continue on top of the rebuilt index.
    await fresh.writeNote(me, 'm', 'd.md', { body: 'd' });
    expect((await fresh.getMemory(me, 'm')).files).toBe(3);
  });
});

describe('the restore hint', () => {
  test('names no transport by default; a transport injects its own', async () => {
    const plain = service().svc;
    await plain.createMemory(me, 'gone');
    await plain.retireMemory(me, 'gone');
    const err = await expectMemoryError(plain.createMemory(me, 'gone'), 'CONFLICT', 'retired_name');
    expect(err.message).toBe('memory "gone" was retired; restore it instead of creating it again');
    const hinted = service({ restoreHint: (name) => `call restore(${name})` }).svc;
    await hinted.createMemory(me, 'gone');
    await hinted.retireMemory(me, 'gone');
    const viaWrite = await expectMemoryError(hinted.writeNote(me, 'gone', 'a.md', { body: 'x' }, { createMemory: true }), 'CONFLICT', 'retired_name');
    expect(viaWrite.message).toBe('memory "gone" was retired; call restore(gone) instead of creating it again');
  });
});

describe('expected revs', () => {
  test('the core takes a bare sha in any case and refuses the HTTP forms (If-Match is parsed by /v1)', async () => {
    const { svc } = service();
    await svc.createMemory(me, 'm');
    const { rev } = await svc.writeNote(me, 'm', 'a.md', { body: 'x' });
    expect((await svc.writeNote(me, 'm', 'a.md', { body: 'y' }, { expectedRev: rev.toUpperCase() })).changed).toBe(true);
    for (const form of [`"${rev}"`, '*', `W/"${rev}"`, ` ${rev}`]) {
      await expectMemoryError(svc.retireMemory(me, 'm', { expectedRev: form }), 'BAD_REQUEST', 'invalid_rev');
    }
  });

  test('a stale expected rev says what it was compared with, for transports to word', async () => {
    const { svc } = service();
    await svc.createMemory(me, 'm');
    const err = await expectMemoryError(svc.writeNote(me, 'm', 'a.md', { body: 'x' }, { expectedRev: 'a'.repeat(40) }), 'CONFLICT', 'stale_rev');
    expect((err as unknown as { extra: unknown }).extra).toEqual({ stale: { memory: 'm', exists: true, currentRev: null } });
    expect(err.message).not.toMatch(/If-Match/);
    const missing = await expectMemoryError(svc.createMemory(me, 'nope', { expectedRev: 'a'.repeat(40) }), 'CONFLICT', 'stale_rev');
    expect((missing as unknown as { extra: unknown }).extra).toEqual({ stale: { memory: 'nope', exists: false, currentRev: null } });
  });
});

describe('the immutable cache', () => {
  test('evicts least recently used entries beyond its byte bound', () => {
    const c = new ImmutableCache(100);
    c.set('a', 1, 40);
    c.set('b', 2, 40);
    expect(c.get('a')).toBe(1);
    c.set('c', 3, 40);
    expect(c.has('b')).toBe(false);
    expect(c.has('a')).toBe(true);
    expect(c.bytes).toBe(80);
    c.set('huge', 4, 1000);
    expect(c.has('huge')).toBe(false);
  });

  test('concurrent loads of one key share one call', async () => {
    const c = new ImmutableCache(1000);
    let calls = 0;
    const load = async (): Promise<string> => {
      calls++;
      return 'v';
    };
    const got = await Promise.all([c.getOrLoad('k', load, () => 1), c.getOrLoad('k', load, () => 1), c.getOrLoad('k', load, () => 1)]);
    expect(got).toEqual(['v', 'v', 'v']);
    expect(calls).toBe(1);
    expect(await c.getOrLoad('k', load, () => 1)).toBe('v');
    expect(calls).toBe(1);
  });
});

describe('search scoring and snippets', () => {
  test('non-overlapping, case-insensitive, Unicode-aware counting', () => {
    const re = literalMatcher('Straße');
    expect(scoreNote(re, 'STRASSE straße', 'die Straße, DIE STRAẞE', ['straße'], 'STRASSE straße').score).toBe(4);
    expect(scoreNote(literalMatcher('aa'), '', 'aaaa', [], '').score).toBe(2);
  });

  test('each occurrence counts once: a heading title and inline tags are body text already', () => {
    const re = literalMatcher('alpha');
    // Title "Alpha" from the heading: the body's two occurrences are all there is.
    expect(scoreNote(re, 'Alpha', '# Alpha\n\nhello alpha', [], 'notes').score).toBe(2);
    // A heading that reads like the file name is still the heading.
    expect(scoreNote(re, 'alpha', '# alpha\n\nhello', [], 'alpha').score).toBe(1);
    // Title from the file name "alpha-notes": it counts, the body has none.
    expect(scoreNote(re, 'alpha-notes', 'no heading here', [], 'alpha-notes')).toEqual({ score: 1, snippet: 'alpha-notes' });
    // An inline #tag is in the body; a front-matter tag is not.
    expect(scoreNote(literalMatcher('tag1'), 'n', 'see #tag1', ['tag1'], 'n').score).toBe(1);
    expect(scoreNote(literalMatcher('tag1'), 'n', 'nothing', ['tag1'], 'n')).toEqual({ score: 1, snippet: '#tag1' });
    // A body match gives the body's window as the snippet.
    expect(scoreNote(re, 'alpha', 'the alpha line', ['alpha'], 'alpha')).toEqual({ score: 3, snippet: 'the alpha line' });
    expect(scoreNote(re, 'beta', 'gamma', ['delta'], 'beta')).toEqual({ score: 0 });
  });

  test('the snippet keeps whole words and marks cuts', () => {
    const body = `${'alpha '.repeat(30)}TARGET${' omega'.repeat(40)}`;
    const s = makeSnippet(literalMatcher('target'), body, 'fallback');
    expect(s).toMatch(/^…alpha .*TARGET.* omega…$/);
    expect(makeSnippet(literalMatcher('absent'), body, 'fallback')).toBe('fallback');
    expect(makeSnippet(literalMatcher('b'), 'a\n\nb\n\nc', '')).toBe('a b c');
  });

  test('a ranked hit scores as scoreNote does and makes the same snippet, only when its page asks for it', () => {
    const notes: Array<[string, string, string[], string]> = [
      ['alpha', '# Alpha\n\nhello alpha and alpha', [], 'alpha'],
      ['alpha-notes', 'no heading here', [], 'alpha-notes'],
      ['n', 'nothing', ['alpha'], 'n'],
      ['n2', 'see #alpha inline', ['alpha'], 'n2'],
      ['beta', 'gamma', ['delta'], 'beta'],
      ['t', `${'x '.repeat(80)}ALPHA${' y'.repeat(80)}`, [], 't'],
      // The file name is the last part of the path; a title that only ends the name is not it.
      ['alpha-notes', 'deep down', [], 'deep/er/alpha-notes'],
      ['alpha-notes', 'plain', [], 'x-alpha-notes'],
      ['alpha', 'plain', [], 'alpha/notes'],
    ];
    const re = literalMatcher('alpha');
    let made = 0;
    const hits: RankedHit[] = [];
    for (const [title, body, tags, file] of notes) {
      const e = { title, tags, excerpt: `excerpt of ${title}`, updated: '2026-01-01T00:00:00.000Z' };
      const hit = rankNote(re, `${file}.md`, e, body);
      const eager = scoreNote(re, title, body, tags, file.split('/').pop() as string);
      if (eager.score === 0) {
        expect(hit).toBeNull();
        continue;
      }
      expect(hit?.score).toBe(eager.score);
      expect(hit?.snippet()).toBe(eager.snippet ?? e.excerpt);
      if (hit) {
        hits.push({
          path: hit.path,
          title: hit.title,
          score: hit.score,
          updated: hit.updated,
          section: () => hit.section(),
          snippet: () => {
            made++;
            return hit.snippet();
          },
        });
      }
    }
    expect(hits).toHaveLength(6);
    const { page, more } = pageOfHits(hits, 1, 2);
    expect(more).toBe(true);
    expect(page.map((h) => h.path)).toEqual(
      [...hits]
        .sort(compareHits)
        .slice(1, 3)
        .map((h) => h.path),
    );
    expect(page.map((h) => Object.keys(h))).toEqual([
      ['path', 'title', 'snippet', 'score', 'updated'],
      ['path', 'title', 'snippet', 'score', 'updated'],
    ]);
    expect(made).toBe(2);
  });

  test('the first k hits in rank order, without a full sort, are those of a full sort', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ score: fc.integer({ min: 1, max: 5 }), updated: fc.constantFrom('2026-01-01', '2026-01-02', '2026-01-03') }), { maxLength: 300 }),
        fc.integer({ min: 0, max: 320 }),
        (rows, k) => {
          const hits = rows.map((r, i) => ({ ...r, path: `n${i}.md` }));
          expect(firstInOrder(hits, k, compareHits)).toEqual([...hits].sort(compareHits).slice(0, k));
        },
      ),
      { numRuns: 300 },
    );
  });

  test('paths sort in code-point order, as git trees do', () => {
    expect(['b', 'a/b', 'a', 'Z', '😀', 'é'].sort(comparePaths)).toEqual(['Z', 'a', 'a/b', 'b', 'é', '😀']);
    // UTF-16 order differs there: U+FF5E sorts after U+1F600's surrogates in UTF-16, before it in code points.
    expect(['😀', '～', 'a😀', 'a～'].sort(comparePaths)).toEqual(['a～', 'a😀', '～', '😀']);
    // Any two paths, ASCII or not, in the order of their UTF-8 bytes.
    const sign = (n: number) => Math.sign(n);
    fc.assert(
      fc.property(
        fc.string({ unit: 'binary', maxLength: 12 }),
        fc.string({ unit: 'binary', maxLength: 12 }),
        fc.string({ unit: 'grapheme-ascii', maxLength: 6 }),
        (a, b, prefix) => {
          expect(sign(comparePaths(prefix + a, prefix + b))).toBe(sign(Buffer.compare(Buffer.from(prefix + a), Buffer.from(prefix + b))));
        },
      ),
      { numRuns: 500 },
    );
  });
});
