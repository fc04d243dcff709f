import { bearerOf } from '../../lambdas/memory-api/api';
import { GIT_CHALLENGE, ApiError, gitErrorResult } from '../../lambdas/memory-api/errors';
import { repoName, serviceOf } from '../../lambdas/memory-api/git';
import { unifiedDiff } from '../../lambdas/memory-api/patch';
import { FLUSH, pkt, PktError, readPackets, sideband, text } from '../../lambdas/memory-api/pkt-line';
import { wantsJsonDiff } from '../../lambdas/memory-api/versions';
import type { MemoryCtx } from '../../lambdas/memory-api/context';

/** The git remote's HTTP pieces: pkt-lines, side bands, credentials, errors git can show, the diff text. */
describe('pkt-line', () => {
  test('frames payloads with their length and reads them back, stopping where asked', () => {
    expect(pkt('hello\n').toString()).toBe('000ahello\n');
    const buf = Buffer.concat([pkt('want x\n'), FLUSH, pkt('done\n'), Buffer.from('PACK…')]);
    const { packets, offset } = readPackets(buf.subarray(0, buf.length - 'PACK…'.length + 0), (p) => p.kind === 'flush');
    expect(packets.map((p) => (p.kind === 'data' ? text(p) : p.kind))).toEqual(['want x', 'flush']);
    expect(offset).toBe(15);
  });

  test('refuses malformed lengths and truncated packets', () => {
    expect(() => readPackets(Buffer.from('00zz'))).toThrow(PktError);
    expect(() => readPackets(Buffer.from('0010abc'))).toThrow(PktError);
    expect(() => readPackets(Buffer.from('0002'))).toThrow(PktError);
    expect(() => pkt(Buffer.alloc(70000))).toThrow('pkt-line payload too long');
  });

  test('splits side-band data into packets of the negotiated size', () => {
    const parts = sideband(1, Buffer.alloc(2000, 1), 995);
    expect(parts).toHaveLength(3);
    expect(parts[0].subarray(4, 5)[0]).toBe(1);
    expect(parts[0].length).toBe(4 + 1 + 995);
    expect(sideband(2, Buffer.from('x'), 0)).toEqual([]);
    expect(sideband(1, Buffer.from('raw'), 0)).toEqual([Buffer.from('raw')]);
  });
});

describe('credentials', () => {
  const basic = (s: string) => `Basic ${Buffer.from(s).toString('base64')}`;
  test.each([
    [basic('git:tok123'), 'Bearer tok123'],
    [basic('tok123:'), 'Bearer tok123'],
    [basic('tok123'), 'Bearer tok123'],
    [basic(':'), undefined],
    ['Bearer abc', 'Bearer abc'],
    [undefined, undefined],
  ])('%p → %p', (header, bearer) => {
    expect(bearerOf(header)).toBe(bearer);
  });
});

test('git errors are one line of text, and a 401 challenges for Basic', () => {
  const r = gitErrorResult(new ApiError('UNAUTHENTICATED', 'no token', { 'www-authenticate': 'Bearer' }));
  expect(r).toMatchObject({ statusCode: 401, body: 'UNAUTHENTICATED: no token\n' });
  expect(r.headers['www-authenticate']).toBe(GIT_CHALLENGE);
  expect(r.headers['content-type']).toMatch(/^text\/plain/);
});

test('the repository name is the memory with or without .git; info/refs serves smart HTTP only', () => {
  const ctx = (memory: string) => ({ params: { memory } }) as unknown as MemoryCtx;
  expect(repoName(ctx('work.git'))).toBe('work');
  expect(repoName(ctx('work'))).toBe('work');
  expect(serviceOf(new Map([['service', ['git-upload-pack']]]))).toBe('git-upload-pack');
  expect(() => serviceOf(new Map())).toThrow(ApiError);
  expect(() => serviceOf(new Map([['service', ['git-upload-archive']]]))).toThrow(ApiError);
});

test('the diff text: git headers for new, deleted, renamed and modified notes, odd paths quoted', () => {
  const diff = unifiedDiff({
    from: 'a'.repeat(40),
    to: 'b'.repeat(40),
    files: [
      { path: 'n.md', change: 'added', newBlob: '1'.repeat(40), hunks: [{ oldStart: 0, oldLines: 0, newStart: 1, newLines: 1, lines: ['+x'] }] },
      { path: 'd.md', change: 'deleted', oldBlob: '2'.repeat(40), hunks: [{ oldStart: 1, oldLines: 1, newStart: 0, newLines: 0, lines: ['-y'] }] },
      { path: 'to.md', change: 'renamed', from: 'fr "q".md', oldBlob: '3'.repeat(40), newBlob: '3'.repeat(40), similarity: 100, hunks: [] },
    ],
  });
  expect(diff).toBe(
    [
      'diff --git a/n.md b/n.md',
      'new file mode 100644',
      `index 0000000..${'1'.repeat(12)}`,
      '--- /dev/null',
      '+++ b/n.md',
      '@@ -0,0 +1,1 @@',
      '+x',
      'diff --git a/d.md b/d.md',
      'deleted file mode 100644',
      `index ${'2'.repeat(12)}..0000000`,
      '--- a/d.md',
      '+++ /dev/null',
      '@@ -1,1 +0,0 @@',
      '-y',
      'diff --git "a/fr \\"q\\".md" b/to.md',
      'similarity index 100%',
      'rename from "fr \\"q\\".md"',
      'rename to to.md',
      '',
    ].join('\n'),
  );
});

test.each([
  [undefined, false],
  ['*/*', false],
  ['application/json', true],
  ['text/x-diff, application/json;q=0.5', false],
  ['application/json, text/plain;q=0.9', true],
])('Accept %p asks for JSON hunks: %p', (accept, json) => {
  expect(wantsJsonDiff(accept)).toBe(json);
});
