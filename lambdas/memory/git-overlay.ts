import { createHash } from 'node:crypto';
import { deflateSync } from 'node:zlib';
import {
  packObjects,
  readBlob,
  readCommit,
  readObject,
  readTree,
  writeBlob,
  writeCommit,
  writeObject,
  writeTree,
  type CommitObject,
  type PromiseFsClient,
  type TreeEntry,
} from 'isomorphic-git';
import type { ImmutableCache } from './cache';
import type { BlobItem, BlobStore } from './ports';

/**
 * isomorphic-git over an in-memory overlay file system, one per request and memory. isomorphic-git
 * makes many small sequential fs calls, so S3 is never its file system: object reads fall through
 * to the process-wide cache and then to S3 (objects are immutable, cached forever), object writes
 * collect in memory until the caller sends them to S3 in one parallel wave. Nothing but loose
 * objects exists in this fs: refs live in the rev lock, and there are no packs, config or index.
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

export type GitObjectType = 'blob' | 'tree' | 'commit' | 'tag';

export const objectCacheKey = (memoryId: string, sha: string): string => `o:${memoryId}:${sha}`;

export class GitOverlay {
  /** Objects created in this request, not yet in S3. */
  private readonly written = new Map<string, Uint8Array>();
  /** Objects read in this request (kept even if the shared cache evicts them meanwhile). */
  private readonly loaded = new Map<string, Uint8Array>();
  readonly fs: PromiseFsClient;

  constructor(
    private readonly memoryId: string,
    private readonly blobs: BlobStore,
    private readonly cache: ImmutableCache,
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
    // "Exists" only when known to be in S3 or written here: isomorphic-git then skips rewriting it.
    if (oid) {
      const bytes = this.written.get(oid) ?? this.loaded.get(oid) ?? this.cache.get<Uint8Array>(objectCacheKey(this.memoryId, oid));
      if (bytes) return statOf('file', bytes.length);
    }
    throw fsError('ENOENT', path);
  }

  /** The deflated loose object, from this request, the shared cache or S3. */
  private async raw(oid: string): Promise<Uint8Array | undefined> {
    const local = this.written.get(oid) ?? this.loaded.get(oid);
    if (local) return local;
    const bytes = await this.cache.getOrLoad(
      objectCacheKey(this.memoryId, oid),
      () => this.blobs.get(this.memoryId, 'object', oid),
      (b) => b.length + 64,
    );
    if (bytes) this.loaded.set(oid, bytes);
    return bytes;
  }

  /** Loads an object into this request (for packing many objects without sequential reads). */
  async prefetch(oid: string): Promise<boolean> {
    return (await this.raw(oid)) !== undefined;
  }

  /** Whether the object exists (in this request, the cache or S3). */
  has(oid: string): Promise<boolean> {
    return this.prefetch(oid);
  }

  /** Any object's type and inflated content (without the loose-object header). */
  async readObject(oid: string): Promise<{ type: GitObjectType; content: Uint8Array }> {
    const out = await readObject({ fs: this.fs, gitdir: GITDIR, oid, format: 'content' });
    return { type: out.type as GitObjectType, content: out.object as Uint8Array };
  }

  /** Stores an object given as type and content (e.g. one received in a pack); returns its id. */
  writeObject(type: GitObjectType, content: Uint8Array): Promise<string> {
    return writeObject({ fs: this.fs, gitdir: GITDIR, type, object: content, format: 'content' });
  }

  /**
   * The text of a blob this request or the instance already holds, without a fetch (undefined
   * otherwise): what a write packs for search must not cost a round trip on its path.
   */
  async localText(oid: string): Promise<string | undefined> {
    const bytes = this.written.get(oid) ?? this.loaded.get(oid) ?? this.cache.get<Uint8Array>(objectCacheKey(this.memoryId, oid));
    if (!bytes) return undefined;
    if (!this.written.has(oid)) this.loaded.set(oid, bytes);
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
    if (this.written.has(oid) || this.loaded.has(oid)) return true;
    const content = Buffer.from(text, 'utf8');
    const header = Buffer.from(`blob ${content.length}\0`, 'utf8');
    if (createHash('sha1').update(header).update(content).digest('hex') !== oid) return false;
    this.loaded.set(oid, deflateSync(Buffer.concat([header, content]), { level: 1 }));
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

  writeBlob(text: string): Promise<string> {
    return writeBlob({ fs: this.fs, gitdir: GITDIR, blob: Buffer.from(text, 'utf8') });
  }

  writeTree(entries: TreeEntry[]): Promise<string> {
    return writeTree({ fs: this.fs, gitdir: GITDIR, tree: entries });
  }

  writeCommit(commit: CommitObject): Promise<string> {
    return writeCommit({ fs: this.fs, gitdir: GITDIR, commit });
  }

  async pack(oids: string[]): Promise<Uint8Array> {
    const { packfile } = await packObjects({ fs: this.fs, gitdir: GITDIR, oids });
    if (!packfile) throw new Error('packObjects returned no packfile');
    return packfile;
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
  }
}
