/**
 * The memory core's error model. Every failure a caller can act on is a `MemoryError` with a stable
 * `code` (the `/v1` envelope codes of spec 2) and a finer `reason` the transports use where their
 * vocabularies differ (MCP separates `refused_content` from `invalid_argument`, for instance).
 * Transports map `code` to their envelope; they never parse `message`.
 */
import { EVENT_METRICS } from '../shared/observability/metric-names';
import { countMetric } from '../shared/observability/metrics';

export type MemoryErrorCode = 'BAD_REQUEST' | 'FORBIDDEN' | 'NOT_FOUND' | 'CONFLICT' | 'UPSTREAM_UNAVAILABLE' | 'INTERNAL_ERROR';

export type MemoryErrorReason =
  | 'invalid_argument'
  | 'invalid_name'
  | 'reserved_name'
  | 'invalid_path'
  | 'invalid_cursor'
  | 'invalid_rev'
  | 'invalid_frontmatter'
  | 'refused_content'
  | 'too_large'
  | 'no_unique_match'
  | 'not_granted'
  | 'memory_not_found'
  | 'note_not_found'
  | 'section_not_found'
  | 'no_history'
  | 'rev_not_found'
  | 'unexportable_history'
  | 'stale_rev'
  | 'ceiling'
  | 'retired_name'
  | 'note_exists'
  | 'path_collision'
  | 'contention'
  | 'storage'
  | 'internal';

export const MEMORY_ERROR_STATUS: Record<MemoryErrorCode, number> = {
  BAD_REQUEST: 400,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  UPSTREAM_UNAVAILABLE: 503,
  INTERNAL_ERROR: 500,
};

export class MemoryError extends Error {
  readonly status: number;

  constructor(
    readonly code: MemoryErrorCode,
    readonly reason: MemoryErrorReason,
    message: string,
    readonly extra: {
      /** The argument at fault, when there is one (e.g. `path`, `limit`, `old_str`). */
      field?: string;
      /** For refused content: the kind of credential found (never the value). */
      credentialKind?: string;
      /** For UPSTREAM_UNAVAILABLE: the seconds a caller should wait (Retry-After). */
      retryAfterSeconds?: number;
      /** For a failed expected rev (`stale_rev`): what it was compared with, for transports to word in their terms. */
      stale?: StaleRev;
    } = {},
  ) {
    super(message);
    this.name = 'MemoryError';
    this.status = MEMORY_ERROR_STATUS[code];
  }
}

export const badRequest = (reason: MemoryErrorReason, message: string, field?: string): MemoryError =>
  new MemoryError('BAD_REQUEST', reason, message, field === undefined ? {} : { field });

export const notFound = (reason: 'memory_not_found' | 'note_not_found' | 'no_history' | 'rev_not_found', message: string): MemoryError =>
  new MemoryError('NOT_FOUND', reason, message);

export const conflict = (reason: MemoryErrorReason, message: string): MemoryError => new MemoryError('CONFLICT', reason, message);

/** The head an expected rev was compared with. */
export interface StaleRev {
  memory: string;
  /** False when the memory does not exist: then no expected rev can match. */
  exists: boolean;
  /** The memory's head; null before its first write. */
  currentRev: string | null;
}

/** An expected rev that is not the memory's head (or a memory that does not exist). */
export function staleRev(memory: string, current: { head: string | null } | undefined): MemoryError {
  countMetric(EVENT_METRICS.ifMatchConflicts);
  const message = current
    ? `the expected rev does not match the current rev ${current.head ?? '(none: the memory is empty)'}`
    : `memory "${memory}" does not exist, so the expected rev cannot match`;
  return new MemoryError('CONFLICT', 'stale_rev', message, { stale: { memory, exists: current !== undefined, currentRev: current?.head ?? null } });
}

export const forbidden = (message: string): MemoryError => new MemoryError('FORBIDDEN', 'not_granted', message);

/** Thrown by storage adapters when S3 or DynamoDB fails; the service turns it into a 503. */
export class StorageError extends Error {
  constructor(
    readonly operation: string,
    override readonly cause: unknown,
  ) {
    super(`storage call ${operation} failed: ${describe(cause)}`);
    this.name = 'StorageError';
  }
}

function describe(err: unknown): string {
  if (err instanceof Error) return `${err.name}: ${err.message}`;
  return String(err);
}

export function unavailable(cause: unknown): MemoryError {
  const err = new MemoryError('UPSTREAM_UNAVAILABLE', 'storage', 'memory storage is unavailable; retry shortly', {
    retryAfterSeconds: 1,
  });
  (err as { cause?: unknown }).cause = cause;
  return err;
}
