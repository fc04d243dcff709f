import { GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';

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
 * The S3 adapter. The URL is presigned (SigV4, query string) with the function's own credentials
 * by `@aws-sdk/s3-request-presigner`, against the same client (so the local stack's path-style
 * endpoint is honoured as it is for every other call). The presigner is bundled with the function
 * (as `presigner.js` beside it, lib/memory-api.ts) rather than taken from the Lambda runtime, and
 * loaded on the first large export only, so neither the bundle nor module init pays for a path most
 * requests never take.
 */
type Presigner = typeof import('./presigner');
let presignerModule: Presigner | undefined;

function presigner(): Presigner {
  // A computed specifier, so esbuild leaves the module out of index.js: in AWS it finds presigner.js
  // beside it, from source (tests, the local stack) presigner.ts.
  presignerModule ??= require(['.', 'presigner'].join('/')) as Presigner;
  return presignerModule;
}

export class S3ExportStore implements ExportStore {
  constructor(
    private readonly s3: S3Client,
    private readonly bucket: string,
  ) {}

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
    const { getSignedUrl } = presigner();
    return getSignedUrl(this.s3, new GetObjectCommand({ Bucket: this.bucket, Key: key }), { expiresIn: Math.floor(expiresInSeconds) });
  }
}
