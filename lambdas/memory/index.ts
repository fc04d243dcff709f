/** The memory core's public surface, for the REST and MCP transports. */
export { MemoryService, type MemoryServiceDeps } from './service';
export * from './types';
export { MemoryError, MEMORY_ERROR_STATUS, StorageError, type MemoryErrorCode, type MemoryErrorReason } from './errors';
export { DEFAULT_LIMITS, loadMemoryConfig, type MemoryConfig, type MemoryLimits } from './config';
export { memoryTableDefinitions, objectKey, ACCOUNT_COUNTER_NAME, type MemoryTableNames } from './tables';
export type { BlobStore, RevLock, MemoryRecord, BlobItem, BlobKind } from './ports';
export { S3BlobStore } from './adapters/s3-blob-store';
export { DynamoRevLock } from './adapters/dynamo-rev-lock';
export { InMemoryBlobStore, InMemoryRevLock } from './adapters/in-memory';
export { ImmutableCache } from './cache';
export { countStorageCalls, type CallCounter, type CallCounts } from './call-counter';
export { createMemoryRuntime, type MemoryRuntime } from './wiring';
export { isValidMemoryName, validateMemoryName, validateNotePath } from './paths';
export { findCredential, CREDENTIAL_LABELS, type CredentialKind } from './credentials';
export type { FrontMatter, JsonValue } from './markdown';
export type { ListEntry, FileListEntry, FolderEntry, SearchHit } from './listing';
