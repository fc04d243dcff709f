import type { MemoryApiDeps } from '../../lambdas/memory-api/deps';
import { mergeSettings, settingsDepsSource, type Built } from '../../lambdas/memory-api/settings';
import { streamingEntry } from '../../lambdas/memory-api/streaming';
import type { HttpResult } from '../../lambdas/shared/http/types';
import { FakeStream, runStreaming } from '../support/lambda-stream';

/** The git remote's Lambda pieces that only run in AWS: the streamed answer and the settings parameter. */

test('streams the pipeline answer: status and headers first, then the body (base64 decoded), without Content-Length', async () => {
  const pack = Buffer.alloc(3 * 1024 * 1024 + 7, 9);
  const result: HttpResult = {
    statusCode: 200,
    headers: { 'content-type': 'application/x-git-upload-pack-result', 'content-length': '99' },
    body: pack.toString('base64'),
    isBase64Encoded: true,
  };
  const stream = new FakeStream();
  await runStreaming(result, stream);
  expect(stream.prelude).toEqual({ statusCode: 200, headers: { 'content-type': 'application/x-git-upload-pack-result' } });
  expect(stream.chunks.length).toBe(4);
  expect(Buffer.concat(stream.chunks).equals(pack)).toBe(true);
});

test('refuses to start outside the Lambda runtime', () => {
  expect(() => streamingEntry(async () => ({ statusCode: 200, headers: {} }))).toThrow(/awslambda/);
});

describe('the settings parameter', () => {
  test('is merged over the environment, and must be a JSON object of strings', () => {
    expect(mergeSettings({ A: '1', B: '2' }, '{"B":"3","C":"4"}')).toEqual({ A: '1', B: '3', C: '4' });
    expect(() => mergeSettings({}, 'nope')).toThrow(/not JSON/);
    expect(() => mergeSettings({}, '{"A":1}')).toThrow(/object of strings/);
    expect(() => mergeSettings({}, '["A"]')).toThrow(/object of strings/);
  });

  test('is read once, re-read after the interval in the background, and a change rebuilds over the same runtime', async () => {
    let now = 0;
    let stored = '{"AUTH_AUDIENCE":"https://one/mcp"}';
    let reads = 0;
    const builds: Array<{ audience?: string; runtime: unknown }> = [];
    const runtime = { id: 'rt' };
    const source = settingsDepsSource(
      { MEMORY_SETTINGS_PARAMETER: '/x' },
      {
        clock: () => now,
        refreshMs: 1000,
        readSettings: async () => {
          reads++;
          return stored;
        },
        build: async (env, rt) => {
          builds.push({ audience: env.AUTH_AUDIENCE, runtime: rt });
          return { deps: { tag: env.AUTH_AUDIENCE } as unknown as MemoryApiDeps, runtime: (rt ?? runtime) as Built['runtime'] };
        },
      },
    );
    expect(((await source()) as unknown as { tag: string }).tag).toBe('https://one/mcp');
    await source();
    expect(reads).toBe(1);
    now = 2000;
    stored = '{"AUTH_AUDIENCE":"https://two/mcp"}';
    await source();
    await new Promise((r) => setImmediate(r));
    expect(((await source()) as unknown as { tag: string }).tag).toBe('https://two/mcp');
    expect(builds).toEqual([
      { audience: 'https://one/mcp', runtime: undefined },
      { audience: 'https://two/mcp', runtime },
    ]);
  });

  test('a failed first read fails the request and is tried again by the next', async () => {
    let fail = true;
    const source = settingsDepsSource(
      {},
      {
        readSettings: async () => {
          if (fail) throw new Error('throttled');
          return '{}';
        },
        build: async () => ({ deps: {} as MemoryApiDeps, runtime: {} as Built['runtime'] }),
      },
    );
    await expect(source()).rejects.toThrow('throttled');
    fail = false;
    await expect(source()).resolves.toBeDefined();
  });
});
