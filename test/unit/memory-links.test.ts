import { rewriteLinks, type MoveSpec } from '../../lambdas/memory/links';

/**
 * Links to a moved note, rewritten so they still lead to it: wikilinks by path, by unique file name
 * and by title, relative markdown links and reference definitions, with anchors, aliases and
 * encodings kept; code and front matter untouched; the moved note's own links re-aimed.
 */
const spec = (over: Partial<MoveSpec> = {}): MoveSpec => ({
  from: 'inbox/idea.md',
  to: 'projects/alpha/plan.md',
  fromTitle: 'Idea',
  toTitle: 'Idea',
  paths: ['inbox/idea.md', 'index.md', 'projects/other.md', 'deep/a/b.md'],
  ...over,
});
const stay = (path: string) => ({ before: path, after: path });

test.each([
  ['[[inbox/idea]]', '[[projects/alpha/plan]]'],
  ['[[inbox/idea.md]]', '[[projects/alpha/plan.md]]'],
  ['![[inbox/idea]]', '![[projects/alpha/plan]]'],
  ['[[inbox/idea#Goals|the idea]]', '[[projects/alpha/plan#Goals|the idea]]'],
  ['[[ inbox/idea ]]', '[[ projects/alpha/plan ]]'],
  ['[[idea]] (unique file name)', '[[plan]] (unique file name)'],
  ['[x](inbox/idea.md)', '[x](projects/alpha/plan.md)'],
  ['[x](./inbox/idea.md#goals)', '[x](projects/alpha/plan.md#goals)'],
  ['![img](/inbox/idea.md)', '![img](/projects/alpha/plan.md)'],
  ['[x](<inbox/idea.md>)', '[x](<projects/alpha/plan.md>)'],
  ['[x](inbox/idea.md "title")', '[x](projects/alpha/plan.md "title")'],
  ['[ref]: inbox/idea.md', '[ref]: projects/alpha/plan.md'],
  ['see `[[inbox/idea]]` in code', 'see `[[inbox/idea]]` in code'],
  ['[x](https://example.com/inbox/idea.md)', '[x](https://example.com/inbox/idea.md)'],
  ['[x](#inbox/idea.md)', '[x](#inbox/idea.md)'],
  ['[[inbox/idea-2]] and [x](inbox/idea.md.bak)', '[[inbox/idea-2]] and [x](inbox/idea.md.bak)'],
])('in index.md: %s → %s', (line, expected) => {
  expect(rewriteLinks(`# Index\n\n${line}\n`, stay('index.md'), spec())).toBe(`# Index\n\n${expected}\n`);
});

test('relative links from another folder, and percent-encoding kept as it was', () => {
  const s = spec({ from: 'inbox/my idea.md', to: 'projects/alpha/my plan.md', paths: ['inbox/my idea.md', 'deep/a/b.md'] });
  expect(rewriteLinks('[x](../../inbox/my%20idea.md)\n[y](<../../inbox/my idea.md>)\n', stay('deep/a/b.md'), s)).toBe(
    '[x](../../projects/alpha/my%20plan.md)\n[y](<../../projects/alpha/my plan.md>)\n',
  );
});

test('a file name shared by two notes is not a link by name; a new name that becomes ambiguous is written as a path', () => {
  expect(rewriteLinks('[[idea]]\n', stay('index.md'), spec({ paths: ['inbox/idea.md', 'other/idea.md'] }))).toBe('[[idea]]\n');
  const s = spec({ to: 'projects/other.md', paths: ['inbox/idea.md', 'projects/x/other.md'] });
  expect(rewriteLinks('[[idea]]\n', stay('index.md'), s)).toBe('[[projects/other]]\n');
});

test('by title, when the title came from the file name and changes with it', () => {
  const s = spec({ fromTitle: 'idea', toTitle: 'plan', paths: ['inbox/idea.md', 'x/idea2.md'] });
  expect(rewriteLinks('[[idea]]\n', stay('index.md'), s)).toBe('[[plan]]\n');
});

test('leaves fenced code, code spans and the front matter alone', () => {
  const text = '---\nsee: "[[inbox/idea]]"\n---\n```\n[[inbox/idea]]\n```\n`[x](inbox/idea.md)` and [[inbox/idea]]\n';
  expect(rewriteLinks(text, stay('index.md'), spec())).toBe(
    '---\nsee: "[[inbox/idea]]"\n---\n```\n[[inbox/idea]]\n```\n`[x](inbox/idea.md)` and [[projects/alpha/plan]]\n',
  );
});

test("re-aims the moved note's own relative links from its new folder, and links to itself", () => {
  const text = '# Idea\n\n[index](../index.md) [other](../projects/other.md) [me](idea.md) [[inbox/idea]] [web](https://x.y/z.md)\n';
  expect(rewriteLinks(text, { before: 'inbox/idea.md', after: 'projects/alpha/plan.md' }, spec())).toBe(
    '# Idea\n\n[index](../../index.md) [other](../other.md) [me](plan.md) [[projects/alpha/plan]] [web](https://x.y/z.md)\n',
  );
});

test('a link climbing above the root is left as written', () => {
  expect(rewriteLinks('[x](../../inbox/idea.md)\n', stay('index.md'), spec())).toBe('[x](../../inbox/idea.md)\n');
});
