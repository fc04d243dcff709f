import type { OriginSecretGetter } from '../shared/http/origin-guard';
import type { PersonalTokens } from '../identity/personal-token-service';
import type { TokenVerifier } from '../identity/verifier';
import type { MemoryService } from '../memory';
import type { IdempotencyStore } from '../shared/idempotency/store';
import type { RateLimiter } from '../shared/rate-limit/rate-limiter';
import type { MemoryApiConfig } from './config';
import type { ExportStore } from './exports';

/** Everything a `/v1` handler may use, injected so the Lambda, the local stack and tests differ in adapters only. */
export interface MemoryApiDeps {
  config: MemoryApiConfig;
  service: MemoryService;
  verifier: TokenVerifier;
  /** Personal access tokens (`/v1/tokens`); absent (the git function), those routes answer 404. */
  personalTokens?: PersonalTokens;
  /** The shared DynamoDB limiter (per client IP, `RateLimit` headers). */
  limiter: RateLimiter;
  /** `Idempotency-Key` records (the shared rate-limit table, keys `idem:…`). */
  idempotency: IdempotencyStore;
  /** Large exports: S3 object + presigned URL. */
  exports: ExportStore;
  /** The origin-verify value CloudFront sends; with it `x-viewer-address` is trusted as the client IP. */
  originSecret: OriginSecretGetter;
}
