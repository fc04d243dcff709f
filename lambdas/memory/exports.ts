import { zipSync, type Zippable } from 'fflate';
import { MemoryError, notFound } from './errors';
import type { GitOverlay } from './git-overlay';
import type { IndexStore } from './index-store';
import { comparePaths } from './listing';
import type { Memories } from './memories';
import type { PackedTexts } from './packed-texts';
import type { MemoryRecord } from './ports';
import { reachableObjects } from './reachable';
import type { BundleExport, Caller, ZipExport } from './types';

export interface ExportsDeps {
  memories: Memories;
  indexes: IndexStore;
  packed: PackedTexts;
  git: (rec: MemoryRecord) => GitOverlay;
}

/** Getting data out: a memory's full history as a git bundle, or every visible memory's notes as a zip. */
export class Exports {
  constructor(private readonly deps: ExportsDeps) {}

  /** The memory's full history as a git bundle (v2) that `git clone` and `git bundle verify` accept. */
  async bundle(caller: Caller, rawName: string): Promise<BundleExport> {
    const name = this.deps.memories.access(caller, rawName);
    const rec = await this.deps.memories.active(caller, name);
    if (!rec.head) throw notFound('no_history', `memory "${name}" has no history to export`);
    const git = this.deps.git(rec);
    // The head's notes come from the packed texts (a few segments) instead of a fetch per blob; only
    // trees, commits and blobs of older versions are read as loose objects.
    const index = await this.deps.indexes.load(rec, rec.head);
    await this.deps.packed.all(rec, index, (blob, t) => git.adoptBlob(blob, t.text));
    const pack = await git.pack(await reachableObjects(git, rec.head).catch((err: unknown) => unexportable(name, err)));
    const header = Buffer.from(`# v2 git bundle\n${rec.head} HEAD\n${rec.head} refs/heads/main\n\n`, 'utf8');
    const bytes = new Uint8Array(header.length + pack.length);
    bytes.set(header, 0);
    bytes.set(pack, header.length);
    return { name, rev: rec.head, filename: `${name}.bundle`, contentType: 'application/x-git-bundle' as const, bytes };
  }

  /** Every visible memory's current notes as `<memory>/<path>`, front matter included. */
  async zip(caller: Caller): Promise<ZipExport> {
    const files: Zippable = {};
    const names: string[] = [];
    for (const rec of await this.deps.memories.visible(caller)) {
      names.push(rec.name);
      if (!rec.head) continue;
      const index = await this.deps.indexes.load(rec, rec.head);
      const texts = new Map<string, string>();
      await this.deps.packed.all(rec, index, (blob, t) => texts.set(blob, t.text));
      for (const [path, e] of [...index.files].sort((a, b) => comparePaths(a[0], b[0]))) {
        files[`${rec.name}/${path}`] = [Buffer.from(texts.get(e.blob) as string, 'utf8'), { mtime: new Date(e.updated) }];
      }
    }
    const bytes = zipSync(files, { level: 6 });
    return { filename: 'memories.zip', contentType: 'application/zip' as const, bytes, memories: names };
  }
}

/**
 * A history written before note paths followed git's rules may hold a name git refuses (`.git.`,
 * `GIT~1`); isomorphic-git will not read such a tree, and git would not clone it. The bundle cannot
 * be made, but nothing is lost: the notes are readable and in the zip export. Other errors pass.
 */
function unexportable(name: string, err: unknown): never {
  const e = err as { code?: unknown; data?: { filepath?: unknown } };
  if (e?.code !== 'UnsafeFilepathError') throw err;
  const path = typeof e.data?.filepath === 'string' ? e.data.filepath : 'a path';
  throw new MemoryError(
    'CONFLICT',
    'unexportable_history',
    `the history of memory "${name}" holds the name "${path}", which git refuses (written before such paths were refused), so it cannot be exported as a git bundle; every note is still readable and in the zip export`,
  );
}
