import { mapAhead, mapLimit } from '../shared/concurrency';
import { MemoryError, notFound } from './errors';
import { READ_CONCURRENCY, type GitOverlay } from './git-overlay';
import { HeldBytes } from './held-bytes';
import type { IndexStore } from './index-store';
import type { Lineages } from './lineage';
import type { Memories } from './memories';
import type { FileEntry, NoteIndex } from './note-index';
import { objectId, type GitObjectType } from './pack';
import { deflateBound, PACK_OVERHEAD, packEntryBound, PackWriter } from './pack-files';
import type { PackedTexts } from './packed-texts';
import type { MemoryRecord } from './ports';
import { reachableObjects } from './reachable';
import type { BundleStream, Caller, ZipStream } from './types';

export interface ExportsDeps {
  memories: Memories;
  indexes: IndexStore;
  packed: PackedTexts;
  lineages: Lineages;
  /** The note cap: what a blob not read yet counts for in an export's bound. */
  maxNoteBytes: number;
  git: (rec: MemoryRecord) => GitOverlay;
}

/** Output is handed on in chunks of about this size (one write per chunk, not per object). */
const CHUNK = 256 * 1024;
/** The zip format without its 64-bit extension (fflate writes none) counts entries in 16 bits. */
export const ZIP_MAX_ENTRIES = 65_535;
/** A zip entry's fixed bytes besides its name, twice, and its data: local header, data descriptor, central directory entry. */
const ZIP_ENTRY_BYTES = 30 + 16 + 46;
const ZIP_END_BYTES = 22;

/**
 * Getting data out: a memory's full history as a git bundle, or every visible memory's notes as a
 * zip, each made as it is read. Everything that can refuse the export (access, an empty memory, a
 * name git refuses, too many notes for a zip) is decided before the first byte; then the notes'
 * texts come from the packed layout a segment at a time (the next fetched while this one is
 * written), objects are read a few dozen ahead, and output leaves in chunks of 256 KiB, so what the
 * export holds at once (`held`) stays a few segments and chunks whatever the memory's size.
 */
export class Exports {
  constructor(private readonly deps: ExportsDeps) {}

  /** The memory's full history as a git bundle (v2) that `git clone` and `git bundle verify` accept. */
  async bundle(caller: Caller, rawName: string): Promise<BundleStream> {
    const { memories, indexes, packed, lineages } = this.deps;
    const name = memories.access(caller, rawName);
    const rec = await memories.active(caller, name);
    const head = rec.head;
    if (!head) throw notFound('no_history', `memory "${name}" has no history to export`);
    const git = this.deps.git(rec);
    const [index, objects] = await Promise.all([
      indexes.load(rec, head),
      reachableObjects(git, lineages, indexes, rec, head).catch((err: unknown) => unexportable(name, err)),
    ]);
    const sizes = objects.blobSizes;
    const header = Buffer.from(`# v2 git bundle\n${head} HEAD\n${head} refs/heads/main\n\n`, 'utf8');
    const structure = [...objects.commits, ...objects.trees];
    // Notes are sized by the indexes the walk read (the head's at least); other blobs (of older
    // versions) are not read before the first byte, so they count at the note cap until `tighten` reads them.
    let known = header.length + PACK_OVERHEAD + packEntryBound(objects.bytes) + 23 * structure.length;
    const older: string[] = [];
    for (const b of objects.blobs) {
      const size = sizes.get(b);
      if (size === undefined) older.push(b);
      else known += packEntryBound(size);
    }
    const held = new HeldBytes();
    const count = structure.length + objects.blobs.length;

    async function* body(): AsyncGenerator<Uint8Array> {
      const pack = new PackWriter(count);
      yield Buffer.concat([header, pack.take()]);
      const wanted = new Set(objects.blobs);
      // Trees and commits; then every blob the packed layout holds (the head's notes, and older
      // versions it still keeps), each checked against its id; then the rest as loose objects.
      const sources: Array<AsyncIterable<PackObject>> = [
        looseObjects(git, () => structure, held),
        packedBlobs(packed.inOrder(rec, index.pack, wanted, held), wanted),
        looseObjects(
          git,
          () => {
            const inHead = new Set([...index.files.values()].map((e) => e.blob));
            packed.readAll(rec, index, [...wanted].filter((b) => inHead.has(b)).length);
            return [...wanted];
          },
          held,
        ),
      ];
      for (const source of sources) {
        for await (const o of source) {
          const before = pack.pending;
          pack.add(o.type, o.content);
          held.change(pack.pending - before - o.held);
          if (pack.pending >= CHUNK) {
            const n = pack.pending;
            yield pack.take();
            held.change(-n);
          }
        }
      }
      yield pack.finish();
    }

    return {
      name,
      rev: head,
      filename: `${name}.bundle`,
      contentType: 'application/x-git-bundle',
      maxBytes: known + older.length * packEntryBound(this.deps.maxNoteBytes),
      tighten: async () => {
        let total = known;
        await mapLimit(older, READ_CONCURRENCY, async (b) => {
          total += packEntryBound(await git.size(b));
        });
        return total;
      },
      body: body(),
      held,
    };
  }

  /** Every visible memory's current notes as `<memory>/<path>`, front matter included. */
  async zip(caller: Caller): Promise<ZipStream> {
    const { memories, indexes, packed } = this.deps;
    const visible = await memories.visible(caller);
    let maxBytes = ZIP_END_BYTES;
    let entries = 0;
    for (const rec of visible) {
      if (!rec.head) continue;
      const index = await indexes.load(rec, rec.head);
      for (const [path, e] of index.files) {
        entries++;
        maxBytes += ZIP_ENTRY_BYTES + 2 * Buffer.byteLength(entryName(rec, path), 'utf8') + deflateBound(e.size);
      }
    }
    if (entries > ZIP_MAX_ENTRIES) {
      throw new MemoryError(
        'CONFLICT',
        'too_large',
        `the zip of every memory would hold ${entries} notes, and a zip holds at most ${ZIP_MAX_ENTRIES}: export the memories one by one as git bundles`,
      );
    }
    const held = new HeldBytes();
    const git = this.deps.git;
    const { Zip, DeflatedEntry } = await loadZip();

    async function* body(): AsyncGenerator<Uint8Array> {
      const out: Uint8Array[] = [];
      let pending = 0;
      let failure: unknown;
      const zip = new Zip((err, data) => {
        if (err) failure = err;
        else if (data.length > 0) {
          out.push(data);
          pending += data.length;
          held.change(data.length);
        }
      });
      let sent = 0;
      const take = (): Buffer => {
        const chunk = Buffer.concat(out);
        out.length = 0;
        pending = 0;
        sent += chunk.length;
        return chunk;
      };
      for (const rec of visible) {
        if (!rec.head) continue;
        const index = await indexes.load(rec, rec.head);
        const paths = pathsByBlob(index);
        const add = (blob: string, content: Uint8Array): void => {
          for (const [path, e] of paths.get(blob) ?? []) {
            const name = entryName(rec, path);
            const file = new DeflatedEntry(name, new Date(e.updated));
            zip.add(file);
            file.push(content, true);
            // The entry's central directory record stays until the end of the zip.
            held.change(46 + Buffer.byteLength(name, 'utf8'));
          }
        };
        const wanted = new Set(paths.keys());
        const found = packedBlobs(packed.inOrder(rec, index.pack, wanted, held), wanted);
        const loose = looseObjects(
          git(rec),
          () => {
            packed.readAll(rec, index, wanted.size);
            return [...wanted];
          },
          held,
        );
        for (const source of [found, loose]) {
          for await (const o of source) {
            add(o.oid, o.content);
            held.change(-o.held);
            // The first entry leaves at once (the reader sees the download start), then whole chunks.
            if (pending >= CHUNK || sent === 0) {
              const n = pending;
              yield take();
              held.change(-n);
            }
          }
        }
      }
      zip.end();
      if (failure) throw failure;
      yield take();
    }

    return {
      filename: 'memories.zip',
      contentType: 'application/zip',
      memories: visible.map((r) => r.name),
      maxBytes,
      tighten: async () => maxBytes,
      body: body(),
      held,
    };
  }
}

const entryName = (rec: MemoryRecord, path: string): string => `${rec.name}/${path}`;

let zipLib: Promise<typeof import('./zip-entry')> | undefined;

/**
 * The zip writer (fflate), loaded by the first zip export of an instance: fflate builds its
 * Huffman and CRC tables when it loads (a few ms of every memory function's module init), and no
 * other request needs it. `zip-entry.ts` imports only what it uses, so the bundle keeps no more of
 * fflate than a static import did.
 */
function loadZip(): Promise<typeof import('./zip-entry')> {
  zipLib ??= import('./zip-entry');
  return zipLib;
}

function pathsByBlob(index: NoteIndex): Map<string, Array<[string, FileEntry]>> {
  const out = new Map<string, Array<[string, FileEntry]>>();
  for (const [path, e] of index.files) {
    const same = out.get(e.blob);
    if (same) same.push([path, e]);
    else out.set(e.blob, [[path, e]]);
  }
  return out;
}

/** An object on its way into an export, and the bytes of it counted as held until it is written. */
interface PackObject {
  oid: string;
  type: GitObjectType;
  content: Uint8Array;
  held: number;
}

/**
 * Objects read as loose objects, a few dozen ahead of the writer, each counted as held until it is
 * written. `oids` is asked for when the first object is: after what came before it was written.
 */
async function* looseObjects(git: GitOverlay, oids: () => readonly string[], held: HeldBytes): AsyncGenerator<PackObject> {
  yield* mapAhead(oids(), READ_CONCURRENCY, async (oid): Promise<PackObject> => {
    const o = await git.transient(oid);
    if (!o) throw new Error(`object ${oid} is missing from storage`);
    held.change(o.content.length);
    return { ...o, oid, held: o.content.length };
  });
}

/**
 * The blobs of `wanted` a packed layout holds, as objects, each only when its text hashes to its id
 * (anything else is left in `wanted`, to be read as a loose object) and removed from `wanted`.
 */
async function* packedBlobs(batches: AsyncIterable<Array<[string, { text: string }]>>, wanted: Set<string>): AsyncGenerator<PackObject> {
  for await (const batch of batches) {
    for (const [blob, t] of batch) {
      if (!wanted.has(blob)) continue;
      const content = Buffer.from(t.text, 'utf8');
      if (objectId('blob', content) !== blob) continue;
      wanted.delete(blob);
      // The text is counted with its segment; its bytes are the writer's once added.
      yield { type: 'blob', content, oid: blob, held: 0 };
    }
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
