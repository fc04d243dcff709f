import { badRequest, MemoryError } from '../../lambdas/memory/errors';
import { toToolError } from '../../lambdas/mcp/errors';

/**
 * The one mapping from the memory core's errors to tool errors (lambdas/mcp/errors.ts): the core
 * speaks `/v1` (query parameter `q`, raw text/markdown bodies); a tool error speaks in the tools'
 * arguments. The end-to-end cases run in test/integration/mcp-tools.test.ts.
 */
const ctx = { label: 'the default memory' };

it('names the search query as the tool does (query), not as /v1 does (q)', () => {
  expect(toToolError(badRequest('invalid_argument', 'q is required', 'q'), ctx)).toMatchObject({ code: 'invalid_argument', message: 'query is required' });
  expect(toToolError(badRequest('invalid_argument', 'q is longer than 256 characters', 'q'), ctx)).toMatchObject({
    code: 'invalid_argument',
    message: 'query is longer than 256 characters',
  });
});

it('points a body with a front-matter fence at the frontmatter argument, never at raw text/markdown', () => {
  for (const message of [
    'body may not start with a front-matter fence (---); pass frontmatter as an object, or send raw text/markdown',
    'body may not start with a front-matter fence (---); pass frontmatter as an object',
  ]) {
    const err = toToolError(badRequest('invalid_argument', message, 'body'), ctx);
    expect(err.code).toBe('invalid_argument');
    expect(err.message).not.toMatch(/text\/markdown/);
    expect(err.message).toMatch(/^body may not start with a front-matter fence \(---\); pass the front matter as the frontmatter argument/);
  }
});

it("leaves messages that already speak in the tools' terms alone", () => {
  expect(toToolError(badRequest('invalid_argument', 'at most 50 tags', 'tags'), ctx).message).toBe('at most 50 tags');
  expect(toToolError(badRequest('no_unique_match', 'old_str does not occur in the body', 'old_str'), ctx).message).toBe('old_str does not occur in the body');
  expect(toToolError(new MemoryError('BAD_REQUEST', 'refused_content', 'content refused: line 1 looks like a key', { field: 'body' }), ctx)).toMatchObject({
    code: 'refused_content',
  });
});
