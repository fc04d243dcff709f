import type { S3Client } from '@aws-sdk/client-s3';
import type { IconStore } from '../domain/ports';

/**
 * Icons live at `api/icons/<slug>` so that CloudFront's `/api/icons/*` behaviour maps the viewer
 * path straight onto the object key. They are immutable: written once, cached for a year.
 *
 * The S3 SDK is loaded on first use: in AWS, CloudFront serves icons from S3 directly and the
 * catalog Lambda rarely needs it, so its ~20 ms of module loading stays out of every cold start.
 */
export const ICON_CACHE_CONTROL = 'public, max-age=31536000, immutable';

const CONTROL = /[\u0000-\u001f\u007f]/;

export function iconKey(slug: string): string {
  return `api/icons/${slug}`;
}

type S3Module = typeof import('@aws-sdk/client-s3');

export class S3IconStore implements IconStore {
  private sdk?: Promise<{ mod: S3Module; client: S3Client }>;

  constructor(
    private readonly makeClient: (mod: S3Module) => S3Client,
    private readonly bucket: string,
  ) {}

  private load(): Promise<{ mod: S3Module; client: S3Client }> {
    this.sdk ??= import('@aws-sdk/client-s3').then((mod) => ({ mod, client: this.makeClient(mod) }));
    return this.sdk;
  }

  async get(slug: string): Promise<Uint8Array | undefined> {
    // No slug the crawler makes holds a control character, and S3's SDK refuses a NUL in a key.
    if (CONTROL.test(slug)) return undefined;
    const { mod, client } = await this.load();
    try {
      const out = await client.send(new mod.GetObjectCommand({ Bucket: this.bucket, Key: iconKey(slug) }));
      return out.Body ? await out.Body.transformToByteArray() : undefined;
    } catch (err) {
      if (isMissing(err)) return undefined;
      throw err;
    }
  }

  async has(slug: string): Promise<boolean> {
    const { mod, client } = await this.load();
    try {
      await client.send(new mod.HeadObjectCommand({ Bucket: this.bucket, Key: iconKey(slug) }));
      return true;
    } catch (err) {
      if (isMissing(err)) return false;
      throw err;
    }
  }

  /**
   * S3 conditional PUT (If-None-Match) is not honoured by the loopback server, so "once" is a HEAD
   * then a PUT. Two writers racing on one slug both write an icon derived from the same source.
   */
  async putIfAbsent(slug: string, webp: Uint8Array): Promise<boolean> {
    if (await this.has(slug)) return false;
    const { mod, client } = await this.load();
    await client.send(
      new mod.PutObjectCommand({
        Bucket: this.bucket,
        Key: iconKey(slug),
        Body: webp,
        ContentType: 'image/webp',
        CacheControl: ICON_CACHE_CONTROL,
      }),
    );
    return true;
  }

  /** DeleteObjects in batches of 1,000 (its limit); a missing key is no error. */
  async remove(slugs: string[]): Promise<void> {
    if (slugs.length === 0) return;
    const { mod, client } = await this.load();
    for (let i = 0; i < slugs.length; i += 1000) {
      const objects = slugs
        .slice(i, i + 1000)
        .filter((s) => !CONTROL.test(s))
        .map((s) => ({ Key: iconKey(s) }));
      if (objects.length === 0) continue;
      const out = await client.send(new mod.DeleteObjectsCommand({ Bucket: this.bucket, Delete: { Objects: objects, Quiet: true } }));
      const failed = out.Errors?.[0];
      if (failed !== undefined) throw new Error(`could not delete icon ${failed.Key}: ${failed.Code ?? ''} ${failed.Message ?? ''}`.trim());
    }
  }

  /** Closes the client's sockets (CLIs and tests). */
  async destroy(): Promise<void> {
    if (this.sdk) (await this.sdk).client.destroy();
  }
}

function isMissing(err: unknown): boolean {
  const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e?.name === 'NoSuchKey' || e?.name === 'NotFound' || e?.$metadata?.httpStatusCode === 404;
}
