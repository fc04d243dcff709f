import { gzipSync } from 'node:zlib';
import type { FileEntry, NoteIndex } from '../../lambdas/memory/note-index';

/**
 * A commit's index as versions 1 and 2 stored it (one JSON document: pack first, then the files as
 * rows of path, blob, size, title, tags, updated and excerpt): what indexes written before version 3
 * hold, for the tests that read them. Version 1 had no packed texts.
 */
export function olderIndexJson(idx: NoteIndex, opts: { version?: 1 | 2; packLast?: boolean } = {}): string {
  const row = (path: string, e: FileEntry) => [path, e.blob, e.size, e.title, e.tags, e.updated, e.excerpt];
  const pack = {
    s: idx.pack.segments.map((r) => [r.id, r.notes, r.chars]),
    t: [...idx.pack.tail].map(([blob, t]) => [blob, t.start, t.text]),
    c: idx.pack.complete ? 1 : 0,
  };
  const head = { v: opts.version ?? 2, commit: idx.commit, parent: idx.parent, time: idx.time };
  const rest = {
    files: [...idx.files].map(([p, e]) => row(p, e)),
    trees: [...idx.trees],
    tombstones: [...idx.tombstones].map(([p, t]) => [...row(p, t), t.deleted]),
  };
  if (opts.version === 1) return JSON.stringify({ ...head, ...rest });
  return JSON.stringify(opts.packLast ? { ...head, ...rest, pack } : { ...head, pack, ...rest });
}

export const olderIndex = (idx: NoteIndex, opts: Parameters<typeof olderIndexJson>[1] = {}): Uint8Array =>
  gzipSync(Buffer.from(olderIndexJson(idx, opts), 'utf8'));
