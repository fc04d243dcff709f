import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { unzipSync } from 'fflate';
import type { CommitLoop } from '../../lambdas/memory/commit';
import { DEFAULT_LIMITS } from '../../lambdas/memory/config';
import { expectMemoryError, inMemoryService } from '../support/memory-harness';
import { cloneBundle } from '../support/memory-git';
import { gitRefusal, validateNotePath } from '../../lambdas/memory/paths';

/**
 * The note-path rule is checked against real git: for every candidate folder name, our verdict must
 * be git's. Git refuses a path in `update-index` (its `verify_path`, with the HFS+ and NTFS
 * protections on) or flags the tree in `fsck --full --strict` (`.gitmodules` as a folder).
 */
const HOSTILE = [
  '.git',
  '.GIT',
  '.git.',
  '.git..',
  '.git ',
  '.git. .',
  'git~1',
  'GIT~1',
  '.g\u200cit',
  '.\u200dgit',
  '.git\ufeff',
  '.git::$INDEX_ALLOCATION',
  '.git:stream',
  '.gitmodules',
  '.GitModules',
  '.gitmodules.',
  'gitmod~1',
  'GI7EBA~1',
];
const BENIGN = ['.github', '.gitkeep', '.git-notes', 'git', 'git~x', 'notes~1', '.gi', 'a.git', '.gitx', 'gits~1', 'x:y', '.hidden', 'café', '.git_'];

let repo: string;
const git = (...args: string[]) => execFileSync('git', ['-c', 'core.protectNTFS=true', '-c', 'core.protectHFS=true', ...args], { cwd: repo, encoding: 'utf8' });

/** Does real git accept `<folder>/a.md` in a tree that passes fsck? (A fresh repository each time: fsck --full reads every object.) */
function gitAccepts(folder: string): boolean {
  repo = mkdtempSync(join(tmpdir(), 'git-paths-'));
  execFileSync('git', ['init', '-q', repo]);
  try {
    return probe(folder);
  } finally {
    rmSync(repo, { recursive: true, force: true });
  }
}

function probe(folder: string): boolean {
  const blob = git('hash-object', '-w', '--stdin').trim();
  const add = spawnSync(
    'git',
    ['-c', 'core.protectNTFS=true', '-c', 'core.protectHFS=true', 'update-index', '--add', '--cacheinfo', `100644,${blob},${folder}/a.md`],
    {
      cwd: repo,
      encoding: 'utf8',
    },
  );
  if (add.status !== 0) return false;
  try {
    const tree = git('write-tree').trim();
    // Only the new tree is checked: a commit of it alone, then fsck of everything reachable.
    const commit = execFileSync('git', ['commit-tree', tree, '-m', 'probe'], {
      cwd: repo,
      encoding: 'utf8',
      env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@e', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@e' },
    }).trim();
    git('update-ref', 'refs/heads/probe', commit);
    const fsck = spawnSync('git', ['fsck', '--full', '--strict', '--no-dangling'], { cwd: repo, encoding: 'utf8' });
    return fsck.status === 0;
  } catch {
    return false;
  }
}

function weAccept(folder: string): boolean {
  try {
    validateNotePath(`${folder}/a.md`, DEFAULT_LIMITS);
    return true;
  } catch {
    return false;
  }
}

describe('note paths follow real git', () => {
  test.each(HOSTILE)('refuses %p, as git does', (folder) => {
    expect(gitAccepts(folder)).toBe(false);
    expect(weAccept(folder)).toBe(false);
    expect(gitRefusal(folder)).toBeDefined();
  });

  test.each(BENIGN)('accepts %p, as git does', (folder) => {
    expect(gitAccepts(folder)).toBe(true);
    expect(weAccept(folder)).toBe(true);
  });

  // Git gives these files a meaning; git 2.40 and later flag a non-blob `.gitattributes` in fsck (the
  // git here may be older, so no cross-check), and none of them can be a note (no .md).
  test.each(['.gitattributes', '.GITATTRIBUTES', 'gitatt~1', 'gi7d29~2', '.gitignore', 'gi250a~1', '.mailmap', 'maba30~1'])(
    'refuses the git file name %p as a folder',
    (folder) => {
      expect(weAccept(folder)).toBe(false);
    },
  );

  test('the refusal names the segment and says why', () => {
    expect(() => validateNotePath('notes/.git./a.md', DEFAULT_LIMITS)).toThrow('path segment ".git." names the git directory; git refuses it in a repository');
    expect(() => validateNotePath('GIT~1/a.md', DEFAULT_LIMITS)).toThrow('is the Windows short name of a git file');
  });
});

describe('a history written before the rule', () => {
  /** Commits `<folder>/a.md` past the path rule, as a server without it would have. */
  async function brokenMemory(folder: string) {
    const svc = inMemoryService();
    const me = { account: 'acct' };
    await svc.createMemory(me, 'm');
    await svc.writeNote(me, 'm', 'ok.md', { body: 'fine' });
    const commits = (svc as unknown as { writes: { deps: { commits: CommitLoop } } }).writes.deps.commits;
    const path = `${folder}/a.md`;
    await commits.run(me, 'm', path, {}, async ({ git }) => ({
      kind: 'put',
      puts: [{ path, blob: await git.writeBlob('x\n'), meta: { title: 'a', tags: [], excerpt: 'x', size: 2 } }],
      message: 'written before the rule',
    }));
    return { svc, me };
  }

  test('its bundle export is a 409 naming the path; the notes stay readable and in the zip', async () => {
    const { svc, me } = await brokenMemory('.git.');
    const err = await expectMemoryError(svc.exportBundle(me, 'm'), 'CONFLICT', 'unexportable_history');
    expect(err.message).toContain('".git."');
    expect((await svc.readNote(me, 'm', 'ok.md')).body).toBe('fine');
    const zip = await svc.exportZip(me);
    expect(Object.keys(unzipSync(zip.bytes)).sort()).toEqual(['m/.git./a.md', 'm/ok.md']);
  });

  test('a .gitmodules folder still exports, and git clones it', async () => {
    const { svc, me } = await brokenMemory('.gitmodules');
    const clone = cloneBundle((await svc.exportBundle(me, 'm')).bytes);
    try {
      expect(clone.git('ls-files').trim().split('\n').sort()).toEqual(['.gitmodules/a.md', 'ok.md']);
    } finally {
      clone.cleanup();
    }
  });
});
