import { readFileSync } from 'node:fs';
import type { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { CursorCodec, parseKeyRing } from './cursor';

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
  ) {}

  async get(): Promise<string> {
    if (this.value !== undefined && Date.now() - this.fetchedAt < this.ttlMs) return this.value;
    this.inflight ??= import('@aws-sdk/client-secrets-manager')
      .then(({ GetSecretValueCommand }) => this.client.send(new GetSecretValueCommand({ SecretId: this.arn })))
      .then((out) => {
        if (!out.SecretString) throw new Error(`secret ${this.arn} has no string value`);
        this.value = out.SecretString;
        this.fetchedAt = Date.now();
        return this.value;
      })
      .finally(() => {
        this.inflight = undefined;
      });
    return this.inflight;
  }

  /** The last value read, if any (for hot paths that must not wait). */
  peek(): string | undefined {
    return this.value;
  }
}

/** Loaded on demand: only the AWS deployment reads secrets, once per instance. */
export async function secretsClient(region: string): Promise<SecretsManagerClient> {
  const { SecretsManagerClient: Client } = await import('@aws-sdk/client-secrets-manager');
  return new Client({ region });
}

/**
 * The CloudFront origin header's secret as a hot-path getter: a literal value (local stack, tests)
 * or a secret read once at init and then refreshed in the background, so a request never waits
 * for Secrets Manager and a rotation reaches warm instances within the cache's life.
 */
export async function originSecretGetter(
  opts: { value?: string; arn?: string; region: string },
  client?: SecretsManagerClient,
): Promise<() => string | undefined> {
  if (opts.value !== undefined || !opts.arn) return () => opts.value;
  const cached = new CachedSecret(client ?? (await secretsClient(opts.region)), opts.arn);
  await cached.get();
  return () => {
    void cached.get().catch(() => undefined);
    return cached.peek();
  };
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
