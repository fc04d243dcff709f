import { loadLeasingOptions } from '../shared/rate-limit/leasing-config';
import type { LeasingOptions } from '../shared/rate-limit/rate-limiter';
import { loadMemoryConfig, type MemoryConfig } from '../memory';
import { envNumber, envString, type Env } from '../shared/env';

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
  /** The shared limiter's leases and provisional allowance (`RATE_LEASE_FRACTION`, `RATE_PROVISIONAL_TOKENS`). */
  rateLimiter: LeasingOptions;
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
  /**
   * How exports are answered (`MEMORY_EXPORT_DELIVERY`): `stream` (the default; the local server,
   * and in AWS the git remote's function URL, whose answers stream) sends the file as it is made;
   * `buffered` (the `/v1` function behind API Gateway) answers inline up to `exportInlineBytes`.
   * Beyond their limits both store the file in S3 and answer 302 (`exports.ts`).
   */
  exportDelivery: 'stream' | 'buffered';
  /**
   * The largest export streamed (`MEMORY_EXPORT_STREAM_MAX_BYTES`, 190 MiB: under Lambda's 200 MB
   * streamed answer); one whose bound is larger goes to S3 and a 302.
   */
  exportStreamMaxBytes: number;
  /** Lifetime of the presigned URL of a large export (`MEMORY_EXPORT_URL_SECONDS`, 300). */
  exportUrlSeconds: number;
  /**
   * The git remote's limits. A push body (`MEMORY_GIT_MAX_PUSH_BYTES`, 4 MiB: Lambda takes at most 6 MB
   * per request and a binary body travels base64, 4/3 larger); a fetch negotiation body
   * (`MEMORY_GIT_MAX_REQUEST_BYTES`, 1 MiB); a clone or fetch answer (`MEMORY_GIT_MAX_RESPONSE_BYTES`,
   * 190 MiB, under the 200 MB of a streamed response; the buffered function behind API Gateway is
   * given 4 MiB by CDK, and a larger clone there is told to use the streaming URL).
   */
  gitMaxPushBytes: number;
  gitMaxRequestBytes: number;
  gitMaxResponseBytes: number;
  /** Cursor keys: a JSON file locally, a Secrets Manager secret in AWS. */
  cursorKeysFile?: string;
  cursorSecretArn?: string;
  /** CloudFront's origin header value (or its secret): only with it is `x-viewer-address` trusted. */
  originVerifySecret?: string;
  originVerifySecretArn?: string;
}

/** Key prefix of large exports in the memory bucket (expired after a day by a lifecycle rule). */
export const EXPORT_PREFIX = 'exports/';

export function loadMemoryApiConfig(env: Env = process.env): MemoryApiConfig {
  const memory = loadMemoryConfig(env);
  return {
    memory,
    rateLimitTable: envString(env, 'RATE_LIMIT_TABLE') ?? 'rate-limits',
    rateLimit: envNumber(env, 'MEMORY_RATE_LIMIT', 60, { positive: true }),
    rateWindowSeconds: envNumber(env, 'MEMORY_RATE_WINDOW_SECONDS', 60, { positive: true }),
    rateLimiter: loadLeasingOptions(env),
    maxRequestBytes: envNumber(env, 'MEMORY_MAX_REQUEST_BYTES', 2 * memory.limits.maxNoteBytes + 64 * 1024, { positive: true }),
    exportInlineBytes: envNumber(env, 'MEMORY_EXPORT_INLINE_BYTES', 4 * 1024 * 1024, { positive: true }),
    exportDelivery: exportDelivery(env),
    exportStreamMaxBytes: envNumber(env, 'MEMORY_EXPORT_STREAM_MAX_BYTES', 190 * 1024 * 1024, { positive: true }),
    exportUrlSeconds: envNumber(env, 'MEMORY_EXPORT_URL_SECONDS', 300, { positive: true }),
    gitMaxPushBytes: envNumber(env, 'MEMORY_GIT_MAX_PUSH_BYTES', 4 * 1024 * 1024, { positive: true }),
    gitMaxRequestBytes: envNumber(env, 'MEMORY_GIT_MAX_REQUEST_BYTES', 1024 * 1024, { positive: true }),
    gitMaxResponseBytes: envNumber(env, 'MEMORY_GIT_MAX_RESPONSE_BYTES', 190 * 1024 * 1024, { positive: true }),
    cursorKeysFile: envString(env, 'CURSOR_KEYS_FILE'),
    cursorSecretArn: envString(env, 'CURSOR_SECRET_ARN'),
    originVerifySecret: envString(env, 'ORIGIN_VERIFY_SECRET'),
    originVerifySecretArn: envString(env, 'ORIGIN_VERIFY_SECRET_ARN'),
  };
}

function exportDelivery(env: Env): MemoryApiConfig['exportDelivery'] {
  const v = envString(env, 'MEMORY_EXPORT_DELIVERY') ?? 'stream';
  if (v !== 'stream' && v !== 'buffered') throw new Error(`MEMORY_EXPORT_DELIVERY must be stream or buffered, got "${v}"`);
  return v;
}
