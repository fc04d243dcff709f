import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Bases, GitObjectType } from '../../lambdas/memory/pack';

/** Real `git` over an exported bundle: verify it, clone it, run commands in the clone. */
export interface Clone {
  dir: string;
  git(...args: string[]): string;
  cleanup(): void;
}

const ENV = { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', GIT_TERMINAL_PROMPT: '0', LC_ALL: 'C' };

/** The real `git` with no system or user configuration and a fixed identity, for tests that commit with it. */
export const GIT_COMMITTER_ENV = {
  ...process.env,
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_AUTHOR_NAME: 'G',
  GIT_AUTHOR_EMAIL: 'g@x',
  GIT_COMMITTER_NAME: 'G',
  GIT_COMMITTER_EMAIL: 'g@x',
  LC_ALL: 'C',
};

export function cloneBundle(bytes: Uint8Array): Clone {
  const root = mkdtempSync(join(process.env.TEST_TMP_DIR ?? tmpdir(), 'memory-bundle-'));
  const file = join(root, 'memory.bundle');
  writeFileSync(file, bytes);
  const run = (cwd: string, args: string[]): string => execFileSync('git', args, { cwd, env: ENV, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  // `git bundle verify` needs a repository to check prerequisites against: an empty one will do.
  run(root, ['init', '--quiet', 'verify']);
  run(join(root, 'verify'), ['bundle', 'verify', '--quiet', file]);
  run(root, ['clone', '--quiet', file, 'clone']);
  const dir = join(root, 'clone');
  return { dir, git: (...args) => run(dir, args), cleanup: () => rmSync(root, { recursive: true, force: true }) };
}

/** Storage for `readPack` holding the objects of `stored` (a pack read before): the thin pack's bases among them. */
export function basesIn(stored: ReadonlyMap<string, { type: GitObjectType; content: Uint8Array }>): Bases {
  return async (oids) => {
    const found = new Map<string, { type: GitObjectType; content: Uint8Array }>();
    for (const oid of oids) {
      const o = stored.get(oid);
      if (o) found.set(oid, o);
    }
    return found;
  };
}
