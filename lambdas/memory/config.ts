import { envInt, envString, type Env } from '../shared/env';
import { loadClientOptions, type ClientOptions } from '../shared/aws/clients';

/**
 * Limits and configuration of the memory core. Every limit is configuration with the documented
 * default (DECISIONS: environment variables locally, props in CDK); tests of a limit use the default.
 */
export interface MemoryLimits {
  /** Active memories per account (retired ones do not count). */
  maxMemoriesPerAccount: number;
  /** Stored markdown of one note, front matter included, in UTF-8 bytes. */
  maxNoteBytes: number;
  /** UTF-8 bytes of a note path. */
  maxPathBytes: number;
  /** UTF-8 bytes of one path segment (a file or folder name), the common file-system limit. */
  maxSegmentBytes: number;
  /** Front matter text (between the fences), in UTF-8 bytes. */
  maxFrontmatterBytes: number;
  /** YAML aliases resolved per front matter (guards against alias expansion). */
  maxFrontmatterAliases: number;
  /** Nesting depth of a front matter value. */
  maxFrontmatterDepth: number;
  /** Tag arguments of one list or search. */
  maxTagArgs: number;
  /** Notes listing page size: default and maximum (spec 2). */
  listDefaultLimit: number;
  listMaxLimit: number;
  /** Search page size: default and maximum (spec 2). */
  searchDefaultLimit: number;
  searchMaxLimit: number;
  /** Search query length in characters. */
  maxQueryChars: number;
  /** Compare-and-set attempts of one write without an expected rev before it gives up (503). */
  maxWriteAttempts: number;
  /**
   * Milliseconds a write may take from the moment it reaches the core (its queue in the process
   * included) before it is answered 503 with Retry-After instead, never to land (imports excepted).
   */
  writeBudgetMs: number;
  /** Milliseconds a writer that lost a race holds the memory's write ticket at most (should it die holding it). */
  writeTicketMs: number;
  /** Writes to one memory queued in one process that go as one batch (a chain of commits, one head move). */
  maxWriteBatch: number;
  /** Notes of one import (one commit). */
  maxImportNotes: number;
  /** Tombstones kept in the index (older deletions stay recoverable through git history). */
  maxTombstones: number;
  /** History page size: default and maximum. */
  historyDefaultLimit: number;
  historyMaxLimit: number;
  /** Commits one history request with `path` examines at most; past them the page ends with a cursor. */
  historyScanCommits: number;
  /** Changes listed per history entry (a large import lists the first ones and counts the rest). */
  historyMaxChanges: number;
  /** Largest diff answered, in bytes of diff text (larger: 400, narrow it with `path` or closer revs). */
  maxDiffBytes: number;
  /** Commits one push may bring. */
  maxPushCommits: number;
  /** Objects one push may bring (commits, trees and notes). */
  maxPushObjects: number;
  /** Bytes the objects of one push may inflate to, together (a note is at most `maxNoteBytes` on its own). */
  maxPushInflatedBytes: number;
  /**
   * Seconds a push may take on the server, whatever its size; its checks must end within two thirds
   * of them, so that the wave and the head move fit in the rest. Past it: refused, nothing lands.
   */
  pushSeconds: number;
}

export const DEFAULT_LIMITS: MemoryLimits = {
  maxMemoriesPerAccount: 20,
  maxNoteBytes: 1024 * 1024,
  maxPathBytes: 1024,
  maxSegmentBytes: 255,
  maxFrontmatterBytes: 64 * 1024,
  maxFrontmatterAliases: 50,
  maxFrontmatterDepth: 20,
  maxTagArgs: 50,
  listDefaultLimit: 200,
  listMaxLimit: 500,
  searchDefaultLimit: 20,
  searchMaxLimit: 50,
  maxQueryChars: 256,
  maxWriteAttempts: 100,
  writeBudgetMs: 5000,
  writeTicketMs: 2000,
  maxWriteBatch: 25,
  maxTombstones: 5000,
  maxImportNotes: 5000,
  historyDefaultLimit: 20,
  historyMaxLimit: 100,
  historyScanCommits: 1000,
  historyMaxChanges: 1000,
  maxDiffBytes: 4 * 1024 * 1024,
  maxPushCommits: 10_000,
  maxPushObjects: 20_000,
  maxPushInflatedBytes: 64 * 1024 * 1024,
  pushSeconds: 25,
};

export interface MemoryConfig extends ClientOptions {
  /** The rev-lock table (one item per memory). */
  memoryTable: string;
  /** The bucket of git objects and per-commit indexes. */
  memoryBucket: string;
  /** In-Lambda cache of immutable objects and indexes, in MB. */
  cacheMegabytes: number;
  /**
   * The table of `Idempotency-Key` records (`RATE_LIMIT_TABLE`, the shared short-lived state table):
   * a keyed write records its key there in the same transaction that moves its memory's head.
   */
  idempotencyTable: string;
  limits: MemoryLimits;
}

/** The environment variable of each limit (DECISIONS: every limit is configuration). */
export const LIMIT_VARIABLES: Readonly<Record<keyof MemoryLimits, string>> = {
  maxMemoriesPerAccount: 'MEMORY_MAX_PER_ACCOUNT',
  maxNoteBytes: 'MEMORY_MAX_NOTE_BYTES',
  maxPathBytes: 'MEMORY_MAX_PATH_BYTES',
  maxSegmentBytes: 'MEMORY_MAX_SEGMENT_BYTES',
  maxFrontmatterBytes: 'MEMORY_MAX_FRONTMATTER_BYTES',
  maxFrontmatterAliases: 'MEMORY_MAX_FRONTMATTER_ALIASES',
  maxFrontmatterDepth: 'MEMORY_MAX_FRONTMATTER_DEPTH',
  maxTagArgs: 'MEMORY_MAX_TAG_ARGS',
  listDefaultLimit: 'MEMORY_LIST_DEFAULT_LIMIT',
  listMaxLimit: 'MEMORY_LIST_MAX_LIMIT',
  searchDefaultLimit: 'MEMORY_SEARCH_DEFAULT_LIMIT',
  searchMaxLimit: 'MEMORY_SEARCH_MAX_LIMIT',
  maxQueryChars: 'MEMORY_MAX_QUERY_CHARS',
  maxWriteAttempts: 'MEMORY_MAX_WRITE_ATTEMPTS',
  writeBudgetMs: 'MEMORY_WRITE_BUDGET_MS',
  writeTicketMs: 'MEMORY_WRITE_TICKET_MS',
  maxWriteBatch: 'MEMORY_MAX_WRITE_BATCH',
  maxImportNotes: 'MEMORY_MAX_IMPORT_NOTES',
  maxTombstones: 'MEMORY_MAX_TOMBSTONES',
  historyDefaultLimit: 'MEMORY_HISTORY_DEFAULT_LIMIT',
  historyMaxLimit: 'MEMORY_HISTORY_MAX_LIMIT',
  historyScanCommits: 'MEMORY_HISTORY_SCAN_COMMITS',
  historyMaxChanges: 'MEMORY_HISTORY_MAX_CHANGES',
  maxDiffBytes: 'MEMORY_MAX_DIFF_BYTES',
  maxPushCommits: 'MEMORY_MAX_PUSH_COMMITS',
  maxPushObjects: 'MEMORY_MAX_PUSH_OBJECTS',
  maxPushInflatedBytes: 'MEMORY_MAX_PUSH_INFLATED_BYTES',
  pushSeconds: 'MEMORY_PUSH_SECONDS',
};

/** Every limit from its variable, the default when unset; a page default above its maximum is refused. */
export function loadMemoryLimits(env: Env = process.env): MemoryLimits {
  const limits = { ...DEFAULT_LIMITS };
  for (const key of Object.keys(LIMIT_VARIABLES) as Array<keyof MemoryLimits>) {
    limits[key] = envInt(env, LIMIT_VARIABLES[key], DEFAULT_LIMITS[key], { min: key === 'maxTombstones' ? 0 : 1 });
  }
  for (const [def, max] of [
    ['listDefaultLimit', 'listMaxLimit'],
    ['searchDefaultLimit', 'searchMaxLimit'],
    ['historyDefaultLimit', 'historyMaxLimit'],
  ] as const) {
    if (limits[def] > limits[max]) throw new Error(`${LIMIT_VARIABLES[def]} (${limits[def]}) must not exceed ${LIMIT_VARIABLES[max]} (${limits[max]})`);
  }
  return limits;
}

export function loadMemoryConfig(env: Env = process.env): MemoryConfig {
  return {
    ...loadClientOptions(env),
    memoryTable: envString(env, 'MEMORY_TABLE') ?? 'memories',
    memoryBucket: envString(env, 'MEMORY_BUCKET') ?? 'memories',
    cacheMegabytes: envInt(env, 'MEMORY_CACHE_MB', 128, { min: 1 }),
    idempotencyTable: envString(env, 'RATE_LIMIT_TABLE') ?? 'rate-limits',
    limits: loadMemoryLimits(env),
  };
}
