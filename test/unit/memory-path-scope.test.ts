import type { MemoryService } from '../../lambdas/memory/service';
import type { Caller } from '../../lambdas/memory/types';
import { expectMemoryError, inMemoryService } from '../support/memory-harness';

/**
 * A caller limited to a folder (`Caller.pathPrefix`: a personal access token with a path prefix)
 * reaches the notes inside it and nothing else, through every operation of the core (the service
 * checks it before each runs, so REST, MCP and git share the rule). Over HTTP, MCP and git:
 * test/integration/personal-tokens-http.test.ts.
 */
const owner: Caller = { account: 'acct', author: { name: 'Owner' } };
const limited: Caller = { account: 'acct', author: { name: 'Script' }, pathPrefix: 'projects/alpha' };
let svc: MemoryService;
let rev: string;

beforeAll(async () => {
  svc = inMemoryService();
  await svc.createMemory(owner, 'work');
  await svc.writeNote(owner, 'work', 'projects/alpha/plan.md', { body: '# Plan\n\nsecret-free alpha notes, see [[projects/beta/todo]]' });
  await svc.writeNote(owner, 'work', 'projects/alpha/deep/more.md', { body: '# More alpha' });
  await svc.writeNote(owner, 'work', 'projects/alpha-team.md', { body: '# Alpha team (a sibling whose name starts the same)' });
  await svc.writeNote(owner, 'work', 'projects/beta/todo.md', { body: '# Todo\n\nalpha is mentioned outside too' });
  rev = (await svc.writeNote(owner, 'work', 'diary.md', { body: '# Diary, private' })).rev;
});

const forbidden = (p: Promise<unknown>) => expectMemoryError(p, 'FORBIDDEN');

test('reads, writes, edits, deletes and restores inside the folder, at any depth and any rev', async () => {
  expect((await svc.readNote(limited, 'work', 'projects/alpha/plan.md')).title).toBe('Plan');
  expect((await svc.readNote(limited, 'work', 'projects/alpha/plan.md', { rev })).title).toBe('Plan');
  await svc.writeNote(limited, 'work', 'projects/alpha/deep/new.md', { body: '# New' });
  await svc.editNote(limited, 'work', 'projects/alpha/deep/new.md', { mode: 'append', body: 'more' });
  await svc.deleteNote(limited, 'work', 'projects/alpha/deep/new.md');
  await svc.restoreNote(limited, 'work', 'projects/alpha/deep/new.md');
  await svc.moveNote(limited, 'work', { from: 'projects/alpha/deep/new.md', to: 'projects/alpha/moved.md' });
  await svc.importNotes(limited, 'work', [{ path: 'projects/alpha/i.md', markdown: '# I' }]);
});

test('nothing outside it: a sibling folder, a sibling whose name starts the same, the root, a path climbing out', async () => {
  for (const path of ['projects/beta/todo.md', 'projects/alpha-team.md', 'diary.md', 'projects/alpha.md']) {
    await forbidden(svc.readNote(limited, 'work', path));
    await forbidden(svc.readNote(limited, 'work', path, { rev }));
    await forbidden(svc.writeNote(limited, 'work', path, { body: 'x' }));
    await forbidden(svc.editNote(limited, 'work', path, { mode: 'append', body: 'x' }));
    await forbidden(svc.deleteNote(limited, 'work', path));
    await forbidden(svc.restoreNote(limited, 'work', path, { rev }));
  }
  // Starts with the folder but climbs out: the path rules refuse it (400), it never reaches the note.
  await expectMemoryError(svc.readNote(limited, 'work', 'projects/alpha/../beta/todo.md'), 'BAD_REQUEST');
  await forbidden(svc.moveNote(limited, 'work', { from: 'projects/alpha/plan.md', to: 'projects/beta/plan.md' }));
  await forbidden(svc.moveNote(limited, 'work', { from: 'projects/beta/todo.md', to: 'projects/alpha/todo.md' }));
  await forbidden(
    svc.importNotes(limited, 'work', [
      { path: 'projects/alpha/ok.md', markdown: '# ok' },
      { path: 'elsewhere.md', markdown: '# no' },
    ]),
  );
  expect((await svc.readNote(owner, 'work', 'projects/beta/todo.md')).body).toContain('alpha is mentioned outside');
  await expectMemoryError(svc.readNote(owner, 'work', 'projects/alpha/ok.md'), 'NOT_FOUND');
});

test('a move may not rewrite links: the notes linking to it may lie outside', async () => {
  await forbidden(svc.moveNote(limited, 'work', { from: 'projects/alpha/moved.md', to: 'projects/alpha/moved2.md', updateLinks: true }));
});

test('listings, searches and changes since a rev: the folder by default, never above or beside it', async () => {
  const listed = await svc.listNotes(limited, 'work', { depth: 'all' });
  expect(listed.folder).toBe('projects/alpha');
  expect(listed.entries.every((e) => e.path.startsWith('projects/alpha/'))).toBe(true);
  expect((await svc.listNotes(limited, 'work', { folder: '/' })).folder).toBe('projects/alpha');
  expect((await svc.listNotes(limited, 'work', { folder: 'projects/alpha/deep/' })).folder).toBe('projects/alpha/deep');
  for (const folder of ['projects', 'projects/beta', 'projects/alpha-team', 'projects/alph']) await forbidden(svc.listNotes(limited, 'work', { folder }));
  const found = await svc.searchNotes(limited, 'work', { q: 'alpha' });
  expect(found.results.map((r) => r.path).sort()).toEqual(['projects/alpha/deep/more.md', 'projects/alpha/plan.md']);
  await forbidden(svc.searchNotes(limited, 'work', { q: 'alpha', folder: 'projects' }));
  const changes = await svc.changesSince(limited, 'work', rev);
  expect(changes.changes.length).toBeGreaterThan(0);
  expect(changes.changes.every((c) => c.path.startsWith('projects/alpha/'))).toBe(true);
  await forbidden(svc.changesSince(limited, 'work', rev, { folder: 'projects/beta' }));
});

test('history and diff of one note inside the folder, other notes left out of each commit', async () => {
  await forbidden(svc.historyPage(limited, 'work', {}));
  await forbidden(svc.historyPage(limited, 'work', { path: 'diary.md' }));
  await forbidden(svc.diff(limited, 'work', {}));
  await forbidden(svc.diff(limited, 'work', { path: 'diary.md' }));
  // One commit touching notes inside and outside: its other change is left out, and nothing says how many.
  await svc.importNotes(owner, 'work', [
    { path: 'projects/alpha/plan.md', markdown: '# Plan\n\nrevised' },
    { path: 'diary.md', markdown: '# Diary, revised privately' },
  ]);
  const page = await svc.historyPage(limited, 'work', { path: 'projects/alpha/plan.md' });
  expect(page.commits[0].changes).toEqual([{ path: 'projects/alpha/plan.md', change: 'modified' }]);
  expect(page.commits.every((c) => c.moreChanges === undefined && c.changes.every((ch) => ch.path.startsWith('projects/alpha/')))).toBe(true);
  expect((await svc.historyPage(owner, 'work', { path: 'projects/alpha/plan.md' })).commits[0].changes).toHaveLength(2);
  const d = await svc.diff(limited, 'work', { path: 'projects/alpha/plan.md' });
  expect(d.files.map((f) => f.path)).toEqual(['projects/alpha/plan.md']);
});

test('whole-memory operations are refused: exports, git, retiring and restoring the memory; stats and creating a memory are not', async () => {
  await forbidden(svc.exportBundle(limited, 'work'));
  await forbidden(svc.exportZip(limited));
  await forbidden(svc.gitHead(limited, 'work'));
  await forbidden(svc.gitPack(limited, 'work', [rev], []));
  await forbidden(svc.gitCommon(limited, 'work', [rev]));
  await forbidden(svc.retireMemory(limited, 'work'));
  await forbidden(svc.restoreMemory(limited, 'work'));
  expect((await svc.getMemory(limited, 'work')).name).toBe('work');
  expect((await svc.listMemories(limited)).map((m) => m.name)).toEqual(['work']);
  expect((await svc.createMemory(limited, 'other')).created).toBe(true);
  // The same folder in another memory of the grant.
  await svc.writeNote(limited, 'other', 'projects/alpha/x.md', { body: '# X' });
  await forbidden(svc.writeNote(limited, 'other', 'x.md', { body: '# X' }));
});
