/**
 * The memory core's public surface: what the transports (`memory-api`, `mcp`) and the entry points
 * in `bin/` import. The modules behind it are the core's own; only its tests reach past this file.
 */
export { MemoryService, type MemoryServiceDeps } from './service';
export type * from './types';
export { MemoryError, MEMORY_ERROR_STATUS, StorageError, type MemoryErrorCode, type MemoryErrorReason, type StaleRev } from './errors';
export { DEFAULT_LIMITS, LIMIT_VARIABLES, loadMemoryConfig, type MemoryConfig, type MemoryLimits } from './config';
export { createMemoryRuntime, type MemoryRuntime } from './wiring';
export { memoryTableDefinitions, type MemoryTableNames } from './tables';
export { ImmutableCache } from './cache';
export { countStorageCalls, type CallCounter, type CallCounts } from './call-counter';
export { isValidMemoryName } from './paths';
export { MAIN_REF, type PushCommand, type PushOutcome } from './push';
export type { FetchPack } from './fetch';
export type { FrontMatter, JsonValue } from './markdown';
export type { FileListEntry, FolderEntry, ListEntry, ListSort, ListType, SearchHit } from './listing';
export type { DanglingLink, IncomingLink, LinksSummary, NoteLinks, OutgoingLink } from './link-graph';
export type { LinkKind } from './links';
export type { NotePart, PartQuery } from './sections';
