import { ExportRedirectSchema } from '../../lambdas/memory-api/response-schemas';
import { cloneBundle } from '../support/memory-git';
import { body, startMemoryStack, type MemoryStack } from './memory-api-harness';
import { noise } from '../support/noise';

/**
 * Exports of memories of 1,000+ notes either side of the buffered inline limit, at its default
 * (4 MiB, MEMORY_EXPORT_INLINE_BYTES). Where answers stream (the local server, the git remote's
 * function URL in AWS) one over it streams whole; where they are buffered (the /v1 function behind
 * API Gateway) it is stored in S3 as it is made and answered 302 to a presigned URL, and one under it
 * inline; each is a bundle real git verifies and clones with every note. Time and peak memory of
 * such an export are the memory benchmark's (npm run bench -- memory), not assertions here.
 */
jest.setTimeout(600_000);

let s: MemoryStack;
beforeAll(async () => {
  // Not a test of the rate limit: raised so the setup's requests are never refused.
  s = await startMemoryStack({ MEMORY_RATE_LIMIT: '1000000' });
}, 180_000);
afterAll(() => s?.close());

async function seed(account: string, name: string, count: number, bytesEach: number): Promise<void> {
  const notes = Array.from({ length: count }, (_, i) => ({
    path: `area-${i % 12}/topic-${i % 31}/note-${String(i).padStart(4, '0')}.md`,
    markdown: `---\ntags: [t${i % 7}]\n---\n# Note ${i}\n\n${noise(i + 1, bytesEach)}\n`,
  }));
  await s.stack.memory.service.importNotes({ account }, name, notes, { createMemory: true });
}

function expectWholeClone(bytes: Uint8Array, count: number): void {
  const clone = cloneBundle(bytes);
  try {
    clone.git('fsck', '--strict', '--no-dangling');
    expect(clone.git('ls-files').trim().split('\n')).toHaveLength(count);
    expect(clone.git('show', 'HEAD:area-1/topic-1/note-0001.md')).toMatch(/^---\ntags: \[t1\]\n---\n# Note 1\n\n[A-Za-z0-9+/]{100}/);
  } finally {
    clone.cleanup();
  }
}

it('exports 1,200 notes over the inline limit streamed, or where answers are buffered as a 302 to the bundle in S3; git clones either whole', async () => {
  await seed('large-export', 'big', 1200, 6000);
  const streamed = await s.fetch('/v1/memories/big/export', { headers: s.bearer('large-export') });
  expect(streamed.status).toBe(200);
  expect(streamed.headers.get('content-length')).toBeNull();
  expect(streamed.headers.get('transfer-encoding')).toBe('chunked');
  const bytes = new Uint8Array(await streamed.arrayBuffer());
  // Across the limit for real: the default is in force, and the bundle is larger.
  const config = s.stack.memoryApi.config;
  expect(config.exportInlineBytes).toBe(4 * 1024 * 1024);
  expect(bytes.length).toBeGreaterThan(config.exportInlineBytes);
  expectWholeClone(bytes, 1200);

  config.exportDelivery = 'buffered';
  try {
    const res = await s.fetch('/v1/memories/big/export', { headers: s.bearer('large-export') });
    expect(res.status).toBe(302);
    const redirect = await body(res, ExportRedirectSchema);
    expect(res.headers.get('location')).toBe(redirect.url);
    expect(redirect.url).toContain(`/${s.stack.memoryConfig.memoryBucket}/exports/`);
    const download = await fetch(redirect.url);
    expect(download.status).toBe(200);
    expect(download.headers.get('content-type')).toBe('application/x-git-bundle');
    expect(Buffer.from(await download.arrayBuffer()).equals(Buffer.from(bytes))).toBe(true);
  } finally {
    config.exportDelivery = 'stream';
  }
});

it('exports 1,000 notes under the inline limit inline where answers are buffered, a bundle git clones whole', async () => {
  await seed('small-export', 'small', 1000, 1500);
  const config = s.stack.memoryApi.config;
  config.exportDelivery = 'buffered';
  try {
    const res = await s.fetch('/v1/memories/small/export', { headers: s.bearer('small-export') });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/x-git-bundle');
    expect(res.headers.get('content-disposition')).toBe('attachment; filename="small.bundle"');
    const bytes = new Uint8Array(await res.arrayBuffer());
    expect(bytes.length).toBeLessThanOrEqual(config.exportInlineBytes);
    expect(bytes.length).toBeGreaterThan(1024 * 1024);
    expectWholeClone(bytes, 1000);
  } finally {
    config.exportDelivery = 'stream';
  }
});
