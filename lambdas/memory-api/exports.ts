import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { SignatureV4 } from '@smithy/signature-v4';
import type { HttpRequest } from '@smithy/types';

/**
 * Where an export too large for a Lambda response goes: an object under `exports/` in the memory
 * bucket (a lifecycle rule expires it after a day) and a short-lived presigned GET URL to it.
 */
export interface ExportStore {
  /** Stores the file and returns a URL that downloads it, valid for `expiresInSeconds`. */
  publish(file: ExportFile, expiresInSeconds: number): Promise<string>;
}

export interface ExportFile {
  key: string;
  bytes: Uint8Array;
  contentType: string;
  /** Stored with the object, so the download keeps the attachment file name. */
  contentDisposition: string;
}

/**
 * The S3 adapter. The URL is presigned (SigV4, query string) with the function's own credentials,
 * which is what `@aws-sdk/s3-request-presigner` does; that package is not installed here, so the
 * signer it wraps (`@smithy/signature-v4`, already a dependency of the SDK) is used directly, the
 * same way: `UNSIGNED-PAYLOAD`, only `host` signed, every `x-amz-*` header hoisted into the query.
 */
export class S3ExportStore implements ExportStore {
  private readonly signer: SignatureV4;

  constructor(
    private readonly s3: S3Client,
    private readonly bucket: string,
    private readonly opts: { region: string; /** Local S3 server (path-style); unset in AWS. */ endpoint?: string },
  ) {
    this.signer = new SignatureV4({
      service: 's3',
      region: opts.region,
      credentials: s3.config.credentials,
      sha256: s3.config.sha256,
      // The path below is encoded once already; S3 canonicalises it as sent.
      uriEscapePath: false,
      applyChecksum: false,
    });
  }

  async publish(file: ExportFile, expiresInSeconds: number): Promise<string> {
    await this.s3.send(
      new PutObjectCommand({
        Bucket: this.bucket,
        Key: file.key,
        Body: file.bytes,
        ContentType: file.contentType,
        ContentDisposition: file.contentDisposition,
      }),
    );
    return this.presign(file.key, expiresInSeconds);
  }

  async presign(key: string, expiresInSeconds: number): Promise<string> {
    const encodedKey = key.split('/').map(encodeURIComponent).join('/');
    let protocol = 'https:';
    let hostname = `${this.bucket}.s3.${this.opts.region}.amazonaws.com`;
    let port: number | undefined;
    let path = `/${encodedKey}`;
    if (this.opts.endpoint) {
      const u = new URL(this.opts.endpoint);
      protocol = u.protocol;
      hostname = u.hostname;
      port = u.port ? Number(u.port) : undefined;
      path = `${u.pathname.replace(/\/+$/, '')}/${encodeURIComponent(this.bucket)}/${encodedKey}`;
    }
    const host = port === undefined ? hostname : `${hostname}:${port}`;
    const request: HttpRequest = {
      method: 'GET',
      protocol,
      hostname,
      port,
      path,
      query: {},
      headers: { host, 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' },
    };
    const signed = await this.signer.presign(request, { expiresIn: Math.floor(expiresInSeconds) });
    const query = Object.entries(signed.query ?? {})
      .flatMap(([k, v]) => (Array.isArray(v) ? v : [v]).filter((x): x is string => typeof x === 'string').map((x) => `${rfc3986(k)}=${rfc3986(x)}`))
      .join('&');
    return `${protocol}//${host}${path}?${query}`;
  }
}

/** Query encoding as SigV4 canonicalises it (`encodeURIComponent` leaves `!'()*` alone). */
function rfc3986(s: string): string {
  return encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}
