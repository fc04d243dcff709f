import { DEFAULT_LIMITS } from '../../lambdas/memory/config';
import { MemoryError } from '../../lambdas/memory/errors';
import { ancestorFolders, validateFolder, validateMemoryName, validateNotePath } from '../../lambdas/memory/paths';

function reason(fn: () => unknown): string | undefined {
  try {
    fn();
    return undefined;
  } catch (err) {
    if (err instanceof MemoryError) return `${err.code}/${err.reason}`;
    throw err;
  }
}

describe('memory names', () => {
  test.each(['a', 'notes', 'my-memory_2', 'x'.repeat(64), '  padded  '])('accepts %p', (name) => {
    expect(validateMemoryName(name)).toBe(name.trim());
  });

  test.each([
    ['', 'invalid_name'],
    ['x'.repeat(65), 'invalid_name'],
    ['Upper', 'invalid_name'],
    ['with space', 'invalid_name'],
    ['dot.name', 'invalid_name'],
    ['slash/name', 'invalid_name'],
    ['ünïcode', 'invalid_name'],
    ['#account', 'invalid_name'],
    ['export', 'reserved_name'],
  ])('refuses %p (%s)', (name, why) => {
    expect(reason(() => validateMemoryName(name))).toBe(`BAD_REQUEST/${why}`);
  });
});

describe('note paths', () => {
  test.each(['a.md', 'folder/note.md', 'Deep/Er/Case.md', 'ünï/cödé.md', '.hidden/x.md', 'a b/c d.md', `${'x'.repeat(252)}.md`])('accepts %p', (p) => {
    expect(validateNotePath(p, DEFAULT_LIMITS)).toBe(p);
  });

  test.each([
    ['', 'required'],
    ['note.txt', 'not .md'],
    ['note.MD', 'case-sensitive extension'],
    ['.md', 'no stem'],
    ['/abs.md', 'leading slash'],
    ['a//b.md', 'empty segment'],
    ['a/./b.md', 'dot segment'],
    ['a/../b.md', 'dotdot'],
    ['../b.md', 'dotdot first'],
    ['a\\b.md', 'backslash'],
    ['a\u0000b.md', 'NUL'],
    ['a\nb.md', 'control'],
    ['folder/', 'trailing slash'],
    ['.git/x.md', '.git'],
    ['x.md/y.md', 'folder named like a note'],
    ['@vault/x.md', 'vault addressing'],
    [`${'x'.repeat(256)}.md`, 'segment too long'],
    [`${'abcdefghij/'.repeat(100)}x.md`, 'path too long'],
  ])('refuses %p (%s)', (p) => {
    expect(reason(() => validateNotePath(p, DEFAULT_LIMITS))).toBe('BAD_REQUEST/invalid_path');
  });
});

describe('folders', () => {
  test('root forms and trailing slash', () => {
    expect(validateFolder(undefined, DEFAULT_LIMITS)).toBe('');
    expect(validateFolder('', DEFAULT_LIMITS)).toBe('');
    expect(validateFolder('/', DEFAULT_LIMITS)).toBe('');
    expect(validateFolder('a/b/', DEFAULT_LIMITS)).toBe('a/b');
  });

  test.each(['/a', 'a//b', 'a/../b', 'a\\b', 'x.md'])('refuses %p', (f) => {
    expect(reason(() => validateFolder(f, DEFAULT_LIMITS))).toBe('BAD_REQUEST/invalid_path');
  });

  test('ancestors are deepest first and end at the root', () => {
    expect(ancestorFolders('a/b/c.md')).toEqual(['a/b', 'a', '']);
    expect(ancestorFolders('c.md')).toEqual(['']);
  });
});
