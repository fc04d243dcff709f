import { mapLimit } from '../shared/concurrency';
import type { ImmutableCache } from './cache';
import { READ_CONCURRENCY, type GitOverlay } from './git-overlay';
import { comparePaths } from './listing';
import { findLinks, resolveLink, type FoundLink, type LinkKind, type NoteLookup } from './links';
import type { NoteIndex } from './note-index';
import type { PackedTexts } from './packed-texts';
import { baseName } from './paths';
import type { MemoryRecord } from './ports';
import { wantsCompaction, type SegmentPolicy } from './segments';
import type { NoteTexts } from './texts';

/**
 * The links between one commit's notes, both ways. Derived, like search, from the commit's index
 * and its packed texts: nothing is stored for it, so every way a commit is made (a write, a move,
 * a delete, a restore, a push) leaves a graph that is right by construction. A cold read fetches
 * what a cold search fetches (the index and its segments, notes one by one only for a layout
 * older than segments); each note's links are kept per blob (a blob never changes) and each
 * commit's graph per commit, so the graph of a new head re-reads only the notes written since.
 */
export interface OutgoingLink {
  /** As written: a wikilink's target, or a markdown link's destination. */
  target: string;
  kind: LinkKind;
  /** The body line of its first occurrence. */
  line: number;
  /** The note it leads to; null when no note is there (dangling). */
  path: string | null;
}

export interface IncomingLink {
  /** The linking note. */
  path: string;
  target: string;
  kind: LinkKind;
  line: number;
  /** The link names this path but no note is there (it would lead here if one were). */
  dangling?: true;
}

export interface NoteLinks {
  outgoing: OutgoingLink[];
  incoming: IncomingLink[];
}

export interface LinkGraph {
  /** Per note: its links, one per destination, in the order written. */
  outgoing: Map<string, OutgoingLink[]>;
  /** Per path (a note, or a path a dangling link names): the notes linking to it, one entry per note. */
  incoming: Map<string, IncomingLink[]>;
  lookup: NoteLookup;
  /** Links that lead to a note (after the one-per-destination rule). */
  resolved: number;
}

export function noteLookup(files: ReadonlyMap<string, { title: string }>): NoteLookup {
  const byStem = new Map<string, string[]>();
  const byTitle = new Map<string, string[]>();
  const add = (m: Map<string, string[]>, k: string, p: string) => {
    const list = m.get(k);
    if (list) list.push(p);
    else m.set(k, [p]);
  };
  for (const [path, e] of files) {
    add(byStem, baseName(path).slice(0, -3), path);
    add(byTitle, e.title, path);
  }
  return { has: (p) => files.has(p), byStem, byTitle };
}

/** A note's outgoing links, one per destination (a note, or a dangling target), in the order written. */
export function outgoingOf(from: string, found: readonly FoundLink[], lookup: NoteLookup): Array<OutgoingLink & { missing?: string }> {
  const seen = new Set<string>();
  const out: Array<OutgoingLink & { missing?: string }> = [];
  for (const link of found) {
    const { to, missing } = resolveLink(link, from, lookup);
    const key = to ?? `\0${missing ?? link.target}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ target: link.target, kind: link.kind, line: link.line, path: to, ...(missing !== undefined && { missing }) });
  }
  return out;
}

/** The graph of notes whose found links `linksOf` gives by blob. */
export function buildGraph(files: NoteIndex['files'], linksOf: (blob: string) => readonly FoundLink[]): LinkGraph {
  const lookup = noteLookup(files);
  const outgoing = new Map<string, OutgoingLink[]>();
  const incoming = new Map<string, IncomingLink[]>();
  let resolved = 0;
  const paths = [...files.keys()].sort(comparePaths);
  for (const from of paths) {
    const links = outgoingOf(from, linksOf((files.get(from) as { blob: string }).blob), lookup);
    outgoing.set(
      from,
      links.map(({ missing: _m, ...l }) => l),
    );
    for (const l of links) {
      const at = l.path ?? l.missing;
      if (at === undefined) continue;
      if (l.path !== null) resolved++;
      const entry: IncomingLink = { path: from, target: l.target, kind: l.kind, line: l.line, ...(l.path === null && { dangling: true as const }) };
      const list = incoming.get(at);
      if (list) list.push(entry);
      else incoming.set(at, [entry]);
    }
  }
  return { outgoing, incoming, lookup, resolved };
}

export interface LinkGraphsDeps {
  cache: ImmutableCache;
  packed: PackedTexts;
  texts: NoteTexts;
  policy: SegmentPolicy;
  git: (rec: MemoryRecord) => GitOverlay;
}

const linksBytes = (links: readonly FoundLink[]): number => 64 + links.reduce((n, l) => n + 2 * l.target.length + 64, 0);

/** Loads (and caches) the link graph of a commit. */
export class LinkGraphs {
  constructor(private readonly deps: LinkGraphsDeps) {}

  async graph(rec: MemoryRecord, index: NoteIndex): Promise<LinkGraph> {
    const graph = await this.deps.cache.getOrLoad(
      `lg:${rec.id}:${index.commit}`,
      () => this.build(rec, index),
      (g) => 256 + [...g.outgoing.values()].reduce((n, l) => n + 200 * (l.length + 1), 0),
    );
    return graph as LinkGraph;
  }

  /** One note's links both ways; a note the commit does not hold (a deleted one read with its last text) resolves `body`. */
  async forNote(rec: MemoryRecord, index: NoteIndex, path: string, body: string): Promise<NoteLinks> {
    const graph = await this.graph(rec, index);
    const outgoing = graph.outgoing.get(path) ?? outgoingOf(path, findLinks(body), graph.lookup).map(({ missing: _m, ...l }) => l);
    return { outgoing, incoming: graph.incoming.get(path) ?? [] };
  }

  private async build(rec: MemoryRecord, index: NoteIndex): Promise<LinkGraph> {
    const { cache, packed, texts, git, policy } = this.deps;
    const key = (blob: string) => `lk:${rec.id}:${blob}`;
    const found = new Map<string, readonly FoundLink[]>();
    const missing = new Set<string>();
    for (const e of index.files.values()) {
      const hit = cache.get<readonly FoundLink[]>(key(e.blob));
      if (hit) found.set(e.blob, hit);
      else missing.add(e.blob);
    }
    const keep = (blob: string, body: string): void => {
      const links = findLinks(body);
      cache.set(key(blob), links, linksBytes(links));
      found.set(blob, links);
    };
    if (missing.size > 0) {
      // The scan takes what it finds out of `missing`: what is left was not packed.
      await packed.scan(rec, index.pack, missing, (blob, t) => keep(blob, t.text.slice(t.start)));
      const g = git(rec);
      const unpacked = missing.size;
      await mapLimit([...missing], READ_CONCURRENCY, async (blob) => keep(blob, await texts.body(rec, g, blob)));
      if (wantsCompaction(index.pack, index.files, unpacked, policy)) packed.compact(rec, index);
    }
    return buildGraph(index.files, (blob) => found.get(blob) ?? []);
  }
}

/** A link whose target is no note of the commit. */
export interface DanglingLink {
  /** The linking note. */
  path: string;
  target: string;
  kind: LinkKind;
  line: number;
}

export interface LinksSummary {
  /** Notes in the commit, and links between them (one per linking note and destination). */
  notes: number;
  links: number;
  /** Notes no other note links to, in path order. */
  orphans?: string[];
  /** Links that lead to no note, by linking note in path order. */
  dangling?: DanglingLink[];
  /** A list was cut at `max` entries. */
  truncated?: true;
}

/** The memory-wide view: orphans and dangling links, as asked for, each list at most `max` long. */
export function summarize(graph: LinkGraph, want: { orphans: boolean; dangling: boolean }, max: number): LinksSummary {
  const out: LinksSummary = { notes: graph.outgoing.size, links: graph.resolved };
  let truncated = false;
  if (want.orphans) {
    const orphans: string[] = [];
    for (const path of graph.outgoing.keys()) {
      if ((graph.incoming.get(path) ?? []).some((l) => l.path !== path)) continue;
      if (orphans.length === max) {
        truncated = true;
        break;
      }
      orphans.push(path);
    }
    out.orphans = orphans;
  }
  if (want.dangling) {
    const dangling: DanglingLink[] = [];
    outer: for (const [path, links] of graph.outgoing) {
      for (const l of links) {
        if (l.path !== null) continue;
        if (dangling.length === max) {
          truncated = true;
          break outer;
        }
        dangling.push({ path, target: l.target, kind: l.kind, line: l.line });
      }
    }
    out.dangling = dangling;
  }
  if (truncated) out.truncated = true;
  return out;
}
