import { ImmutableCache } from '../../lambdas/memory/cache';
import { PackedTexts, type PackedTextsDeps } from '../../lambdas/memory/packed-texts';
import type { BlobStore, MemoryRecord } from '../../lambdas/memory/ports';
import { DEFAULT_SEGMENT_POLICY, segmentOf, type PackedText, type SearchPack } from '../../lambdas/memory/segments';

/**
 * A scan visits each wanted blob the layout holds exactly once (a blob may sit in the tail and in a
 * segment, or in two segments), in layout order, and answers the wanted blobs it did not find:
 * through both of its ways of matching a place's texts against what is wanted (walking the place's
 * texts while many are wanted, walking what is left once few are). What it found is taken out of the
 * wanted set or map, which is left holding what it did not find.
 */
const text = (s: string): PackedText => ({ text: s, start: 0 });

function scanner(segments: Array<Map<string, PackedText>>) {
  const stored = new Map(
    segments.map((texts) => {
      const s = segmentOf(texts);
      return [s.ref.id, { ref: s.ref, body: s.body }] as const;
    }),
  );
  const blobs = { get: async (_m: string, _k: string, sha: string) => stored.get(sha)?.body } as unknown as BlobStore;
  const packed = new PackedTexts({ blobs, cache: new ImmutableCache(1 << 20), policy: DEFAULT_SEGMENT_POLICY } as unknown as PackedTextsDeps);
  const refs = [...stored.values()].map((s) => s.ref);
  return { packed, refs };
}

const rec = { id: 'm1' } as MemoryRecord;

it.each([
  ['walking the texts (many wanted)', ['a', 'b', 'c', 'x']],
  ['walking what is left (few wanted)', ['b', 'x']],
])('%s: each found blob once, the rest answered as missing', async (_, wanted) => {
  const tail = new Map([['a', text('A tail')]]);
  const one = new Map([
    ['a', text('A again')],
    ['b', text('B')],
    ['d', text('D')],
    ['e', text('E')],
    ['f', text('F')],
  ]);
  const two = new Map([
    ['b', text('B again')],
    ['c', text('C')],
  ]);
  const { packed, refs } = scanner([one, two]);
  const pack: SearchPack = { segments: refs, tail, complete: true };
  const visits: string[] = [];
  const missing = new Set(wanted);
  await packed.scan(rec, pack, missing, (blob, t) => visits.push(`${blob}:${t.text}`));
  const expected = wanted.filter((w) => w !== 'x');
  expect(visits.map((v) => v.split(':')[0]).sort()).toEqual(expected.sort());
  expect(new Set(visits.map((v) => v.split(':')[0])).size).toBe(visits.length);
  if (wanted.includes('a')) expect(visits).toContain('a:A tail');
  expect([...missing]).toEqual(['x']);
});

it('takes a map as the wanted blobs (a search passes its blobs → paths), each found one visited once with its value', async () => {
  const { packed, refs } = scanner([
    new Map([
      ['a', text('A')],
      ['b', text('B')],
    ]),
  ]);
  const visits: string[] = [];
  const missing = new Map([
    ['a', ['p.md', 'r.md']],
    ['z', ['q.md']],
  ]);
  await packed.scan(rec, { segments: refs, tail: new Map([['a', text('A in the tail')]]), complete: true }, missing, (blob, t, paths) =>
    visits.push(`${blob}:${t.text}:${paths.join()}`),
  );
  expect(visits).toEqual(['a:A in the tail:p.md,r.md']);
  expect([...missing]).toEqual([['z', ['q.md']]]);
});
