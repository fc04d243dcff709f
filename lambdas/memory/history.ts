import { createHash } from 'node:crypto';
import { CursorError, type CursorCodec } from '../shared/cursor';
import { mapLimit } from '../shared/concurrency';
import type { MemoryLimits } from './config';
import { pageSize } from './content';
import { cursorPurpose } from './cursors';
import { badRequest, notFound } from './errors';
import { READ_CONCURRENCY, type GitOverlay } from './git-overlay';
import { isoSeconds } from './index-store';
import type { Lineages } from './lineage';
import type { Memories } from './memories';
import { validateNotePath } from './paths';
import type { MemoryRecord } from './ports';
import type { NoteTexts } from './texts';
import { blobAt, detectRenames, diffTrees, type Change } from './tree-diff';
import type { Caller, HistoryEntry, HistoryPage, HistoryQuery } from './types';

/**
 * A memory's history: the commits of its first-parent line, newest first (what `git log
 * --first-parent` shows: one entry per write or pushed commit; a pushed merge is one entry whose
 * changes are everything it brought), each with the files it changed. With `path`, only the
 * commits that touched that note, following it back through renames as `git log --follow` does.
 *
 * Commits come in batches named by their lineage records and are read in parallel. A page with
 * `path` examines at most `historyScanCommits` commits: past them it ends, possibly short, with a
 * cursor that continues where it stopped. A note's history is NOT_FOUND only when the whole history
 * was examined and no commit touched it.
 */
export interface HistoryDeps {
  memories: Memories;
  lineages: Lineages;
  texts: NoteTexts;
  cursors: CursorCodec;
  limits: MemoryLimits;
  git: (rec: MemoryRecord) => GitOverlay;
}

const REV = /^[0-9a-fA-F]{40}$/;

/**
 * A rev argument as a commit of this memory: 40 hex characters (else 400 `invalid_rev`) naming a
 * commit reachable from the head (else 404 `rev_not_found`: unknown, another memory's, or one that
 * lost a race and never landed).
 */
export async function resolveRev(lineages: Lineages, rec: MemoryRecord, git: GitOverlay, raw: unknown, field = 'rev'): Promise<string> {
  if (typeof raw !== 'string' || !REV.test(raw)) throw badRequest('invalid_rev', `${field} must be a rev (40 hex characters)`, field);
  const rev = raw.toLowerCase();
  if (!rec.head || !(await lineages.isAncestor(rec, git, rev, rec.head))) {
    throw notFound('rev_not_found', `rev ${rev} is not in the history of memory "${rec.name}"`);
  }
  return rev;
}

/** The changes of `commit` against its first parent (or against `base`, a tree), renames paired. */
export async function commitChanges(
  git: GitOverlay,
  texts: NoteTexts,
  rec: MemoryRecord,
  commit: { tree: string; parent: string[] },
  base?: string | null,
): Promise<Change[]> {
  const parentTree = base !== undefined ? base : commit.parent[0] ? (await git.readCommit(commit.parent[0])).tree : null;
  const raw = await diffTrees(git, parentTree, commit.tree);
  return detectRenames(raw, { text: (blob) => texts.text(rec, git, blob) });
}

export class MemoryHistory {
  constructor(private readonly deps: HistoryDeps) {}

  async page(caller: Caller, rawName: string, query: HistoryQuery): Promise<HistoryPage> {
    const { limits } = this.deps;
    const name = this.deps.memories.access(caller, rawName);
    const path = query.path === undefined ? undefined : validateNotePath(query.path, limits);
    const limit = pageSize(query.limit, limits.historyDefaultLimit, limits.historyMaxLimit);
    const rec = await this.deps.memories.active(caller, name);
    const git = this.deps.git(rec);
    const purpose = cursorPurpose('history', rec, path ?? '');
    const position = query.cursor === undefined ? undefined : await this.decode(purpose, query.cursor);
    if (!rec.head) {
      if (path !== undefined) throw neverExisted(path, name);
      return { commits: [], rev: null };
    }
    let followed = path;
    if (position?.renameAt) followed = await this.recoverFollowed(rec, git, position.renameAt, position.pathHash as Buffer);
    let renameAt = position?.renameAt;
    let start = position?.commit ?? rec.head;
    const entries: HistoryEntry[] = [];
    let scanned = 0;

    walk: for (;;) {
      for await (const batch of this.deps.lineages.firstParents(rec, git, start)) {
        const commits = await mapLimit(batch, READ_CONCURRENCY, (c) => git.readCommit(c));
        // With a path: its blob in each commit and in each commit's first parent.
        let here: Array<string | undefined> = [];
        let before: Array<string | undefined> = [];
        if (followed !== undefined) {
          const f = followed;
          here = await mapLimit(commits, READ_CONCURRENCY, (c) => blobAt(git, c.tree, f));
          before = await mapLimit(commits, READ_CONCURRENCY, async (c, i) => {
            if (i + 1 < commits.length) return here[i + 1];
            const p = c.parent[0];
            return p ? blobAt(git, (await git.readCommit(p)).tree, f) : undefined;
          });
        }
        for (let i = 0; i < commits.length; i++) {
          const commit = commits[i];
          const next = commit.parent[0];
          scanned++;
          let renamed: string | undefined;
          if (followed === undefined || here[i] !== before[i]) {
            const entry = await this.entry(rec, git, batch[i], commit);
            entries.push(entry.value);
            // Added here under the path followed: was it renamed from another path?
            if (followed !== undefined && before[i] === undefined) renamed = entry.renamedFrom(followed);
          }
          if (renamed !== undefined) {
            followed = renamed;
            renameAt = batch[i];
          }
          if (entries.length >= limit || (followed !== undefined && scanned >= limits.historyScanCommits)) {
            return this.finish(purpose, entries, rec, next, renameAt, followed);
          }
          if (!next) break walk;
          // The rest of the batch was checked against the old path: walk on from the next commit.
          if (renamed !== undefined) {
            start = next;
            continue walk;
          }
        }
      }
      break;
    }
    if (path !== undefined && position === undefined && entries.length === 0) throw neverExisted(path, name);
    return { commits: entries, rev: rec.head };
  }

  private finish(
    purpose: string,
    entries: HistoryEntry[],
    rec: MemoryRecord,
    next: string | undefined,
    renameAt: string | undefined,
    followed: string | undefined,
  ): HistoryPage {
    return {
      commits: entries,
      ...(next !== undefined && { nextCursor: this.encode(purpose, next, renameAt, followed) }),
      rev: rec.head,
    };
  }

  private async entry(rec: MemoryRecord, git: GitOverlay, rev: string, commit: Awaited<ReturnType<GitOverlay['readCommit']>>) {
    const changes = await commitChanges(git, this.deps.texts, rec, commit);
    const max = this.deps.limits.historyMaxChanges;
    const value: HistoryEntry = {
      rev,
      parents: commit.parent,
      time: isoSeconds(commit.committer.timestamp),
      author: { name: commit.author.name, sub: rec.account },
      message: commit.message.replace(/\n+$/, ''),
      changes: changes.slice(0, max).map((c) => ({ path: c.path, change: c.change, ...(c.from !== undefined && { from: c.from }) })),
      ...(changes.length > max && { moreChanges: changes.length - max }),
    };
    return { value, renamedFrom: (path: string) => changes.find((c) => c.change === 'renamed' && c.path === path)?.from };
  }

  // Cursor: the next commit to examine; with a followed rename, the commit of that rename and a
  // hash of the path it led to (recovered from the rename itself, so the cursor stays short
  // whatever the path's length).

  private encode(purpose: string, commit: string, renameAt: string | undefined, followed: string | undefined): string {
    const parts: Buffer[] = [Buffer.from(commit, 'hex')];
    if (renameAt !== undefined && followed !== undefined) parts.push(Buffer.from(renameAt, 'hex'), pathHash(followed));
    return this.deps.cursors.encode(purpose, Buffer.concat(parts));
  }

  private async decode(purpose: string, cursor: string): Promise<{ commit: string; renameAt?: string; pathHash?: Buffer }> {
    let payload: Buffer;
    try {
      payload = await this.deps.cursors.decode(purpose, cursor);
    } catch (err) {
      if (err instanceof CursorError) throw invalidCursor();
      throw err;
    }
    if (payload.length === 20) return { commit: payload.toString('hex') };
    if (payload.length === 48) {
      return { commit: payload.subarray(0, 20).toString('hex'), renameAt: payload.subarray(20, 40).toString('hex'), pathHash: payload.subarray(40) };
    }
    throw invalidCursor();
  }

  private async recoverFollowed(rec: MemoryRecord, git: GitOverlay, renameAt: string, hash: Buffer): Promise<string> {
    const changes = await commitChanges(git, this.deps.texts, rec, await git.readCommit(renameAt));
    const found = changes.find((c) => c.change === 'renamed' && c.from !== undefined && Buffer.compare(pathHash(c.from), hash) === 0);
    if (!found?.from) throw invalidCursor();
    return found.from;
  }
}

function pathHash(path: string): Buffer {
  return createHash('sha256').update(path).digest().subarray(0, 8);
}

const invalidCursor = () => badRequest('invalid_cursor', 'cursor is not a valid cursor of this history', 'cursor');

const neverExisted = (path: string, name: string) => notFound('note_not_found', `note "${path}" has no history in memory "${name}": it never existed`);
