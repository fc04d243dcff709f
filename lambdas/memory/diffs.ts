import { structuredPatch } from 'diff';
import { chunk, mapLimit } from '../shared/concurrency';
import type { MemoryLimits } from './config';
import { tagArgs } from './content';
import { MemoryError, notFound } from './errors';
import { READ_CONCURRENCY, type GitOverlay } from './git-overlay';
import { commitChanges, resolveRev } from './history';
import type { IndexStore } from './index-store';
import type { Lineages } from './lineage';
import { comparePaths } from './listing';
import type { Memories } from './memories';
import { isInside, validateFolder, validateNotePath } from './paths';
import type { MemoryRecord } from './ports';
import type { NoteTexts } from './texts';
import type { Caller, ChangedNote, ChangesSince, DiffQuery, DiffResult, FileDiff } from './types';

/**
 * Differences between two versions of a memory: line hunks per note (`diff`, the jsdiff library's
 * Myers diff with three lines of context, as `git diff` shows them), and the notes changed since a
 * rev (`changesSince`, from the two commits' indexes alone: no note is read).
 */
export interface DiffsDeps {
  memories: Memories;
  lineages: Lineages;
  indexes: IndexStore;
  texts: NoteTexts;
  limits: MemoryLimits;
  git: (rec: MemoryRecord) => GitOverlay;
}

export class MemoryDiffs {
  constructor(private readonly deps: DiffsDeps) {}

  async diff(caller: Caller, rawName: string, query: DiffQuery): Promise<DiffResult> {
    const { limits, lineages } = this.deps;
    const name = this.deps.memories.access(caller, rawName);
    const path = query.path === undefined ? undefined : validateNotePath(query.path, limits);
    const rec = await this.deps.memories.active(caller, name);
    if (!rec.head) throw notFound('no_history', `memory "${name}" has no history yet`);
    const git = this.deps.git(rec);
    const to = query.to === undefined ? rec.head : await resolveRev(lineages, rec, git, query.to, 'to');
    const toCommit = await git.readCommit(to);
    const from = query.from === undefined ? (toCommit.parent[0] ?? null) : await resolveRev(lineages, rec, git, query.from, 'from');
    const fromTree = from ? (await git.readCommit(from)).tree : null;
    let changes = await commitChanges(git, this.deps.texts, rec, { tree: toCommit.tree, parent: [] }, fromTree);
    if (path !== undefined) changes = changes.filter((c) => c.path === path || c.from === path);

    const files: FileDiff[] = [];
    let bytes = 0;
    for (const group of chunk(changes, READ_CONCURRENCY)) {
      const done = await mapLimit(group, READ_CONCURRENCY, async (c): Promise<FileDiff> => {
        const [old, now] = await Promise.all([
          c.oldBlob ? this.deps.texts.text(rec, git, c.oldBlob) : '',
          c.newBlob ? this.deps.texts.text(rec, git, c.newBlob) : '',
        ]);
        const hunks = c.oldBlob === c.newBlob ? [] : structuredPatch(c.from ?? c.path, c.path, old, now, '', '', { context: 3 }).hunks;
        return {
          path: c.path,
          change: c.change,
          ...(c.from !== undefined && { from: c.from }),
          ...(c.oldBlob !== undefined && { oldBlob: c.oldBlob }),
          ...(c.newBlob !== undefined && { newBlob: c.newBlob }),
          ...(c.similarity !== undefined && { similarity: c.similarity }),
          // An empty side starts at 0, as git and GNU diff write it (`@@ -0,0 +1,3 @@`).
          hunks: hunks.map((h) => ({
            oldStart: h.oldLines === 0 ? h.oldStart - 1 : h.oldStart,
            oldLines: h.oldLines,
            newStart: h.newLines === 0 ? h.newStart - 1 : h.newStart,
            newLines: h.newLines,
            lines: h.lines,
          })),
        };
      });
      for (const f of done) bytes += 200 + f.path.length * 2 + f.hunks.reduce((n, h) => n + 40 + h.lines.reduce((m, l) => m + Buffer.byteLength(l) + 1, 0), 0);
      if (bytes > limits.maxDiffBytes) {
        throw new MemoryError(
          'BAD_REQUEST',
          'too_large',
          `the diff is larger than ${limits.maxDiffBytes} bytes (${changes.length} notes changed); narrow it with path or closer revs`,
          { field: 'from' },
        );
      }
      files.push(...done);
    }
    return { from, to, files };
  }

  /** The notes added, changed, renamed or deleted between `since` and the head, inside `folder` and carrying `tags`. */
  async changesSince(caller: Caller, rawName: string, since: unknown, filter: { folder?: string; tags?: readonly string[] } = {}): Promise<ChangesSince> {
    const { limits, lineages, indexes } = this.deps;
    const name = this.deps.memories.access(caller, rawName);
    const folder = validateFolder(filter.folder, limits);
    const tags = tagArgs(filter.tags, limits);
    const rec = await this.deps.memories.active(caller, name);
    const git = this.deps.git(rec);
    const rev = await resolveRev(lineages, rec, git, since, 'changedSince');
    const head = rec.head as string;
    if (rev === head) return { since: rev, rev: head, changes: [] };
    const [a, b] = await Promise.all([indexes.load(rec, rev), indexes.load(rec, head)]);
    const changes: ChangedNote[] = [];
    const deleted = new Map<string, string>();
    for (const [path, e] of a.files) if (!b.files.has(path)) deleted.set(e.blob, deleted.has(e.blob) ? (deleted.get(e.blob) as string) : path);
    const renamedFrom = new Set<string>();
    for (const [path, e] of b.files) {
      const old = a.files.get(path);
      if (old?.blob === e.blob) continue;
      let change: ChangedNote['change'] = old ? 'modified' : 'added';
      let from: string | undefined;
      const source = old ? undefined : deleted.get(e.blob);
      if (source !== undefined && !renamedFrom.has(source)) {
        change = 'renamed';
        from = source;
        renamedFrom.add(source);
      }
      changes.push({ path, change, ...(from !== undefined && { from }), title: e.title, updated: e.updated, tags: e.tags });
    }
    for (const [path, e] of a.files) {
      if (b.files.has(path) || renamedFrom.has(path)) continue;
      changes.push({ path, change: 'deleted', title: e.title, updated: b.tombstones.get(path)?.deleted ?? b.time, tags: e.tags });
    }
    const kept = changes.filter(
      (c) => (isInside(c.path, folder) || (c.from !== undefined && isInside(c.from, folder))) && tags.every((t) => c.tags.includes(t)),
    );
    return { since: rev, rev: head, changes: kept.sort((x, y) => comparePaths(x.path, y.path)) };
  }
}
