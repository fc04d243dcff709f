import fc from 'fast-check';
import MarkdownIt from 'markdown-it';
import { MemoryError } from '../../lambdas/memory/errors';
import { findSection, parseHeadings, parseLineRange, sectionAddress, selectPart } from '../../lambdas/memory/sections';
import { sectionOfMatch, literalMatcher } from '../../lambdas/memory/listing';

/**
 * Parts of a note: headings (ATX, setext, nested, repeated, none in code), section addresses both
 * ways, line ranges, and what a bad or missing one says. markdown-it (CommonMark) is the oracle the
 * hand-written heading scanner is checked against on generated documents.
 */
const NOTE = [
  '# Title', //                       1
  '', //                              2
  'Intro text.', //                   3
  '', //                              4
  '## Plans', //                      5
  'Plan text.', //                    6
  '### June', //                      7
  'June in plans.', //                8
  '```md', //                         9
  '## Not a heading', //             10
  '```', //                          11
  'Log', //                          12
  '---', //                          13
  '### June', //                     14
  'June in log.', //                 15
  '', //                             16
  'Multi line', //                   17
  'setext', //                       18
  '==========', //                   19
  'Last.', //                        20
  '',
].join('\n');

test('headings: ATX and setext, nested extents, none inside a code fence', () => {
  const hs = parseHeadings(NOTE);
  expect(hs.map((h) => [h.level, h.text, h.line, h.end])).toEqual([
    [1, 'Title', 1, 16],
    [2, 'Plans', 5, 11],
    [3, 'June', 7, 11],
    [2, 'Log', 12, 16],
    [3, 'June', 14, 16],
    [1, 'Multi line setext', 17, 20],
  ]);
});

test.each([
  ['June', 'June', [7, 11]],
  ['june', 'June', [7, 11]],
  ['### June', 'June', [7, 11]],
  ['June#2', 'Log > June', [14, 16]],
  ['Log > June', 'Log > June', [14, 16]],
  ['## Log > ### June', 'Log > June', [14, 16]],
  ['Title > June#2', 'Log > June', [14, 16]],
  ['Plans > June', 'June', [7, 11]],
  ['Title > Log', 'Log', [12, 16]],
  ['Multi line setext', 'Multi line setext', [17, 20]],
  ['**Plans**', 'Plans', [5, 11]],
])('section %s is %s, lines %j', (address, canonical, lines) => {
  const out = selectPart(NOTE, { section: address }, 'n.md');
  expect(out?.part).toEqual({ section: canonical, lines, of: 20 });
  expect(out?.text.split('\n')[0]).toBe(NOTE.split('\n')[lines[0] - 1]);
});

test('the section text runs to the next heading of its level, its subsections included', () => {
  expect(selectPart(NOTE, { section: 'Plans' }, 'n.md')?.text).toBe(`${NOTE.split('\n').slice(4, 11).join('\n')}\n`);
  expect(selectPart(NOTE, { section: 'Multi line setext' }, 'n.md')?.text).toBe('Multi line\nsetext\n==========\nLast.\n');
});

test('every heading has an address that names it again', () => {
  const hs = parseHeadings(NOTE);
  for (const k of hs.keys()) expect(findSection(hs, sectionAddress(hs, k))).toBe(k);
  const same = '# A\n## X\n## X\n## X\n# B\n## X\n';
  const hx = parseHeadings(same);
  expect(hx.map((_, k) => sectionAddress(hx, k))).toEqual(['A', 'X', 'X#2', 'X#3', 'B', 'B > X']);
});

test('a heading whose text contains > or ends in #2 is still found by its text', () => {
  const body = '# a > b\n\n# Issue #2\n\n# Issue #2\n';
  const hs = parseHeadings(body);
  expect(findSection(hs, 'a > b')).toBe(0);
  expect(findSection(hs, 'Issue #2')).toBe(1);
  expect(sectionAddress(hs, 2)).toBe('Issue #2#2');
  expect(findSection(hs, 'Issue #2#2')).toBe(2);
});

test('a missing section is NOT_FOUND naming the headings there are', () => {
  try {
    selectPart(NOTE, { section: 'July' }, 'n.md');
    throw new Error('no error');
  } catch (err) {
    expect(err).toBeInstanceOf(MemoryError);
    expect((err as MemoryError).code).toBe('NOT_FOUND');
    expect((err as MemoryError).message).toBe(
      'section "July" does not exist in note "n.md"; its headings are: # Title, ## Plans, ### June, ## Log, ### June, # Multi line setext',
    );
  }
  expect(() => selectPart('no headings\n', { section: 'x' }, 'n.md')).toThrow('it has no headings');
  expect(() => selectPart(NOTE, { section: 'June#3' }, 'n.md')).toThrow('does not exist');
});

test('lines: ranges, one line, to the end, cut at the end; bad ones are BAD_REQUEST', () => {
  expect(selectPart(NOTE, { lines: '3-4' }, 'n.md')).toEqual({ text: 'Intro text.\n\n', part: { lines: [3, 4], of: 20 } });
  expect(selectPart(NOTE, { lines: '20' }, 'n.md')).toEqual({ text: 'Last.\n', part: { lines: [20, 20], of: 20 } });
  expect(selectPart(NOTE, { lines: '19-' }, 'n.md')?.part).toEqual({ lines: [19, 20], of: 20 });
  expect(selectPart(NOTE, { lines: '18-400' }, 'n.md')?.part).toEqual({ lines: [18, 20], of: 20 });
  expect(selectPart('a\nb', { lines: '2' }, 'n.md')).toEqual({ text: 'b', part: { lines: [2, 2], of: 2 } });
  for (const bad of ['0-3', '4-3', 'x', '-3', '1-2-3', '1.5', '', '+1']) {
    expect(() => parseLineRange(bad)).toThrow(MemoryError);
  }
  expect(() => selectPart(NOTE, { lines: '21-30' }, 'n.md')).toThrow('start past the end of the body of "n.md", which has 20 lines');
  expect(() => selectPart('', { lines: '1' }, 'n.md')).toThrow('which has 0 lines');
});

test('one part at a time; frontmatterOnly returns no body', () => {
  expect(() => selectPart(NOTE, { section: 'June', lines: '1-2' }, 'n.md')).toThrow('give one of section, lines and frontmatterOnly, not section and lines');
  expect(selectPart(NOTE, { frontmatterOnly: true }, 'n.md')).toEqual({ text: '', part: { frontmatterOnly: true, of: 20 } });
  expect(selectPart(NOTE, { frontmatterOnly: false }, 'n.md')).toBeUndefined();
  expect(() => selectPart(NOTE, { section: '  ' }, 'n.md')).toThrow('section must be');
});

test('search: the section of the first match in the body', () => {
  expect(sectionOfMatch(literalMatcher('june in log'), NOTE)).toBe('Log > June');
  expect(sectionOfMatch(literalMatcher('intro'), NOTE)).toBe('Title');
  expect(sectionOfMatch(literalMatcher('before'), 'before any heading\n# H\n')).toBeUndefined();
  expect(sectionOfMatch(literalMatcher('absent'), NOTE)).toBeUndefined();
});

test('any body and any address: a part, or a MemoryError, never anything else', () => {
  const text = fc.string({
    unit: fc.constantFrom('#', ' ', '\n', '=', '-', '`', '>', 'a', 'B', '*', '1', '.', '[', ']', '\t') as fc.Arbitrary<string>,
    maxLength: 300,
  });
  fc.assert(
    fc.property(text, fc.oneof(text, fc.constantFrom('a', 'a > b', '# a', 'a#2', '>', '#1', '## ')), (body, address) => {
      for (const q of [{ section: address }, { lines: address }]) {
        try {
          const out = selectPart(body, q, 'n.md');
          if (out?.part.lines) expect(out.part.lines[0]).toBeLessThanOrEqual(out.part.lines[1]);
        } catch (err) {
          expect(err).toBeInstanceOf(MemoryError);
        }
      }
    }),
    { numRuns: Number(process.env.FUZZ_RUNS ?? 1000), seed: 20261124 },
  );
});

test('a long note with thousands of repeated headings answers a nested address at once', () => {
  const body = Array.from({ length: 3000 }, (_, i) => `# Part ${i % 3}\n\n## June\n\ntext ${i}\n`).join('\n');
  const hs = parseHeadings(body);
  expect(hs).toHaveLength(6000);
  expect(selectPart(body, { section: 'Part 2 > June#5' }, 'n.md')?.part.section).toBe('June#15');
});

// ------------------------------------------------------------------------------------------------
// The scanner agrees with CommonMark (markdown-it) on the top-level headings of generated notes.

const md = new MarkdownIt('commonmark');
function oracle(body: string): Array<[number, number]> {
  return md
    .parse(body, {})
    .filter((t) => t.type === 'heading_open' && t.level === 0)
    .map((t) => [Number(t.tag.slice(1)), (t.map as [number, number])[0] + 1]);
}

const word = fc.constantFrom('alpha', 'Beta', 'x y', '*em*', 'a > b', '#tag', '`code`', '\\#', '1.', 'plans');
const block = fc.oneof(
  fc.tuple(fc.integer({ min: 1, max: 6 }), word).map(([n, w]) => `${'#'.repeat(n)} ${w}`),
  fc.tuple(fc.array(word, { minLength: 1, maxLength: 3 }), fc.constantFrom('===', '---', '-', '=')).map(([ws, u]) => `${ws.join('\n')}\n${u}`),
  fc.array(word, { minLength: 1, maxLength: 3 }).map((ws) => ws.join('\n')),
  fc
    .tuple(fc.constantFrom('```', '~~~', '````'), fc.array(fc.oneof(word, fc.constant('# inside')), { maxLength: 3 }))
    .map(([f, ws]) => `${f}\n${ws.join('\n')}\n${f}`),
  fc.constantFrom(
    '---',
    '***',
    '- item',
    '- # in a list',
    '> # quoted',
    '> quoted',
    '    # indented',
    '1. one',
    '2. two',
    '1.',
    '-',
    '',
    '#no space',
    '####### seven',
  ),
  fc.constantFrom('- item\n\n  more of it\n  ---', '- item\n  ===', '1. one\n\n   two\n   ===', '> a\nlazy\n===', '- a\n\nout\n---', '  - b\n    c\n---'),
);

test('the heading scanner finds the headings CommonMark finds', () => {
  fc.assert(
    fc.property(fc.array(block, { maxLength: 12 }), fc.constantFrom('\n', '\n\n'), (blocks, sep) => {
      const body = blocks.join(sep);
      expect(parseHeadings(body).map((h) => [h.level, h.line])).toEqual(oracle(body));
    }),
    { numRuns: Number(process.env.FUZZ_RUNS ?? 1000), seed: 20261124 },
  );
});
