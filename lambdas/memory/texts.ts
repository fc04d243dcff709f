import type { ImmutableCache } from './cache';
import type { MemoryLimits } from './config';
import type { GitOverlay } from './git-overlay';
import { parseNoteLenient } from './markdown';
import type { MemoryRecord } from './ports';

/**
 * Notes' texts by blob sha, decoded once per instance: a blob never changes, so neither does its
 * text or its body. Reads, edits, search and the zip export share these entries.
 */
export class NoteTexts {
  constructor(
    private readonly cache: ImmutableCache,
    private readonly limits: MemoryLimits,
  ) {}

  /** The note exactly as stored. */
  async text(rec: MemoryRecord, git: GitOverlay, blob: string): Promise<string> {
    const t = await this.cache.getOrLoad(
      `t:${rec.id}:${blob}`,
      () => git.readText(blob),
      (s) => s.length * 2 + 64,
    );
    return t as string;
  }

  /** The body after the front matter: what search scans. */
  async body(rec: MemoryRecord, git: GitOverlay, blob: string): Promise<string> {
    const b = await this.cache.getOrLoad(
      `b:${rec.id}:${blob}`,
      async () => parseNoteLenient(await this.text(rec, git, blob), this.limits).body,
      (s) => s.length * 2 + 64,
    );
    return b as string;
  }
}
