import type { MemoryLimits } from './config';
import { CREDENTIAL_LABELS, findCredential } from './credentials';
import { badRequest, conflict, MemoryError } from './errors';

/**
 * Names and paths. A memory name is a REST slug; a note path is a POSIX path ending in `.md`,
 * case-sensitive and kept byte for byte as given (no Unicode normalisation), because it becomes a
 * git tree path and must come back unchanged from a `git clone` of the export.
 */
const MEMORY_NAME = /^[a-z0-9_-]{1,64}$/;
export const RESERVED_MEMORY_NAMES: ReadonlySet<string> = new Set(['export']);

/** Returns the trimmed name, or throws BAD_REQUEST (`invalid_name` / `reserved_name`). */
export function validateMemoryName(raw: string): string {
  const name = typeof raw === 'string' ? raw.trim() : '';
  if (!MEMORY_NAME.test(name)) {
    throw badRequest('invalid_name', 'memory name must be 1-64 characters of a-z, 0-9, _ and -', 'name');
  }
  if (RESERVED_MEMORY_NAMES.has(name)) throw badRequest('reserved_name', `memory name "${name}" is reserved`, 'name');
  return name;
}

export function isValidMemoryName(raw: string): boolean {
  return MEMORY_NAME.test(raw) && !RESERVED_MEMORY_NAMES.has(raw);
}

// Control characters would survive git but break terminals, HTTP headers and zip tools.
const CONTROL = /[\u0000-\u001f\u007f]/;

/**
 * Code points HFS+ ignores when it compares names (git's `is_hfs_dotgit`): `.g\u200cit` is `.git`
 * on a Mac.
 */
const HFS_IGNORED = /[\u200c-\u200f\u202a-\u202e\u206a-\u206f\ufeff]/g;

/** Names git gives a meaning to inside a tree; as a folder (or worse, `.git` itself) they break a clone or `git fsck`. */
const GIT_NAMES = new Set(['.git', '.gitmodules', '.gitattributes', '.gitignore', '.mailmap']);

/**
 * NTFS 8.3 short names of those (git's `is_ntfs_dotgit` and `is_ntfs_dot_generic`): the first six
 * letters or a hashed prefix, `~` and a digit, e.g. `GIT~1` for `.git`, `gi7eba~1` for `.gitmodules`.
 */
const NTFS_SHORT = /^(git|gitmod|gi7eba|gitatt|gi7d29|gitign|gi250a|mailma|maba30)~\d+$/;

/**
 * Why git would refuse or misread `seg` as a path component, following git's own `verify_path`
 * with its HFS+ and NTFS protections (both on by default in git): case-insensitive, code points
 * HFS+ ignores removed, trailing dots and spaces dropped and an NTFS stream suffix (`::$DATA`,
 * `:stream`) cut, as those file systems do.
 */
export function gitRefusal(seg: string): string | undefined {
  let name = seg.replace(HFS_IGNORED, '').toLowerCase();
  const colon = name.indexOf(':');
  if (colon >= 0) name = name.slice(0, colon);
  name = name.replace(/[. ]+$/, '');
  if (GIT_NAMES.has(name)) return name === '.git' ? 'names the git directory' : `names git's own ${name} file`;
  if (NTFS_SHORT.test(name)) return 'is the Windows short name of a git file';
  return undefined;
}

type PathLimits = Pick<MemoryLimits, 'maxPathBytes' | 'maxSegmentBytes'>;

function checkSegments(path: string, field: string, limits: PathLimits, what: string): string[] {
  if (path.includes('\\')) throw badRequest('invalid_path', `${what} may not contain a backslash`, field);
  if (CONTROL.test(path)) throw badRequest('invalid_path', `${what} may not contain NUL or control characters`, field);
  if (path.startsWith('/')) throw badRequest('invalid_path', `${what} may not start with a slash`, field);
  if (path.startsWith('@')) throw badRequest('invalid_path', `${what} may not start with @ (reserved for vault addressing)`, field);
  if (Buffer.byteLength(path, 'utf8') > limits.maxPathBytes) {
    throw badRequest('invalid_path', `${what} is longer than ${limits.maxPathBytes} bytes`, field);
  }
  const segments = path.split('/');
  for (const seg of segments) {
    if (seg === '') throw badRequest('invalid_path', `${what} may not contain empty segments`, field);
    if (seg === '.' || seg === '..') throw badRequest('invalid_path', `${what} may not contain "." or ".." segments`, field);
    // Git refuses these in a tree (or fsck flags them): one such write would break every export.
    const refusal = gitRefusal(seg);
    if (refusal) throw badRequest('invalid_path', `${what} segment "${seg}" ${refusal}; git refuses it in a repository`, field);
    if (Buffer.byteLength(seg, 'utf8') > limits.maxSegmentBytes) {
      throw badRequest('invalid_path', `${what} has a segment longer than ${limits.maxSegmentBytes} bytes`, field);
    }
  }
  return segments;
}

/** Validates a note path; returns it unchanged. */
export function validateNotePath(path: unknown, limits: PathLimits, field = 'path'): string {
  if (typeof path !== 'string' || path.length === 0) throw badRequest('invalid_path', 'path is required', field);
  const segments = checkSegments(path, field, limits, 'path');
  const file = segments[segments.length - 1];
  if (!file.endsWith('.md') || file.length === 3) {
    throw badRequest('invalid_path', 'path must name a markdown file ending in .md', field);
  }
  // A folder named like a note could collide with a note of that name in the same git tree.
  for (const folder of segments.slice(0, -1)) {
    if (folder.endsWith('.md')) throw badRequest('invalid_path', 'folder names may not end in .md', field);
  }
  return path;
}

/** Validates a folder filter; `''` (or absent) is the root. A single trailing slash is tolerated. */
export function validateFolder(folder: string | undefined, limits: PathLimits, field = 'folder'): string {
  if (folder === undefined) return '';
  if (typeof folder !== 'string') throw badRequest('invalid_path', 'folder must be a string', field);
  let f = folder.trim();
  if (f === '' || f === '/') return '';
  if (f.endsWith('/')) f = f.slice(0, -1);
  const segments = checkSegments(f, field, limits, 'folder');
  if (segments.some((s) => s.endsWith('.md'))) throw badRequest('invalid_path', 'folder names may not end in .md', field);
  return f;
}

/**
 * Names every clone must be able to check out, on every system, and every terminal must show as they
 * are: what a write may create (REST, MCP, move, import, restore, push) on top of the rules above.
 * Notes that exist under such a name from before (reads, edits, deletes and moves away still work)
 * are not refused by these: only a name a write creates or replaces.
 */
const WINDOWS_DEVICE = /^(?:con|prn|aux|nul|com[0-9¹²³]|lpt[0-9¹²³]|conin\$|conout\$)$/;
const WINDOWS_FORBIDDEN = /[<>:"|?*]/;
/** Invisible or reordering code points (format characters: bidi controls, zero-width, soft hyphen, BOM, tag characters), C1 controls, line and paragraph separators, lone surrogates. */
const MISREAD = /[\p{Cf}\p{Cc}\p{Zl}\p{Zp}\p{Cs}]/u;
/** A percent-encoded dot, slash, backslash, percent or control character: decoded once more (by a client, a proxy, a shell script), the path would name another one. */
const ENCODED = /%(?:2e|2f|5c|25|[01][0-9a-f]|7f)/i;

/** Why `seg` is not portable (Windows, macOS, terminals, URL handling), or undefined. */
export function portabilityRefusal(seg: string): string | undefined {
  const cp = MISREAD.exec(seg)?.[0];
  if (cp !== undefined) {
    return `contains the invisible or reordering character U+${(cp.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}, which terminals and file managers misread`;
  }
  if (ENCODED.test(seg))
    return 'contains a percent-encoded dot, slash, backslash, percent sign or control character, which reads as another path once decoded again';
  const bad = WINDOWS_FORBIDDEN.exec(seg)?.[0];
  if (bad !== undefined) return `contains "${bad}", which Windows does not allow in a file name`;
  if (/[. ]$/.test(seg)) return 'ends in a dot or a space, which Windows drops (the name would change on checkout)';
  const stem = seg.split('.')[0].replace(/ +$/, '').toLowerCase();
  if (WINDOWS_DEVICE.test(stem)) return `is the Windows device name ${stem.toUpperCase()} (with any extension), which Windows cannot create as a file`;
  return undefined;
}

/**
 * A note path a write may create: the path rules, then every segment portable, and no credential in
 * the name itself (a path is in every listing, every clone and every log line).
 */
export function validateNewNotePath(path: unknown, limits: PathLimits, field = 'path'): string {
  const valid = validateNotePath(path, limits, field);
  for (const seg of valid.split('/')) {
    const refusal = portabilityRefusal(seg);
    if (refusal) throw badRequest('invalid_path', `path segment "${printable(seg)}" ${refusal}`, field);
  }
  const found = findCredential(valid.replaceAll('/', '\n'));
  if (found) {
    throw new MemoryError(
      'BAD_REQUEST',
      'refused_content',
      `path refused: it looks like ${CREDENTIAL_LABELS[found.kind]} (${found.kind}); remove the credential`,
      {
        field,
        credentialKind: found.kind,
      },
    );
  }
  return valid;
}

/** A folder a push creates: the folder rules and portable segments. */
export function validateNewFolder(folder: string, limits: PathLimits, field = 'folder'): string {
  const valid = validateFolder(folder, limits, field);
  for (const seg of valid === '' ? [] : valid.split('/')) {
    const refusal = portabilityRefusal(seg);
    if (refusal) throw badRequest('invalid_path', `folder segment "${printable(seg)}" ${refusal}`, field);
  }
  return valid;
}

/** A name as an error message may quote it: invisible and control characters as `\u{…}` escapes. */
export function printable(s: string): string {
  return s.replace(/[\p{Cf}\p{Cc}\p{Zl}\p{Zp}\p{Cs}]/gu, (c) => `\\u{${(c.codePointAt(0) ?? 0).toString(16)}}`);
}

/**
 * The key under which case-insensitive or normalisation-insensitive file systems (macOS, Windows)
 * see a name: NFC, then case folded (upper, then lower case: `ß` = `ss`, the Kelvin sign = `k`).
 * Two paths with one key are twins: a clone there keeps only one of them.
 */
export function foldKey(path: string): string {
  // ASCII (most paths) is its own NFC, and its case fold is its lower case: no normalisation pass.
  return ASCII.test(path) ? path.toLowerCase() : path.normalize('NFC').toUpperCase().toLowerCase().normalize('NFC');
}

const ASCII = /^[\x00-\x7f]*$/;

/**
 * The existing note or folder (`…/`) that `path` would twin, or undefined. Two twin paths first
 * differ in one segment under one existing folder: so only the children of the deepest folder of
 * `path` that exists exactly are folded and compared with the segment of `path` under it. Two passes
 * of prefix tests over the paths, no normalisation of the others: a write checks one path this way.
 */
function twinIn(existing: readonly string[], path: string): string | undefined {
  const segs = path.split('/');
  const prefixes = segs.slice(0, -1).map((_, i) => `${segs.slice(0, i + 1).join('/')}/`);
  let depth = 0;
  for (const q of existing) while (depth < prefixes.length && q.startsWith(prefixes[depth])) depth++;
  const base = depth === 0 ? '' : prefixes[depth - 1];
  const mine = segs[depth];
  const key = foldKey(mine);
  for (const q of existing) {
    if (!q.startsWith(base)) continue;
    const slash = q.indexOf('/', base.length);
    const child = slash < 0 ? q.slice(base.length) : q.slice(base.length, slash);
    if (child !== mine && foldKey(child) === key) return `${base}${child}${slash < 0 ? '' : '/'}`;
  }
  return undefined;
}

/** Every path and folder (`…/`) by its fold key, the first seen kept: how a write of many paths (an import) is checked. */
function addFolds(map: Map<string, string>, path: string): string | undefined {
  let i = path.indexOf('/');
  let twin: string | undefined;
  const add = (key: string, raw: string): void => {
    const seen = map.get(key);
    if (seen === undefined) map.set(key, raw);
    else if (seen !== raw) twin ??= seen;
  };
  while (i >= 0) {
    add(foldKey(path.slice(0, i)), `${path.slice(0, i)}/`);
    i = path.indexOf('/', i + 1);
  }
  add(foldKey(path), path);
  return twin;
}

/**
 * Refuses new paths that differ from an existing note or folder (or from each other) only by case
 * or Unicode normalisation: CONFLICT `path_collision`, naming the note or folder it collides with.
 * A path that exists exactly is an update, never a twin; `movedAway` paths are gone.
 */
export function checkTwins(files: ReadonlyMap<string, unknown>, paths: readonly string[], movedAway: readonly string[] = []): void {
  const fresh = paths.filter((p) => !files.has(p) || movedAway.includes(p));
  if (fresh.length === 0) return;
  const existing = [...files.keys()].filter((p) => movedAway.length === 0 || !movedAway.includes(p));
  if (fresh.length === 1) {
    const other = twinIn(existing, fresh[0]);
    if (other !== undefined) throw conflict('path_collision', twinMessage(fresh[0], other));
    return;
  }
  const folds = new Map<string, string>();
  for (const q of existing) addFolds(folds, q);
  for (const path of fresh) {
    const other = addFolds(folds, path);
    if (other !== undefined) throw conflict('path_collision', twinMessage(path, other));
  }
}

export function twinMessage(path: string, other: string): string {
  const what = other.endsWith('/') ? `the folder "${printable(other)}"` : `the note "${printable(other)}"`;
  const how =
    path.replace(/\/$/, '').normalize('NFC') === other.replace(/\/$/, '').normalize('NFC')
      ? 'they are the same characters, composed differently (Unicode NFC and NFD)'
      : 'they differ only by case or Unicode normalisation';
  return `path "${printable(path)}" collides with ${what}: ${how}, and a clone on macOS or Windows would keep only one; use that name or another`;
}

/** `a/b/c.md` → `a/b`; a root note → `''`. */
export function parentFolder(path: string): string {
  const i = path.lastIndexOf('/');
  return i < 0 ? '' : path.slice(0, i);
}

/** Every folder containing `path`, deepest first, ending with the root `''`. */
export function ancestorFolders(path: string): string[] {
  const out: string[] = [];
  let p = parentFolder(path);
  for (;;) {
    out.push(p);
    if (p === '') return out;
    p = parentFolder(p);
  }
}

export function baseName(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

/** True when `path` lies inside `folder` (at any depth); every path is inside the root. */
export function isInside(path: string, folder: string): boolean {
  return folder === '' || path.startsWith(`${folder}/`);
}

/** The part of `path` below `folder` (which must contain it). */
export function relativeTo(path: string, folder: string): string {
  return folder === '' ? path : path.slice(folder.length + 1);
}
