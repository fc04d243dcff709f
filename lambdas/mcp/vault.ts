import { isValidMemoryName } from '../memory';
import { ToolError } from '../shared/mcp/tool-error';

/**
 * Vault addressing (spec 3, DECISIONS): `@<vault>/<path>` in a `path` or `folder` argument names a
 * note or folder in the REST memory of that name; a bare path is the default memory. Paths of a
 * call addressed through a vault come back with the same `@<vault>/` prefix.
 */
export const DEFAULT_MEMORY = 'default';

export interface Target {
  /** The REST memory name. */
  memory: string;
  /** `@<vault>/` when addressed through a vault, `''` for a bare path. */
  prefix: string;
  /** How messages name the memory. */
  label: string;
}

export interface NoteTarget extends Target {
  /** The path inside the memory, as the core takes it. */
  path: string;
  /** The path as the caller wrote it (and as results return it). */
  display: string;
}

export interface FolderTarget extends Target {
  /** The folder inside the memory; `''` is its root. */
  folder: string;
}

export function defaultTarget(): Target {
  return { memory: DEFAULT_MEMORY, prefix: '', label: 'the default memory' };
}

export function vaultTarget(name: string): Target {
  return { memory: name, prefix: `@${name}/`, label: `vault "@${name}"` };
}

/** `@name…` → the vault's target and what follows `@name/`; undefined for a bare path. */
function splitVault(raw: string): { target: Target; rest: string; bare: boolean } | undefined {
  if (!raw.startsWith('@')) return undefined;
  const slash = raw.indexOf('/');
  const name = slash < 0 ? raw.slice(1) : raw.slice(1, slash);
  // A vault name that is not a valid REST memory name can never exist (DECISIONS): not found.
  if (!isValidMemoryName(name))
    throw new ToolError('not_found', `vault "@${name.slice(0, 64)}" does not exist (vault names are 1-64 characters of a-z, 0-9, _ and -)`);
  const rest = slash < 0 ? '' : raw.slice(slash + 1);
  return { target: vaultTarget(name), rest, bare: slash < 0 || rest === '' };
}

/** A note path for read, write, edit and delete: a bare `@<vault>` names no note (invalid_argument). */
export function parseNotePath(raw: string): NoteTarget {
  const v = splitVault(raw);
  if (!v) return { ...defaultTarget(), path: raw, display: raw };
  if (v.bare) {
    throw new ToolError('invalid_argument', `"${raw}" names a vault, not a note; address a note in it as "@${v.target.memory}/<folder>/<name>.md"`);
  }
  return { ...v.target, path: v.rest, display: `${v.target.prefix}${v.rest}` };
}

/** A folder for search and list: a bare `@<vault>` (or `@<vault>/`) is the whole vault. */
export function parseFolder(raw: string): FolderTarget {
  const v = splitVault(raw);
  if (!v) return { ...defaultTarget(), folder: raw };
  return { ...v.target, folder: v.rest };
}

/** A core path (or folder) as the caller sees it. */
export function display(target: Target, corePath: string): string {
  return `${target.prefix}${corePath}`;
}
