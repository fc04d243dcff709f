import { gunzipSync, gzipSync } from 'node:zlib';
import { decodeIndex, type FileEntry, type NoteIndex, parseIndex, segmentIdsAhead, serializeIndex } from '../../lambdas/memory/note-index';
import { LEGACY_PACK } from '../../lambdas/memory/segments';
import { olderIndex, olderIndexJson } from '../support/index-v2';

/**
 * The stored index, version 3: a line of JSON, then its long texts back to back (tail texts,
 * excerpts). Everything round-trips, fields it does not know by name included; indexes written in
 * versions 1 and 2 read the same; and the JSON a fresh instance parses is a fraction of version 2's.
 */
const entry = (i: number, over: Partial<FileEntry> = {}): FileEntry => ({
  blob: i.toString(16).padStart(40, '0'),
  size: 100 + i,
  title: `Note ${i} ✓`,
  tags: i % 3 === 0 ? [] : [`t${i % 3}`, 'shared'],
  updated: `2026-03-0${1 + (i % 2)}T09:00:00.000Z`,
  excerpt: `Line one of ${i}\nline two with "quotes", a tab\t, 🙂 and ünïcödé${'…'.repeat(i % 4)}`,
  ...over,
});

function sample(count: number): NoteIndex {
  const files = new Map<string, FileEntry>();
  for (let i = 0; i < count; i++) files.set(`area-${i % 4}/note ${i}.md`, entry(i));
  files.set('links.md', { ...entry(count), links: ['area-0/note 0.md', 'nowhere.md'] } as FileEntry);
  return {
    commit: 'c'.repeat(40),
    parent: 'p'.repeat(40),
    time: '2026-03-02T09:00:00.000Z',
    files,
    trees: new Map([
      ['', 'a'.repeat(40)],
      ['area-0', 'b'.repeat(40)],
    ]),
    tombstones: new Map([['gone.md', { ...entry(999, { excerpt: 'was here\r\nonce' }), deleted: '2026-03-03T10:00:00.000Z' }]]),
    pack: {
      segments: [
        { id: 'd'.repeat(64), notes: 3, chars: 300 },
        { id: 'e'.repeat(64), notes: 2, chars: 200 },
      ],
      tail: new Map([
        ['f'.repeat(40), { start: 12, text: '---\ntags: [x]\n---\nBody with\nnewlines and 🙂' }],
        ['0'.repeat(40), { start: 0, text: '' }],
      ]),
      complete: true,
    },
  };
}

test('round-trips every field, unknown ones included, and names its segments ahead of its notes', () => {
  const idx = sample(50);
  const bytes = serializeIndex(idx);
  const back = parseIndex(bytes);
  expect(back).toEqual(idx);
  expect((back.files.get('links.md') as FileEntry & { links: string[] }).links).toEqual(['area-0/note 0.md', 'nowhere.md']);
  expect(segmentIdsAhead(decodeIndex(bytes).json)).toEqual(['d'.repeat(64), 'e'.repeat(64)]);
  // Repeated values are written once: two commit times and three tag lists for 51 notes.
  const head = JSON.parse(gunzipSync(bytes).toString('utf8').split('\n')[0]) as { v: number; times: string[]; tags: string[][] };
  expect(head.v).toBe(3);
  expect(head.times).toHaveLength(3);
  expect(head.tags).toHaveLength(3);
});

test('an index written by versions 1 and 2 reads as it did', () => {
  // Those versions stored the named fields only.
  const full = sample(20);
  const idx = { ...full, files: new Map([...full.files].filter(([p]) => p !== 'links.md')) };
  expect(parseIndex(olderIndex(idx))).toEqual(idx);
  expect(parseIndex(olderIndex(idx, { packLast: true }))).toEqual(idx);
  expect(parseIndex(olderIndex(idx, { version: 1 }))).toEqual({ ...idx, pack: LEGACY_PACK });
});

test('texts that do not match the lengths the JSON names are refused, not misread', () => {
  const text = gunzipSync(serializeIndex(sample(5))).toString('utf8');
  expect(() => parseIndex(gzipSync(Buffer.from(`${text}x`)))).toThrow('index texts do not match their lengths');
  expect(() => parseIndex(gzipSync(Buffer.from(text.slice(0, -3))))).toThrow('index texts do not match their lengths');
});

test('what a fresh instance parses at 10,000 notes is a fraction of the version 2 JSON', () => {
  const files = new Map<string, FileEntry>();
  const excerpt = `A note about apples and pears, with kubernetes. ${'Body line on memory. '.repeat(8)}`.slice(0, 200);
  for (let i = 0; i < 10_000; i++) {
    files.set(
      `area-${i % 10}/topic-${i % 37}/note-${i}.md`,
      entry(i, { title: `Note ${i}`, tags: [`area-${i % 10}`], excerpt, updated: '2026-03-01T09:00:00.000Z' }),
    );
  }
  const idx: NoteIndex = { ...sample(0), files, tombstones: new Map() };
  const json = gunzipSync(serializeIndex(idx)).toString('utf8').split('\n')[0];
  const v2 = olderIndexJson(idx);
  expect(json.length).toBeLessThan(0.45 * v2.length);
});
