import { DEFAULT_LIMITS } from '../../lambdas/memory/config';
import { MemoryError } from '../../lambdas/memory/errors';
import { ancestorFolders, checkTwins, foldKey, validateFolder, validateMemoryName, validateNewNotePath, validateNotePath } from '../../lambdas/memory/paths';

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

describe('names a write may create (portable on every system)', () => {
  test.each(['a.md', 'ünï/cödé.md', 'Deep/Er/Case.md', 'console.md', 'com10.md', 'a b/c d.md', '100%.md', 'a%20b.md', 'ok.md'])('accepts %p', (p) => {
    expect(validateNewNotePath(p, DEFAULT_LIMITS)).toBe(p);
  });

  test.each([
    ['CON.md', /Windows device name CON/],
    ['aux/x.md', /Windows device name AUX/],
    ['Nul.tar.md', /Windows device name NUL/],
    ['lpt¹.md', /Windows device name LPT¹/],
    ['conin$.md', /CONIN\$/],
    ['a\u202Eb.md', /U\+202E/],
    ['a\u2066b.md', /U\+2066/],
    ['soft\u00ADhyphen.md', /U\+00AD/],
    ['c1\u0085.md', /U\+0085/],
    ['line\u2028sep.md', /U\+2028/],
    ['tag\u{E0041}.md', /U\+E0041/],
    ['%2e%2e/y.md', /percent-encoded/],
    ['a%2Fb.md', /percent-encoded/],
    ['a%255c.md', /percent-encoded/],
    ['what?.md', /"\?"/],
    ['a<b>.md', /"<"/],
    ['pipe|.md', /"\|"/],
    ['dot./x.md', /ends in a dot or a space/],
    ['space /x.md', /ends in a dot or a space/],
  ])('refuses %p', (p, why) => {
    let message = '';
    try {
      validateNewNotePath(p, DEFAULT_LIMITS);
    } catch (err) {
      message = err instanceof MemoryError ? `${err.reason}: ${err.message}` : String(err);
    }
    expect(message).toMatch(/^invalid_path: /);
    expect(message).toMatch(why);
  });

  test('a credential in a path is refused_content, without the value', () => {
    let err: unknown;
    try {
      validateNewNotePath('keys/AKIAZ7XQ3P5N2K4M6R8T.md', DEFAULT_LIMITS);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(MemoryError);
    expect((err as MemoryError).reason).toBe('refused_content');
    expect((err as MemoryError).message).not.toContain('AKIAZ7XQ3P5N2K4M6R8T');
  });
});

describe('twins', () => {
  const files = new Map(['Notes/Today.md', 'Ideas/Café.md', 'straße.md'].map((p) => [p, {}]));
  const twin = (paths: string[], moved: string[] = []) => reason(() => checkTwins(files, paths, moved));

  test.each(['notes/x.md', 'NOTES/Today.md', 'Notes/today.md', 'Ideas/Cafe\u0301.md', 'ideas/café.md', 'STRASSE.md', 'strasse.md'])(
    '%p twins an existing path',
    (p) => {
      expect(twin([p])).toBe('CONFLICT/path_collision');
    },
  );

  test('an exact path is an update; other names are free; twins among new paths collide', () => {
    expect(twin(['Notes/Today.md', 'Notes/Tomorrow.md', 'Ideas/Thé.md'])).toBeUndefined();
    expect(twin(['new/a.md', 'New/b.md'])).toBe('CONFLICT/path_collision');
  });

  test('a move away frees the name: a rename by case alone is no twin', () => {
    expect(twin(['notes/today.md'], ['Notes/Today.md'])).toBeUndefined();
  });

  test('the fold key: NFC, then case folded', () => {
    expect(foldKey('Cafe\u0301.MD')).toBe(foldKey('café.md'));
    expect(foldKey('\u212A.md')).toBe(foldKey('k.md'));
    expect(foldKey('a.md')).not.toBe(foldKey('b.md'));
  });
});
