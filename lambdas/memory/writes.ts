import { mapLimit } from '../shared/concurrency';
import type { CommitLoop, Put } from './commit';
import type { MemoryLimits } from './config';
import { applyEdit, checkEdit, checkStored, composeInput } from './content';
import { badRequest, conflict, notFound } from './errors';
import { READ_CONCURRENCY } from './git-overlay';
import { resolveRev } from './history';
import type { IndexStore } from './index-store';
import type { Lineages } from './lineage';
import { rewriteLinks, type MoveSpec } from './links';
import { similarity } from './tree-diff';
import { validateFrontMatter, type NoteMeta } from './markdown';
import type { Memories } from './memories';
import { validateNewNotePath, validateNotePath } from './paths';
import type { NoteTexts } from './texts';
import type { Caller, DeleteResult, MoveInput, MoveResult, NoteEdit, NoteInput, WriteOptions, WriteResult } from './types';

/** A write's options but `createMemory` (only a plain write creates its memory). */
const only = (opts: WriteOptions): { expectedRev?: string; once?: WriteOptions['once'] } => ({
  ...(opts.expectedRev !== undefined && { expectedRev: opts.expectedRev }),
  ...(opts.once && { once: opts.once }),
});

/** How alike (percent) the moved note must stay for its own links to be rewritten (see moveNote). */
const MIN_MOVE_SIMILARITY = 60;

export interface WritesDeps {
  memories: Memories;
  commits: CommitLoop;
  texts: NoteTexts;
  indexes: IndexStore;
  lineages: Lineages;
  limits: MemoryLimits;
  clock: () => Date;
}

/**
 * The note writes as plans for the commit loop. Arguments and content are checked once, before any
 * storage call; what depends on the head (does the note exist, what does it contain) is decided in
 * the plan, which runs again on every rebase.
 */
export class NoteWrites {
  constructor(private readonly deps: WritesDeps) {}

  async writeNote(caller: Caller, rawName: string, rawPath: string, input: NoteInput, opts: WriteOptions = {}): Promise<WriteResult> {
    const name = this.deps.memories.access(caller, rawName);
    const path = validateNewNotePath(rawPath, this.deps.limits);
    const text = composeInput(input, this.deps.limits);
    const meta = checkStored(text, path, this.deps.limits);
    return this.deps.commits.run(caller, name, path, opts, async ({ index, git }) => {
      const blob = await git.writeBlob(text);
      const current = index?.files.get(path);
      if (current && current.blob === blob) return { kind: 'noop', updated: current.updated };
      return { kind: 'put', puts: [{ path, blob, meta }], message: `${current ? 'Update' : 'Create'} ${path}` };
    });
  }

  async editNote(caller: Caller, rawName: string, rawPath: string, edit: NoteEdit, opts: WriteOptions = {}): Promise<WriteResult> {
    const { limits } = this.deps;
    const name = this.deps.memories.access(caller, rawName);
    const path = validateNotePath(rawPath, limits);
    const mode = checkEdit(edit);
    const frontmatter = edit.frontmatter === undefined ? undefined : validateFrontMatter(edit.frontmatter, limits);
    return this.deps.commits.run(caller, name, path, opts, async ({ rec, index, git }) => {
      // Runs again on every rebase: the edit applies to the note as it is at the new head.
      const current = index?.files.get(path);
      if (!current) throw notFound('note_not_found', `note "${path}" does not exist`);
      const old = await this.deps.texts.text(rec, git, current.blob);
      const text = applyEdit(old, mode, edit, frontmatter, limits);
      if (text === old) return { kind: 'noop', updated: current.updated };
      const meta = checkStored(text, path, limits);
      const blob = await git.writeBlob(text);
      return { kind: 'put', puts: [{ path, blob, meta }], message: `Edit ${path} (${mode})` };
    });
  }

  async deleteNote(caller: Caller, rawName: string, rawPath: string, opts: WriteOptions = {}): Promise<DeleteResult> {
    const name = this.deps.memories.access(caller, rawName);
    const path = validateNotePath(rawPath, this.deps.limits);
    const out = await this.deps.commits.run(caller, name, path, only(opts), async ({ index }) => {
      if (!index?.files.has(path)) throw notFound('note_not_found', `note "${path}" does not exist`);
      return { kind: 'remove', path, message: `Delete ${path}` };
    });
    return { path, deleted: true as const, rev: out.rev, updated: out.updated };
  }

  /**
   * Brings a soft-deleted note back with its last content, as a new commit. CONFLICT when a note
   * lives at the path again (restoring would overwrite it); NOT_FOUND when no deletion is recorded.
   * With `rev`: the note as it was at that rev, whether it exists now or not (overwriting it; no
   * commit when it is already so); NOT_FOUND when it did not exist there.
   */
  async restoreNote(caller: Caller, rawName: string, rawPath: string, opts: WriteOptions & { rev?: string } = {}): Promise<WriteResult> {
    const name = this.deps.memories.access(caller, rawName);
    const path = validateNewNotePath(rawPath, this.deps.limits);
    if (opts.rev !== undefined) {
      const raw = opts.rev;
      return this.deps.commits.run(caller, name, path, only(opts), async ({ rec, index, git }) => {
        const rev = await resolveRev(this.deps.lineages, rec, git, raw);
        const then = (await this.deps.indexes.load(rec, rev)).files.get(path);
        if (!then) throw notFound('note_not_found', `note "${path}" did not exist at rev ${rev}`);
        const current = index?.files.get(path);
        if (current?.blob === then.blob) return { kind: 'noop', updated: current.updated };
        const meta = { title: then.title, tags: then.tags, excerpt: then.excerpt, size: then.size };
        return { kind: 'put', puts: [{ path, blob: then.blob, meta }], message: `Restore ${path} as of ${rev.slice(0, 12)}` };
      });
    }
    return this.deps.commits.run(caller, name, path, only(opts), async ({ index }) => {
      if (index?.files.has(path)) throw conflict('note_exists', `note "${path}" exists; nothing to restore`);
      const tomb = index?.tombstones.get(path);
      if (!tomb) throw notFound('note_not_found', `no deleted note "${path}" to restore`);
      const meta = { title: tomb.title, tags: tomb.tags, excerpt: tomb.excerpt, size: tomb.size };
      return { kind: 'put', puts: [{ path, blob: tomb.blob, meta }], message: `Restore ${path}` };
    });
  }

  /**
   * Writes many notes (raw markdown each) as one commit: imports, migrations and seeding. Every note
   * passes the same checks as a single write; unchanged notes are skipped, and when nothing changes
   * no commit is made. `path` of the result is the empty string.
   */
  async importNotes(
    caller: Caller,
    rawName: string,
    notes: ReadonlyArray<{ path: string; markdown: string }>,
    opts: WriteOptions = {},
  ): Promise<WriteResult & { count: number }> {
    const { limits } = this.deps;
    const name = this.deps.memories.access(caller, rawName);
    if (!Array.isArray(notes) || notes.length === 0) throw badRequest('invalid_argument', 'notes are required', 'notes');
    if (notes.length > limits.maxImportNotes) throw badRequest('invalid_argument', `at most ${limits.maxImportNotes} notes per import`, 'notes');
    const checked = new Map<string, { text: string; meta: NoteMeta }>();
    for (const n of notes) {
      const path = validateNewNotePath(n?.path, limits);
      const text = composeInput({ markdown: n.markdown }, limits);
      checked.set(path, { text, meta: checkStored(text, path, limits) });
    }
    // An import (seeding, migrations) is not answered to an API client: it has no time budget.
    const out = await this.deps.commits.run(caller, name, '', { ...opts, unbounded: true }, async ({ index, git }) => {
      const puts: Put[] = [];
      for (const [path, { text, meta }] of checked) {
        const blob = await git.writeBlob(text);
        if (index?.files.get(path)?.blob !== blob) puts.push({ path, blob, meta });
      }
      if (puts.length === 0) return { kind: 'noop', updated: index?.time ?? this.deps.clock().toISOString(), detail: { count: 0 } };
      return { kind: 'put', puts, message: `Import ${puts.length} note${puts.length === 1 ? '' : 's'}`, detail: { count: puts.length } };
    });
    const { detail, ...result } = out;
    return { ...result, count: detail?.count ?? 0 };
  }

  /**
   * Moves a note to another path in one commit (git sees a rename: same content, or with its links
   * re-aimed, still alike). With `updateLinks`, every note whose links lead to it is rewritten in the
   * same commit (`links.ts`). NOT_FOUND when `from` is not a note, CONFLICT when `to` already is one.
   */
  async moveNote(caller: Caller, rawName: string, input: MoveInput, opts: WriteOptions = {}): Promise<MoveResult> {
    const { limits } = this.deps;
    const name = this.deps.memories.access(caller, rawName);
    if (input === null || typeof input !== 'object') throw badRequest('invalid_argument', 'from and to are required', 'from');
    const from = validateNotePath(input.from, limits, 'from');
    const to = validateNewNotePath(input.to, limits, 'to');
    if (input.updateLinks !== undefined && typeof input.updateLinks !== 'boolean')
      throw badRequest('invalid_argument', 'updateLinks must be a boolean', 'updateLinks');
    if (from === to) throw badRequest('invalid_argument', 'from and to are the same path', 'to');
    const out = await this.deps.commits.run(caller, name, to, only(opts), async ({ rec, index, git }) => {
      const moving = index?.files.get(from);
      if (!moving) {
        const tomb = index?.tombstones.get(from);
        throw notFound('note_not_found', tomb ? `note "${from}" was deleted at ${tomb.deleted}; restore it before moving it` : `note "${from}" does not exist`);
      }
      if (index?.files.has(to)) throw conflict('note_exists', `note "${to}" exists; move it away or delete it first`);
      const files = index?.files ?? new Map();
      const text = await this.deps.texts.text(rec, git, moving.blob);
      const puts: Put[] = [];
      const changed: string[] = [];
      let movedText = text;
      if (input.updateLinks === true) {
        const spec: MoveSpec = { from, to, fromTitle: moving.title, toTitle: checkStored(text, to, limits).title, paths: [...files.keys()] };
        // The moved note's own links are re-aimed from its new folder only while git still sees the
        // rename (git pairs versions at least 50% alike; 60 leaves a margin): `git log --follow` must work.
        const reaimed = rewriteLinks(text, { before: from, after: to }, spec);
        if (reaimed !== text && similarity(text, reaimed) >= MIN_MOVE_SIMILARITY) {
          movedText = reaimed;
          changed.push(to);
        }
        const others = [...files].filter(([p]) => p !== from);
        const texts = await mapLimit(others, READ_CONCURRENCY, ([, e]) => this.deps.texts.text(rec, git, e.blob));
        for (let i = 0; i < others.length; i++) {
          const [p] = others[i];
          const next = rewriteLinks(texts[i], { before: p, after: p }, spec);
          if (next === texts[i]) continue;
          puts.push({ path: p, blob: await git.writeBlob(next), meta: checkStored(next, p, limits) });
          changed.push(p);
        }
      }
      const blob = movedText === text ? moving.blob : await git.writeBlob(movedText);
      puts.push({ path: to, blob, meta: checkStored(movedText, to, limits) });
      return { kind: 'put', puts, movedAway: [from], message: `Move ${from} to ${to}`, detail: { linksUpdated: changed.sort() } };
    });
    return { from, to, rev: out.rev, updated: out.updated, linksUpdated: out.detail?.linksUpdated ?? [], changed: out.changed };
  }
}
