import { comparePaths } from './listing';
import { linesWithFences, trySplit, withoutCodeSpans } from './markdown';
import { baseName, parentFolder } from './paths';

/**
 * Links to a moved note, rewritten so that they still lead to it (pure functions; `writes.ts` runs
 * them over every note in the commit of the move).
 *
 * - `[[wikilinks]]` (and `![[embeds]]`), with their `#heading` and `|alias` kept: by path from the
 *   memory's root (`[[projects/plan]]`, `.md` optional), by file name when that name is unique in
 *   the memory (`[[plan]]`, as Obsidian resolves it), and by title (`[[My plan]]`, which only a move
 *   that changes a title taken from the file name affects).
 * - Relative markdown links and images, inline (`[text](../projects/plan.md#goal)`) and reference
 *   definitions (`[plan]: ../projects/plan.md`), `/`-rooted ones taken from the memory's root;
 *   percent-encoding and `<…>` destinations keep their style. In the moved note itself every
 *   relative link is re-aimed from its new folder.
 *
 * Code is left alone: nothing inside fenced blocks or inline code spans changes, nor the front matter.
 */
export interface MoveSpec {
  from: string;
  to: string;
  /** Titles of the moved note before and after the move (a title taken from the file name changes). */
  fromTitle: string;
  toTitle: string;
  /** Every note path before the move, the moved one included (for `[[name]]` by file name). */
  paths: readonly string[];
}

/** Where the text lives: `before` and `after` differ only for the moved note itself. */
export interface Place {
  before: string;
  after: string;
}

const WIKILINK = /(!?\[\[)([^[\]\n|#]+)((?:#[^[\]\n|]*)?(?:\|[^[\]\n]*)?\]\])/g;
const INLINE_DEST = /(\]\(\s*)(<[^<>\n]*>|[^\s()<>]+)/g;
const REFERENCE = /^( {0,3}\[[^\]\n]+\]:[ \t]*)(<[^<>\n]*>|\S+)/;

export function rewriteLinks(text: string, place: Place, spec: MoveSpec): string {
  const split = trySplit(text) ?? { head: '', body: text };
  const names = nameRules(spec);
  const lines = split.body.split('\n');
  let i = 0;
  for (const { code } of linesWithFences(split.body)) {
    if (!code) lines[i] = rewriteLine(lines[i], place, spec, names);
    i++;
  }
  return split.head + lines.join('\n');
}

interface NameRules {
  fromNoExt: string;
  toNoExt: string;
  /** `[[name]]` resolved to the moved note (its file name is unique), and what to write instead. */
  byName?: { from: string; to: string };
}

function nameRules(spec: MoveSpec): NameRules {
  const fromNoExt = spec.from.slice(0, -3);
  const toNoExt = spec.to.slice(0, -3);
  const stem = (p: string) => baseName(p).slice(0, -3);
  const fromStem = stem(spec.from);
  const toStem = stem(spec.to);
  const count = (paths: readonly string[], s: string) => paths.filter((p) => stem(p) === s).length;
  let byName: NameRules['byName'];
  if (fromStem !== toStem && count(spec.paths, fromStem) === 1) {
    const after = [...spec.paths.filter((p) => p !== spec.from), spec.to];
    byName = { from: fromStem, to: count(after, toStem) === 1 ? toStem : toNoExt };
  }
  return { fromNoExt, toNoExt, byName };
}

function rewriteLine(line: string, place: Place, spec: MoveSpec, names: NameRules): string {
  if (!line.includes('[')) return line;
  // Code spans are blanked (same length) to find links outside them; edits apply to the real line.
  const masked = withoutCodeSpans(line);
  const edits: Array<{ start: number; end: number; text: string }> = [];
  for (const m of masked.matchAll(WIKILINK)) {
    const target = m[2];
    const next = wikiTarget(target, spec, names);
    if (next !== undefined) {
      const start = (m.index as number) + m[1].length;
      edits.push({ start, end: start + target.length, text: next });
    }
  }
  for (const m of masked.matchAll(INLINE_DEST)) {
    const start = (m.index as number) + m[1].length;
    const next = relinked(m[2], place, spec);
    if (next !== undefined) edits.push({ start, end: start + m[2].length, text: next });
  }
  const ref = REFERENCE.exec(masked);
  if (ref) {
    const next = relinked(ref[2], place, spec);
    if (next !== undefined) edits.push({ start: ref[1].length, end: ref[1].length + ref[2].length, text: next });
  }
  if (edits.length === 0) return line;
  let out = line;
  for (const e of edits.sort((a, b) => b.start - a.start)) out = out.slice(0, e.start) + e.text + out.slice(e.end);
  return out;
}

function wikiTarget(raw: string, spec: MoveSpec, names: NameRules): string | undefined {
  const lead = raw.match(/^\s*/)?.[0] ?? '';
  const trail = raw.match(/\s*$/)?.[0] ?? '';
  const t = raw.trim();
  const withMd = /\.md$/i.test(t);
  const bare = (withMd ? t.slice(0, -3) : t).replace(/^\//, '');
  let next: string | undefined;
  if (bare === names.fromNoExt) next = names.toNoExt;
  else if (names.byName && bare === names.byName.from) next = names.byName.to;
  else if (spec.fromTitle !== spec.toTitle && t === spec.fromTitle) return lead + spec.toTitle + trail;
  if (next === undefined) return undefined;
  return lead + next + (withMd ? '.md' : '') + trail;
}

/** A markdown link destination taken apart: undefined for an external, in-page or empty one. */
interface Destination {
  angle: boolean;
  /** The path part as written, and decoded (a malformed escape is taken as written). */
  rawPath: string;
  decoded: string;
  /** `#anchor` or `?query`, as written. */
  suffix: string;
  /** `/`-rooted: from the memory's root. */
  rooted: boolean;
}

function destination(dest: string): Destination | undefined {
  const angle = dest.startsWith('<');
  const url = angle ? dest.slice(1, -1) : dest;
  if (url === '' || url.startsWith('#') || url.startsWith('//') || /^[A-Za-z][A-Za-z0-9+.-]*:/.test(url)) return undefined;
  const cut = url.search(/[#?]/);
  const rawPath = cut < 0 ? url : url.slice(0, cut);
  const suffix = cut < 0 ? '' : url.slice(cut);
  if (rawPath === '') return undefined;
  let decoded = rawPath;
  try {
    decoded = decodeURIComponent(rawPath);
  } catch {
    // A malformed escape: taken as written.
  }
  return { angle, rawPath, decoded, suffix, rooted: decoded.startsWith('/') };
}

/** The note path a destination leads to from a note at `from` (undefined when it climbs above the root). */
function destinationTarget(d: Destination, from: string): string | undefined {
  return resolve(d.rooted ? '' : parentFolder(from), d.rooted ? d.decoded.slice(1) : d.decoded);
}

/** A link destination re-aimed for the move, or undefined when it stays as it is. */
function relinked(dest: string, place: Place, spec: MoveSpec): string | undefined {
  const d = destination(dest);
  if (!d) return undefined;
  const { angle, rawPath, decoded, suffix, rooted } = d;
  const target = destinationTarget(d, place.before);
  if (target === undefined) return undefined;
  const moved = target === spec.from;
  const relocated = place.before !== place.after;
  if (!moved && !relocated) return undefined;
  const finalTarget = moved ? spec.to : target;
  const path = rooted ? `/${finalTarget}` : relative(parentFolder(place.after), finalTarget);
  if (!moved && path === (rooted ? decoded : decoded.replace(/^\.\//, ''))) return undefined;
  const written = angle ? path : rawPath !== decoded ? encodeSegments(path) : escapeDestination(path);
  return angle ? `<${written}${suffix}>` : written + suffix;
}

/** `folder` + `rel` with `.` and `..` resolved; undefined when it climbs above the root. */
function resolve(folder: string, rel: string): string | undefined {
  const out = folder === '' ? [] : folder.split('/');
  for (const seg of rel.split('/')) {
    if (seg === '' || seg === '.') continue;
    if (seg === '..') {
      if (out.length === 0) return undefined;
      out.pop();
    } else out.push(seg);
  }
  return out.join('/');
}

/** The relative path from `folder` to `target`. */
function relative(folder: string, target: string): string {
  const from = folder === '' ? [] : folder.split('/');
  const to = target.split('/');
  let common = 0;
  while (common < from.length && common < to.length - 1 && from[common] === to[common]) common++;
  return [...Array(from.length - common).fill('..'), ...to.slice(common)].join('/');
}

function encodeSegments(path: string): string {
  return path
    .split('/')
    .map((s) => (s === '..' ? s : encodeURIComponent(s)))
    .join('/');
}

/** Only what would end or break a bare link destination is escaped. */
function escapeDestination(path: string): string {
  return path.replace(/[ ()<>]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

// ------------------------------------------------------------------------------------------------
// Links as they are (the link graph reads them with the same rules a move rewrites them by)

export type LinkKind = 'wikilink' | 'markdown';

/** A link to a note, as written in a body: its target text and the body line it is on (1-based). */
export interface FoundLink {
  kind: LinkKind;
  /** `[[target]]`'s target (without `#heading` or `|alias`), or a markdown destination as written. */
  target: string;
  line: number;
}

/** File types a `[[wikilink]]` or `![[embed]]` may name that are attachments, not notes. */
const ATTACHMENT = /\.(?:png|jpe?g|gif|svg|webp|bmp|ico|avif|pdf|mp3|wav|ogg|m4a|flac|mp4|webm|mov|mkv|canvas|excalidraw|base|csv|zip|txt|json)$/i;

/**
 * The links to notes in a body, in order: `[[wikilinks]]` and `![[embeds]]` (not of attachments),
 * relative or `/`-rooted markdown links, images and reference definitions whose path ends in `.md`.
 * Nothing in code (fences, code spans) counts; external and in-page links are not links to notes.
 */
export function findLinks(body: string): FoundLink[] {
  const out: FoundLink[] = [];
  let line = 0;
  for (const { line: text, code } of linesWithFences(body)) {
    line++;
    if (code || !text.includes('[')) continue;
    const masked = withoutCodeSpans(text);
    for (const m of masked.matchAll(WIKILINK)) {
      const target = m[2].trim();
      if (target !== '' && !ATTACHMENT.test(target)) out.push({ kind: 'wikilink', target, line });
    }
    const dests = [...masked.matchAll(INLINE_DEST)].map((m) => m[2]);
    const ref = REFERENCE.exec(masked);
    if (ref) dests.push(ref[2]);
    for (const dest of dests) {
      const d = destination(dest);
      if (d && /\.md$/i.test(d.decoded)) out.push({ kind: 'markdown', target: d.angle ? dest.slice(1, -1) : dest, line });
    }
  }
  return out;
}

/** What resolution needs of a commit's notes. */
export interface NoteLookup {
  has(path: string): boolean;
  /** Note paths by file name without `.md`. */
  byStem: ReadonlyMap<string, readonly string[]>;
  /** Note paths by title. */
  byTitle: ReadonlyMap<string, readonly string[]>;
}

/**
 * Where a link leads from the note at `from`: the note (`to`), or null when no note is there
 * (dangling), with the path it names (`missing`) when it names one. Wikilinks resolve by path from
 * the root (`.md` optional), then by file name or partial path (`[[plan]]`, `[[alpha/plan]]`),
 * then by title; when several notes fit, the one in the linking note's folder, else the one with
 * the shortest path (then code-point order), as Obsidian prefers. Markdown links resolve as paths.
 */
export function resolveLink(link: FoundLink, from: string, notes: NoteLookup): { to: string | null; missing?: string } {
  if (link.kind === 'markdown') {
    const d = destination(link.target.startsWith('<') ? link.target : `<${link.target}>`);
    const target = d && destinationTarget(d, from);
    if (target === undefined || target === '') return { to: null };
    return notes.has(target) ? { to: target } : { to: null, missing: target };
  }
  const bare = link.target.replace(/\.md$/i, '').replace(/^\/+/, '');
  const exact = `${bare}.md`;
  if (notes.has(exact)) return { to: exact };
  const stem = bare.slice(bare.lastIndexOf('/') + 1);
  const byName = (notes.byStem.get(stem) ?? []).filter((p) => !bare.includes('/') || p.endsWith(`/${exact}`));
  const pick = preferred(byName, from) ?? preferred(notes.byTitle.get(link.target) ?? [], from);
  if (pick !== undefined) return { to: pick };
  return bare === '' ? { to: null } : { to: null, missing: exact };
}

function preferred(paths: readonly string[], from: string): string | undefined {
  if (paths.length <= 1) return paths[0];
  const folder = parentFolder(from);
  const here = paths.filter((p) => parentFolder(p) === folder);
  if (here.length === 1) return here[0];
  return [...(here.length > 0 ? here : paths)].sort((a, b) => a.length - b.length || comparePaths(a, b))[0];
}
