import { forbidden } from './errors';
import { isInside } from './paths';
import type { Caller, DiffResult, HistoryPage } from './types';

/**
 * A caller limited to one folder (`Caller.pathPrefix`, a personal access token with a path prefix)
 * reaches the notes inside it and nothing else. The service checks every operation here before it
 * runs, so each transport (REST, MCP, git, and any later one) gets the same rule:
 *
 * - Notes (read at any rev, write, edit, delete, restore, import, both ends of a move): the path
 *   must lie inside the folder; a move may not rewrite links (`updateLinks`), since the notes that
 *   link to it may lie outside.
 * - Listings, searches and changes since a rev: `folder` must be the folder or inside it; omitted
 *   (or the root) it is the folder.
 * - History and diff: of one note (`path`, inside the folder), with the changes outside the folder
 *   left out of each commit (a rename keeps its `from`: where that note came from).
 * - Whole-memory operations are refused: exports (bundle, zip) and git (a clone carries every note
 *   of the history), retiring and restoring a memory. Memory stats and the list of memories stay
 *   visible (names, counts, rev), as creating a memory is allowed (it touches no note).
 *
 * Paths are compared as given: the core keeps paths byte for byte (no normalisation), and a path
 * that merely starts with the folder but climbs out (`a/../b.md`) is refused by the path rules.
 */
const folderOf = (caller: Caller): string | undefined => caller.pathPrefix;

function outside(caller: Caller, what: string): never {
  throw forbidden(`${what} is outside the folder this token is limited to (${folderOf(caller)}/)`);
}

/** A note path the caller names (non-strings are left to the path rules, which refuse them). */
export function scopePath(caller: Caller, path: unknown): void {
  const folder = folderOf(caller);
  if (folder === undefined || typeof path !== 'string') return;
  if (!isInside(path, folder)) outside(caller, `note "${path}"`);
}

/** A folder filter: the caller's folder when omitted or the root, else it must lie inside it. */
export function scopeFolder(caller: Caller, folder: string | undefined): string | undefined {
  const limit = folderOf(caller);
  if (limit === undefined || (folder !== undefined && typeof folder !== 'string')) return folder;
  const f = (folder ?? '').trim();
  if (f === '' || f === '/') return limit;
  const bare = f.endsWith('/') ? f.slice(0, -1) : f;
  if (bare !== limit && !isInside(bare, limit)) outside(caller, `folder "${bare}"`);
  return folder;
}

/** Operations on a memory as a whole. */
export function scopeWholeMemory(caller: Caller, what: string): void {
  if (folderOf(caller) !== undefined) throw forbidden(`a token limited to a folder (${folderOf(caller)}/) cannot ${what}`);
}

/** git's requests (advertisement, negotiation, pack, push): a clone is the whole memory. */
export const scopeGit = (caller: Caller): void => scopeWholeMemory(caller, 'use git: a clone carries every note of the history');

export function scopeMoveLinks(caller: Caller, updateLinks: unknown): void {
  if (folderOf(caller) !== undefined && updateLinks === true) {
    throw forbidden(`a token limited to a folder (${folderOf(caller)}/) cannot move with updateLinks: the notes linking to the note may lie outside it`);
  }
}

/** History and diff of a limited caller are of one note inside its folder. */
export function scopeNoteHistory(caller: Caller, path: unknown, what: string): void {
  if (folderOf(caller) === undefined) return;
  if (path === undefined) throw forbidden(`a token limited to a folder (${folderOf(caller)}/) reads the ${what} of one note at a time: give path`);
  scopePath(caller, path);
}

export function scopeHistoryPage(caller: Caller, page: HistoryPage): HistoryPage {
  const folder = folderOf(caller);
  if (folder === undefined) return page;
  return {
    ...page,
    commits: page.commits.map(({ moreChanges: _unknown, ...c }) => ({ ...c, changes: c.changes.filter((ch) => isInside(ch.path, folder)) })),
  };
}

export function scopeDiff(caller: Caller, diff: DiffResult): DiffResult {
  const folder = folderOf(caller);
  return folder === undefined ? diff : { ...diff, files: diff.files.filter((f) => isInside(f.path, folder)) };
}
