import type { MemoryLimits } from './config';
import { badRequest } from './errors';

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
