import { readFileSync } from 'node:fs';
import type { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { CursorCodec, parseKeyRing } from './cursor';
import { type OriginSecretGetter, sameSecret } from './http/origin-guard';
import { traced } from './observability/tracing';

/**
 * A secret string read from Secrets Manager and cached for a while, so a rotation reaches every
 * warm instance within `ttlMs` without a call per request.
 */
export class CachedSecret {
  private value?: string;
  private fetchedAt = 0;
  private inflight?: Promise<string>;

  constructor(
    private readonly client: SecretsManagerClient,
    private readonly arn: string,
    private readonly ttlMs = 10 * 60 * 1000,
    /** A version stage other than AWSCURRENT; `optional`: a stage no version has reads as '' (cached like a value). */
    private readonly stage?: { versionStage: string; optional?: boolean },
  ) {}

  async get(): Promise<string> {
    if (this.value !== undefined && Date.now() - this.fetchedAt < this.ttlMs) return this.value;
    const keep = (v: string) => {
      this.value = v;
      this.fetchedAt = Date.now();
      return v;
    };
    this.inflight ??= import('@aws-sdk/client-secrets-manager')
      .then(({ GetSecretValueCommand }) =>
        this.client.send(new GetSecretValueCommand({ SecretId: this.arn, ...(this.stage && { VersionStage: this.stage.versionStage }) })),
      )
      .then(
        (out) => {
          if (!out.SecretString) throw new Error(`secret ${this.arn} has no string value`);
          return keep(out.SecretString);
        },
        (err: unknown) => {
          if (this.stage?.optional && err instanceof Error && err.name === 'ResourceNotFoundException') return keep('');
          throw err;
        },
      )
      .finally(() => {
        this.inflight = undefined;
      });
    return this.inflight;
  }

  /** The last value read, if any (for hot paths that must not wait). */
  peek(): string | undefined {
    return this.value;
  }

  /** Reads the secret now, whatever the cache's age (joins a read already in flight). */
  refresh(): Promise<string> {
    this.fetchedAt = 0;
    return this.get();
  }
}

/** Loaded on demand: only the AWS deployment reads secrets, once per instance. */
export async function secretsClient(region: string): Promise<SecretsManagerClient> {
  const { SecretsManagerClient: Client } = await import('@aws-sdk/client-secrets-manager');
  return traced(new Client({ region }));
}

/** How long the value before a rotation is still accepted (CloudFront deploys a new header value edge by edge). */
const PREVIOUS_ORIGIN_SECRET_MS = 15 * 60 * 1000;
/** At most one read of the secret per minute forced by a mismatching header (a flood of bad headers costs one read a minute). */
const FORCED_REFRESH_INTERVAL_MS = 60 * 1000;

/**
 * The CloudFront origin header's secret as a hot-path getter: a literal value (local stack, tests)
 * or a secret read once at init and then refreshed in the background, so a request never waits
 * for Secrets Manager and a rotation reaches warm instances within the cache's life.
 *
 * `admits` checks a presented header through a rotation: the current value, the pending one (a
 * rotation in progress writes it into CloudFront's headers before it becomes current), and the
 * value seen before the last change for 15 minutes more, and a header that matches neither makes the instance read the
 * secret again (at most once a minute) before it refuses, so a new value is taken up at once.
 */
export async function originSecretGetter(
  opts: { value?: string; arn?: string; region: string },
  client?: SecretsManagerClient,
  clock: () => number = Date.now,
): Promise<OriginSecretGetter> {
  if (opts.value !== undefined || !opts.arn) return () => opts.value;
  const sm = client ?? (await secretsClient(opts.region));
  const cached = new CachedSecret(sm, opts.arn);
  // During a rotation (lambdas/ops/origin-secret-rotation.ts) CloudFront sends the AWSPENDING value
  // before it becomes AWSCURRENT: both are admitted.
  const pending = new CachedSecret(sm, opts.arn, undefined, { versionStage: 'AWSPENDING', optional: true });
  await Promise.all([cached.get(), pending.get().catch(() => '')]);
  let seen = cached.peek();
  let previous: { value: string; until: number } | undefined;
  let lastForced = Number.NEGATIVE_INFINITY;
  const observe = (): string | undefined => {
    const now = cached.peek();
    if (now !== seen) {
      if (seen !== undefined) previous = { value: seen, until: clock() + PREVIOUS_ORIGIN_SECRET_MS };
      seen = now;
    }
    return now;
  };
  const getter: OriginSecretGetter = () => {
    void cached.get().catch(() => undefined);
    void pending.get().catch(() => undefined);
    return observe();
  };
  getter.admits = async (presented) => {
    if (presented === undefined) return false;
    const matches = (): boolean => {
      const current = observe();
      if (current !== undefined && sameSecret(presented, current)) return true;
      const next = pending.peek();
      if (next && sameSecret(presented, next)) return true;
      return previous !== undefined && previous.until > clock() && sameSecret(presented, previous.value);
    };
    if (matches()) return true;
    if (clock() - lastForced < FORCED_REFRESH_INTERVAL_MS) return false;
    lastForced = clock();
    await Promise.all([cached.refresh().catch(() => undefined), pending.refresh().catch(() => undefined)]);
    return matches();
  };
  return getter;
}

/**
 * The cursor key ring's JSON (also the OAuth front's signing keys): a file in the local stack
 * (`CURSOR_KEYS_FILE`), the Secrets Manager secret in AWS (`CURSOR_SECRET_ARN`).
 */
export async function keyRingJson(opts: { file?: string; arn?: string; region: string }, client?: SecretsManagerClient): Promise<string> {
  if (opts.file) return readFileSync(opts.file, 'utf8');
  if (opts.arn) return new CachedSecret(client ?? (await secretsClient(opts.region)), opts.arn).get();
  throw new Error('cursor keys: set CURSOR_KEYS_FILE (local) or CURSOR_SECRET_ARN (AWS)');
}

/**
 * The cursor codec of a function, over the ring `keyRingJson` reads, which it reads again when a
 * cursor names a key it does not know (a rotation done after this instance started).
 */
export async function cursorCodec(opts: { file?: string; arn?: string; region: string }, client?: SecretsManagerClient): Promise<CursorCodec> {
  const read = async () => parseKeyRing(await keyRingJson(opts, client));
  return new CursorCodec(await read(), { reload: read });
}
