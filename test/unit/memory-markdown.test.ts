import { DEFAULT_LIMITS } from '../../lambdas/memory/config';
import { MemoryError } from '../../lambdas/memory/errors';
import {
  composeNote,
  extractTags,
  extractTitle,
  makeExcerpt,
  parseFrontMatterYaml,
  parseNoteLenient,
  parseNoteStrict,
  startsWithFence,
  trySplit,
  validateFrontMatter,
} from '../../lambdas/memory/markdown';

const L = DEFAULT_LIMITS;

function fmError(fn: () => unknown): string | undefined {
  try {
    fn();
    return undefined;
  } catch (err) {
    if (err instanceof MemoryError) return err.reason;
    throw err;
  }
}

describe('front matter', () => {
  test('splits fenced YAML from the body, CRLF and `...` closers included', () => {
    expect(trySplit('---\na: 1\n---\nbody')).toEqual({ yaml: 'a: 1\n', head: '---\na: 1\n---\n', body: 'body' });
    expect(trySplit('---\r\na: 1\r\n...\r\nbody')?.body).toBe('body');
    expect(trySplit('---\na: 1\n---')?.body).toBe('');
    expect(trySplit('no front matter')).toEqual({ yaml: null, head: '', body: 'no front matter' });
    expect(trySplit('---\nnever closed\n')).toBeNull();
  });

  test('parses with the core schema: no timestamps, no yes/no booleans, no custom tags', () => {
    expect(parseFrontMatterYaml('d: 2026-01-01\nb: yes\nn: 0x1F\nl: [a, b]\n', L)).toEqual({ d: '2026-01-01', b: 'yes', n: 31, l: ['a', 'b'] });
    expect(fmError(() => parseFrontMatterYaml('f: !!js/function "x"\n', L))).toBe('invalid_frontmatter');
    expect(fmError(() => parseFrontMatterYaml('x: !custom 1\n', L))).toBe('invalid_frontmatter');
  });

  test('refuses duplicate keys, non-mappings, invalid YAML and non-finite numbers', () => {
    expect(fmError(() => parseFrontMatterYaml('a: 1\na: 2\n', L))).toBe('invalid_frontmatter');
    expect(fmError(() => parseFrontMatterYaml('- a\n- b\n', L))).toBe('invalid_frontmatter');
    expect(fmError(() => parseFrontMatterYaml('just a string\n', L))).toBe('invalid_frontmatter');
    expect(fmError(() => parseFrontMatterYaml('a: [1\n', L))).toBe('invalid_frontmatter');
    expect(fmError(() => parseFrontMatterYaml('a: .inf\n', L))).toBe('invalid_frontmatter');
    expect(parseFrontMatterYaml('', L)).toEqual({});
  });

  test('limits aliases (expansion attacks), size and depth', () => {
    const laughs = ['a: &a [x, x, x, x, x, x, x, x, x]'];
    for (let i = 1; i < 10; i++) {
      const prev = String.fromCharCode(96 + i);
      const cur = String.fromCharCode(97 + i);
      laughs.push(`${cur}: &${cur} [*${prev}, *${prev}, *${prev}, *${prev}, *${prev}, *${prev}, *${prev}, *${prev}, *${prev}]`);
    }
    expect(fmError(() => parseFrontMatterYaml(`${laughs.join('\n')}\n`, L))).toBe('invalid_frontmatter');
    expect(parseFrontMatterYaml('a: &x 1\nb: *x\n', L)).toEqual({ a: 1, b: 1 });
    expect(fmError(() => parseFrontMatterYaml(`a: "${'x'.repeat(L.maxFrontmatterBytes)}"\n`, L))).toBe('invalid_frontmatter');
    let deep = '1';
    for (let i = 0; i < 30; i++) deep = `[${deep}]`;
    expect(fmError(() => parseFrontMatterYaml(`a: ${deep}\n`, L))).toBe('invalid_frontmatter');
  });

  test('JSON front matter must be a plain object of JSON values', () => {
    expect(validateFrontMatter({ a: [1, { b: null }] }, L)).toEqual({ a: [1, { b: null }] });
    expect(fmError(() => validateFrontMatter([1], L))).toBe('invalid_frontmatter');
    expect(fmError(() => validateFrontMatter('x', L))).toBe('invalid_frontmatter');
    expect(fmError(() => validateFrontMatter({ a: new Date() }, L))).toBe('invalid_frontmatter');
    expect(fmError(() => validateFrontMatter(JSON.parse('{"__proto__": {"x": 1}}'), L))).toBe('invalid_frontmatter');
  });

  test('compose and parse round-trip; no fence without keys; long values are not folded', () => {
    const fm = { title: 'x: y', n: 1, s: '1', list: ['a', 'b'], long: 'w '.repeat(100).trim() };
    const text = composeNote(fm, '# Body\n');
    expect(text.startsWith('---\n')).toBe(true);
    expect(text.split('\n').some((l) => l.startsWith('long: ') && l.length > 150)).toBe(true);
    const { frontmatter, split } = parseNoteStrict(text, L);
    expect(frontmatter).toEqual(fm);
    expect(split.body).toBe('# Body\n');
    expect(composeNote({}, 'plain')).toBe('plain');
  });

  test('lenient parsing keeps a note with broken front matter readable', () => {
    expect(parseNoteLenient('---\na: [\n---\nbody', L)).toEqual({ frontmatter: {}, body: '---\na: [\n---\nbody' });
  });

  test('a body starting with a fence line is detected', () => {
    expect(startsWithFence('---\nx')).toBe(true);
    expect(startsWithFence('---  \r\nx')).toBe(true);
    expect(startsWithFence('---')).toBe(true);
    expect(startsWithFence('----\nx')).toBe(false);
    expect(startsWithFence('text\n---\n')).toBe(false);
  });
});

describe('title', () => {
  test('first heading of any level, outside code fences, inline markup removed', () => {
    expect(extractTitle('intro\n## The *Real* [Title](http://x) ##\n# Later', 'a/b.md')).toBe('The Real Title');
    expect(extractTitle('```\n# not a heading\n```\n# Yes', 'a/b.md')).toBe('Yes');
    expect(extractTitle('#hashtag only\n', 'notes/my note.md')).toBe('my note');
    expect(extractTitle('', 'x/y/z.md')).toBe('z');
  });
});

describe('tags', () => {
  test('front matter tags first, then inline #tags', () => {
    expect(extractTags({ tags: ['a', '#b', 3] }, 'text #c and #d/e-f_g')).toEqual(['a', 'b', '3', 'c', 'd/e-f_g']);
    expect(extractTags({ tags: 'x, y z' }, '')).toEqual(['x', 'y', 'z']);
  });

  test('not all digits, not in code spans or fences, not URL fragments or headings', () => {
    const body = [
      '# Heading',
      'issue #123 and #42x',
      'code `#notatag` and ``#nor `this` ``',
      '```',
      '#fenced',
      '```',
      '~~~~',
      '#tilde',
      '~~~~',
      'see http://x.com/page#anchor and [link](#frag) and a#b',
      '#start of line',
    ].join('\n');
    expect(extractTags({}, body)).toEqual(['42x', 'start']);
  });

  test('case-sensitive and deduplicated', () => {
    expect(extractTags({ tags: ['Tag'] }, '#tag #Tag #tag')).toEqual(['Tag', 'tag']);
  });
});

describe('excerpt', () => {
  test('plain text, leading title heading and code left out', () => {
    expect(makeExcerpt('# Title\n\nSome **bold** and [a link](http://x) `code`.\n\n```js\nconst x = 1;\n```\n- item one\n> quoted')).toBe(
      'Some bold and a link code. item one quoted',
    );
  });

  test('capped at 200 characters on a word boundary', () => {
    const e = makeExcerpt('word '.repeat(100));
    expect(e.length).toBeLessThanOrEqual(201);
    expect(e.endsWith('word…')).toBe(true);
  });
});

describe('hostile input', () => {
  // Inputs that make backtracking patterns quadratic; these functions must read them in one pass.
  const big = 200_000;
  test('long runs of spaces, backticks and brackets', () => {
    expect(extractTitle(`# a${' '.repeat(big)}x`, 'n.md')).toBe('a x');
    expect(extractTitle(`# a${' '.repeat(big)}#`, 'n.md')).toBe('a');
    expect(extractTags({}, `x ${'`'.repeat(big)} #real`)).toEqual(['real']);
    expect(extractTags({}, `${'`` `'.repeat(big / 4)} #t`)).toEqual(['t']);
    expect(makeExcerpt('[['.repeat(big)).length).toBeLessThanOrEqual(201);
    expect(makeExcerpt('[a]('.repeat(big / 4)).length).toBeLessThanOrEqual(201);
    expect(makeExcerpt('**a '.repeat(big / 4)).length).toBeLessThanOrEqual(201);
  });
});

describe('deeply nested YAML', () => {
  // About 2 KB of each overflowed the YAML parser's stack (a 500) before the text was bounded.
  test.each([
    ['flow sequences', `${'['.repeat(1000)}${']'.repeat(1000)}`],
    ['flow mappings', `a: ${'{b: '.repeat(1000)}1${'}'.repeat(1000)}`],
    ['compact sequences', `${'- '.repeat(1000)}x`],
    ['block mappings', Array.from({ length: 200 }, (_, i) => `${' '.repeat(i)}k:`).join('\n')],
  ])('%s 1,000 levels deep are a 400 naming the limit', (_what, yaml) => {
    expect(() => parseFrontMatterYaml(yaml, L)).toThrow(`front matter is nested deeper than ${L.maxFrontmatterDepth} levels`);
    expect(() => parseNoteStrict(`---\n${yaml}\n---\nbody`, L)).toThrow(MemoryError);
  });

  test('the bound never refuses what the exact check accepts: the limit itself, prose with dashes and colons, brackets in strings', () => {
    const atLimit = `${Array.from({ length: L.maxFrontmatterDepth }, (_, i) => `${'  '.repeat(i)}k:`).join('\n')} 1`;
    expect(fmError(() => parseFrontMatterYaml(atLimit, L))).toBeUndefined();
    expect(parseFrontMatterYaml(`summary: "${'this - that: other ? ['.repeat(100)}"\n`, L).summary).toContain('this - that');
    expect(parseFrontMatterYaml(`note: ${'a - b '.repeat(200)}\n`, L).note).toContain('a - b');
    expect(parseFrontMatterYaml(`list: [${Array.from({ length: 300 }, (_, i) => `"[${i}"`).join(', ')}]\n`, L).list).toHaveLength(300);
  });
});
