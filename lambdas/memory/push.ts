import { randomUUID } from 'node:crypto';
import type { TreeEntry } from 'isomorphic-git';
import { mapLimit } from '../shared/concurrency';
import { landed } from './commit';
import type { MemoryLimits } from './config';
import { checkStoredText } from './content';
import { MemoryError } from './errors';
import { READ_CONCURRENCY, type GitOverlay } from './git-overlay';
import { isoSeconds, type IndexStore } from './index-store';
import { childLineage, type Lineage, type Lineages } from './lineage';
import { describeNote, type NoteMeta } from './markdown';
import type { Memories } from './memories';
import { fileEntry, indexStats, type NoteIndex } from './note-index';
import { PackError, PackLimitError, readPack, type GitObjectType, type PackObject } from './pack';
import type { PackedTexts } from './packed-texts';
import { ancestorFolders, validateNewFolder, validateNewNotePath } from './paths';
import { parseCommit, parseTree, topological, type ParsedCommit } from './push-checks';
import { PushTimer } from './push-steps';
import type { BlobStore, MemoryRecord, RevLock } from './ports';
import type { PackedText } from './segments';
import { diffTrees, type BlobChange, type TreeReader } from './tree-diff';
import type { Caller } from './types';

/**
 * `git push`: commits made elsewhere land on a memory through the same three steps as every write
 * (one rev read, one parallel wave of PUTs, one conditional head move with a writer token), fast-
 * forward only, and only if every note they bring passes the rules of a REST write. The pushed
 * commits are kept exactly as they are (authors, dates, messages, merges); each gets its index and
 * lineage in the same wave, so reads, listings, search and history see them as soon as the head moves.
 * A refused push stores nothing; a push that loses the race to another writer stores nothing
 * reachable and is told to fetch first, as git's own servers say.
 */
export const MAIN_REF = 'refs/heads/main';
const MAX_PROBLEMS = 50;

export interface PushCommand {
  ref: string;
  /** The head the client saw (null: none, an empty memory). */
  old: string | null;
  /** The head it asks for (null: delete the ref). */
  new: string | null;
}

export type PushOutcome =
  | { ok: true; rev: string; commits: number }
  /** `reason` is git's short status (`fetch first`, `non-fast-forward`, …); `messages` say why, one line each. */
  | { ok: false; reason: string; messages: string[]; unpackError?: string };

export interface PushDeps {
  lock: RevLock;
  blobs: BlobStore;
  indexes: IndexStore;
  lineages: Lineages;
  memories: Memories;
  /** The head's packed search texts: a thin pack's blob bases are read from them. */
  packed: PackedTexts;
  limits: MemoryLimits;
  git: (rec: MemoryRecord) => GitOverlay;
}

/** Bases of a thin pack read from storage at once (each a GET when the instance has not seen it). */
export const BASE_READS = 32;
/** From this many bases on, blob bases are looked for in the packed search texts first (as a fetch does). */
const PACKED_BASES_FROM = 64;

const refused = (reason: string, messages: string[]): PushOutcome => ({ ok: false, reason, messages });
const short = (oid: string): string => oid.slice(0, 12);

export class Pushes {
  constructor(private readonly deps: PushDeps) {}

  /** The head to advertise (git's `info/refs`): null for a memory without history. */
  async head(caller: Caller, rawName: string): Promise<{ name: string; head: string | null }> {
    const name = this.deps.memories.access(caller, rawName);
    const rec = await this.deps.memories.active(caller, name);
    return { name, head: rec.head };
  }

  async receive(caller: Caller, rawName: string, cmd: PushCommand, pack: Uint8Array | undefined): Promise<PushOutcome> {
    const timer = new PushTimer();
    let outcome = 'error';
    try {
      const out = await this.land(caller, rawName, cmd, pack, timer);
      outcome = out.ok ? 'landed' : out.reason;
      return out;
    } finally {
      timer.publish(rawName, outcome);
    }
  }

  private async land(caller: Caller, rawName: string, cmd: PushCommand, pack: Uint8Array | undefined, timer: PushTimer): Promise<PushOutcome> {
    const { limits, lineages } = this.deps;
    // The checks end within two thirds of the push's time; the wave and the head move take the rest.
    const checksEnd = performance.now() + (limits.pushSeconds * 1000 * 2) / 3;
    const overdue = (): PushOutcome | undefined =>
      performance.now() > checksEnd
        ? refused('push too slow', [
            `checking this push took longer than a push may take (${limits.pushSeconds} s in all); push fewer commits or notes at a time (git push origin <older-commit>:main first)`,
          ])
        : undefined;
    const name = this.deps.memories.access(caller, rawName);
    if (cmd.ref !== MAIN_REF)
      return refused('only main can be pushed', [`a memory has one branch, main; push with: git push origin HEAD:main (not ${cmd.ref})`]);
    if (cmd.new === null) return refused('main cannot be deleted', ['a memory keeps its main branch; retire the memory instead (DELETE /v1/memories/<name>)']);
    const rec = await this.deps.memories.active(caller, name);
    if (rec.head !== cmd.old) {
      return refused('fetch first', [
        `memory "${name}" is at ${rec.head ? short(rec.head) : 'no commit'} now, ahead of what you fetched: git pull, then push again`,
      ]);
    }
    if (cmd.new === rec.head) return { ok: true, rev: rec.head, commits: 0 };
    const git = this.deps.git(rec);
    timer.step('head');

    let objects: Map<string, PackObject>;
    try {
      objects = pack
        ? await readPack(pack, (oids) => this.bases(rec, git, oids), {
            maxObjects: limits.maxPushObjects,
            maxObjectBytes: Math.max(limits.maxNoteBytes, 8 * 1024 * 1024),
            maxTotalBytes: limits.maxPushInflatedBytes,
          })
        : new Map();
    } catch (err) {
      if (err instanceof PackLimitError) return refused(err.reason, [err.message]);
      if (err instanceof PackError) return { ok: false, reason: 'unpacker error', messages: [err.message], unpackError: err.message };
      throw err;
    }
    timer.objects = objects.size;
    timer.step('unpack');
    const problems: string[] = [];
    const problem = (m: string): void => {
      if (problems.length < MAX_PROBLEMS) problems.push(m);
    };

    // The new commits: those the pack brings, from the new head down to commits already here.
    const commits = new Map<string, ParsedCommit>();
    const boundary = new Set<string>();
    const stack = [cmd.new];
    while (stack.length > 0) {
      const oid = stack.pop() as string;
      if (commits.has(oid) || boundary.has(oid)) continue;
      const o = objects.get(oid);
      if (!o) {
        boundary.add(oid);
        continue;
      }
      if (o.type !== 'commit') return refused('bad object', [`${short(oid)} is a ${o.type}, not a commit`]);
      const parsed = parseCommit(oid, o.content);
      if (typeof parsed === 'string') return refused('bad commit', [`commit ${short(oid)} is malformed (git fsck would refuse it): ${parsed}`]);
      commits.set(oid, parsed);
      if (commits.size > limits.maxPushCommits)
        return refused('too many commits', [`a push brings at most ${limits.maxPushCommits} commits; push older ones first`]);
      stack.push(...parsed.parents);
    }
    const inHistory = await mapLimit([...boundary], READ_CONCURRENCY, async (b) => rec.head !== null && (await lineages.isAncestor(rec, git, b, rec.head)));
    const strangers = [...boundary].filter((_, i) => !inHistory[i]);
    if (strangers.length > 0)
      return refused(
        'missing commits',
        strangers.slice(0, 5).map((b) => `commit ${short(b)} is neither in the push nor in this memory`),
      );
    if (rec.head !== null && !boundary.has(rec.head)) {
      return refused('non-fast-forward', [`main is at ${short(rec.head)}, which your push does not build on: git pull (merge or rebase), then push`]);
    }

    // Every tree in the pack: well formed, entries in git's order, names git and the memory accept;
    // parsed once here, and read from here by the diffs below (no deflate, inflate and hash per read).
    const pushedTrees = new Map<string, TreeEntry[]>();
    for (const o of objects.values()) {
      if (o.type !== 'tree') continue;
      const { entries, problems: found } = parseTree(o);
      pushedTrees.set(o.oid, entries);
      for (const p of found) problem(p);
    }
    if (problems.length > 0) return refused('refused tree', problems);
    const late = overdue();
    if (late) return late;
    // Readable by the checks below; stored only if the push lands.
    for (const o of objects.values()) git.stage(o);
    const trees: TreeReader = { readTree: (oid) => Promise.resolve(pushedTrees.get(oid) ?? git.readTree(oid)) };

    timer.commits = commits.size;
    timer.step('commits');
    // What each commit changed against its first parent: every new or changed note is checked like a write.
    const keep = new Set<string>(commits.keys());
    // Objects the new commits take from the memory rather than from the pack: stored again with the
    // push, so that it never relies on one only the instance's cache remembers (a sweep may have
    // deleted it as unreachable; lambdas/memory/sweep.ts).
    const borrowed = new Set<string>();
    const changesOf = new Map<string, Changed>();
    const notes = new Map<string, CheckedNote>();
    for (const c of commits.values()) {
      const late = overdue();
      if (late) return late;
      const parentTree = c.parents[0] ? (commits.get(c.parents[0])?.tree ?? (await git.readCommit(c.parents[0])).tree) : null;
      if (objects.has(c.tree)) keep.add(c.tree);
      // The tree of every folder the diff walked into, as it is in this commit (what its index keeps).
      const folders = new Map<string, string>();
      let changes: BlobChange[];
      try {
        changes = await diffTrees(trees, parentTree, c.tree, {
          onNewTree: (oid, folder) => {
            folders.set(folder, oid);
            if (objects.has(oid)) keep.add(oid);
            else borrowed.add(oid);
            if (folder !== '') {
              try {
                validateNewFolder(folder, limits);
              } catch (err) {
                problem(`${folder}/: ${messageOf(err)}`);
              }
            }
          },
        });
      } catch (err) {
        problem(`commit ${short(c.oid)}: ${missing(err)}`);
        continue;
      }
      changesOf.set(c.oid, { changes, folders });
      for (const ch of changes) {
        if (!ch.newBlob) continue;
        const key = noteKey(ch.newBlob, ch.path);
        if (notes.has(key)) continue;
        const note = await this.checkNote(git, objects, ch.path, ch.newBlob, problem);
        if (note) notes.set(key, note);
        if (objects.has(ch.newBlob)) keep.add(ch.newBlob);
        else borrowed.add(ch.newBlob);
      }
    }
    timer.notes = notes.size;
    timer.step('notes');
    if (problems.length > 0) return refused('refused content', problems);

    // Indexes and lineages of the new commits, parents first.
    const order = topological(commits);
    const built = new Map<string, NoteIndex>();
    const lineage = new Map<string, Lineage>();
    const repaired: Lineage[] = [];
    for (const oid of order) {
      const late = overdue();
      if (late) return late;
      const c = commits.get(oid) as ParsedCommit;
      built.set(oid, await this.index(rec, git, c, built, changesOf.get(oid) as Changed, notes));
      const parents = await Promise.all(
        c.parents.map(async (p) => {
          const known = lineage.get(p);
          if (known) return known;
          const out = await lineages.ensure(rec, git, p);
          if (!out) throw new Error(`commit ${p} has no lineage`);
          repaired.push(...out.created);
          return out.lineage;
        }),
      );
      lineage.set(oid, childLineage(oid, parents));
    }

    timer.step('indexes');
    const tip = built.get(cmd.new) as NoteIndex;
    const wave = [
      ...git.stagedItems(keep),
      ...git.pending().filter((i) => keep.has(i.sha)),
      ...(await git.restored(borrowed)),
      ...[...built.values()].flatMap((i) => this.deps.indexes.items(i)),
      ...lineages.items([...repaired, ...lineage.values()]),
    ];
    timer.step('pack');
    await this.deps.blobs.putMany(rec.id, wave);
    timer.step('wave');
    git.persisted(keep);
    for (const i of built.values()) this.deps.indexes.remember(rec, i);
    lineages.remember(rec, [...lineage.values()]);

    const writer = randomUUID();
    const moved = await this.deps.lock.moveHead(
      rec.account,
      rec.name,
      rec.head,
      { head: cmd.new, updated: tip.time, writer, ...indexStats(tip) },
      { from: rec },
    );
    timer.step('move');
    if (landed(moved, cmd.new, writer)) return { ok: true, rev: cmd.new, commits: commits.size };
    const now = moved.ok ? undefined : moved.current;
    if (now?.state !== 'active') throw new MemoryError('NOT_FOUND', 'memory_not_found', `memory "${name}" does not exist`);
    return refused('fetch first', [
      `memory "${name}" moved on to ${now.head ? short(now.head) : 'no commit'} while this push was checked: git pull, then push again`,
    ]);
  }

  /** A new or changed note at `path`: path rules, UTF-8, size, front matter and credentials, as a write. */
  /**
   * The objects among `oids` that the memory holds: the bases a thin pack's deltas name (git sends
   * a changed note as a delta against its blob in the memory). Many blob bases are taken from the
   * head's packed search texts (a few segment GETs instead of a GET per note; each text checked
   * against its id); the rest are read `BASE_READS` at a time, the first alone: on an instance that has
   * not read this memory yet it finds whether the objects are loose or in a pack it then lists once,
   * instead of many parallel misses first.
   */
  private async bases(rec: MemoryRecord, git: GitOverlay, oids: readonly string[]): Promise<Map<string, { type: GitObjectType; content: Uint8Array }>> {
    const adopted = new Set<string>();
    if (rec.head && oids.length >= PACKED_BASES_FROM) {
      const index = await this.deps.indexes.load(rec, rec.head);
      await this.deps.packed.scan(rec, index.pack, new Set(oids), (blob, t) => {
        if (git.adoptBlob(blob, t.text)) adopted.add(blob);
      });
    }
    const found = new Map<string, { type: GitObjectType; content: Uint8Array }>();
    const read = async (oid: string): Promise<void> => {
      if (await git.has(oid)) found.set(oid, await git.readObject(oid));
    };
    for (const oid of adopted) await read(oid);
    const rest = oids.filter((o) => !adopted.has(o));
    if (rest.length > 0) await read(rest[0]);
    await mapLimit(rest.slice(1), BASE_READS, read);
    return found;
  }

  private async checkNote(
    git: GitOverlay,
    objects: Map<string, PackObject>,
    path: string,
    blob: string,
    problem: (m: string) => void,
  ): Promise<CheckedNote | undefined> {
    try {
      validateNewNotePath(path, this.deps.limits);
    } catch (err) {
      problem(`${path}: ${messageOf(err)}; only notes (.md files under paths a REST write accepts) can be pushed`);
      return undefined;
    }
    const o = objects.get(blob);
    if (o && o.type !== 'blob') {
      problem(`${path}: ${short(blob)} is a ${o.type}, not a file`);
      return undefined;
    }
    if (!o) {
      // Already stored, so already checked when it was written: its metadata is all that is needed.
      if (!(await git.has(blob))) {
        problem(`${path}: object ${short(blob)} is neither in the push nor in this memory`);
        return undefined;
      }
      return { meta: describeNote(await git.readText(blob), path, this.deps.limits) };
    }
    let text: string;
    try {
      text = UTF8.decode(o.content);
    } catch {
      problem(`${path}: not UTF-8 text`);
      return undefined;
    }
    try {
      const { meta, bodyStart } = checkStoredText(text, path, this.deps.limits);
      return { meta, text: { text, start: bodyStart } };
    } catch (err) {
      problem(`${path}: ${messageOf(err)}`);
      return undefined;
    }
  }

  /** The index of a pushed commit, from its first parent's and what changed against it. */
  private async index(
    rec: MemoryRecord,
    git: GitOverlay,
    c: ParsedCommit,
    built: ReadonlyMap<string, NoteIndex>,
    { changes, folders }: Changed,
    notes: ReadonlyMap<string, CheckedNote>,
  ): Promise<NoteIndex> {
    const p = c.parents[0];
    const base = p ? (built.get(p) ?? (await this.deps.indexes.load(rec, p))) : null;
    const time = isoSeconds(c.time);
    const files = new Map(base?.files ?? []);
    const tombstones = new Map(base?.tombstones ?? []);
    const texts = new Map<string, PackedText>();
    for (const ch of changes) {
      if (ch.newBlob) {
        const note = notes.get(noteKey(ch.newBlob, ch.path)) as CheckedNote;
        files.set(ch.path, fileEntry(ch.newBlob, note.meta, time));
        if (note.text) texts.set(ch.newBlob, note.text);
        tombstones.delete(ch.path);
      } else {
        const old = files.get(ch.path);
        files.delete(ch.path);
        tombstones.delete(ch.path);
        if (old) tombstones.set(ch.path, { ...old, deleted: time });
      }
    }
    for (const key of tombstones.keys()) {
      if (tombstones.size <= this.deps.limits.maxTombstones) break;
      tombstones.delete(key);
    }
    // Folder trees: the root, and every folder on a changed path as it is in this commit (the diff
    // walked into each one that is still there; one that is not is gone).
    const trees = new Map(base?.trees ?? []);
    trees.set('', c.tree);
    for (const ch of changes) {
      for (const f of ancestorFolders(ch.path)) {
        if (f === '') continue;
        const oid = folders.get(f);
        if (oid) trees.set(f, oid);
        else trees.delete(f);
      }
    }
    return this.deps.indexes.withPack(
      git,
      base,
      { commit: c.oid, parent: p ?? null, time, files, trees, tombstones },
      changes.map((ch) => ch.path),
      texts,
    );
  }
}

/** What a commit changed against its first parent, and the tree of every changed folder in it. */
interface Changed {
  changes: BlobChange[];
  folders: ReadonlyMap<string, string>;
}

/** A checked note: its metadata and, when the pack brought it, its text as search packs it. */
interface CheckedNote {
  meta: NoteMeta;
  text?: PackedText;
}

/** Notes are checked once per blob and path (the title may come from the path). */
const noteKey = (blob: string, path: string): string => `${blob}\0${path}`;

const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function missing(err: unknown): string {
  const e = err as { code?: string; data?: { what?: string } };
  if (e?.code === 'NotFoundError') return `an object it needs is neither in the push nor in this memory (${e.data?.what ?? 'unknown'})`;
  return messageOf(err);
}
