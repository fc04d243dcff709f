import type { CommitLoop, Put } from './commit';
import type { MemoryLimits } from './config';
import { applyEdit, checkEdit, checkStored, composeInput } from './content';
import { badRequest, conflict, notFound } from './errors';
import { validateFrontMatter, type NoteMeta } from './markdown';
import type { Memories } from './memories';
import { validateNotePath } from './paths';
import type { NoteTexts } from './texts';
import type { Caller, DeleteResult, NoteEdit, NoteInput, WriteOptions, WriteResult } from './types';

export interface WritesDeps {
  memories: Memories;
  commits: CommitLoop;
  texts: NoteTexts;
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
    const path = validateNotePath(rawPath, this.deps.limits);
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
    const out = await this.deps.commits.run(caller, name, path, { expectedRev: opts.expectedRev }, async ({ index }) => {
      if (!index?.files.has(path)) throw notFound('note_not_found', `note "${path}" does not exist`);
      return { kind: 'remove', path, message: `Delete ${path}` };
    });
    return { path, deleted: true as const, rev: out.rev, updated: out.updated };
  }

  /**
   * Brings a soft-deleted note back with its last content, as a new commit. CONFLICT when a note
   * lives at the path again (restoring would overwrite it); NOT_FOUND when no deletion is recorded.
   */
  async restoreNote(caller: Caller, rawName: string, rawPath: string, opts: WriteOptions = {}): Promise<WriteResult> {
    const name = this.deps.memories.access(caller, rawName);
    const path = validateNotePath(rawPath, this.deps.limits);
    return this.deps.commits.run(caller, name, path, { expectedRev: opts.expectedRev }, async ({ index }) => {
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
      const path = validateNotePath(n?.path, limits);
      const text = composeInput({ markdown: n.markdown }, limits);
      checked.set(path, { text, meta: checkStored(text, path, limits) });
    }
    let count = 0;
    const out = await this.deps.commits.run(caller, name, '', opts, async ({ index, git }) => {
      const puts: Put[] = [];
      for (const [path, { text, meta }] of checked) {
        const blob = await git.writeBlob(text);
        if (index?.files.get(path)?.blob !== blob) puts.push({ path, blob, meta });
      }
      count = puts.length;
      if (puts.length === 0) return { kind: 'noop', updated: index?.time ?? this.deps.clock().toISOString() };
      return { kind: 'put', puts, message: `Import ${puts.length} note${puts.length === 1 ? '' : 's'}` };
    });
    return { ...out, count };
  }
}
