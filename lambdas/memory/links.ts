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

/** A link destination re-aimed for the move, or undefined when it stays as it is. */
function relinked(dest: string, place: Place, spec: MoveSpec): string | undefined {
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
  const rooted = decoded.startsWith('/');
  const target = resolve(rooted ? '' : parentFolder(place.before), rooted ? decoded.slice(1) : decoded);
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
