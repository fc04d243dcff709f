import { readFileSync } from 'node:fs';
import type { TokenVerifier } from '../auth/verifier';
import { createMemoryRuntime, type MemoryRuntime } from '../memory/wiring';
import { parseKeyRing } from '../shared/cursor';
import { DynamoTokenBuckets } from '../shared/rate-limit/dynamo-rate-limiter';
import { LeasingRateLimiter, type RateLimiter } from '../shared/rate-limit/rate-limiter';
import { CachedSecret, secretsClient } from '../shared/secrets';
import type { MemoryApiConfig } from './config';
import type { MemoryApiDeps } from './deps';
import { S3ExportStore } from './exports';

export interface MemoryApiWiringOptions {
  /** An existing memory core (the local stack shares one between /v1 and /mcp). */
  runtime?: MemoryRuntime;
  /** Replaces the DynamoDB limiter (tests). */
  limiter?: RateLimiter;
}

/**
 * Builds the `/v1` dependencies from configuration: the same code in AWS and locally, only the
 * endpoints differ. The verifier is passed in, so one instance (JWKS and opaque-token caches)
 * serves the function.
 */
export async function createMemoryApiDeps(config: MemoryApiConfig, verifier: TokenVerifier, opts: MemoryApiWiringOptions = {}): Promise<MemoryApiDeps> {
  const needsSecrets = (!opts.runtime && !config.cursorKeysFile && config.cursorSecretArn) || (!config.originVerifySecret && config.originVerifySecretArn);
  const secrets = needsSecrets ? await secretsClient(config.memory.region) : undefined;

  let runtime = opts.runtime;
  if (!runtime) {
    let keyRingJson: string;
    if (config.cursorKeysFile) keyRingJson = readFileSync(config.cursorKeysFile, 'utf8');
    else if (config.cursorSecretArn && secrets) keyRingJson = await new CachedSecret(secrets, config.cursorSecretArn).get();
    else throw new Error('cursor keys: set CURSOR_KEYS_FILE (local) or CURSOR_SECRET_ARN (AWS)');
    runtime = createMemoryRuntime(config.memory, parseKeyRing(keyRingJson));
  }

  let originSecret: () => string | undefined = () => config.originVerifySecret;
  if (!config.originVerifySecret && config.originVerifySecretArn && secrets) {
    const cached = new CachedSecret(secrets, config.originVerifySecretArn);
    await cached.get();
    // Refreshed in the background: a request never waits for Secrets Manager after init.
    originSecret = () => {
      void cached.get().catch(() => undefined);
      return cached.peek();
    };
  }

  return {
    config,
    service: runtime.service,
    verifier,
    limiter:
      opts.limiter ??
      new LeasingRateLimiter(new DynamoTokenBuckets(runtime.dynamodb, config.rateLimitTable), { leaseFraction: config.rateLeaseFraction }),
    exports: new S3ExportStore(runtime.s3, config.memory.memoryBucket),
    originSecret,
  };
}
