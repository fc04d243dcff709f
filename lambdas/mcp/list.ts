import type { MemoryService } from '../memory';
import type { Caller } from '../memory';
import type { ListEntry } from '../memory';
import type { ListEntryOut, ListFolderEntry } from './schemas';
import { display, type Target } from './vault';

/**
 * memory__list nests what the core lists flat (DECISIONS: REST is flat with full paths, MCP nests).
 * One flat listing of the folder to the requested depth, read page by page at one snapshot (the
 * core's cursor pins the commit), becomes the tree: direct children, and for depth 2 the children
 * of each subfolder. A folder with more direct entries than the per-folder limit is flagged
 * `truncated` and not expanded, at depth 1 as at depth 2; the listed folder itself shows its first
 * entries and the flag.
 */
export interface FolderListing {
  entries: ListEntryOut[];
  truncated: boolean;
  /** Notes inside the folder at any depth (matching the tags). */
  files: number;
}

/** Flat entries read per listing at most; beyond it the listing is cut (and says so). */
const MAX_FLAT_ENTRIES = 20000;

export async function listFolder(
  service: MemoryService,
  caller: Caller,
  target: Target,
  folder: string,
  depth: 1 | 2,
  tags: readonly string[] | undefined,
  maxEntries: number,
  /** At depth 1, whether to find the subfolders to flag `truncated` (one more listing for each that may be). */
  flagSubfolders = true,
): Promise<FolderListing> {
  const flat: ListEntry[] = [];
  let cursor: string | undefined;
  let capped = false;
  let base = '';
  do {
    const page = await service.listNotes(caller, target.memory, { folder, depth, tags, sort: 'name', limit: service.limits.listMaxLimit, cursor });
    base = page.folder === '' ? '' : `${page.folder}/`;
    flat.push(...page.entries);
    cursor = page.nextCursor;
    if (cursor !== undefined && flat.length >= MAX_FLAT_ENTRIES) capped = true;
  } while (cursor !== undefined && !capped);

  const top: ListEntry[] = [];
  const children = new Map<string, ListEntry[]>();
  for (const e of flat) {
    const rel = e.path.slice(base.length);
    const slash = rel.indexOf('/');
    if (slash < 0) top.push(e);
    else {
      const parent = base + rel.slice(0, slash);
      const list = children.get(parent);
      if (list) list.push(e);
      else children.set(parent, [e]);
    }
  }
  // Entries sharing a prefix are contiguous in code-point order: when the listing was cut, only the
  // folder holding the last entry read can be incomplete (later folders were not reached at all).
  const last = flat[flat.length - 1]?.path ?? '';
  const cut = capped ? base + last.slice(base.length).split('/')[0] : undefined;

  let files = 0;
  for (const e of top) files += e.type === 'file' ? 1 : e.files;
  const shownTop = top.slice(0, maxEntries);
  // At depth 1 the listing says how many notes a subfolder holds (at any depth), not how many
  // entries it has: see `overfull` for the few that could have more than the limit.
  const full = depth === 1 && flagSubfolders ? await overfull(service, caller, target, shownTop, tags, maxEntries) : new Set<string>();
  const shown = shownTop.map((e): ListEntryOut => {
    if (e.type === 'file') return fileOut(target, e);
    const folderOut: ListFolderEntry = { type: 'folder', path: display(target, e.path), files: e.files, entries: [] };
    if (depth === 1) return full.has(e.path) ? { ...folderOut, truncated: true } : folderOut;
    const kids = children.get(e.path) ?? [];
    if (kids.length > maxEntries || e.path === cut) return { ...folderOut, truncated: true };
    folderOut.entries = kids.map((k) =>
      k.type === 'file' ? fileOut(target, k) : { type: 'folder', path: display(target, k.path), files: k.files, entries: [] },
    );
    return folderOut;
  });
  return { entries: shown, truncated: capped || top.length > maxEntries, files };
}

/**
 * The subfolders of a depth-1 listing with more direct entries than `maxEntries`. Each direct entry
 * (a note, or a folder, which exists only for the notes inside it) accounts for at least one of the
 * folder's `files`, so only a folder with more than `maxEntries` files can have too many entries;
 * those few are counted with one listing of their own, read only as far as `maxEntries + 1`
 * entries. (That listing reads the memory's current state, not the page's snapshot: a write in
 * between can move the count, as it could a moment later.)
 */
async function overfull(
  service: MemoryService,
  caller: Caller,
  target: Target,
  entries: readonly ListEntry[],
  tags: readonly string[] | undefined,
  maxEntries: number,
): Promise<Set<string>> {
  const candidates = entries.filter((e) => e.type === 'folder' && e.files > maxEntries).map((e) => e.path);
  const limit = Math.min(maxEntries + 1, service.limits.listMaxLimit);
  const counted = await Promise.all(
    candidates.map(async (folder) => {
      let seen = 0;
      let cursor: string | undefined;
      do {
        const page = await service.listNotes(caller, target.memory, { folder, depth: 1, tags, sort: 'name', fields: 'path', limit, cursor });
        seen += page.entries.length;
        cursor = page.nextCursor;
      } while (cursor !== undefined && seen <= maxEntries);
      return seen > maxEntries ? folder : undefined;
    }),
  );
  return new Set(counted.filter((f): f is string => f !== undefined));
}

function fileOut(target: Target, e: Extract<ListEntry, { type: 'file' }>): ListEntryOut {
  const name = e.path.slice(e.path.lastIndexOf('/') + 1).replace(/\.md$/, '');
  return { type: 'file', path: display(target, e.path), title: e.title ?? name, updated: e.updated ?? '' };
}
