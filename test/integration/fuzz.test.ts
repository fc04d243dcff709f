import fc from 'fast-check';
import { startMemoryStack, type MemoryStack } from './memory-api-harness';

/**
 * Property-based fuzzing of every parser a request reaches, over HTTP against the local stack:
 * query strings (catalog), note paths, front matter and bodies (/v1), JSON-RPC messages and tool
 * arguments (MCP), Claude's memory tool commands, OAuth parameters. Whatever the input, the answer is never a 5xx (a 503 only when
 * the stack says a backend is busy, which it never is here) and always the API's own envelope.
 * Seeds are fixed (reproducible in CI); `FUZZ_RUNS` raises the number of runs locally.
 */
let s: MemoryStack;
const RUNS = Number(process.env.FUZZ_RUNS ?? 150);
const opts = { numRuns: RUNS, seed: 20261124, endOnFailure: true };

beforeAll(async () => {
  s = await startMemoryStack({ MEMORY_RATE_LIMIT: '1000000', MCP_RATE_PER_MINUTE: '1000000', RATE_ANON_RPS: '100000', RATE_ANON_BURST: '100000' });
  await s.fetch('/v1/memories', { method: 'POST', headers: { ...s.bearer('fuzz'), 'content-type': 'application/json' }, body: '{"name":"m"}' });
}, 120000);
afterAll(() => s?.close());

/** Text a hostile client would send: any code unit, percent signs, separators, huge numbers. */
const hostile = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom(
    '',
    '%',
    '%zz',
    '%00',
    '%2e%2e',
    '..',
    '.git',
    '-1',
    '0',
    '1e9',
    '99999999999999999999',
    'NaN',
    '[]',
    '{}',
    'null',
    '\u0000',
    '\ud800',
    'a'.repeat(3000),
  ),
);
/** Percent-encoded UTF-8 (lone surrogates as U+FFFD), a `%` left raw in strings of odd length: malformed escapes too. */
const enc = (v: string) =>
  [...Buffer.from(v, 'utf8')]
    .map((b) =>
      /[A-Za-z0-9._~-]/.test(String.fromCharCode(b))
        ? String.fromCharCode(b)
        : b === 0x25 && v.length % 2 === 1
          ? '%'
          : `%${b.toString(16).padStart(2, '0').toUpperCase()}`,
    )
    .join('');

async function expectEnvelope(res: Response, shape: 'catalog' | 'v1' | 'oauth' | 'any'): Promise<void> {
  const text = await res.text();
  if (res.status >= 500) throw new Error(`${res.status}: ${text.slice(0, 300)}`);
  const type = res.headers.get('content-type') ?? '';
  if (!type.includes('json') || text === '') return;
  const body = JSON.parse(text) as Record<string, unknown>;
  if (res.status < 400) return;
  if (shape === 'catalog') expect(body).toMatchObject({ success: false, error: { code: expect.any(String), message: expect.any(String) } });
  if (shape === 'v1') expect(body).toMatchObject({ error: { code: expect.any(String), message: expect.any(String) } });
  if (shape === 'oauth') expect(body).toMatchObject({ error: expect.any(String) });
}

test('catalog: any query string on any route', async () => {
  const keys = fc.constantFrom(
    'q',
    'limit',
    'cursor',
    'sort',
    'type',
    'category',
    'language',
    'license',
    'grade',
    'transport',
    'updated_since',
    'version',
    'search',
    'x',
  );
  const paths = fc.constantFrom(
    '/api/mcps',
    '/api/search',
    '/api/autocomplete',
    '/api/facets',
    '/api/slugs',
    '/api/v0.1/servers',
    '/api/mcps/x',
    '/api/icons/x.webp',
    '/api/openapi.json',
  );
  await fc.assert(
    fc.asyncProperty(paths, fc.array(fc.tuple(keys, hostile), { maxLength: 6 }), async (path, params) => {
      const query = params.map(([k, v]) => `${k}=${enc(v)}`).join('&');
      await expectEnvelope(await s.fetch(`${path}?${query}`), path.startsWith('/api/v0.1') || path.startsWith('/api/icons') ? 'any' : 'catalog');
    }),
    opts,
  );
}, 300000);

test('/v1: any note path, query and body', async () => {
  const bodies = fc.oneof(
    fc.jsonValue().map((v) => ({ type: 'application/json', body: JSON.stringify(v) })),
    fc
      .record({ body: hostile, frontmatter: fc.oneof(fc.jsonValue(), fc.dictionary(fc.string(), fc.jsonValue())) })
      .map((v) => ({ type: 'application/json', body: JSON.stringify(v) })),
    hostile.map((v) => ({ type: 'text/markdown', body: `---\n${v}\n---\n${v}` })),
    hostile.map((v) => ({ type: 'application/json', body: v })),
  );
  const methods = fc.constantFrom('GET', 'PUT', 'PATCH', 'DELETE', 'POST');
  // A partial read's parameter (one at a time: two are refused before either is parsed), or a note's links.
  const partKey = fc.constantFrom('section', 'lines', 'frontmatterOnly', 'includeLinks', 'rev', '/links');
  await fc.assert(
    fc.asyncProperty(methods, fc.array(hostile, { minLength: 1, maxLength: 3 }), hostile, bodies, partKey, async (method, segments, q, b, part) => {
      const path = `/v1/memories/m/notes/${segments.map(enc).join('/')}.md${part.endsWith('/links') ? '/links?' : '?'}q=${enc(q)}&limit=${enc(q)}&cursor=${enc(q)}&${part.replace('/links', 'rev')}=${enc(q)}`;
      const headers = { ...s.bearer('fuzz'), ...(method !== 'GET' && method !== 'DELETE' && { 'content-type': b.type }) };
      const res = await s.fetch(path, { method, headers, ...(method !== 'GET' && method !== 'DELETE' && { body: b.body }) });
      await expectEnvelope(res, 'v1');
    }),
    opts,
  );
}, 300000);

test('/mcp: any JSON-RPC message and any tool arguments', async () => {
  const tools = fc.constantFrom('memory__search', 'memory__read', 'memory__list', 'memory__write', 'memory__edit', 'memory__delete', 'x');
  const args = fc.oneof(
    fc.jsonValue(),
    fc.dictionary(
      fc.constantFrom('path', 'query', 'body', 'frontmatter', 'mode', 'old_str', 'new_str', 'folder', 'depth', 'limit', 'cursor', 'tags'),
      fc.oneof(fc.jsonValue(), hostile),
    ),
  );
  const message = fc.oneof(
    fc.record({
      jsonrpc: fc.constant('2.0'),
      id: fc.oneof(fc.integer(), fc.string()),
      method: fc.constant('tools/call'),
      params: fc.record({ name: tools, arguments: args }),
    }),
    fc.record({
      jsonrpc: fc.oneof(fc.constant('2.0'), fc.string()),
      id: fc.jsonValue(),
      method: fc.oneof(fc.string(), fc.constantFrom('tools/list', 'initialize', 'ping')),
      params: fc.jsonValue(),
    }),
    fc.array(fc.jsonValue(), { maxLength: 3 }),
  );
  await fc.assert(
    fc.asyncProperty(
      fc.oneof(
        message.map((m) => JSON.stringify(m)),
        hostile,
      ),
      async (raw) => {
        const res = await s.fetch('/mcp', {
          method: 'POST',
          headers: {
            ...s.bearer('fuzz'),
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            'mcp-protocol-version': '2025-06-18',
          },
          body: raw,
        });
        await expectEnvelope(res, 'any');
      },
    ),
    opts,
  );
}, 300000);

test("Claude's memory tool: any command, any parameters, any body, answered by a tool result or the /v1 envelope", async () => {
  const path = fc.oneof(
    hostile,
    hostile.map((v) => `/memories/${v}`),
    hostile.map((v) => `/memories/${v}.md`),
    fc.constantFrom('/memories', '/memories/', '/memories/a.md', '/memories/dir', '/memories/../x.md', '/memories/.git/x.md', '/memories/a.md/b'),
  );
  const command = fc.record(
    {
      command: fc.oneof(fc.constantFrom('view', 'create', 'str_replace', 'insert', 'delete', 'rename'), hostile),
      path,
      old_path: path,
      new_path: path,
      file_text: fc.oneof(hostile, fc.constant('---\nx: [\n---\n')),
      old_str: hostile,
      new_str: hostile,
      insert_line: fc.oneof(fc.integer({ min: -3, max: 5 }), fc.jsonValue()),
      insert_text: hostile,
      view_range: fc.oneof(fc.tuple(fc.integer({ min: -2, max: 9 }), fc.integer({ min: -2, max: 9 })), fc.jsonValue()),
    },
    { requiredKeys: ['command'] },
  );
  const body = fc.oneof(
    command.map((c) => JSON.stringify(c)),
    fc.jsonValue().map((v) => JSON.stringify(v)),
    hostile,
  );
  await fc.assert(
    fc.asyncProperty(body, async (raw) => {
      const res = await s.fetch('/v1/memories/m/memory-tool', {
        method: 'POST',
        headers: { ...s.bearer('fuzz'), 'content-type': 'application/json' },
        body: raw,
      });
      const text = await res.text();
      if (res.status >= 500) throw new Error(`${res.status}: ${text.slice(0, 300)}`);
      const answer = JSON.parse(text) as { content?: string; is_error?: boolean; error?: { code: string; message: string } };
      if (res.status === 200) {
        // A tool result: text for the model, an error flagged as one.
        expect(typeof answer.content).toBe('string');
        expect(typeof answer.is_error).toBe('boolean');
        if (answer.is_error) expect(answer.content).toMatch(/^(Error: |The path |No replacement |File .* exceeds)/);
      } else expect(answer).toMatchObject({ error: { code: expect.any(String), message: expect.any(String) } });
    }),
    opts,
  );
}, 300000);

test('OAuth: any registration, token and authorize parameters', async () => {
  const form = fc.dictionary(
    fc.constantFrom(
      'grant_type',
      'code',
      'redirect_uri',
      'client_id',
      'code_verifier',
      'refresh_token',
      'scope',
      'resource',
      'response_type',
      'state',
      'code_challenge',
      'code_challenge_method',
      'x',
    ),
    hostile,
  );
  await fc.assert(
    fc.asyncProperty(form, fc.jsonValue(), async (params, registration) => {
      const body = new URLSearchParams(params).toString();
      await expectEnvelope(await s.fetch('/oauth/token', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body }), 'oauth');
      await expectEnvelope(await s.fetch(`/oauth/authorize?${body}`), 'any');
      await expectEnvelope(
        await s.fetch('/oauth/register', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(registration) }),
        'oauth',
      );
    }),
    { ...opts, numRuns: Math.ceil(RUNS / 2) },
  );
}, 300000);
