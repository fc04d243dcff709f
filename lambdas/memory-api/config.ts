import { loadMemoryConfig, type MemoryConfig } from '../memory/config';

/**
 * Configuration of the `/v1` transport, read once from the environment (CDK props set the same
 * variables). Every limit has the spec's value, or the documented one, as its default (DECISIONS).
 */
export interface MemoryApiConfig {
  memory: MemoryConfig;
  /** The shared limiter's table (`RATE_LIMIT_TABLE`). */
  rateLimitTable: string;
  /** Requests per window per client IP (`MEMORY_RATE_LIMIT`, spec 2: 60). */
  rateLimit: number;
  /** The window in seconds (`MEMORY_RATE_WINDOW_SECONDS`, spec 2: 60). */
  rateWindowSeconds: number;
  /** Share of the bucket an instance leases per DynamoDB call (`RATE_LEASE_FRACTION`, 0.1). */
  rateLeaseFraction: number;
  /**
   * Largest request body, in bytes (`MEMORY_MAX_REQUEST_BYTES`). Default: twice the note cap plus
   * 64 KiB, because JSON escaping may double a note (every newline becomes `\n`); the note cap
   * itself is checked by the core on the stored text, so this cap only refuses absurd bodies early.
   */
  maxRequestBytes: number;
  /**
   * Exports up to this many bytes are answered inline (`MEMORY_EXPORT_INLINE_BYTES`, 4 MiB). Lambda
   * responses are at most 6 MB and a binary body travels base64-encoded (4/3 larger): 4 MiB
   * becomes 5.33 MiB, which leaves room for the headers. Larger exports go to S3 and a 302.
   */
  exportInlineBytes: number;
  /** Lifetime of the presigned URL of a large export (`MEMORY_EXPORT_URL_SECONDS`, 300). */
  exportUrlSeconds: number;
  /** Cursor keys: a JSON file locally, a Secrets Manager secret in AWS. */
  cursorKeysFile?: string;
  cursorSecretArn?: string;
  /** CloudFront's origin header value (or its secret): only with it is `x-viewer-address` trusted. */
  originVerifySecret?: string;
  originVerifySecretArn?: string;
}

/** Key prefix of large exports in the memory bucket (expired after a day by a lifecycle rule). */
export const EXPORT_PREFIX = 'exports/';

type Env = Record<string, string | undefined>;

function get(env: Env, name: string): string | undefined {
  const v = env[name];
  return v === undefined || v === '' ? undefined : v;
}

function positive(env: Env, name: string, fallback: number): number {
  const v = get(env, name);
  if (v === undefined) return fallback;
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${name} must be a positive number, got "${v}"`);
  return n;
}

function fraction(env: Env, name: string, fallback: number): number {
  const v = get(env, name);
  if (v === undefined) return fallback;
  const n = Number(v);
  if (!Number.isFinite(n) || n < 0 || n > 1) throw new Error(`${name} must be a number from 0 to 1, got "${v}"`);
  return n;
}

export function loadMemoryApiConfig(env: Env = process.env): MemoryApiConfig {
  const memory = loadMemoryConfig(env as NodeJS.ProcessEnv);
  return {
    memory,
    rateLimitTable: get(env, 'RATE_LIMIT_TABLE') ?? 'rate-limits',
    rateLimit: positive(env, 'MEMORY_RATE_LIMIT', 60),
    rateWindowSeconds: positive(env, 'MEMORY_RATE_WINDOW_SECONDS', 60),
    rateLeaseFraction: fraction(env, 'RATE_LEASE_FRACTION', 0.1),
    maxRequestBytes: positive(env, 'MEMORY_MAX_REQUEST_BYTES', 2 * memory.limits.maxNoteBytes + 64 * 1024),
    exportInlineBytes: positive(env, 'MEMORY_EXPORT_INLINE_BYTES', 4 * 1024 * 1024),
    exportUrlSeconds: positive(env, 'MEMORY_EXPORT_URL_SECONDS', 300),
    cursorKeysFile: get(env, 'CURSOR_KEYS_FILE'),
    cursorSecretArn: get(env, 'CURSOR_SECRET_ARN'),
    originVerifySecret: get(env, 'ORIGIN_VERIFY_SECRET'),
    originVerifySecretArn: get(env, 'ORIGIN_VERIFY_SECRET_ARN'),
  };
}
