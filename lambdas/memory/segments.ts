import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { gunzipWhole, jsonAndTexts } from './gzip-text';

/** What the layout needs of an index's file entry (`FileEntry` of `note-index.ts`, which imports this module). */
interface FileEntry {
  blob: string;
  size: number;
}

/**
 * Packed search text: what lets a fresh instance search a memory in a handful of fetches instead of
 * one per note. The notes' texts are kept by blob sha (content-addressed, so a text never changes
 * meaning) in two places that each commit's index names:
 *
 * - the tail: texts written since the last flush, inside the index object itself (a write already
 *   stores the index in its wave, so a small write costs no extra object);
 * - segments: immutable gzipped objects `m/<id>/segment/<sha-256 of their content>`, each holding up
 *   to `segmentChars` characters of texts. When the tail passes `tailChars`, the write that passes it
 *   moves the tail into new segments in its own PUT wave.
 *
 * A layout is valid for a commit when every note of the commit has its text in the tail or in one of
 * the named segments (`complete`); segments may also hold texts of notes since overwritten. A layout
 * that is not complete (an index written before segments existed, or a write whose note text was not
 * at hand) stays correct: search reads the missing notes one by one, then a background compaction
 * stores a complete layout for that commit. Compaction also merges small segments once a commit names
 * more than `maxSegments`, and drops stale texts once they outweigh the live ones (`wantsCompaction`).
 */

/** A note's stored text and where its body starts (after the front matter), as search reads it. */
export interface PackedText {
  text: string;
  start: number;
}

export interface SegmentRef {
  id: string;
  notes: number;
  /** Characters of text in the segment. */
  chars: number;
}

export interface SearchPack {
  segments: SegmentRef[];
  /** Blob sha → text, for notes written since the last flush. */
  tail: Map<string, PackedText>;
  /** Every note of the commit has its text in the tail or a segment. */
  complete: boolean;
}

/** A segment built by this process, not yet stored. */
export interface FreshSegment {
  ref: SegmentRef;
  body: Uint8Array;
  texts: Map<string, PackedText>;
}

export interface SegmentPolicy {
  /** The tail is moved into segments once it holds more characters than this. */
  tailChars: number;
  /** Most characters of text per segment (one note larger than this gets a segment of its own). */
  segmentChars: number;
  /** A commit naming more segments than this is compacted by the next search that reads it. */
  maxSegments: number;
}

export const DEFAULT_SEGMENT_POLICY: SegmentPolicy = { tailChars: 128 * 1024, segmentChars: 4 * 1024 * 1024, maxSegments: 6 };

export const EMPTY_PACK: SearchPack = { segments: [], tail: new Map(), complete: true };
/** What an index written before segments existed stands for: nothing packed. */
export const LEGACY_PACK: SearchPack = { segments: [], tail: new Map(), complete: false };

export const segmentCacheKey = (memoryId: string, id: string): string => `s:${memoryId}:${id}`;

const VERSION = 1;
/** [blob, where the body starts, length of the text], in UTF-16 units of the decoded texts. */
type Row = [string, number, number];

/**
 * A segment's bytes: gzip of one line of JSON (version and rows) and then every text, back to back.
 * The texts are one string after decoding, each note's a slice of it: no JSON unescaping of the
 * texts and one string allocation for all of them, which keeps a cold search's parse short.
 */
export function segmentOf(texts: ReadonlyMap<string, PackedText>): FreshSegment {
  const sorted = [...texts].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  const rows: Row[] = sorted.map(([blob, t]) => [blob, t.start, t.text.length]);
  const raw = Buffer.from(`${JSON.stringify({ v: VERSION, notes: rows })}\n${sorted.map(([, t]) => t.text).join('')}`, 'utf8');
  const id = createHash('sha256').update(raw).digest('hex');
  let chars = 0;
  for (const r of rows) chars += r[2];
  return { ref: { id, notes: rows.length, chars }, body: gzipSync(raw, { level: 6 }), texts: new Map(texts) };
}

export function parseSegment(bytes: Uint8Array): Map<string, PackedText> {
  const { json, texts } = jsonAndTexts(gunzipWhole(bytes));
  if (texts === undefined) throw new Error('a segment without texts');
  const data = JSON.parse(json) as { v: number; notes: Row[] };
  if (data.v !== VERSION) throw new Error(`unsupported segment version ${String(data.v)}`);
  const out = new Map<string, PackedText>();
  let at = 0;
  // Indexed, not destructured: see `parseIndexText`.
  const rows = data.notes;
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i];
    out.set(r[0], { start: r[1], text: texts.slice(at, at + r[2]) });
    at += r[2];
  }
  if (at !== texts.length) throw new Error('segment texts do not match their rows');
  return out;
}

/** Rough heap size, for the cache's byte bound. */
export function textsBytes(texts: ReadonlyMap<string, PackedText>): number {
  let n = 64;
  texts.forEach((t) => {
    n += 2 * t.text.length + 160;
  });
  return n;
}

function tailChars(tail: ReadonlyMap<string, PackedText>): number {
  let n = 0;
  for (const t of tail.values()) n += t.text.length;
  return n;
}

/** Texts cut into segments of at most `segmentChars` characters each, in blob order. */
export function chunk(texts: ReadonlyMap<string, PackedText>, policy: SegmentPolicy): FreshSegment[] {
  const out: FreshSegment[] = [];
  let part = new Map<string, PackedText>();
  let chars = 0;
  for (const blob of [...texts.keys()].sort()) {
    const t = texts.get(blob) as PackedText;
    if (part.size > 0 && chars + t.text.length > policy.segmentChars) {
      out.push(segmentOf(part));
      part = new Map();
      chars = 0;
    }
    part.set(blob, t);
    chars += t.text.length;
  }
  if (part.size > 0) out.push(segmentOf(part));
  return out;
}

/**
 * The layout of a new commit from its parent's: the parent's segments and tail, plus the texts of the
 * notes at `changed` (the paths the commit adds, changes or removes; undefined: compare every note).
 * `text` gives what the writer has at hand (the blobs it wrote or read) without a fetch; a new note
 * whose text is not there leaves the layout incomplete rather than costing a fetch on the write's
 * path. The work is proportional to the change, not to the memory: texts of notes gone stay in the
 * tail until it passes `tailChars`; then they are dropped and, if it is still past it, the tail
 * becomes segments, stored in the same wave as the index.
 */
export async function nextPack(
  parent: { files: ReadonlyMap<string, FileEntry>; pack: SearchPack } | null,
  files: ReadonlyMap<string, FileEntry>,
  changed: readonly string[] | undefined,
  text: (blob: string) => Promise<PackedText | undefined>,
  policy: SegmentPolicy,
): Promise<{ pack: SearchPack; fresh: FreshSegment[] }> {
  const base = parent?.pack ?? EMPTY_PACK;
  let complete = base.complete;
  const tail = new Map(base.tail);
  let had: Set<string> | undefined;
  // Built only when a note's text is not at hand (a move, a restore of a text read long ago).
  const inParent = (blob: string): boolean => {
    had ??= new Set([...(parent?.files.values() ?? [])].map((e) => e.blob));
    return had.has(blob);
  };
  const paths = parent && changed ? changed : [...files.keys()];
  for (const path of paths) {
    const e = files.get(path);
    if (!e || tail.has(e.blob)) continue;
    const t = await text(e.blob);
    if (t) tail.set(e.blob, t);
    else if (!inParent(e.blob)) complete = false;
  }
  let chars = tailChars(tail);
  if (chars > policy.tailChars) {
    const live = new Set<string>();
    for (const e of files.values()) live.add(e.blob);
    for (const blob of tail.keys()) if (!live.has(blob)) tail.delete(blob);
    chars = tailChars(tail);
  }
  if (chars <= policy.tailChars) return { pack: { segments: base.segments, tail, complete }, fresh: [] };
  const fresh = chunk(tail, policy);
  return { pack: { segments: [...base.segments, ...fresh.map((s) => s.ref)], tail: new Map(), complete }, fresh };
}

/**
 * Whether a search of a commit should leave a compacted layout behind: when it is incomplete, when
 * it names more than `maxSegments` and at least two small ones (merging them makes it shorter; full
 * segments alone are as compact as it gets), or when the segments hold more than twice the text of
 * the commit's notes (texts of notes since overwritten or deleted). A compacted layout meets none of
 * these, so a compaction is never repeated for nothing.
 */
export function wantsCompaction(pack: SearchPack, files: ReadonlyMap<string, FileEntry>, missing: number, policy: SegmentPolicy): boolean {
  if (!pack.complete || missing > 0) return true;
  const small = pack.segments.filter((s) => s.chars < policy.segmentChars / 2).length;
  if (pack.segments.length > policy.maxSegments && small >= 2) return true;
  let packed = 0;
  for (const s of pack.segments) packed += s.chars;
  let live = 0;
  files.forEach((e) => {
    live += e.size;
  });
  return packed > 2 * live + policy.segmentChars;
}

/**
 * Which segments a compaction keeps as they are: large ones whose texts are still mostly notes of the
 * commit (so a compaction rewrites the small and the stale, not the whole memory each time).
 */
export function keepsSegment(ref: SegmentRef, liveChars: number, policy: SegmentPolicy): boolean {
  return liveChars >= policy.segmentChars / 2 && liveChars >= 0.75 * ref.chars;
}
