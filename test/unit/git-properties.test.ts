import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { applyDelta, objectId, PackError, readPack } from '../../lambdas/memory/pack';
import { FLUSH, pkt, PktError, readPackets, type Packet } from '../../lambdas/memory-api/pkt-line';
import { basesIn, GIT_COMMITTER_ENV } from '../support/memory-git';

/**
 * The parsers a `git push` or fetch reaches before anything is stored, on generated input: pkt-line
 * framing and the pack reader (with its delta decoder). Whatever the bytes, the answer is a value
 * or the parser's own error (`PktError`, `PackError`: what git shows as "remote unpack failed" or a
 * 400), never a TypeError or RangeError (a 500), and never a hang: every run has a time budget.
 * Packs start from real ones made by git, then get bytes flipped, cut or spliced, with the trailing
 * checksum recomputed so the reader goes past it.
 */
const opts = { numRuns: Number(process.env.FUZZ_RUNS ?? 300), seed: 20261127, endOnFailure: true };
/** A budget no well-behaved parse of these sizes comes near; a loop or an exponential blow-up does. */
const NO_HANG_MS = 5000;
const LIMITS = { maxObjects: 200, maxObjectBytes: 1 << 20, maxTotalBytes: 4 << 20 };

function onlyItsOwnError<T>(fn: () => T, own: new (...a: never[]) => Error): T | undefined {
  try {
    return fn();
  } catch (err) {
    if (err instanceof own) return undefined;
    throw err;
  }
}

function serialize(packets: readonly Packet[]): Buffer {
  return Buffer.concat(packets.map((p) => (p.kind === 'data' ? pkt(p.payload) : p.kind === 'flush' ? FLUSH : Buffer.from('0001'))));
}

describe('pkt-line', () => {
  const packet: fc.Arbitrary<Packet> = fc.oneof(
    fc.constant<Packet>({ kind: 'flush' }),
    fc.constant<Packet>({ kind: 'delim' }),
    fc.uint8Array({ maxLength: 300 }).map((b): Packet => ({ kind: 'data', payload: Buffer.from(b) })),
  );

  test('packets written are read back as they were, and the offset is where they end', () => {
    fc.assert(
      fc.property(fc.array(packet, { maxLength: 30 }), fc.uint8Array({ maxLength: 50 }), (packets, tail) => {
        fc.pre(packets.length > 0);
        const framed = serialize(packets);
        const all = readPackets(Buffer.concat([framed, Buffer.from(tail)]), (_p, n) => n === packets.length);
        expect(all.offset).toBe(framed.length);
        expect(all.packets).toEqual(packets);
      }),
      opts,
    );
  });

  test('any bytes: packets that re-frame to exactly what was read, or a PktError', () => {
    const bytes = fc.oneof(
      fc.uint8Array({ maxLength: 400 }).map((b) => Buffer.from(b)),
      // Mostly well framed, then spliced: lengths of 1-3, cut payloads, non-hex digits.
      fc
        .tuple(fc.array(packet, { maxLength: 10 }), fc.nat(), fc.constantFrom('0002', '0003', '000', 'zzzz', '0010abc', 'FFFF', '00g1', ''))
        .map(([ps, at, junk]) => {
          const b = serialize(ps);
          const cut = at % (b.length + 1);
          return Buffer.concat([b.subarray(0, cut), Buffer.from(junk, 'latin1'), b.subarray(cut)]);
        }),
    );
    fc.assert(
      fc.property(bytes, (buf) => {
        const read = onlyItsOwnError(() => readPackets(buf), PktError);
        if (read) expect(serialize(read.packets).equals(buf.subarray(0, read.offset))).toBe(true);
      }),
      opts,
    );
  });
});

describe('the pack reader', () => {
  let dir: string;
  let packs: Buffer[] = [];
  const git = (args: string[], input?: string): Buffer => execFileSync('git', args, { cwd: dir, env: GIT_COMMITTER_ENV, input, maxBuffer: 16 << 20 });

  beforeAll(() => {
    dir = mkdtempSync(join(process.env.TEST_TMP_DIR ?? tmpdir(), 'git-props-'));
    git(['init', '-q', '-b', 'main']);
    const text = 'a line of a note that repeats\n'.repeat(60);
    for (const [i, files] of [{ 'a.md': text }, { 'a.md': `${text}more\n`, 'b/c.md': '# c\n' }, { 'b/c.md': '# c, edited\n' }].entries()) {
      for (const [p, body] of Object.entries(files)) {
        execFileSync('mkdir', ['-p', join(dir, p, '..')]);
        writeFileSync(join(dir, p), body);
      }
      git(['add', '-A']);
      git(['commit', '-q', '-m', `commit ${i}`]);
    }
    // A whole pack with OFS deltas, one with REF deltas, and a thin one whose bases are outside it.
    packs = [
      git(['pack-objects', '--stdout', '--revs', '--delta-base-offset'], 'HEAD\n'),
      git(['pack-objects', '--stdout', '--revs'], 'HEAD\n'),
      git(['pack-objects', '--stdout', '--revs', '--thin', '--delta-base-offset'], 'HEAD\n^HEAD~1\n'),
    ];
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** The pack with its SHA-1 trailer recomputed, so a mutation reaches the object parser. */
  const resealed = (body: Buffer) => Buffer.concat([body, createHash('sha1').update(body).digest()]);

  interface Mutation {
    which: number;
    edits: Array<[number, number]>;
    cut: number | null;
    splice: [number, Uint8Array] | null;
    reseal: boolean;
  }
  const mutation: fc.Arbitrary<Mutation> = fc.record({
    which: fc.nat(),
    edits: fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { maxLength: 6 }),
    cut: fc.option(fc.nat()),
    splice: fc.option(fc.tuple(fc.nat(), fc.uint8Array({ minLength: 1, maxLength: 40 }))),
    reseal: fc.boolean(),
  });

  function mutate(m: Mutation): Buffer {
    const original = packs[m.which % packs.length];
    let body = Buffer.from(original.subarray(0, original.length - 20));
    for (const [at, value] of m.edits) body[12 + (at % Math.max(1, body.length - 12))] = value;
    if (m.splice) {
      const at = m.splice[0] % (body.length + 1);
      body = Buffer.concat([body.subarray(0, at), Buffer.from(m.splice[1]), body.subarray(at)]);
    }
    if (m.cut !== null) body = body.subarray(0, m.cut % (body.length + 1));
    return m.reseal ? resealed(body) : Buffer.concat([body, original.subarray(original.length - 20)]);
  }

  test('a mutated pack (bytes flipped, spliced or cut, checksum made right): objects whose ids are their content’s, or a PackError', async () => {
    await fc.assert(
      fc.asyncProperty(mutation, fc.boolean(), async (m, withBases) => {
        const bytes = mutate(m);
        // Bases for a thin pack: the objects of the whole pack, as storage would answer.
        const whole = withBases ? await readPack(packs[0], async () => new Map(), LIMITS) : new Map();
        let objects: Awaited<ReturnType<typeof readPack>> | undefined;
        try {
          objects = await readPack(bytes, basesIn(whole), LIMITS);
        } catch (err) {
          if (!(err instanceof PackError)) throw err;
          expect(err.message).not.toBe('');
          return;
        }
        let total = 0;
        for (const o of objects.values()) {
          expect(objectId(o.type, o.content)).toBe(o.oid);
          expect(o.content.length).toBeLessThanOrEqual(LIMITS.maxObjectBytes);
          total += o.content.length;
        }
        expect(total).toBeLessThanOrEqual(LIMITS.maxTotalBytes);
      }),
      { ...opts, plugins: [fc.timeout(NO_HANG_MS)] },
    );
  });

  test('any bytes behind a PACK header (any version, any count): a PackError, never another error', async () => {
    const header = fc.tuple(fc.constantFrom(2, 3, 4, 0), fc.oneof(fc.integer({ min: 0, max: 5 }), fc.constant(0xffffffff)));
    await fc.assert(
      fc.asyncProperty(header, fc.uint8Array({ maxLength: 400 }), fc.boolean(), async ([version, count], rest, reseal) => {
        const head = Buffer.alloc(12);
        head.write('PACK', 0, 'latin1');
        head.writeUInt32BE(version, 4);
        head.writeUInt32BE(count, 8);
        const body = Buffer.concat([head, Buffer.from(rest)]);
        const bytes = reseal ? resealed(body) : body;
        try {
          await readPack(bytes, async () => new Map(), LIMITS);
        } catch (err) {
          if (!(err instanceof PackError)) throw err;
        }
      }),
      { ...opts, plugins: [fc.timeout(NO_HANG_MS)] },
    );
  });

  test('any delta against any base: the result of its instructions, or a PackError', () => {
    const varint = (n: number) => {
      const out: number[] = [];
      let v = n;
      do {
        out.push((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        v = Math.floor(v / 128);
      } while (v > 0);
      return out;
    };
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 200 }),
        // Mostly the base's true size, so the instructions are reached rather than refused at the header.
        fc.option(fc.nat({ max: 400 }), { freq: 4 }),
        fc.nat({ max: 400 }),
        fc.uint8Array({ maxLength: 60 }),
        (src, srcSize, outSize, ops) => {
          const delta = Buffer.from([...varint(srcSize ?? src.length), ...varint(outSize), ...ops]);
          const out = onlyItsOwnError(() => applyDelta(Buffer.from(src), delta, 300), PackError);
          if (out) {
            expect(out.length).toBe(outSize);
            expect(out.length).toBeLessThanOrEqual(300);
          }
        },
      ),
      opts,
    );
  });
});
