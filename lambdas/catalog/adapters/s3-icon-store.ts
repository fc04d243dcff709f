import { GetObjectCommand, HeadObjectCommand, NoSuchKey, NotFound, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { IconStore } from '../domain/ports';

/**
 * Icons live at `api/icons/<slug>` so that CloudFront's `/api/icons/*` behaviour maps the viewer
 * path straight onto the object key. They are immutable: written once, cached for a year.
 */
export const ICON_CACHE_CONTROL = 'public, max-age=31536000, immutable';

export function iconKey(slug: string): string {
  return `api/icons/${slug}`;
}

export class S3IconStore implements IconStore {
  constructor(
    private readonly s3: S3Client,
    private readonly bucket: string,
  ) {}

  async get(slug: string): Promise<Uint8Array | undefined> {
    try {
      const out = await this.s3.send(new GetObjectCommand({ Bucket: this.bucket, Key: iconKey(slug) }));
      return out.Body ? await out.Body.transformToByteArray() : undefined;
    } catch (err) {
      if (isMissing(err)) return undefined;
      throw err;
    }
  }

  async has(slug: string): Promise<boolean> {
    try {
      await this.s3.send(new HeadObjectCommand({ Bucket: this.bucket, Key: iconKey(slug) }));
      return true;
    } catch (err) {
      if (isMissing(err)) return false;
      throw err;
    }
  }

  /**
   * S3 conditional PUT (If-None-Match) is not honoured by the loopback server, so "once" is a HEAD
   * then a PUT. A race between two writers of the same slug can only write the same bytes twice
   * (both derive from the same source), which leaves the icon as immutable as it was.
   */
  async putIfAbsent(slug: string, webp: Uint8Array): Promise<boolean> {
    if (await this.has(slug)) return false;
    await this.s3.send(
      new PutObjectCommand({
        Bucket: this.bucket,
        Key: iconKey(slug),
        Body: webp,
        ContentType: 'image/webp',
        CacheControl: ICON_CACHE_CONTROL,
      }),
    );
    return true;
  }
}

function isMissing(err: unknown): boolean {
  if (err instanceof NoSuchKey || err instanceof NotFound) return true;
  const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e?.name === 'NoSuchKey' || e?.name === 'NotFound' || e?.$metadata?.httpStatusCode === 404;
}
