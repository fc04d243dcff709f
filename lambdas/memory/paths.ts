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
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;

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
    // A `.git` folder inside the tree would make the exported bundle unclonable.
    if (seg.toLowerCase() === '.git') throw badRequest('invalid_path', `${what} may not contain a .git segment`, field);
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
