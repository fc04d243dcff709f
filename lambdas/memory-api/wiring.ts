import { sharedLimiter } from '../shared/rate-limit/leasing-config';
import type { PersonalTokens } from '../identity/personal-token-service';
import type { TokenVerifier } from '../identity/verifier';
import { createMemoryRuntime, type MemoryRuntime } from '../memory';
import type { RateLimiter } from '../shared/rate-limit/rate-limiter';
import { cursorCodec, originSecretGetter, secretsClient } from '../shared/secrets';
import type { MemoryApiConfig } from './config';
import type { MemoryApiDeps } from './deps';
import { S3ExportStore } from './exports';

/** How `/v1` brings back a retired memory: quoted in the 409 of a create (or first write) with its name. */
export const v1RestoreHint = (name: string, path?: string): string =>
  path === undefined
    ? `restore it with POST /v1/memories/${name}/restore`
    : `restore it with POST /v1/memories/${name}/restore and the body {"path": ${JSON.stringify(path)}}`;

export interface MemoryApiWiringOptions {
  /** An existing memory core (the local stack shares one between /v1 and /mcp; give it `v1RestoreHint`). */
  runtime?: MemoryRuntime;
  /** Replaces the DynamoDB limiter (tests). */
  limiter?: RateLimiter;
  /** Personal access tokens of the same identity as `verifier` (`createIdentity(…, { personalTokens: true })`), for `/v1/tokens`. */
  personalTokens?: PersonalTokens;
}

/**
 * Builds the `/v1` dependencies from configuration: the same code in AWS and locally, only the
 * endpoints differ. The verifier is passed in, so one instance (JWKS and opaque-token caches)
 * serves the function.
 */
export async function createMemoryApiDeps(config: MemoryApiConfig, verifier: TokenVerifier, opts: MemoryApiWiringOptions = {}): Promise<MemoryApiDeps> {
  const needsSecrets = (!opts.runtime && !config.cursorKeysFile && config.cursorSecretArn) || (!config.originVerifySecret && config.originVerifySecretArn);
  const secrets = needsSecrets ? await secretsClient(config.memory.region) : undefined;

  const region = config.memory.region;
  const runtime =
    opts.runtime ??
    createMemoryRuntime(config.memory, await cursorCodec({ file: config.cursorKeysFile, arn: config.cursorSecretArn, region }, secrets), {
      overrides: { restoreHint: v1RestoreHint },
    });
  const originSecret = await originSecretGetter({ value: config.originVerifySecret, arn: config.originVerifySecretArn, region }, secrets);

  return {
    config,
    service: runtime.service,
    verifier,
    ...(opts.personalTokens && { personalTokens: opts.personalTokens }),
    limiter: opts.limiter ?? sharedLimiter(runtime.dynamodb, config.rateLimitTable, config.rateLimiter),
    idempotency: runtime.idempotency,
    exports: new S3ExportStore(runtime.s3, config.memory.memoryBucket),
    originSecret,
  };
}
