import { ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import { strFromU8, unzipSync } from 'fflate';
import { countStorageCalls } from '../../lambdas/memory/call-counter';
import type { MemoryService } from '../../lambdas/memory/service';
import type { Caller, ExportStream } from '../../lambdas/memory/types';
import { unavailable } from '../../lambdas/memory/errors';
import { S3ExportStore } from '../../lambdas/memory-api/exports';
import { cloneBundle } from '../support/memory-git';
import { newCaller, startMemoryHarness, type MemoryHarness } from '../support/memory-harness';
import { errorCode, startMemoryStack, type MemoryStack } from './memory-api-harness';
import { noise } from '../support/noise';

/**
 * Exports as they stream: over the local server (chunked, as the git remote's function URL sends
 * them in AWS) a bundle real git verifies and clones with its whole history, a zip that unzips to
 * the notes as stored; what an export holds at once stays bounded whatever the memory's size
 * (asserted on its counter of bytes held, never on time); an export whose making or storing fails
 * midway leaves nothing in S3.
 */
jest.setTimeout(600_000);

let s: MemoryStack;
let h: MemoryHarness;
beforeAll(async () => {
  // Not a test of the rate limit: raised so the setup's requests are never refused.
  [s, h] = await Promise.all([startMemoryStack({ MEMORY_RATE_LIMIT: '1000000' }), startMemoryHarness()]);
}, 180_000);
afterAll(async () => {
  await Promise.all([s?.close(), h?.close()]);
});

const pathOf = (i: number): string => `area-${i % 7}/topic-${i % 13}/note-${String(i).padStart(4, '0')}.md`;

const notes = (count: number, bytesEach: number, seed = 0) =>
  Array.from({ length: count }, (_, i) => ({
    path: pathOf(i),
    markdown: `---\ntags: [t${i % 5}]\n---\n# Note ${i}\n\n${noise(seed + i + 1, bytesEach)}\n`,
  }));

/** Every note of the caller's memories as `<memory>/<path>` → the file exactly as stored. */
async function storedFiles(svc: MemoryService, me: Caller, names: string[]): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const name of names) {
    let cursor: string | undefined;
    do {
      const page = await svc.listNotes(me, name, { depth: 'all', type: 'file', limit: 500, cursor });
      for (const e of page.entries) out[`${name}/${e.path}`] = (await svc.readNote(me, name, e.path)).markdown;
      cursor = page.nextCursor;
    } while (cursor);
  }
  return out;
}

async function exportKeys(s3: S3Client, bucket: string): Promise<string[]> {
  const out = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: 'exports/' }));
  return (out.Contents ?? []).map((o) => o.Key as string);
}

describe('streamed over HTTP (the local server, as the function URL in AWS)', () => {
  const me: Caller = { account: 'streamer' };
  beforeAll(async () => {
    const svc = s.stack.memory.service;
    // 400 notes of 2 KB of noise (a bundle of several 256 KiB chunks), then a history on top.
    await svc.importNotes(me, 'hist', notes(400, 2000), { createMemory: true });
    for (let i = 0; i < 20; i++) await svc.writeNote(me, 'hist', pathOf(i), { body: `edited ${i}` });
    for (let i = 20; i < 25; i++) await svc.deleteNote(me, 'hist', pathOf(i));
    await svc.moveNote(me, 'hist', { from: pathOf(30), to: 'moved/ünï çödé.md' });
    await svc.importNotes(me, 'other', [{ path: 'a.md', markdown: '---\nk: v\n---\nA' }], { createMemory: true });
  });

  it('a streamed bundle clones with real git and passes git bundle verify, with its whole history', async () => {
    const res = await s.fetch('/v1/memories/hist/export', { headers: s.bearer('streamer') });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-length')).toBeNull();
    expect(res.headers.get('transfer-encoding')).toBe('chunked');
    expect(res.headers.get('content-disposition')).toBe('attachment; filename="hist.bundle"');
    const bytes = new Uint8Array(await res.arrayBuffer());
    expect(bytes.length).toBeGreaterThan(2 * 256 * 1024);
    const clone = cloneBundle(bytes);
    try {
      clone.git('fsck', '--strict', '--no-dangling');
      // The import, 20 edits, 5 deletes and a move.
      expect(clone.git('rev-list', '--count', 'HEAD').trim()).toBe('27');
      expect(clone.git('rev-parse', 'HEAD').trim()).toBe((await s.stack.memory.service.getMemory(me, 'hist')).rev);
      const files = clone.git('-c', 'core.quotePath=false', 'ls-files').trim().split('\n');
      expect(files).toHaveLength(395);
      const stored = await storedFiles(s.stack.memory.service, me, ['hist']);
      expect(Object.keys(stored).sort()).toEqual(files.map((f) => `hist/${f}`).sort());
      for (const f of [pathOf(3), 'moved/ünï çödé.md', pathOf(13)]) {
        expect(clone.git('show', `HEAD:${f}`)).toBe(stored[`hist/${f}`]);
      }
      // An older version, from a blob the head no longer names.
      expect(clone.git('show', `HEAD~26:${pathOf(3)}`)).toContain('# Note 3');
    } finally {
      clone.cleanup();
    }
  });

  it('a streamed zip unzips to the same files as the notes stored', async () => {
    const res = await s.fetch('/v1/memories/export', { headers: s.bearer('streamer') });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-length')).toBeNull();
    expect(res.headers.get('content-type')).toBe('application/zip');
    const files = unzipSync(new Uint8Array(await res.arrayBuffer()));
    const unzipped = Object.fromEntries(Object.entries(files).map(([k, v]) => [k, strFromU8(v)]));
    expect(unzipped).toEqual(await storedFiles(s.stack.memory.service, me, ['hist', 'other']));
  });

  it('where answers are buffered, a body that fails once the spill to S3 began is a 503 and stores nothing', async () => {
    const config = s.stack.memoryApi.config;
    const service = s.stack.memory.service;
    const before = await exportKeys(s.stack.memory.s3, s.stack.memoryConfig.memoryBucket);
    const real = service.streamBundle.bind(service);
    // The file is made as it is stored: past the inline limit (lowered), storage fails for the rest.
    const spy = jest.spyOn(service, 'streamBundle').mockImplementation(async (...args) => {
      const out = await real(...args);
      return { ...out, body: failingAfter(out.body, 2) };
    });
    Object.assign(config, { exportDelivery: 'buffered', exportInlineBytes: 1024 });
    try {
      const res = await s.fetch('/v1/memories/hist/export', { headers: s.bearer('streamer') });
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('1');
      expect(await errorCode(res)).toBe('UPSTREAM_UNAVAILABLE');
    } finally {
      spy.mockRestore();
      Object.assign(config, { exportDelivery: 'stream', exportInlineBytes: 4 * 1024 * 1024 });
    }
    expect(await exportKeys(s.stack.memory.s3, s.stack.memoryConfig.memoryBucket)).toEqual(before);
  });
});

/** The body's first `n` chunks, then the storage outage a body meets midway. */
async function* failingAfter(body: AsyncIterable<Uint8Array>, n: number): AsyncGenerator<Uint8Array> {
  let i = 0;
  for await (const chunk of body) {
    if (i++ === n) throw unavailable(new Error('S3 went away'));
    yield chunk;
  }
}

describe('what an export holds at once', () => {
  const MiB = 1024 * 1024;

  async function drain(out: ExportStream): Promise<number> {
    let total = 0;
    for await (const chunk of out.body) total += chunk.length;
    return total;
  }

  it('stays a few segments and chunks, whatever the memory holds (the counter of bytes held)', async () => {
    // Small segments, so that 5 MB of notes are dozens of them; never compacted here.
    const svc = h.service({ segments: { segmentChars: 128 * 1024, tailChars: 16 * 1024, maxSegments: 10_000 } });
    const me = newCaller();
    await svc.importNotes(me, 'huge', notes(800, 6000, 7), { createMemory: true });
    // Older versions (read as loose objects) as well as the head's notes (read from the segments).
    for (let i = 0; i < 40; i++) await svc.writeNote(me, 'huge', pathOf(i), { body: noise(i, 6000) });

    for (const out of [await h.service().streamBundle(me, 'huge'), await h.service().streamZip(me)]) {
      const total = await drain(out);
      // The memory's texts are about 5 MB and the file 4 MB or more: a copy of either would show.
      expect(total).toBeGreaterThan(3.5 * MiB);
      expect(out.maxBytes).toBeGreaterThanOrEqual(total);
      expect(out.held.peak).toBeGreaterThan(0);
      expect(out.held.peak).toBeLessThan(1.5 * MiB);
      expect(out.held.current).toBeLessThan(256 * 1024);
    }
  });
});

describe('an export stored in S3 (the 302 path), stopped midway', () => {
  const MiB = 1024 * 1024;
  const part = 5 * MiB;

  async function* body(parts: number, fail?: Error): AsyncGenerator<Uint8Array> {
    for (let i = 0; i < parts; i++) {
      for (let k = 0; k < 5; k++) yield Buffer.alloc(MiB, i * 5 + k);
    }
    if (fail) throw fail;
  }

  it('is stored in parts while it is made, and read back whole', async () => {
    const counter = countStorageCalls({ s3: h.s3 });
    const store = new S3ExportStore(h.s3, h.bucket, part);
    try {
      const url = await store.publish({ key: 'exports/whole/x.zip', body: body(3), contentType: 'application/zip', contentDisposition: 'attachment' }, 60);
      expect(counter.counts()).toMatchObject({ 's3.CreateMultipartUpload': 1, 's3.UploadPart': 3, 's3.CompleteMultipartUpload': 1 });
      const bytes = Buffer.from(await (await fetch(url)).arrayBuffer());
      expect(bytes.length).toBe(15 * MiB);
      for (let i = 0; i < 15; i++) expect(bytes[i * MiB]).toBe(i);
    } finally {
      counter.detach();
    }
  });

  it('leaves nothing under exports/ when its body fails after parts were sent, and aborts the upload', async () => {
    const counter = countStorageCalls({ s3: h.s3 });
    const store = new S3ExportStore(h.s3, h.bucket, part);
    try {
      const failure = new Error('the export failed midway');
      await expect(
        store.publish(
          { key: 'exports/broken/x.bundle', body: body(2, failure), contentType: 'application/x-git-bundle', contentDisposition: 'attachment' },
          60,
        ),
      ).rejects.toBe(failure);
      expect(counter.counts()).toMatchObject({ 's3.CreateMultipartUpload': 1, 's3.AbortMultipartUpload': 1 });
      expect(counter.counts()['s3.CompleteMultipartUpload']).toBeUndefined();
      expect(await exportKeys(h.s3, h.bucket)).not.toContain('exports/broken/x.bundle');
    } finally {
      counter.detach();
    }
  });

  it('leaves nothing under exports/ when the store fails midway (a 503, not a 500)', async () => {
    const store = new S3ExportStore(h.s3, h.bucket, part);
    // The second part is refused by the store.
    let parts = 0;
    const name = 'failSecondPart';
    h.s3.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === 'UploadPartCommand' && ++parts === 2) throw new Error('S3 refused the part');
        return next(args);
      },
      { step: 'initialize', name },
    );
    try {
      const err = await store
        .publish({ key: 'exports/refused/x.zip', body: body(3), contentType: 'application/zip', contentDisposition: 'attachment' }, 60)
        .catch((e: unknown) => e);
      expect(err).toMatchObject({ name: 'StorageError', operation: 's3.UploadPart' });
      expect(await exportKeys(h.s3, h.bucket)).not.toContain('exports/refused/x.zip');
    } finally {
      h.s3.middlewareStack.remove(name);
    }
  });
});
