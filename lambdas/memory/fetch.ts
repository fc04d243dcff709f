import { mapLimit } from '../shared/concurrency';
import { badRequest, notFound } from './errors';
import type { GitOverlay } from './git-overlay';
import type { IndexStore } from './index-store';
import type { Lineages } from './lineage';
import type { Memories } from './memories';
import type { PackedTexts } from './packed-texts';
import type { MemoryRecord } from './ports';
import { diffTrees } from './tree-diff';
import type { Caller } from './types';

/**
 * `git clone` and `git fetch`: which of the client's commits this memory shares (negotiation), and
 * the pack of what the client lacks. A commit is sent with the trees and notes that differ from its
 * first parent's; commits stop at the first one the client has, so a pull after one write sends one
 * commit, the trees on one path and one note. Commits are enumerated through their lineages (a
 * linear history, every REST-written one, in batches of 128) and read in parallel.
 */
export interface FetchDeps {
  memories: Memories;
  lineages: Lineages;
  indexes: IndexStore;
  packed: PackedTexts;
  git: (rec: MemoryRecord) => GitOverlay;
}

export interface FetchPack {
  pack: Uint8Array;
  objects: number;
  commits: number;
}

const HEX40 = /^[0-9a-f]{40}$/;
/** Commits whose trees are compared at once (each comparison fans out over its own folders). */
const COMMITS_IN_FLIGHT = 8;
/**
 * From this many notes to send on, their texts come from the head's packed texts (a few segments)
 * rather than one loose object each: a clone of a large memory, not a pull of a few changes.
 */
const PACKED_FROM = 64;

export class Fetches {
  constructor(private readonly deps: FetchDeps) {}

  /** The client's `have`s that are commits of this memory's history. */
  async common(caller: Caller, rawName: string, haves: readonly string[]): Promise<string[]> {
    const rec = await this.record(caller, rawName);
    return this.known(rec, this.deps.git(rec), haves);
  }

  /** Every object reachable from `wants` that a client holding the common `haves` lacks, as one pack. */
  async pack(caller: Caller, rawName: string, wants: readonly string[], haves: readonly string[]): Promise<FetchPack> {
    const { lineages } = this.deps;
    const rec = await this.record(caller, rawName);
    const head = rec.head;
    if (!head) throw notFound('no_history', `memory "${rec.name}" has no commits to fetch`);
    const git = this.deps.git(rec);
    for (const w of wants) {
      if (!HEX40.test(w) || !(await lineages.isAncestor(rec, git, w, head))) throw badRequest('invalid_rev', `not our ref ${w}`, 'want');
    }
    const stop = new Set(await this.known(rec, git, haves));
    const send: string[] = [];
    const seen = new Set<string>();
    const top = await lineages.lookup(rec, git, head);
    if (top?.linear) {
      for (const w of wants) {
        walk: for await (const batch of lineages.firstParents(rec, git, w)) {
          for (const c of batch) {
            if (stop.has(c) || seen.has(c)) break walk;
            seen.add(c);
            send.push(c);
          }
        }
      }
    } else {
      let frontier = [...wants];
      while (frontier.length > 0) {
        const fresh = [...new Set(frontier)].filter((c) => !stop.has(c) && !seen.has(c));
        for (const c of fresh) seen.add(c);
        send.push(...fresh);
        const read = await mapLimit(fresh, 32, (c) => git.readCommit(c));
        frontier = read.flatMap((c) => c.parent);
      }
    }

    const trees = new Set<string>();
    const blobs = new Set<string>();
    await mapLimit(send, COMMITS_IN_FLIGHT, async (oid) => {
      const c = await git.readCommit(oid);
      const base = c.parent[0] ? (await git.readCommit(c.parent[0])).tree : null;
      const changes = await diffTrees(git, base, c.tree, { onNewTree: (t) => void trees.add(t) });
      for (const ch of changes) if (ch.newBlob) blobs.add(ch.newBlob);
    });
    if (blobs.size >= PACKED_FROM) {
      const index = await this.deps.indexes.load(rec, head);
      await this.deps.packed.scan(rec, index.pack, new Set(blobs), (blob, t) => git.adoptBlob(blob, t.text));
    }
    const oids = [...send, ...trees, ...blobs];
    // Loaded in parallel first: the packer reads one object at a time.
    await mapLimit(oids, 32, (o) => git.has(o));
    return { pack: await git.pack(oids), objects: oids.length, commits: send.length };
  }

  private async record(caller: Caller, rawName: string): Promise<MemoryRecord> {
    const name = this.deps.memories.access(caller, rawName);
    return this.deps.memories.active(caller, name);
  }

  private async known(rec: MemoryRecord, git: GitOverlay, haves: readonly string[]): Promise<string[]> {
    const head = rec.head;
    if (!head) return [];
    const candidates = [...new Set(haves)].filter((h) => HEX40.test(h));
    const ok = await mapLimit(candidates, 16, (h) => this.deps.lineages.isAncestor(rec, git, h, head));
    return candidates.filter((_, i) => ok[i]);
  }
}
