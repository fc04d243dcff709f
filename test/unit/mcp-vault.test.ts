import { ToolError } from '../../lambdas/shared/mcp/tool-error';
import { parseFolder, parseNotePath } from '../../lambdas/mcp/vault';

/** Vault addressing (spec 3, DECISIONS): `@<vault>/<path>`, bare paths in the default memory. */
describe('parseNotePath', () => {
  it.each([
    ['a/b.md', { memory: 'default', path: 'a/b.md', display: 'a/b.md', prefix: '' }],
    ['@work/a/b.md', { memory: 'work', path: 'a/b.md', display: '@work/a/b.md', prefix: '@work/' }],
    ['@default/x.md', { memory: 'default', path: 'x.md', display: '@default/x.md', prefix: '@default/' }],
    // What follows the vault is the core's to judge (it refuses a second @ as an invalid path).
    ['@w/@x.md', { memory: 'w', path: '@x.md', display: '@w/@x.md', prefix: '@w/' }],
  ])('%s', (raw, expected) => {
    expect(parseNotePath(raw)).toMatchObject(expected);
  });

  it.each(['@work', '@work/'])('rejects the bare vault %s (invalid_argument)', (raw) => {
    expect(() => parseNotePath(raw)).toThrow(expect.objectContaining({ code: 'invalid_argument' }));
  });

  it.each(['@Work/a.md', '@/a.md', '@', '@export/a.md', `@${'x'.repeat(65)}/a.md`, '@a b/c.md'])(
    'answers not_found for %s, which no REST memory can be named',
    (raw) => {
      let caught: unknown;
      try {
        parseNotePath(raw);
      } catch (err) {
        caught = err;
      }
      expect(caught).toBeInstanceOf(ToolError);
      expect(caught).toMatchObject({ code: 'not_found' });
    },
  );
});

describe('parseFolder', () => {
  it.each([
    ['', { memory: 'default', folder: '', prefix: '' }],
    ['projects/acme', { memory: 'default', folder: 'projects/acme', prefix: '' }],
    ['@work', { memory: 'work', folder: '', prefix: '@work/' }],
    ['@work/', { memory: 'work', folder: '', prefix: '@work/' }],
    ['@work/sub/deeper', { memory: 'work', folder: 'sub/deeper', prefix: '@work/' }],
  ])('%j', (raw, expected) => {
    expect(parseFolder(raw)).toMatchObject(expected);
  });
});
