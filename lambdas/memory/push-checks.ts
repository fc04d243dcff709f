import type { TreeEntry } from 'isomorphic-git';
import type { PackObject } from './pack';
import { foldKey, gitRefusal, printable, twinMessage } from './paths';

/**
 * What `git fsck` checks of pushed trees and commits, and the small walks a push needs (`push.ts`).
 */
export interface ParsedCommit {
  oid: string;
  tree: string;
  parents: string[];
  /** Seconds since the epoch, the committer's. */
  time: number;
}

const short = (oid: string): string => oid.slice(0, 12);

/** Parents before children. */
export function topological(commits: ReadonlyMap<string, ParsedCommit>): string[] {
  const out: string[] = [];
  const done = new Set<string>();
  for (const start of commits.keys()) {
    const stack: Array<{ oid: string; expanded: boolean }> = [{ oid: start, expanded: false }];
    while (stack.length > 0) {
      const top = stack.pop() as { oid: string; expanded: boolean };
      if (done.has(top.oid)) continue;
      if (top.expanded) {
        done.add(top.oid);
        out.push(top.oid);
        continue;
      }
      stack.push({ oid: top.oid, expanded: true });
      for (const p of (commits.get(top.oid) as ParsedCommit).parents) if (commits.has(p) && !done.has(p)) stack.push({ oid: p, expanded: false });
    }
  }
  return out;
}

const IDENT = /^(?!<)[^<>\n]* <[^<>\n]*> (?:0|[1-9]\d{0,15}) [+-]\d{4}$/;
const HEX40 = /^[0-9a-f]{40}$/;

/** A commit's tree, parents and time, checked as `git fsck` checks the header; a string says what is wrong. */
export function parseCommit(oid: string, content: Buffer): ParsedCommit | string {
  const text = content.toString('utf8');
  const end = text.indexOf('\n\n');
  if (end < 0) return 'no blank line after the header';
  const lines = text.slice(0, end).split('\n');
  let i = 0;
  const tree = /^tree (.*)$/.exec(lines[i++] ?? '')?.[1];
  if (!tree || !HEX40.test(tree)) return 'the first line must be "tree <sha>"';
  const parents: string[] = [];
  while (lines[i]?.startsWith('parent ')) {
    const p = lines[i++].slice(7);
    if (!HEX40.test(p)) return 'a parent line without a valid sha';
    parents.push(p);
  }
  const author = /^author (.*)$/.exec(lines[i++] ?? '')?.[1];
  if (author === undefined || !IDENT.test(author)) return 'no valid "author" line after the parents';
  const committer = /^committer (.*)$/.exec(lines[i++] ?? '')?.[1];
  if (committer === undefined || !IDENT.test(committer)) return 'no valid "committer" line after the author';
  const time = Number(/ (\d+) [+-]\d{4}$/.exec(committer)?.[1]);
  return { oid, tree, parents, time };
}

/** Problems of a tree object: its format, entry order, modes and names. */
export function checkTree(o: PackObject): string[] {
  return parseTree(o).problems;
}

/**
 * A pushed tree's entries as isomorphic-git's `readTree` lists them (folders with mode `040000`),
 * parsed once from the pack and read from here by the rest of the push, and its problems: format,
 * entry order, modes and names. The entries are meaningful only when there is no problem.
 */
export function parseTree(o: PackObject): { entries: TreeEntry[]; problems: string[] } {
  const out: string[] = [];
  const entries: TreeEntry[] = [];
  const buf = o.content;
  let pos = 0;
  let previous: Buffer | undefined;
  const names = new Set<string>();
  const folds = new Map<string, string>();
  while (pos < buf.length) {
    const sp = buf.indexOf(0x20, pos);
    const nul = sp < 0 ? -1 : buf.indexOf(0, sp + 1);
    if (sp < 0 || nul < 0 || nul + 21 > buf.length) return { entries, problems: [`tree ${short(o.oid)} is malformed`] };
    const mode = buf.toString('latin1', pos, sp);
    const nameBytes = buf.subarray(sp + 1, nul);
    const oid = buf.toString('hex', nul + 1, nul + 21);
    let name: string;
    try {
      name = UTF8.decode(nameBytes);
    } catch {
      // REST refuses such a path; stored, it would be listed with U+FFFD and a write to that listing would add a second path.
      out.push(`tree ${short(o.oid)} has an entry whose name is not UTF-8 (bytes ${nameBytes.toString('hex')}); note and folder names must be UTF-8`);
      pos = nul + 21;
      continue;
    }
    pos = nul + 21;
    const isTree = mode === '40000';
    if (mode !== '100644' && !isTree) {
      out.push(`${name}: mode ${mode} (${MODES[mode] ?? 'unknown'}) is not a note; only regular .md files and folders can be pushed`);
      continue;
    }
    entries.push({ mode: isTree ? '040000' : mode, path: name, oid, type: isTree ? 'tree' : 'blob' });
    if (name === '' || name === '.' || name === '..' || name.includes('/')) out.push(`tree ${short(o.oid)} has an entry named "${name}"`);
    const refusal = gitRefusal(name);
    if (refusal) out.push(`"${name}" ${refusal}; it is refused in a memory`);
    const shown = isTree ? `${name}/` : name;
    const fold = foldKey(name);
    const twin = folds.get(fold);
    if (names.has(name)) out.push(`tree ${short(o.oid)} lists "${printable(name)}" twice`);
    else if (twin !== undefined) out.push(twinMessage(shown, twin));
    else folds.set(fold, shown);
    names.add(name);
    const key = isTree ? Buffer.concat([nameBytes, SLASH]) : nameBytes;
    if (previous && Buffer.compare(previous, key) >= 0) out.push(`tree ${short(o.oid)} is not sorted the way git sorts trees (at "${name}")`);
    previous = key;
  }
  return { entries, problems: out };
}

const SLASH = Buffer.from('/');
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

const MODES: Record<string, string> = {
  '100755': 'an executable file',
  '120000': 'a symbolic link',
  '160000': 'a submodule',
  '040000': 'a zero-padded folder mode',
};
