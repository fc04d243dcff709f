import { buildGraph, noteLookup, summarize } from '../../lambdas/memory/link-graph';
import { findLinks, resolveLink, type FoundLink } from '../../lambdas/memory/links';
import type { FileEntry } from '../../lambdas/memory/note-index';

/**
 * Links as the graph reads them: the same link forms a move rewrites (wikilinks by path, file name,
 * partial path and title; relative and rooted markdown links), nothing in code, attachments and
 * external links left out; resolution, dangling links, orphans.
 */
test('finds wikilinks, embeds and markdown links to notes, not code, attachments or external links', () => {
  const body = [
    '# Title',
    'See [[plan]], [[projects/alpha#Goals|the goals]] and ![[diagram.png]].',
    '[x](../other.md#part) [y](https://example.com/a.md) [z](#local) [img](pic.png)',
    '`[[not a link]]`',
    '```',
    '[[in code]]',
    '```',
    '[ref]: <with space.md>',
    '[[ spaced ]] [[]]',
  ].join('\n');
  expect(findLinks(body)).toEqual([
    { kind: 'wikilink', target: 'plan', line: 2 },
    { kind: 'wikilink', target: 'projects/alpha', line: 2 },
    { kind: 'markdown', target: '../other.md#part', line: 3 },
    { kind: 'markdown', target: 'with space.md', line: 8 },
    { kind: 'wikilink', target: 'spaced', line: 9 },
  ]);
});

const entry = (title: string, blob = title): FileEntry => ({ blob, size: 1, title, tags: [], updated: '2026-01-01T00:00:00Z', excerpt: '' });
const files = new Map<string, FileEntry>([
  ['index.md', entry('Index', 'b-index')],
  ['projects/alpha.md', entry('Alpha', 'b-alpha')],
  ['projects/plan.md', entry('Plan', 'b-plan1')],
  ['archive/plan.md', entry('Old plan', 'b-plan2')],
  ['archive/deep/notes.md', entry('My notes', 'b-notes')],
  ['lonely.md', entry('Lonely', 'b-lonely')],
]);
const lookup = noteLookup(files);
const w = (target: string): FoundLink => ({ kind: 'wikilink', target, line: 1 });
const m = (target: string): FoundLink => ({ kind: 'markdown', target, line: 1 });

test.each([
  ['index.md', w('projects/alpha'), 'projects/alpha.md'],
  ['index.md', w('projects/alpha.md'), 'projects/alpha.md'],
  ['index.md', w('/projects/alpha'), 'projects/alpha.md'],
  ['index.md', w('alpha'), 'projects/alpha.md'],
  ['index.md', w('deep/notes'), 'archive/deep/notes.md'],
  ['index.md', w('My notes'), 'archive/deep/notes.md'],
  ['archive/deep/notes.md', w('plan'), 'archive/plan.md'],
  ['projects/alpha.md', w('plan'), 'projects/plan.md'],
  ['index.md', w('plan'), 'archive/plan.md'],
  ['projects/alpha.md', m('plan.md'), 'projects/plan.md'],
  ['projects/alpha.md', m('../index.md'), 'index.md'],
  ['projects/alpha.md', m('/index.md'), 'index.md'],
  ['archive/deep/notes.md', m('../../projects/alpha.md#x'), 'projects/alpha.md'],
  ['projects/alpha.md', m('my%20plan.md'), null],
  ['index.md', w('nowhere'), null],
  ['index.md', m('../../above.md'), null],
])('from %s, %j leads to %s', (from, link, to) => {
  expect(resolveLink(link, from, lookup).to).toBe(to);
});

test('the graph: outgoing one per destination, incoming one per note, dangling links named where they point', () => {
  const texts: Record<string, string> = {
    'b-index': '[[alpha]] [[alpha]] [[nowhere]] [x](projects/plan.md)',
    'b-alpha': '[[index]] [y](missing.md) [[alpha]]',
    'b-plan1': '',
    'b-plan2': '[[../index]]',
    'b-notes': '[[Plan]]',
    'b-lonely': '',
  };
  const graph = buildGraph(files, (blob) => findLinks(texts[blob] ?? ''));
  expect(graph.outgoing.get('index.md')).toEqual([
    { target: 'alpha', kind: 'wikilink', line: 1, path: 'projects/alpha.md' },
    { target: 'nowhere', kind: 'wikilink', line: 1, path: null },
    { target: 'projects/plan.md', kind: 'markdown', line: 1, path: 'projects/plan.md' },
  ]);
  expect(graph.incoming.get('projects/alpha.md')?.map((l) => l.path)).toEqual(['index.md', 'projects/alpha.md']);
  expect(graph.incoming.get('nowhere.md')).toEqual([{ path: 'index.md', target: 'nowhere', kind: 'wikilink', line: 1, dangling: true }]);
  expect(graph.incoming.get('projects/missing.md')?.[0]).toMatchObject({ path: 'projects/alpha.md', dangling: true });
  // [[Plan]] from archive/deep: no note named Plan.md by path or name there, so by title.
  expect(graph.outgoing.get('archive/deep/notes.md')?.[0].path).toBe('projects/plan.md');
  const all = summarize(graph, { orphans: true, dangling: true }, 100);
  expect(all.orphans).toEqual(['archive/deep/notes.md', 'archive/plan.md', 'lonely.md']);
  expect(all.dangling?.map((d) => `${d.path} → ${d.target}`)).toEqual(['archive/plan.md → ../index', 'index.md → nowhere', 'projects/alpha.md → missing.md']);
  expect(summarize(graph, { orphans: true, dangling: false }, 2)).toEqual({
    notes: 6,
    links: 5,
    orphans: ['archive/deep/notes.md', 'archive/plan.md'],
    truncated: true,
  });
});
