import { inflateSync } from 'node:zlib';
import { readBlob, readCommit, readTree, writeBlob, writeCommit, writeTree, type CommitObject, type PromiseFsClient, type TreeEntry } from 'isomorphic-git';
import type { ImmutableCache } from './cache';
import { objectId, type GitObjectType, type PackObject } from './pack';
import { deflate, PackWriter } from './pack-files';
import { buildPack, PACK_MIN_OBJECTS, type BuiltPack, type PackedObjects } from './packed-objects';
import type { BlobItem, BlobStore } from './ports';

/**
 * isomorphic-git over an in-memory overlay file system, one per request and memory. isomorphic-git
 * makes many small sequential fs calls, so S3 is never its file system: object reads fall through
 * to the process-wide cache and then to S3 (objects are immutable, cached forever), object writes
 * collect in memory until the caller sends them to S3 in one parallel wave. Nothing but loose
 * objects exists in this fs: refs live in the rev lock, and there is no config or index; an object
 * stored in one of the memory's packs (`packed-objects.ts`) is handed to isomorphic-git as a loose one.
 */
export const GITDIR = '/git';
const OBJECT_PATH = /^\/git\/objects\/([0-9a-f]{2})\/([0-9a-f]{38})$/;
const DIRS = new Set([GITDIR, `${GITDIR}/objects`]);

function fsError(code: string, path: string): Error {
  const err = new Error(`${code}: ${path}`) as Error & { code: string };
  err.code = code;
  return err;
}

function statOf(kind: 'dir' | 'file', size: number): Record<string, unknown> {
  return {
    isDirectory: () => kind === 'dir',
    isFile: () => kind === 'file',
    isSymbolicLink: () => false,
    size,
    mode: kind === 'dir' ? 0o40755 : 0o100644,
    mtimeMs: 0,
    ctimeMs: 0,
    uid: 0,
    gid: 0,
    dev: 0,
    ino: 0,
  };
}

/** Parallel object reads per request: search, exports and walks load many small immutable objects. */
export const READ_CONCURRENCY = 32;

export const objectCacheKey = (memoryId: string, sha: string): string => `o:${memoryId}:${sha}`;

export class GitOverlay {
  /** Objects created in this request, not yet in S3. */
  private readonly written = new Map<string, Uint8Array>();
  /** Objects read in this request (kept even if the shared cache evicts them meanwhile). */
  private readonly loaded = new Map<string, Uint8Array>();
  /** Texts of the blobs written in this request, as given (what a write packs for search). */
  private readonly writtenTexts = new Map<string, string>();
  /** Blobs known from their packed text (`adoptBlob`): content only, deflated when something reads them as loose objects. */
  private readonly adopted = new Map<string, Buffer>();
  /** Objects received in a push (`stage`), as type and content until they are stored. */
  private readonly staged = new Map<string, PackObject>();
  /** The pack the staged objects were stored as (`stagedItems`), remembered once the wave landed. */
  private built: BuiltPack | undefined;
  /**
   * The memory's packs are listed again at most once per request, on the first object not found;
   * reads in flight meanwhile (a thin push's bases, 32 at a time) wait for that same listing.
   */
  private relisting: Promise<boolean> | undefined;
  readonly fs: PromiseFsClient;

  constructor(
    private readonly memoryId: string,
    private readonly blobs: BlobStore,
    private readonly cache: ImmutableCache,
    private readonly packs?: PackedObjects,
    /** Objects this write stored in S3 in an earlier attempt: known to be there, not stored again. */
    private readonly fresh: ReadonlyMap<string, Uint8Array> = new Map(),
  ) {
    const sha = (path: string): string | undefined => {
      const m = OBJECT_PATH.exec(path);
      return m ? m[1] + m[2] : undefined;
    };
    this.fs = {
      promises: {
        readFile: async (path: string, opts?: unknown): Promise<Uint8Array | string> => {
          const oid = typeof path === 'string' ? sha(path) : undefined;
          const bytes = oid ? await this.raw(oid) : undefined;
          if (!bytes) throw fsError('ENOENT', String(path));
          const encoding = typeof opts === 'string' ? opts : (opts as { encoding?: string } | undefined)?.encoding;
          return encoding ? Buffer.from(bytes).toString(encoding as BufferEncoding) : Buffer.from(bytes);
        },
        writeFile: async (path: string, data: Uint8Array | string): Promise<void> => {
          const oid = sha(path);
          // Only objects are ever written: refs go to the rev lock, never through this fs.
          if (!oid) throw fsError('EPERM', path);
          this.written.set(oid, typeof data === 'string' ? Buffer.from(data) : new Uint8Array(data));
        },
        unlink: async (path: string): Promise<void> => {
          throw fsError('EPERM', path);
        },
        readdir: async (path: string): Promise<string[]> => {
          throw fsError('ENOENT', path);
        },
        mkdir: async (): Promise<void> => undefined,
        rmdir: async (path: string): Promise<void> => {
          throw fsError('EPERM', path);
        },
        readlink: async (path: string): Promise<string> => {
          throw fsError('ENOENT', path);
        },
        symlink: async (_target: string, path: string): Promise<void> => {
          throw fsError('EPERM', path);
        },
        stat: async (path: string) => this.stat(path, sha(path)),
        lstat: async (path: string) => this.stat(path, sha(path)),
      },
    };
  }

  private stat(path: string, oid: string | undefined): Record<string, unknown> {
    if (DIRS.has(path)) return statOf('dir', 0);
    // "Exists" only when written here, stored by this write before, or read in this request (so in
    // S3 and reachable from what the request reads): isomorphic-git then skips rewriting it. Never
    // because the instance's cache holds it: a cached object may be one nothing references, which a
    // sweep of unreachable objects deletes (`sweep.ts`), so a write stores every object it adds.
    if (oid) {
      const bytes = this.written.get(oid) ?? this.fresh.get(oid) ?? this.loaded.get(oid);
      if (bytes) return statOf('file', bytes.length);
      if (this.adopted.has(oid) || this.staged.has(oid)) return statOf('file', 0);
    }
    throw fsError('ENOENT', path);
  }

  /** The deflated loose object, from this request, the shared cache or S3. */
  private async raw(oid: string): Promise<Uint8Array | undefined> {
    const local = this.written.get(oid) ?? this.fresh.get(oid) ?? this.loaded.get(oid);
    if (local) return local;
    const content = this.adopted.get(oid);
    const staged = this.staged.get(oid);
    if (content || staged) {
      const deflated = loose(staged?.type ?? 'blob', (staged?.content ?? content) as Uint8Array);
      this.loaded.set(oid, deflated);
      return deflated;
    }
    const bytes = await this.cache.getOrLoad(
      objectCacheKey(this.memoryId, oid),
      () => this.load(oid),
      (b) => b.length + 64,
    );
    if (bytes) this.loaded.set(oid, bytes);
    return bytes;
  }

  /** From a pack this instance knows, else loose, else from a pack stored since (listed once per request). */
  private async load(oid: string): Promise<Uint8Array | undefined> {
    const packed = await this.packs?.read(this.memoryId, oid);
    if (packed) return loose(packed.type, packed.content);
    const bytes = await this.blobs.get(this.memoryId, 'object', oid);
    if (bytes || !this.packs) return bytes;
    this.relisting ??= this.packs.refresh(this.memoryId);
    if (!(await this.relisting)) return undefined;
    const late = await this.packs.read(this.memoryId, oid);
    return late && loose(late.type, late.content);
  }

  /** Loads an object into this request (for packing many objects without sequential reads). */
  async prefetch(oid: string): Promise<boolean> {
    if (this.adopted.has(oid) || this.staged.has(oid)) return true;
    return (await this.raw(oid)) !== undefined;
  }

  /** Whether the object exists (in this request, the cache or S3). */
  has(oid: string): Promise<boolean> {
    return this.prefetch(oid);
  }

  /**
   * Forgets objects this request read (the shared cache keeps what it can): a walk over a whole
   * history reads every tree once and must not hold them all until the request ends.
   */
  release(oids: Iterable<string>): void {
    for (const oid of oids) this.loaded.delete(oid);
  }

  /**
   * An object's type and content, read without keeping it in this request or adding it to the shared
   * cache: what a streamed export sends once (every note of a memory would evict what the instance's
   * other requests read again and again). Undefined when it is not in storage.
   */
  async transient(oid: string): Promise<{ type: GitObjectType; content: Uint8Array } | undefined> {
    const adopted = this.adopted.get(oid);
    if (adopted) return { type: 'blob', content: adopted };
    const raw = this.written.get(oid) ?? this.loaded.get(oid) ?? this.cache.get<Uint8Array>(objectCacheKey(this.memoryId, oid)) ?? (await this.load(oid));
    return raw ? parseLoose(oid, raw) : undefined;
  }

  /**
   * An object's content size, read through the shared cache (so a pack made next finds it there) but
   * not kept in this request.
   */
  async size(oid: string): Promise<number> {
    const adopted = this.adopted.get(oid);
    if (adopted) return adopted.length;
    const raw =
      this.written.get(oid) ??
      this.loaded.get(oid) ??
      (await this.cache.getOrLoad(
        objectCacheKey(this.memoryId, oid),
        () => this.load(oid),
        (b) => b.length + 64,
      ));
    if (!raw) throw new Error(`object ${oid} is missing from storage`);
    return parseLoose(oid, raw).content.length;
  }

  /**
   * Any object's type and inflated content (without the loose-object header), its id checked
   * against its content. Inflated and hashed here (zlib, a synchronous SHA-1) rather than by
   * isomorphic-git (pako, an asynchronous WebCrypto digest per object): a thin push of a thousand
   * changed notes reads a thousand delta bases this way.
   */
  async readObject(oid: string): Promise<{ type: GitObjectType; content: Uint8Array }> {
    const staged = this.staged.get(oid);
    if (staged) return staged;
    const adopted = this.adopted.get(oid);
    if (adopted) return { type: 'blob', content: adopted };
    const raw = await this.raw(oid);
    if (!raw) throw new Error(`object ${oid} is missing from storage`);
    const object = parseLoose(oid, raw);
    if (objectId(object.type, object.content) !== oid) throw new Error(`object ${oid} does not hash to its id`);
    return object;
  }

  /**
   * Makes an object received in a push (its id computed from its content by `readPack`) readable
   * in this request, without deflating it: it is stored only if the push lands (`stagedItems`).
   */
  stage(o: PackObject): void {
    if (!this.written.has(o.oid) && !this.loaded.has(o.oid)) this.staged.set(o.oid, o);
  }

  /**
   * The staged objects in `keep` as the items of a wave: one pack and its index when there are
   * `PACK_MIN_OBJECTS` or more (a few PUTs instead of one per object), else loose objects.
   */
  stagedItems(keep: ReadonlySet<string>): BlobItem[] {
    const kept = [...this.staged.values()].filter((o) => keep.has(o.oid));
    if (kept.length >= PACK_MIN_OBJECTS && this.packs) {
      this.built = buildPack(kept);
      return this.built.items;
    }
    return kept.map((o) => ({ kind: 'object', sha: o.oid, body: loose(o.type, o.content) }));
  }

  /**
   * The text of a blob this request or the instance already holds, without a fetch (undefined
   * otherwise): what a write packs for search must not cost a round trip on its path.
   */
  async localText(oid: string): Promise<string | undefined> {
    const given = this.writtenTexts.get(oid);
    if (given !== undefined) return given;
    const staged = this.staged.get(oid);
    if (staged?.type === 'blob') return Buffer.from(staged.content).toString('utf8');
    const bytes = this.written.get(oid) ?? this.fresh.get(oid) ?? this.loaded.get(oid) ?? this.cache.get<Uint8Array>(objectCacheKey(this.memoryId, oid));
    if (!bytes) return undefined;
    if (!this.written.has(oid) && !this.fresh.has(oid)) this.loaded.set(oid, bytes);
    try {
      return await this.readText(oid);
    } catch {
      return undefined;
    }
  }

  /**
   * Makes a blob known to this request from its text (packed search text already fetched), so a pack
   * of many objects need not fetch each loose object. Only when the text hashes to `oid`: anything
   * else is ignored and the object is fetched as usual. Kept out of the shared cache.
   */
  adoptBlob(oid: string, text: string): boolean {
    if (this.written.has(oid) || this.loaded.has(oid) || this.adopted.has(oid)) return true;
    const content = Buffer.from(text, 'utf8');
    if (objectId('blob', content) !== oid) return false;
    this.adopted.set(oid, content);
    return true;
  }

  async readText(oid: string): Promise<string> {
    const { blob } = await readBlob({ fs: this.fs, gitdir: GITDIR, oid });
    return Buffer.from(blob).toString('utf8');
  }

  async readCommit(oid: string): Promise<CommitObject> {
    return (await readCommit({ fs: this.fs, gitdir: GITDIR, oid })).commit;
  }

  async readTree(oid: string): Promise<TreeEntry[]> {
    return (await readTree({ fs: this.fs, gitdir: GITDIR, oid })).tree;
  }

  async writeBlob(text: string): Promise<string> {
    const bytes = Buffer.from(text, 'utf8');
    const oid = await writeBlob({ fs: this.fs, gitdir: GITDIR, blob: bytes });
    // The text as stored: a lone surrogate in `text` was encoded as U+FFFD.
    this.writtenTexts.set(oid, bytes.toString('utf8'));
    return oid;
  }

  writeTree(entries: TreeEntry[]): Promise<string> {
    return writeTree({ fs: this.fs, gitdir: GITDIR, tree: entries });
  }

  writeCommit(commit: CommitObject): Promise<string> {
    return writeCommit({ fs: this.fs, gitdir: GITDIR, commit });
  }

  /**
   * A packfile (version 2, whole objects) of `oids`, in that order: each object inflated from its
   * loose form (or taken as adopted) and deflated once into the pack. Written here rather than by
   * isomorphic-git's `packObjects`, which re-reads every object through the fs and is several times
   * slower on the tens of thousands of objects of a large memory's bundle or clone.
   */
  async pack(oids: readonly string[]): Promise<Uint8Array> {
    const writer = new PackWriter(oids.length);
    for (const oid of oids) {
      const adopted = this.adopted.get(oid);
      if (adopted) {
        writer.add('blob', adopted);
        continue;
      }
      const staged = this.staged.get(oid);
      if (staged) {
        writer.add(staged.type, staged.content, '', staged.deflated);
        continue;
      }
      const raw = await this.raw(oid);
      if (!raw) throw new Error(`object ${oid} is missing from storage`);
      const { type, content } = parseLoose(oid, raw);
      writer.add(type, content);
    }
    return writer.finish();
  }

  /** Objects read from storage (or the instance's cache), as items to store again (a push's borrowed objects). */
  async restored(oids: Iterable<string>): Promise<BlobItem[]> {
    const out: BlobItem[] = [];
    for (const oid of oids) {
      if (this.written.has(oid)) continue;
      const body = await this.raw(oid);
      if (body) out.push({ kind: 'object', sha: oid, body });
    }
    return out;
  }

  /** The objects written in this request, as the items of the S3 wave. */
  pending(): BlobItem[] {
    return [...this.written].map(([sha, body]) => ({ kind: 'object', sha, body }));
  }

  /**
   * After the wave succeeded: the written objects are in S3 now, so they join the shared cache.
   * With `only`, the others were not stored (a push's unreachable objects) and are forgotten.
   */
  persisted(only?: ReadonlySet<string>): void {
    for (const [sha, body] of this.written) {
      if (only && !only.has(sha)) continue;
      this.cache.set(objectCacheKey(this.memoryId, sha), body, body.length + 64);
      this.loaded.set(sha, body);
    }
    this.written.clear();
    if (this.built) this.packs?.remember(this.memoryId, this.built);
    else
      for (const [sha, o] of this.staged) {
        if (only && !only.has(sha)) continue;
        const body = loose(o.type, o.content);
        this.cache.set(objectCacheKey(this.memoryId, sha), body, body.length + 64);
      }
    this.built = undefined;
  }
}

const TYPES = new Set<string>(['commit', 'tree', 'blob', 'tag']);

/** A loose object's type and content, its header checked. */
function parseLoose(oid: string, raw: Uint8Array): { type: GitObjectType; content: Uint8Array } {
  const bytes = inflateSync(raw);
  const nul = bytes.indexOf(0);
  const [type, size] = bytes.subarray(0, Math.max(0, nul)).toString('latin1').split(' ');
  const content = bytes.subarray(nul + 1);
  if (nul < 0 || !TYPES.has(type) || Number(size) !== content.length) throw new Error(`object ${oid} is not a valid loose object`);
  return { type: type as GitObjectType, content };
}

/** An object in git's loose format (zlib-deflated `<type> <size>\0<content>`). */
function loose(type: GitObjectType, content: Uint8Array): Buffer {
  return deflate(Buffer.concat([Buffer.from(`${type} ${content.length}\0`, 'utf8'), content]));
}
