import type { BlobKind } from './ports';
import { tableDefinition, type TableDefinition, type TableSchema } from '../shared/aws/table-schema';

/**
 * Storage layout of the memory core, the same in AWS (CDK) and in the local stack.
 *
 * DynamoDB, the rev-lock table `names.memories`:
 *   partition key `account` (S, the token's `sub`), sort key `name` (S).
 *   One item per memory: { account, name, id, state: active|retired, head?, created, updated?,
 *   retired?, files, folders, sizeBytes, writer? (the token of the last head move), epoch? (changed
 *   by each sweep), ticket?, ticketUntil? (the write ticket: whose turn it is, until when) }.
 *   One counter item per account with name `#account`
 *   ({ active: N }) enforces the per-account ceiling inside the create/retire/restore transactions
 *   (`#` cannot begin a memory name).
 *
 * S3, the memory bucket (private, encrypted; lifecycle may expire nothing: every object is
 * immutable and may be referenced by history; only the operator's sweep deletes, and only what no
 * head reaches, `sweep.ts`):
 *   m/<id>/objects/<sha[0..2]>/<sha[2..]>  a git loose object (zlib-deflated), as in `.git/objects`
 *   m/<id>/index/<commit sha>              the derived index of that commit (gzipped JSON); the one object
 *                                          stored again: by a compaction, with the same notes and a new
 *                                          layout of packed texts (`packed-texts.ts`)
 *   m/<id>/lineage/<commit sha>            the commit's lineage (parents, depth, generation, first-parent
 *                                          ancestors), derived and immutable (`lineage.ts`)
 *   m/<id>/objects/pack/pack-<sha>.pack    the objects of a large push as one git pack (whole objects), and its
 *   m/<id>/objects/pack/pack-<sha>.idx     version 2 index, named by the pack's checksum (`packed-objects.ts`)
 *   m/<id>/segment/<sha-256>               packed note texts for search (gzipped rows and texts, `segments.ts`),
 *                                          named by their content; indexes name the segments they use
 * `<id>` is the memory's random storage id from its rev-lock item, so a memory's objects can be
 * copied into `.git/objects` of any repository as they are (the documented recovery procedure).
 */
export interface MemoryTableNames {
  memories: string;
}

export const ACCOUNT_COUNTER_NAME = '#account';

export const MEMORY_TABLE: TableSchema = { partitionKey: 'account', sortKey: 'name' };

export function memoryTableDefinitions(names: MemoryTableNames): TableDefinition[] {
  return [tableDefinition(names.memories, MEMORY_TABLE)];
}

export function objectKey(memoryId: string, kind: BlobKind, sha: string): string {
  if (kind === 'object') return `m/${memoryId}/objects/${sha.slice(0, 2)}/${sha.slice(2)}`;
  if (kind === 'pack') return `${packPrefix(memoryId)}pack-${sha}.pack`;
  if (kind === 'pack-index') return `${packPrefix(memoryId)}pack-${sha}.idx`;
  return `m/${memoryId}/${kind}/${sha}`;
}

/** Where a memory's packs are: git's own `objects/pack/` folder. */
export const packPrefix = (memoryId: string): string => `m/${memoryId}/objects/pack/`;

/** The kind and name of a key `objectKey` makes (undefined for anything else under the prefix). */
export function parseObjectKey(memoryId: string, key: string): { kind: 'object' | 'index' | 'lineage' | 'segment'; sha: string } | undefined {
  const rest = key.startsWith(`m/${memoryId}/`) ? key.slice(`m/${memoryId}/`.length) : undefined;
  const m = rest === undefined ? null : /^(?:objects\/([0-9a-f]{2})\/([0-9a-f]{38})|(index|lineage|segment)\/([0-9a-f]+))$/.exec(rest);
  if (!m) return undefined;
  return m[1] ? { kind: 'object', sha: m[1] + m[2] } : { kind: m[3] as 'index' | 'lineage' | 'segment', sha: m[4] };
}
