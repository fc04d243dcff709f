import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { MemoryLinksSchema, NoteLinksSchema, NoteSchema, SearchPageSchema, WriteResultSchema } from '../../lambdas/memory-api/response-schemas';
import { basicUrl, gitSandbox, type GitSandbox } from '../support/git-client';
import { ok, toolError } from './mcp-harness';
import { body, errorCode, startMemoryStack, type MemoryStack } from './memory-api-harness';

/**
 * Reading only what is needed and following links both ways, over `/v1` and `/mcp` on the local
 * stack: sections (nested, repeated, headings in code fences), line ranges and front matter alone,
 * each carrying the rev an edit can expect; the section of search hits; a note's links and the
 * memory's orphans and dangling links kept right through writes, a move (with and without link
 * rewriting), a delete, a restore and a git push that renames; and a second user reaching none of it.
 */
let h: MemoryStack;
let g: GitSandbox;
let mcp: Client;
const clients: Client[] = [];

const PLAN = [
  '---',
  'tags: [plan]',
  'owner: alice',
  '---',
  '# Plan', //                                                 1
  '', //                                                       2
  'Intro with a link to [[ideas]] and [the log](log.md).', //  3
  '', //                                                       4
  '## Plans', //                                               5
  '', //                                                       6
  '### June', //                                               7
  'Ship the thing.', //                                        8
  '', //                                                       9
  '```', //                                                   10
  '## Not a heading', //                                      11
  '```', //                                                   12
  '', //                                                      13
  '## Log', //                                                14
  '', //                                                      15
  '### June', //                                              16
  'Wrote the log.', //                                        17
  '',
].join('\n');
const BODY_LINES = PLAN.split('\n').slice(4);

beforeAll(async () => {
  h = await startMemoryStack({ MEMORY_RATE_LIMIT: '100000', MCP_RATE_PER_MINUTE: '100000' });
  g = gitSandbox('parts-links');
  for (const name of ['work', 'other'])
    expect((await rest('POST', '/v1/memories', { body: JSON.stringify({ name }), type: 'application/json' })).status).toBe(201);
  await put('plan.md', PLAN);
  await put('ideas.md', '# Ideas\n\nSee [[plan]] and [[missing]].\n');
  await put('log.md', '# Log\n\nNothing links out.\n');
  await put('lonely.md', '# Lonely\n');
  mcp = await connect(h.token('alice'));
}, 180000);
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
  g?.cleanup();
  await h?.close();
});

async function connect(token: string): Promise<Client> {
  const c = new Client({ name: 'parts-links', version: '1.0.0' });
  await c.connect(new StreamableHTTPClientTransport(new URL(`${h.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  clients.push(c);
  return c;
}

function rest(method: string, path: string, o: { body?: string; type?: string; headers?: Record<string, string>; sub?: string } = {}): Promise<Response> {
  return h.fetch(path, { method, headers: { ...h.bearer(o.sub ?? 'alice'), ...(o.type && { 'content-type': o.type }), ...o.headers }, body: o.body });
}

async function put(path: string, text: string, memory = 'work'): Promise<string> {
  return (await body(await rest('PUT', `/v1/memories/${memory}/notes/${path}`, { body: text, type: 'text/markdown' }), WriteResultSchema)).rev;
}

const read = async (path: string, query = '', headers: Record<string, string> = {}) => rest('GET', `/v1/memories/work/notes/${path}${query}`, { headers });
const links = async (path: string) => body(await rest('GET', `/v1/memories/work/notes/${path}/links`), NoteLinksSchema);
const memoryLinks = async (query = '') => body(await rest('GET', `/v1/memories/work/links${query}`), MemoryLinksSchema);
const lines = (from: number, to: number): string => `${BODY_LINES.slice(from - 1, to).join('\n')}\n`;

describe('partial reads over /v1', () => {
  it.each([
    ['section=June', 'June', [7, 13]],
    ['section=%23%23%23%20June', 'June', [7, 13]],
    ['section=Log%20%3E%20June', 'Log > June', [16, 17]],
    ['section=June%232', 'Log > June', [16, 17]],
    ['section=plans', 'Plans', [5, 13]],
    ['section=Plan', 'Plan', [1, 17]],
  ])('?%s is the section %s, lines %j, with the rev', async (query, section, [from, to]) => {
    const res = await read('plan.md', `?${query}`);
    expect(res.status).toBe(200);
    const note = await body(res, NoteSchema);
    expect(note.part).toEqual({ section, lines: [from, to], of: 17 });
    expect(note.body).toBe(lines(from, to));
    expect(res.headers.get('etag')).toBe(`"${note.rev}"`);
    expect(note.frontmatter).toEqual({ tags: ['plan'], owner: 'alice' });
  });

  it('lines, front matter alone, and the raw part with Accept: text/markdown', async () => {
    const part = await body(await read('plan.md', '?lines=7-8'), NoteSchema);
    expect(part).toMatchObject({ body: 'Ship the thing.\n'.replace(/^/, '### June\n'), part: { lines: [7, 8], of: 17 } });
    expect((await body(await read('plan.md', '?lines=16-99'), NoteSchema)).part).toEqual({ lines: [16, 17], of: 17 });
    const fm = await body(await read('plan.md', '?frontmatterOnly=true'), NoteSchema);
    expect(fm).toMatchObject({ body: '', frontmatter: { owner: 'alice' }, part: { frontmatterOnly: true, of: 17 } });
    const raw = await read('plan.md', '?section=Log', { accept: 'text/markdown' });
    expect(await raw.text()).toBe(lines(14, 17));
    expect(await (await read('plan.md', '?frontmatterOnly=1', { accept: 'text/markdown' })).text()).toBe('---\ntags: [plan]\nowner: alice\n---\n');
  });

  it('an edit can follow a partial read with its rev as If-Match; a stale one is 409', async () => {
    const res = await read('plan.md', '?section=Log%20%3E%20June');
    const { rev } = await body(res, NoteSchema);
    const edit = await rest('PATCH', '/v1/memories/work/notes/plan.md', {
      body: JSON.stringify({ mode: 'str_replace', old_str: 'Wrote the log.', new_str: 'Wrote the log twice.' }),
      type: 'application/json',
      headers: { 'if-match': `"${rev}"` },
    });
    expect(edit.status).toBe(200);
    const again = await rest('PATCH', '/v1/memories/work/notes/plan.md', {
      body: JSON.stringify({ mode: 'append', body: 'x' }),
      type: 'application/json',
      headers: { 'if-match': `"${rev}"` },
    });
    expect(again.status).toBe(409);
    await put('plan.md', PLAN);
  });

  it.each([
    [
      '?section=Not%20a%20heading',
      'NOT_FOUND',
      /section "Not a heading" does not exist in note "plan.md"; its headings are: # Plan, ## Plans, ### June, ## Log, ### June$/,
    ],
    ['?section=June%233', 'NOT_FOUND', /does not exist/],
    ['?lines=0-3', 'BAD_REQUEST', /lines must be a range/],
    ['?lines=9-3', 'BAD_REQUEST', /ends before it starts/],
    ['?lines=40-50', 'BAD_REQUEST', /start past the end of the body of "plan.md", which has 17 lines/],
    ['?section=June&lines=1-2', 'BAD_REQUEST', /give one of section, lines and frontmatterOnly/],
    ['?frontmatterOnly=maybe', 'BAD_REQUEST', /frontmatterOnly: must be true or false/],
    ['?section=', 'BAD_REQUEST', /section must be/],
    ['?includeLinks=2', 'BAD_REQUEST', /includeLinks/],
  ])('%s is %s with a clear message', async (query, code, message) => {
    const res = await read('plan.md', query);
    const text = await res.text();
    expect(JSON.parse(text).error).toEqual({ code, message: expect.stringMatching(message) });
  });

  it('search hits carry the section of their first match, which reads back', async () => {
    const { results } = await body(await rest('GET', '/v1/memories/work/search?q=wrote%20the%20log'), SearchPageSchema);
    expect(results).toEqual([expect.objectContaining({ path: 'plan.md', section: 'Log > June' })]);
    const before = await body(await rest('GET', '/v1/memories/work/search?q=nothing%20links'), SearchPageSchema);
    expect(before.results[0].section).toBe('Log');
    const sec = await body(await read('plan.md', `?section=${encodeURIComponent(results[0].section as string)}`), NoteSchema);
    expect(sec.body).toContain('Wrote the log.');
  });
});

describe('partial reads and links over MCP', () => {
  it('memory__read takes section, lines, frontmatterOnly and includeLinks; the result says which part, and its rev', async () => {
    const sec = await ok<{ body: string; part: unknown; rev: string }>(mcp, 'memory__read', { path: '@work/plan.md', section: 'Plans > June' });
    expect(sec.part).toEqual({ section: 'June', lines: [7, 13], of: 17 });
    expect(sec.body).toBe(lines(7, 13));
    expect(sec.rev).toMatch(/^[0-9a-f]{40}$/);
    expect((await ok(mcp, 'memory__read', { path: '@work/plan.md', lines: '1-1' })).body).toBe('# Plan\n');
    expect(await ok(mcp, 'memory__read', { path: '@work/plan.md', frontmatterOnly: true })).toMatchObject({ body: '', frontmatter: { owner: 'alice' } });
    const withLinks = await ok<{ links: { outgoing: unknown[]; incoming: unknown[] } }>(mcp, 'memory__read', { path: '@work/plan.md', includeLinks: true });
    expect(withLinks.links.outgoing).toEqual([
      { target: 'ideas', kind: 'wikilink', line: 3, path: '@work/ideas.md' },
      { target: 'log.md', kind: 'markdown', line: 3, path: '@work/log.md' },
    ]);
    expect(withLinks.links.incoming).toEqual([{ path: '@work/ideas.md', target: 'plan', kind: 'wikilink', line: 3 }]);
  });

  it('memory__search gives the section to read next', async () => {
    const { results } = await ok<{ results: Array<{ path: string; section?: string }> }>(mcp, 'memory__search', { query: 'ship the thing', folder: '@work' });
    expect(results).toEqual([expect.objectContaining({ path: '@work/plan.md', section: 'June' })]);
    expect((await ok(mcp, 'memory__read', { path: results[0].path, section: results[0].section })).body).toContain('Ship the thing.');
  });

  it.each([
    [{ section: 'Nope' }, 'not_found', /section "Nope" does not exist in note "plan.md"; its headings are: # Plan/],
    [{ lines: 'ten' }, 'invalid_argument', /lines must be a range/],
    [{ lines: '1-2', section: 'June' }, 'invalid_argument', /give one of section, lines and frontmatterOnly/],
    [{ section: '' }, 'invalid_argument', /section may not be empty/],
    [{ includeLinks: 'yes' }, 'invalid_argument', /includeLinks must be a boolean/],
  ])('%j is the tool error %s', async (args, code, message) => {
    expect(await toolError(mcp, 'memory__read', { path: '@work/plan.md', ...args })).toEqual({ code, message: expect.stringMatching(message) });
  });
});

describe('links both ways', () => {
  it("a note's outgoing links (resolved and dangling) and incoming ones, over /v1 and with includeLinks", async () => {
    const ideas = await links('ideas.md');
    expect(ideas.outgoing).toEqual([
      { target: 'plan', kind: 'wikilink', line: 3, path: 'plan.md' },
      { target: 'missing', kind: 'wikilink', line: 3, path: null },
    ]);
    expect(ideas.incoming).toEqual([{ path: 'plan.md', target: 'ideas', kind: 'wikilink', line: 3 }]);
    const note = await body(await read('log.md', '?includeLinks=true'), NoteSchema);
    expect(note.links).toEqual({ outgoing: [], incoming: [{ path: 'plan.md', target: 'log.md', kind: 'markdown', line: 3 }] });
    expect(await memoryLinks()).toMatchObject({
      notes: 4,
      links: 3,
      orphans: ['lonely.md'],
      dangling: [{ path: 'ideas.md', target: 'missing', kind: 'wikilink', line: 3 }],
    });
    expect(await memoryLinks('?orphans=true')).not.toHaveProperty('dangling');
    expect(await memoryLinks('?dangling=true')).not.toHaveProperty('orphans');
  });

  it('follow a write: a new link appears both ways, a dangling one resolves when its note is written', async () => {
    await put('lonely.md', '# Lonely\n\nNow points at [[log]].\n');
    expect((await links('log.md')).incoming.map((l) => l.path)).toEqual(['lonely.md', 'plan.md']);
    await put('missing.md', '# Missing no more\n');
    expect((await links('ideas.md')).outgoing[1]).toEqual({ target: 'missing', kind: 'wikilink', line: 3, path: 'missing.md' });
    expect((await memoryLinks()).dangling).toEqual([]);
  });

  it('follow a move: with updateLinks the links are rewritten and still lead there; without, they dangle', async () => {
    const moved = await rest('POST', '/v1/memories/work/move', {
      body: JSON.stringify({ from: 'log.md', to: 'journal/log.md', updateLinks: true }),
      type: 'application/json',
    });
    expect(moved.status).toBe(200);
    expect((await links('journal/log.md')).incoming.map((l) => [l.path, l.target])).toEqual([
      ['lonely.md', 'journal/log'],
      ['plan.md', 'journal/log.md'],
    ]);
    await rest('POST', '/v1/memories/work/move', { body: JSON.stringify({ from: 'missing.md', to: 'found.md' }), type: 'application/json' });
    expect((await links('ideas.md')).outgoing[1].path).toBeNull();
    expect((await memoryLinks('?dangling=true')).dangling).toEqual([{ path: 'ideas.md', target: 'missing', kind: 'wikilink', line: 3 }]);
  });

  it('follow a delete and a restore: incoming links dangle, then lead to the note again', async () => {
    expect((await rest('DELETE', '/v1/memories/work/notes/ideas.md')).status).toBe(200);
    expect((await links('plan.md')).incoming).toEqual([]);
    expect((await links('plan.md')).outgoing[0]).toEqual({ target: 'ideas', kind: 'wikilink', line: 3, path: null });
    expect(await errorCode(await rest('GET', '/v1/memories/work/notes/ideas.md/links'))).toBe('NOT_FOUND');
    expect((await rest('POST', '/v1/memories/work/restore', { body: JSON.stringify({ path: 'ideas.md' }), type: 'application/json' })).status).toBe(200);
    expect((await links('plan.md')).outgoing[0].path).toBe('ideas.md');
    expect((await links('plan.md')).incoming).toEqual([{ path: 'ideas.md', target: 'plan', kind: 'wikilink', line: 3 }]);
  });

  it('follow a git push that renames a note and edits a link: the graph is the pushed commit’s', async () => {
    const url = basicUrl(h.url, 'work', h.token('alice'));
    await g.ok('', ['clone', '-q', url, 'w']);
    await g.ok('w', ['mv', 'plan.md', 'roadmap.md']);
    g.write('w', 'ideas.md', '# Ideas\n\nSee [[roadmap]] and [[missing]].\n');
    await g.ok('w', ['add', '-A']);
    await g.ok('w', ['commit', '-q', '-m', 'Rename plan to roadmap']);
    await g.ok('w', ['push', '-q', 'origin', 'main']);
    const roadmap = await links('roadmap.md');
    expect(roadmap.incoming).toEqual([{ path: 'ideas.md', target: 'roadmap', kind: 'wikilink', line: 3 }]);
    // Its link to the log (rewritten by the move above) still resolves from its new name.
    expect(roadmap.outgoing.map((l) => l.path)).toEqual(['ideas.md', 'journal/log.md']);
    expect((await links('journal/log.md')).incoming.map((l) => l.path)).toEqual(['lonely.md', 'roadmap.md']);
    expect(await errorCode(await rest('GET', '/v1/memories/work/notes/plan.md/links'))).toBe('NOT_FOUND');
    // `?rev=` reads the graph as it was: plan.md still there, and linked from ideas.md.
    const { commits } = (await (await rest('GET', '/v1/memories/work/history?limit=2')).json()) as { commits: Array<{ rev: string }> };
    const before = await body(await rest('GET', `/v1/memories/work/notes/plan.md/links?rev=${commits[1].rev}`), NoteLinksSchema);
    expect(before.incoming.map((l) => l.path)).toEqual(['ideas.md']);
  });

  it.each([
    ['/v1/memories/work/notes/nope.md/links', 'NOT_FOUND'],
    ['/v1/memories/work/notes/a.txt/links', 'BAD_REQUEST'],
    ['/v1/memories/work/links?orphans=sure', 'BAD_REQUEST'],
    ['/v1/memories/work/links?rev=abc', 'BAD_REQUEST'],
    [`/v1/memories/work/links?rev=${'0'.repeat(40)}`, 'NOT_FOUND'],
    ['/v1/memories/nothere/links', 'NOT_FOUND'],
  ])('GET %s is %s', async (path, code) => {
    expect(await errorCode(await rest('GET', path))).toBe(code);
  });
});

describe('another user', () => {
  it('reaches none of it over /v1 or /mcp, and a token granted other memories is refused', async () => {
    for (const path of ['/v1/memories/work/notes/roadmap.md?section=June', '/v1/memories/work/notes/roadmap.md/links', '/v1/memories/work/links']) {
      expect(await errorCode(await rest('GET', path, { sub: 'mallory' }))).toBe('NOT_FOUND');
    }
    const narrow = h.bearer('alice', { memories: ['other'] });
    expect(await errorCode(await h.fetch('/v1/memories/work/links', { headers: narrow }))).toBe('FORBIDDEN');
    expect(await errorCode(await h.fetch('/v1/memories/work/notes/roadmap.md/links', { headers: narrow }))).toBe('FORBIDDEN');
    const mallory = await connect(h.token('mallory'));
    expect((await toolError(mallory, 'memory__read', { path: '@work/roadmap.md', includeLinks: true })).code).toBe('not_found');
    expect((await toolError(mallory, 'memory__search', { query: 'roadmap', folder: '@work' })).message).toBe('vault "@work" does not exist');
  });
});
