import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { DEFAULT_LIMITS } from '../../lambdas/memory/config';
import { MemoryError } from '../../lambdas/memory/errors';
import { parseNoteStrict, validateFrontMatter, composeNote } from '../../lambdas/memory/markdown';
import { gitRefusal, validateNotePath } from '../../lambdas/memory/paths';
import { parseIfMatch } from '../../lambdas/memory-api/if-match';
import { CursorCodec, CursorError } from '../../lambdas/shared/cursor';

/** The memory's validators and parsers on generated input: a domain error or a value, never anything else. */
const opts = { numRuns: Number(process.env.FUZZ_RUNS ?? 500), seed: 20261124 };
const onlyDomainErrors = (fn: () => unknown, ...allowed: Array<new (...a: never[]) => Error>) => {
  try {
    fn();
  } catch (err) {
    if (!allowed.some((E) => err instanceof E)) throw err;
  }
};
const segment = fc.oneof(
  fc.string({ minLength: 1, maxLength: 12 }),
  fc.constantFrom('.git', 'GIT~1', '.git.', '..', '.', 'a', 'notes', '.gitmodules', 'x.md', '\u200c.git', 'café'),
);

test('a note path is accepted unchanged or refused as BAD_REQUEST; an accepted one holds no segment git refuses', () => {
  fc.assert(
    fc.property(fc.array(segment, { minLength: 1, maxLength: 5 }), (segs) => {
      const path = `${segs.join('/')}.md`;
      let accepted: string | undefined;
      onlyDomainErrors(() => {
        accepted = validateNotePath(path, DEFAULT_LIMITS);
      }, MemoryError);
      if (accepted !== undefined) {
        expect(accepted).toBe(path);
        for (const seg of path.split('/')) expect(gitRefusal(seg)).toBeUndefined();
      }
    }),
    opts,
  );
});

test('any text parses as a note or is refused as BAD_REQUEST; JSON front matter that passes survives a round trip', () => {
  fc.assert(
    fc.property(fc.string({ maxLength: 200 }), fc.string({ maxLength: 200 }), (yaml, body) => {
      onlyDomainErrors(() => parseNoteStrict(`---\n${yaml}\n---\n${body}`, DEFAULT_LIMITS), MemoryError);
    }),
    opts,
  );
  fc.assert(
    fc.property(fc.dictionary(fc.string({ minLength: 1, maxLength: 10 }), fc.jsonValue({ maxDepth: 4 })), (fm) => {
      let checked: Record<string, unknown> | undefined;
      onlyDomainErrors(() => {
        checked = validateFrontMatter(fm, DEFAULT_LIMITS);
      }, MemoryError);
      if (checked && Object.keys(checked).length > 0) {
        expect(parseNoteStrict(composeNote(checked as never, 'b'), DEFAULT_LIMITS).frontmatter).toEqual(JSON.parse(JSON.stringify(checked)));
      }
    }),
    opts,
  );
});

test('If-Match values and cursors: a value or a typed refusal', async () => {
  fc.assert(
    fc.property(fc.string({ maxLength: 60 }), (v) => onlyDomainErrors(() => parseIfMatch(v), MemoryError)),
    opts,
  );
  const codec = new CursorCodec({ current: { id: 1, secret: randomBytes(32) } });
  await fc.assert(
    fc.asyncProperty(fc.oneof(fc.string({ maxLength: 80 }), fc.base64String({ maxLength: 80 })), async (token) => {
      await codec.decode('notes', token).catch((err: unknown) => {
        if (!(err instanceof CursorError)) throw err;
      });
    }),
    { ...opts, numRuns: 200 },
  );
});
