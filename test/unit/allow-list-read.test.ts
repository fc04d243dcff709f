import { createHash } from 'node:crypto';
import type { S3Client } from '@aws-sdk/client-s3';
import { AllowListBusy, S3AllowListStore } from '../../lambdas/catalog-core';
import { bodyMatches } from '../../lambdas/catalog-core/org/allow-list-store';

/**
 * The allow-list read checks the body against its ETag (the MD5 of a single-part upload's bytes)
 * and reads again when they differ: the loopback S3 server writes objects in place, so a read that
 * races a replace can get half a file. A body that never matches is refused, never answered.
 */
const FULL = 'allow:\n  - io.github.acme/weather\n  - io.github.acme/maps\n';
const ETAG = `"${createHash('md5').update(FULL).digest('hex')}"`;

/**
 * A client whose first `halves` reads answer a cut-off body under the full file's ETag (or under
 * `tornEtag`: what the loopback S3 server answers while it rewrites the object's checksum file).
 */
function storeServing(halves: number, sse?: string, tornEtag?: string): { store: S3AllowListStore; reads: () => number } {
  let reads = 0;
  const client = {
    send: async () => {
      reads++;
      const torn = reads <= halves;
      const text = torn ? FULL.slice(0, 20) : FULL;
      return {
        ETag: sse !== undefined ? '"0123456789abcdef0123456789abcdef"' : torn && tornEtag !== undefined ? tornEtag : ETAG,
        ServerSideEncryption: sse,
        ContentType: 'application/yaml',
        Body: { transformToByteArray: async () => new Uint8Array(Buffer.from(text)) },
      };
    },
  } as unknown as S3Client;
  return { store: new S3AllowListStore(() => client, { bucket: 'b', key: 'org/allow-list.yaml' }), reads: () => reads };
}

it('a body cut off by a replace in progress is read again until it matches its ETag', async () => {
  const { store, reads } = storeServing(6);
  expect(await store.read()).toEqual({ text: FULL, contentType: 'application/yaml', etag: ETAG });
  expect(reads()).toBe(7);
});

it('a body that never matches its ETag is refused as busy (answered 503 with Retry-After), never returned', async () => {
  const { store, reads } = storeServing(Number.POSITIVE_INFINITY);
  await expect(store.read()).rejects.toThrow(AllowListBusy);
  expect(reads()).toBe(8);
});

it('under SSE-KMS, whose ETag is no MD5, the body is taken as S3 serves it (S3 never serves part of an object)', async () => {
  const { store, reads } = storeServing(0, 'aws:kms');
  expect(await store.read()).toMatchObject({ text: FULL });
  expect(reads()).toBe(1);
});

it('a cut-off body under an ETag S3 never gives (the empty one of a checksum file being rewritten) is read again, not taken as served', async () => {
  const { store, reads } = storeServing(3, undefined, '""');
  expect(await store.read()).toEqual({ text: FULL, contentType: 'application/yaml', etag: ETAG });
  expect(reads()).toBe(4);
});

it("a multipart upload's ETag (no MD5 of the body) is taken as served", () => {
  expect(bodyMatches(Buffer.from(FULL), '"0123456789abcdef0123456789abcdef-3"', true)).toBe(true);
  expect(bodyMatches(Buffer.from(FULL.slice(0, 20)), ETAG, true)).toBe(false);
  expect(bodyMatches(Buffer.from(FULL.slice(0, 20)), '""', true)).toBe(false);
  expect(bodyMatches(Buffer.from(FULL.slice(0, 20)), '""', false)).toBe(true);
});
