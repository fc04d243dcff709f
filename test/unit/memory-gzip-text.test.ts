import { randomBytes } from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { InMemoryBlobStore } from '../../lambdas/memory/adapters/in-memory';
import { ImmutableCache } from '../../lambdas/memory/cache';
import { DEFAULT_LIMITS } from '../../lambdas/memory/config';
import type { GitOverlay } from '../../lambdas/memory/git-overlay';
import { gunzipHead, gunzipWhole, jsonAndTexts, utf8Text } from '../../lambdas/memory/gzip-text';
import { StoredIndexes } from '../../lambdas/memory/index-store';
import { decodeIndex, type NoteIndex, segmentIdsAhead, segmentIdsInHead, serializeIndex } from '../../lambdas/memory/note-index';
import type { MemoryRecord } from '../../lambdas/memory/ports';
import { DEFAULT_SEGMENT_POLICY, parseSegment, segmentOf } from '../../lambdas/memory/segments';

/**
 * How a fresh instance inflates and decodes the stored index and segments (`gzip-text.ts`): the
 * same bytes and text as zlib and Buffer give, whatever the input; and the segment ids read from the
 * first compressed bytes of an index, with the whole text as the fallback when they are not all there.
 */

test('gunzipWhole inflates exactly what gunzipSync does: empty, small, large, several gzip members', () => {
  const big = Buffer.from(Array.from({ length: 20_000 }, (_, i) => `line ${i} ✓\n`).join(''));
  for (const raw of [Buffer.alloc(0), Buffer.from('x'), big, randomBytes(300_000)]) {
    expect(gunzipWhole(gzipSync(raw)).equals(raw)).toBe(true);
  }
  // Two members: the trailer names the last one's size only, and the whole is still inflated.
  const joined = Buffer.concat([gzipSync(big), gzipSync(Buffer.from('tail'))]);
  expect(gunzipWhole(joined).equals(Buffer.concat([big, Buffer.from('tail')]))).toBe(true);
  // What is not gzip fails as gunzipSync does.
  expect(() => gunzipWhole(Buffer.from('not gzip at all, twenty bytes+'))).toThrow();
  const cut = gzipSync(big).subarray(0, 1000);
  expect(() => gunzipWhole(cut)).toThrow();
});

test('gunzipHead gives the start of the text from the first compressed bytes, without failing on the cut', () => {
  const raw = Buffer.from(Array.from({ length: 50_000 }, (_, i) => `${i.toString(36)} `).join(''));
  const gz = gzipSync(raw);
  const head = gunzipHead(gz, 4096);
  expect(head.length).toBeGreaterThan(0);
  expect(head.length).toBeLessThan(raw.length);
  expect(raw.subarray(0, head.length).equals(head)).toBe(true);
  expect(gunzipHead(gz, gz.length).equals(raw)).toBe(true);
});

test('utf8Text decodes any bytes as Buffer does (ASCII taken byte for byte)', () => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 300 }), fc.string({ unit: 'binary', maxLength: 100 }), (bytes, s) => {
      const b = Buffer.from(bytes);
      expect(utf8Text(b)).toBe(b.toString('utf8'));
      const t = Buffer.from(s, 'utf8');
      expect(utf8Text(t)).toBe(t.toString('utf8'));
    }),
  );
});

test('jsonAndTexts splits at the first newline, each part decoded on its own', () => {
  const json = JSON.stringify({ title: 'Café ✓', lines: 'a\nb' });
  expect(jsonAndTexts(Buffer.from(`${json}\nplain ascii texts`))).toEqual({ json, texts: 'plain ascii texts' });
  expect(jsonAndTexts(Buffer.from('{"v":1}\nexcerpt…\nmore 🙂'))).toEqual({ json: '{"v":1}', texts: 'excerpt…\nmore 🙂' });
  expect(jsonAndTexts(Buffer.from('{"v":2}'))).toEqual({ json: '{"v":2}' });
  expect(jsonAndTexts(Buffer.from('{"v":3}\n'))).toEqual({ json: '{"v":3}', texts: '' });
});

test('a segment of non-ASCII texts round-trips; its texts are slices at the lengths its rows name', () => {
  const texts = new Map([
    ['a'.repeat(40), { start: 4, text: '---\nüñï 🙂 …' }],
    ['b'.repeat(40), { start: 0, text: 'plain' }],
    ['c'.repeat(40), { start: 0, text: '' }],
  ]);
  expect(parseSegment(segmentOf(texts).body)).toEqual(texts);
  const ascii = new Map([['d'.repeat(40), { start: 1, text: '\nonly ascii' }]]);
  expect(parseSegment(segmentOf(ascii).body)).toEqual(ascii);
});

function indexWith(segments: number): NoteIndex {
  return {
    commit: 'c'.repeat(40),
    parent: null,
    time: '2026-03-02T09:00:00.000Z',
    files: new Map([['a.md', { blob: 'f'.repeat(40), size: 3, title: 'a', tags: [], updated: '2026-03-02T09:00:00.000Z', excerpt: 'an excerpt…' }]]),
    trees: new Map([['', 'a'.repeat(40)]]),
    tombstones: new Map(),
    pack: {
      segments: Array.from({ length: segments }, () => ({ id: randomBytes(32).toString('hex'), notes: 1, chars: 10 })),
      tail: new Map(),
      complete: true,
    },
  };
}

test('the segment ids of an index: from its first compressed bytes, or from the whole text when the head does not hold them all', async () => {
  const few = indexWith(20);
  expect(segmentIdsInHead(serializeIndex(few))).toEqual(few.pack.segments.map((s) => s.id));
  const many = indexWith(2000);
  const stored = serializeIndex(many);
  expect(segmentIdsInHead(stored)).toBeUndefined();
  expect(segmentIdsAhead(decodeIndex(stored).json)).toEqual(many.pack.segments.map((s) => s.id));
  expect(segmentIdsInHead(Buffer.from('not gzip'))).toBeUndefined();

  // Loading either one names its segments once, all of them, before it resolves.
  const blobs = new InMemoryBlobStore();
  const rec = { id: 'm1' } as MemoryRecord;
  const indexes = new StoredIndexes(blobs, new ImmutableCache(64 * 2 ** 20), DEFAULT_LIMITS, () => ({}) as GitOverlay, DEFAULT_SEGMENT_POLICY);
  for (const idx of [few, { ...many, commit: 'd'.repeat(40) }]) {
    await blobs.putMany(rec.id, [{ kind: 'index', sha: idx.commit, body: serializeIndex(idx) }]);
    const told: string[][] = [];
    const loaded = await indexes.load(rec, idx.commit, { ahead: (ids) => told.push(ids) });
    expect(told).toEqual([idx.pack.segments.map((s) => s.id)]);
    expect(loaded).toEqual(idx);
  }
});
