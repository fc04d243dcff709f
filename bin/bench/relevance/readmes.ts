/**
 * READMEs for the "with README" category figures. The registry sample carries none, and this
 * repository keeps no copy of other projects' READMEs, so the benchmark reads them from a cache
 * outside git (`node_modules/.cache/relevance-readmes.json`, or `RELEVANCE_README_CACHE`), built by
 * `npx tsx bin/bench/relevance/readmes.ts --mirrors DIR` from local git copies of the servers'
 * GitHub repositories (`DIR/<owner>+<repo>/repo`, one git directory each): the README of the
 * server's subfolder when it has one, else of the repository's root, as the crawler's README step
 * asks GitHub for it. Without the cache the figure is reported as not measured.
 *
 * Only servers the rules put in "Other" without a README need one: a README only adds to a
 * category's score, so a server with a label keeps one.
 */
import { parseGithubRepo } from '../../../lambdas/catalog-core';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { classifyByRules } from '../../../lambdas/crawler/domain/classify';
import { classifierInput, loadCorpusServers } from './corpus';

export const README_CACHE = process.env.RELEVANCE_README_CACHE ?? join(__dirname, '..', '..', '..', 'node_modules', '.cache', 'relevance-readmes.json');

export interface ReadmeCache {
  /** When the copies were read, and from what. */
  source: string;
  /** Server name → README text (the first 16 KB), for the servers whose repository had one. */
  readmes: Record<string, { repository: string; commit: string; path: string; text: string }>;
  /** Servers looked for whose repository had no copy or no README. */
  missing: string[];
}

export function loadReadmeCache(path = README_CACHE): ReadmeCache | undefined {
  if (!existsSync(path)) return undefined;
  return JSON.parse(readFileSync(path, 'utf8')) as ReadmeCache;
}

function git(dir: string, args: string[]): string {
  return execFileSync('git', ['--git-dir', dir, ...args], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
}

/** The README of `folder` (or of the root) at HEAD of a git directory, as GitHub picks it: README.md first. */
function readmeAt(dir: string, folder: string | undefined): { path: string; text: string } | undefined {
  for (const base of folder ? [folder.replace(/^\/+|\/+$/g, ''), ''] : ['']) {
    let names: string[];
    try {
      names = git(dir, ['ls-tree', '--name-only', `HEAD:${base}`]).split('\n');
    } catch {
      continue;
    }
    const readmes = names.filter((n) => /^readme(\.[a-z]+)?$/i.test(n)).sort((a, b) => Number(!/\.md$/i.test(a)) - Number(!/\.md$/i.test(b)));
    if (readmes.length === 0) continue;
    const path = base ? `${base}/${readmes[0]}` : readmes[0];
    return { path, text: git(dir, ['show', `HEAD:${path}`]).slice(0, 16_384) };
  }
  return undefined;
}

function build(mirrors: string): void {
  const available = new Set(readdirSync(mirrors).map((d) => d.toLowerCase()));
  const cache: ReadmeCache = { source: `git copies of the servers' repositories, read ${new Date().toISOString().slice(0, 10)}`, readmes: {}, missing: [] };
  for (const s of loadCorpusServers()) {
    if (classifyByRules(classifierInput(s))[0] !== 'Other') continue;
    const ref = s.repository?.url === undefined ? undefined : parseGithubRepo(s.repository.url);
    if (ref === undefined) continue;
    const entry = [...available].find((d) => d === `${ref.owner}+${ref.repo}`.toLowerCase());
    const dir = entry === undefined ? undefined : join(mirrors, readdirSync(mirrors).find((d) => d.toLowerCase() === entry) ?? entry, 'repo');
    const readme = dir === undefined ? undefined : readmeAt(dir, s.repository?.subfolder);
    if (dir === undefined || readme === undefined) {
      cache.missing.push(s.name);
      continue;
    }
    cache.readmes[s.name] = { repository: `${ref.owner}/${ref.repo}`, commit: git(dir, ['rev-parse', 'HEAD']).trim(), ...readme };
  }
  mkdirSync(dirname(README_CACHE), { recursive: true });
  writeFileSync(README_CACHE, JSON.stringify(cache, null, 1));
  console.log(`${Object.keys(cache.readmes).length} READMEs, ${cache.missing.length} missing: ${README_CACHE}`);
}

if (require.main === module) {
  const at = process.argv.indexOf('--mirrors');
  if (at < 0 || process.argv[at + 1] === undefined) throw new Error('usage: readmes.ts --mirrors DIR');
  build(process.argv[at + 1]);
}
