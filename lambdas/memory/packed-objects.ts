import type { ImmutableCache } from './cache';
import type { GitObjectType } from './pack';
import { PackIndex, PackWriter, packId, readPackEntry, writePackIndex } from './pack-files';
import type { BlobItem, BlobStore } from './ports';

/**
 * Objects stored as packs: a push of many objects writes them as one pack and its index
 * (`m/<id>/objects/pack/pack-<id>.pack` and `.idx`, as git names them) instead of one PUT per loose
 * object, so its wave is a few PUTs whatever the number of notes. Readers find an object loose first
 * (every REST write, every small push), else in the packs: the ids of a memory's packs are listed once
 * per instance and again when an object is not found (at most once per request), each index and pack
 * fetched once and kept in the instance cache. Packs are immutable and never deleted, like every
 * object; `objects/` stays a valid `.git/objects` folder for the recovery procedure.
 */
export const PACK_MIN_OBJECTS = 256;

export interface StoredObject {
  oid: string;
  type: GitObjectType;
  content: Uint8Array;
  /** Its zlib stream when one is at hand (a whole object of a pushed pack), stored without deflating again. */
  deflated?: Uint8Array;
}

export interface BuiltPack {
  id: string;
  pack: Buffer;
  index: Buffer;
  items: BlobItem[];
}

/** One pack (and its index) of `objects`, as the two items of a wave. */
export function buildPack(objects: readonly StoredObject[]): BuiltPack {
  const writer = new PackWriter(objects.length);
  for (const o of objects) writer.add(o.type, o.content, o.oid, o.deflated);
  const pack = writer.finish();
  const id = packId(pack);
  const index = writePackIndex(writer.entries, pack);
  return {
    id,
    pack,
    index,
    items: [
      { kind: 'pack', sha: id, body: pack },
      { kind: 'pack-index', sha: id, body: index },
    ],
  };
}

const indexKey = (memoryId: string, id: string): string => `pi:${memoryId}:${id}`;
const packKey = (memoryId: string, id: string): string => `pk:${memoryId}:${id}`;

export class PackedObjects {
  /** The pack ids known per memory (a list, small: one pack per large push). */
  private readonly known = new Map<string, readonly string[]>();

  constructor(
    private readonly blobs: BlobStore,
    private readonly cache: ImmutableCache,
  ) {}

  /** The object from a pack already known to this instance, or undefined. */
  async read(memoryId: string, oid: string): Promise<{ type: GitObjectType; content: Buffer } | undefined> {
    for (const id of this.known.get(memoryId) ?? []) {
      const index = await this.index(memoryId, id);
      const offset = index?.offset(oid);
      if (offset === undefined) continue;
      const pack = await this.cache.getOrLoad(
        packKey(memoryId, id),
        () => this.blobs.get(memoryId, 'pack', id),
        (b) => b.length + 64,
      );
      if (!pack) throw new Error(`pack ${id} of memory ${memoryId} is listed but missing`);
      return readPackEntry(pack, offset);
    }
    return undefined;
  }

  /** Lists the memory's packs again; true when one was not known before. */
  async refresh(memoryId: string): Promise<boolean> {
    const ids = await this.blobs.list(memoryId, 'pack-index');
    const before = new Set(this.known.get(memoryId) ?? []);
    this.known.set(memoryId, ids);
    return ids.some((id) => !before.has(id));
  }

  /** A pack this instance just stored: known at once, its bytes and index cached. */
  remember(memoryId: string, built: BuiltPack): void {
    this.cache.set(packKey(memoryId, built.id), built.pack, built.pack.length + 64);
    this.cache.set(indexKey(memoryId, built.id), new PackIndex(built.index), built.index.length + 64);
    const ids = this.known.get(memoryId) ?? [];
    if (!ids.includes(built.id)) this.known.set(memoryId, [...ids, built.id]);
  }

  private index(memoryId: string, id: string): Promise<PackIndex | undefined> {
    return this.cache.getOrLoad(
      indexKey(memoryId, id),
      async () => {
        const bytes = await this.blobs.get(memoryId, 'pack-index', id);
        return bytes && new PackIndex(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
      },
      (i) => i.size * 28 + 1200,
    );
  }
}
