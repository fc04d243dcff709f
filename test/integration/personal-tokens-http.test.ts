import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { z } from 'zod';
import { CreatedTokenSchema, ErrorSchema, TokenListSchema, TokenRevokedSchema } from '../../lambdas/memory-api/response-schemas';
import { basicUrl, gitSandbox, type GitSandbox } from '../support/git-client';
import { body, errorCode, startMemoryStack, type MemoryStack } from './memory-api-harness';

/**
 * Personal access tokens as people and scripts use them, over real HTTP on two instances of the
 * local stack sharing one DynamoDB Local and one S3 server (B attached to A's backends, as a second
 * Lambda instance shares the tables), with two users: created with a sign-in, used as a bearer on
 * `/v1` and `/mcp` and as the git password; scoped by memory, by scope and by folder; refused to
 * other users' memories, refused in notes, revoked at once here and within the bound there, and
 * used with git for a month on a clock the test holds (no sleep anywhere).
 */
let a: MemoryStack;
let b: MemoryStack;
let g: GitSandbox;
let now = Date.now();
const clock = () => now;
const DAY = 86_400_000;
const clients: Client[] = [];

type Created = z.output<typeof CreatedTokenSchema>;

const json = (o: unknown) => ({ 'content-type': 'application/json', body: JSON.stringify(o) });

async function v1(h: MemoryStack, token: string, method: string, path: string, payload?: unknown, headers: Record<string, string> = {}): Promise<Response> {
  const { body: data, ...type } = payload === undefined ? { body: undefined } : json(payload);
  return h.fetch(`/v1${path}`, { method, headers: { authorization: `Bearer ${token}`, ...type, ...headers }, body: data });
}

async function put(h: MemoryStack, token: string, memory: string, path: string, text: string): Promise<Response> {
  return h.fetch(`/v1/memories/${memory}/notes/${path}`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'text/markdown' },
    body: text,
  });
}

async function mint(h: MemoryStack, signIn: string, request: Record<string, unknown>): Promise<Created> {
  const res = await v1(h, signIn, 'POST', '/tokens', request);
  if (res.status !== 201) throw new Error(`token not created (${res.status}): ${await res.text()}`);
  return body(res, CreatedTokenSchema);
}

async function mcp(h: MemoryStack, token: string): Promise<Client> {
  const client = new Client({ name: 'pat-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${h.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  clients.push(client);
  return client;
}

async function tool(client: Client, name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
  const res = (await client.callTool({ name, arguments: args })) as CallToolResult;
  return (res.isError ? { isError: true, ...(res.structuredContent as object) } : res.structuredContent) as Record<string, unknown>;
}

/** One tool call as a raw POST: the HTTP status (401 for a refused token) without a client session. */
async function mcpStatus(h: MemoryStack, token: string): Promise<number> {
  const res = await h.fetch('/mcp', {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'memory__list', arguments: { folder: '@work' } } }),
  });
  await res.text();
  return res.status;
}

const ls = async (h: MemoryStack, token: string, memory = 'work'): Promise<number> => (await v1(h, token, 'GET', `/memories/${memory}/notes`)).status;

let alice = '';
let bob = '';

beforeAll(async () => {
  // Not a test of the rate limit: raised so git's several requests per command all pass.
  const env = { MEMORY_RATE_LIMIT: '100000', MCP_RATE_PER_MINUTE: '100000' };
  a = await startMemoryStack(env, { clock });
  b = await startMemoryStack(env, { clock, attachTo: a.dataDir });
  g = gitSandbox('pat');
  alice = a.token('alice', { ttlSeconds: 3600 });
  bob = a.token('bob', { ttlSeconds: 3600 });
  for (const [who, memory] of [
    [alice, 'work'],
    [alice, 'home'],
    [bob, 'work'],
  ] as const) {
    expect((await v1(a, who, 'POST', '/memories', { name: memory })).status).toBe(201);
  }
  for (const [who, path, text] of [
    [alice, 'plans/q1.md', '# Q1\n\nalice plans the alpha launch'],
    [alice, 'plans/team/people.md', '# People\n\nalpha team'],
    [alice, 'journal.md', '# Journal\n\nalpha thoughts, private'],
    [bob, 'bob-only.md', '# Bob\n\nbob-secret alpha numbers'],
  ] as const) {
    expect((await put(a, who, 'work', path, text)).status).toBe(200);
  }
}, 240_000);

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
  g?.cleanup();
  // The attached instance first, then the one whose backends it uses.
  await b?.close();
  await a?.close();
}, 60_000);

describe('creating, listing and revoking', () => {
  test('a sign-in creates one: 201 with the secret once, never again in the list; revoked with DELETE', async () => {
    const created = await mint(a, alice, { name: 'laptop git', scopes: ['memory:read', 'memory:write'], memories: ['work'], expiresInDays: 30 });
    expect(created).toMatchObject({ name: 'laptop git', scopes: ['memory:read', 'memory:write'], memories: ['work'] });
    expect(Date.parse(created.expires) - Date.parse(created.created)).toBe(30 * DAY);
    const res = await v1(b, alice, 'GET', '/tokens');
    expect(res.headers.get('cache-control')).toBe('no-store');
    const listed = await body(res, TokenListSchema);
    expect(listed.tokens.find((t) => t.id === created.id)).toEqual({ ...created, token: undefined });
    expect(JSON.stringify(listed)).not.toContain('mcpm_pat_');
    // Bob sees none of Alice's, and cannot revoke hers.
    expect((await body(await v1(a, bob, 'GET', '/tokens'), TokenListSchema)).tokens).toEqual([]);
    const theirs = await v1(a, bob, 'DELETE', `/tokens/${created.id}`);
    expect([theirs.status, await errorCode(theirs)]).toEqual([404, 'NOT_FOUND']);
    const mine = await v1(a, alice, 'DELETE', `/tokens/${created.id}`);
    expect(await body(mine, TokenRevokedSchema)).toEqual({ id: created.id, deleted: true });
    expect((await body(await v1(a, alice, 'GET', '/tokens'), TokenListSchema)).tokens.map((t) => t.id)).not.toContain(created.id);
  });

  test('a personal token cannot create, list or revoke tokens, nor can the favorites sign-in (403 in the /v1 envelope)', async () => {
    const pat = await mint(a, alice, { name: 'script', scopes: ['memory:read', 'memory:write'] });
    for (const [method, path, payload] of [
      ['POST', '/tokens', { name: 'child', scopes: ['memory:read'] }],
      ['GET', '/tokens', undefined],
      ['DELETE', `/tokens/${pat.id}`, undefined],
    ] as const) {
      const res = await v1(a, pat.token, method, path, payload);
      expect([res.status, (await body(res, ErrorSchema)).error]).toEqual([
        403,
        { code: 'FORBIDDEN', message: expect.stringMatching(/not with a personal access token/) },
      ]);
    }
    const favorites = await a.stack.oauth.tokens.issueTokens(
      { sub: 'alice', clientId: 'http://site/oauth-client.json', scopes: [], memories: [], resource: a.stack.auth.audience },
      { accessTtlSeconds: 600 },
    );
    const res = await v1(a, favorites.accessToken, 'POST', '/tokens', { name: 'x', scopes: ['memory:read'] });
    expect([res.status, await errorCode(res)]).toEqual([403, 'FORBIDDEN']);
    // Not more than the sign-in holds: a read-only sign-in, a sign-in limited to one memory.
    const readOnly = a.token('alice', { scope: 'memory:read' });
    const more = await v1(a, readOnly, 'POST', '/tokens', { name: 'x', scopes: ['memory:read', 'memory:write'] });
    expect([more.status, await errorCode(more)]).toEqual([403, 'FORBIDDEN']);
    const limited = a.token('alice', { memories: ['home'] });
    const other = await v1(a, limited, 'POST', '/tokens', { name: 'x', scopes: ['memory:read'], memories: ['work'] });
    expect([other.status, await errorCode(other)]).toEqual([403, 'FORBIDDEN']);
    expect((await mint(a, limited, { name: 'x', scopes: ['memory:read'] })).memories).toEqual(['home']);
  });

  test.each([
    ['a body that is not JSON', 'name=x'],
    ['no name', { scopes: ['memory:read'] }],
    ['a name of spaces', { name: '   ', scopes: ['memory:read'] }],
    ['scopes not an array', { name: 'x', scopes: 'memory:read' }],
    ['an unknown scope', { name: 'x', scopes: ['memory:read', 'memory:admin'] }],
    ['write alone', { name: 'x', scopes: ['memory:write'] }],
    ['a memory name of capitals', { name: 'x', scopes: ['memory:read'], memories: ['Work'] }],
    ['memories not an array', { name: 'x', scopes: ['memory:read'], memories: 'work' }],
    ['a path prefix climbing out', { name: 'x', scopes: ['memory:read'], pathPrefix: 'a/../b' }],
    ['a path prefix that is a note', { name: 'x', scopes: ['memory:read'], pathPrefix: 'a/b.md' }],
    ['days as a string', { name: 'x', scopes: ['memory:read'], expiresInDays: '30' }],
    ['zero days', { name: 'x', scopes: ['memory:read'], expiresInDays: 0 }],
    ['a year and two days', { name: 'x', scopes: ['memory:read'], expiresInDays: 367 }],
  ])('refuses %s with 400 BAD_REQUEST, creating nothing', async (_, payload) => {
    const before = (await body(await v1(a, alice, 'GET', '/tokens'), TokenListSchema)).tokens.length;
    const res =
      typeof payload === 'string'
        ? await a.fetch('/v1/tokens', { method: 'POST', headers: { authorization: `Bearer ${alice}`, 'content-type': 'application/json' }, body: payload })
        : await v1(a, alice, 'POST', '/tokens', payload);
    expect([res.status, await errorCode(res)]).toEqual([400, 'BAD_REQUEST']);
    expect((await body(await v1(a, alice, 'GET', '/tokens'), TokenListSchema)).tokens).toHaveLength(before);
  });

  test('the ceiling: 50 active tokens per user (the default), the 51st is 409; a revoked one frees its place', async () => {
    const carol = a.token('carol');
    const ids: string[] = [];
    for (let i = 0; i < 50; i++) ids.push((await mint(a, carol, { name: `t${i}`, scopes: ['memory:read'] })).id);
    const over = await v1(a, carol, 'POST', '/tokens', { name: 'one more', scopes: ['memory:read'] });
    expect([over.status, (await body(over, ErrorSchema)).error]).toEqual([409, { code: 'CONFLICT', message: expect.stringMatching(/50 active/) }]);
    expect((await v1(a, carol, 'DELETE', `/tokens/${ids[0]}`)).status).toBe(200);
    await mint(a, carol, { name: 'one more', scopes: ['memory:read'] });
  }, 120_000);

  test('no Idempotency-Key replay keeps a secret: the same key twice creates two tokens', async () => {
    const key = { 'idempotency-key': 'same-key-twice' };
    const first = await body(await v1(a, alice, 'POST', '/tokens', { name: 'k', scopes: ['memory:read'] }, key), CreatedTokenSchema);
    const second = await v1(a, alice, 'POST', '/tokens', { name: 'k', scopes: ['memory:read'] }, key);
    expect(second.headers.get('idempotent-replayed')).toBeNull();
    expect((await body(second, CreatedTokenSchema)).id).not.toBe(first.id);
  });
});

describe('two users: no token of one reaches the other’s memories', () => {
  test('over /v1, /mcp and git, personal tokens included: each sees its own "work" only', async () => {
    const alicePat = (await mint(a, alice, { name: 'all', scopes: ['memory:read', 'memory:write'] })).token;
    const bobPat = (await mint(a, bob, { name: 'all', scopes: ['memory:read', 'memory:write'] })).token;
    for (const [token, own, foreign] of [
      [alicePat, 'plans/q1.md', 'bob-only.md'],
      [bobPat, 'bob-only.md', 'plans/q1.md'],
      [alice, 'plans/q1.md', 'bob-only.md'],
    ] as const) {
      for (const h of [a, b]) {
        expect((await v1(h, token, 'GET', `/memories/work/notes/${own}`)).status).toBe(200);
        expect((await v1(h, token, 'GET', `/memories/work/notes/${foreign}`)).status).toBe(404);
      }
    }
    expect(((await (await v1(a, bobPat, 'GET', '/memories')).json()) as { memories: Array<{ name: string }> }).memories.map((m) => m.name)).toEqual(['work']);
    expect((await v1(a, bobPat, 'GET', '/memories/home')).status).toBe(404);
    const found = (await (await v1(b, alicePat, 'GET', '/memories/work/search?q=bob-secret')).json()) as { results: unknown[] };
    expect(found.results).toEqual([]);
    // A write with Bob's token lands in Bob's memory, never in Alice's.
    expect((await put(b, bobPat, 'work', 'plans/q1.md', '# Bob’s own q1')).status).toBe(200);
    expect(((await (await v1(a, alicePat, 'GET', '/memories/work/notes/plans/q1.md')).json()) as { body: string }).body).toContain('alice plans');

    const ac = await mcp(b, alicePat);
    expect(await tool(ac, 'memory__read', { path: '@work/bob-only.md' })).toMatchObject({ isError: true, error: { code: 'not_found' } });
    expect(await tool(ac, 'memory__search', { query: 'bob-secret', folder: '@work' })).toMatchObject({ results: [] });
    const bc = await mcp(a, bobPat);
    expect(await tool(bc, 'memory__read', { path: '@work/bob-only.md' })).toMatchObject({ body: expect.stringContaining('bob-secret') });
    expect(await tool(bc, 'memory__read', { path: '@home/anything.md' })).toMatchObject({ isError: true, error: { code: 'not_found' } });

    await g.ok('', ['clone', '-q', basicUrl(a.url, 'work', alicePat), 'alice-work']);
    await g.ok('', ['clone', '-q', basicUrl(b.url, 'work', bobPat), 'bob-work']);
    expect((await g.ok('alice-work', ['ls-files'])).split('\n').filter(Boolean).sort()).toEqual(['journal.md', 'plans/q1.md', 'plans/team/people.md']);
    expect((await g.ok('bob-work', ['ls-files'])).split('\n').filter(Boolean).sort()).toEqual(['bob-only.md', 'plans/q1.md']);
    await g.fsck('alice-work');
  });

  test('a token limited to some memories: others are 403 over /v1, forbidden over MCP, refused by git', async () => {
    const homeOnly = (await mint(a, alice, { name: 'home only', scopes: ['memory:read', 'memory:write'], memories: ['home'] })).token;
    expect(await ls(a, homeOnly, 'home')).toBe(200);
    const res = await v1(a, homeOnly, 'GET', '/memories/work/notes');
    expect([res.status, await errorCode(res)]).toEqual([403, 'FORBIDDEN']);
    expect(((await (await v1(a, homeOnly, 'GET', '/memories')).json()) as { memories: Array<{ name: string }> }).memories.map((m) => m.name)).toEqual(['home']);
    expect(await tool(await mcp(b, homeOnly), 'memory__read', { path: '@work/plans/q1.md' })).toMatchObject({ isError: true, error: { code: 'forbidden' } });
    const clone = await g.run('', ['clone', '-q', basicUrl(b.url, 'work', homeOnly), 'refused-work']);
    expect(clone.status).not.toBe(0);
    expect(clone.stderr).toMatch(/FORBIDDEN: memory "work" is not granted/);
  });
});

describe('scopes and the folder a token is limited to', () => {
  test('read-only: reads pass; writes are 403 over /v1, forbidden over MCP, and git refuses the push', async () => {
    const ro = (await mint(a, alice, { name: 'reader', scopes: ['memory:read'], memories: ['work'] })).token;
    expect(await ls(a, ro)).toBe(200);
    const w = await put(a, ro, 'work', 'x.md', '# x');
    expect([w.status, await errorCode(w)]).toEqual([403, 'FORBIDDEN']);
    expect(await tool(await mcp(a, ro), 'memory__write', { path: '@work/x.md', body: '# x' })).toMatchObject({ isError: true, error: { code: 'forbidden' } });
    await g.ok('', ['clone', '-q', basicUrl(a.url, 'work', ro), 'ro']);
    g.write('ro', 'x.md', '# x\n');
    await g.ok('ro', ['add', '-A']);
    await g.ok('ro', ['commit', '-qm', 'x']);
    const push = await g.run('ro', ['push', '-q']);
    expect(push.status).not.toBe(0);
    expect(push.stderr).toMatch(/FORBIDDEN: This token lacks the memory:write scope/);
  });

  test('a folder: notes inside it only, over /v1 (reads, writes, lists, search, move, history, diff, exports)', async () => {
    const scoped = (await mint(a, alice, { name: 'plans bot', scopes: ['memory:read', 'memory:write'], memories: ['work'], pathPrefix: 'plans/' })).token;
    const status = async (method: string, path: string, payload?: unknown) => (await v1(a, scoped, method, `/memories/work${path}`, payload)).status;
    expect(await status('GET', '/notes/plans/q1.md')).toBe(200);
    expect(await status('GET', '/notes/journal.md')).toBe(403);
    expect((await put(a, scoped, 'work', 'plans/new.md', '# New plan')).status).toBe(200);
    expect((await put(a, scoped, 'work', 'outside.md', '# no')).status).toBe(403);
    expect(await status('PATCH', '/notes/journal.md', { mode: 'append', body: 'x' })).toBe(403);
    expect(await status('DELETE', '/notes/journal.md')).toBe(403);
    const listing = (await (await v1(a, scoped, 'GET', '/memories/work/notes?depth=all')).json()) as { folder: string; entries: Array<{ path: string }> };
    expect(listing.folder).toBe('plans');
    expect(listing.entries.map((e) => e.path).sort()).toEqual(['plans/new.md', 'plans/q1.md', 'plans/team', 'plans/team/people.md']);
    expect(await status('GET', '/notes?folder=journal')).toBe(403);
    const found = (await (await v1(a, scoped, 'GET', '/memories/work/search?q=alpha')).json()) as { results: Array<{ path: string }> };
    expect(found.results.map((r) => r.path).sort()).toEqual(['plans/q1.md', 'plans/team/people.md']);
    expect(await status('POST', '/move', { from: 'plans/new.md', to: 'elsewhere/new.md' })).toBe(403);
    expect(await status('POST', '/move', { from: 'plans/new.md', to: 'plans/team/new.md', updateLinks: true })).toBe(403);
    expect(await status('POST', '/move', { from: 'plans/new.md', to: 'plans/team/new.md' })).toBe(200);
    expect(await status('GET', '/history')).toBe(403);
    const history = (await (await v1(a, scoped, 'GET', '/memories/work/history?path=plans/team/new.md')).json()) as {
      commits: Array<{ changes: Array<{ path: string }> }>;
    };
    expect(history.commits.flatMap((c) => c.changes.map((ch) => ch.path)).every((p) => p.startsWith('plans/'))).toBe(true);
    expect(await status('GET', '/diff?path=plans/team/new.md')).toBe(200);
    expect(await status('GET', '/diff')).toBe(403);
    for (const path of ['/export', '/restore']) expect(await status(path === '/export' ? 'GET' : 'POST', path)).toBe(403);
    expect((await v1(a, scoped, 'GET', '/memories/export')).status).toBe(403);
    expect(await status('DELETE', '')).toBe(403);
  });

  test('a folder over MCP (lists and searches it by default) and git (refused: a clone carries every note)', async () => {
    const scoped = (await mint(a, alice, { name: 'mcp plans', scopes: ['memory:read', 'memory:write'], memories: ['work'], pathPrefix: 'plans' })).token;
    const c = await mcp(b, scoped);
    expect(await tool(c, 'memory__read', { path: '@work/plans/q1.md' })).toMatchObject({ title: 'Q1' });
    expect(await tool(c, 'memory__read', { path: '@work/journal.md' })).toMatchObject({ isError: true, error: { code: 'forbidden' } });
    expect(await tool(c, 'memory__write', { path: '@work/journal.md', body: 'x' })).toMatchObject({ isError: true, error: { code: 'forbidden' } });
    const listed = (await tool(c, 'memory__list', { folder: '@work', depth: 2 })) as { entries: Array<{ path: string }> };
    expect(listed.entries.map((e) => e.path).every((p) => p.startsWith('@work/plans/'))).toBe(true);
    const found = (await tool(c, 'memory__search', { query: 'alpha', folder: '@work' })) as { results: Array<{ path: string }> };
    expect(found.results.map((r) => r.path).sort()).toEqual(['@work/plans/q1.md', '@work/plans/team/people.md']);
    const clone = await g.run('', ['clone', '-q', basicUrl(b.url, 'work', scoped), 'scoped']);
    expect(clone.status).not.toBe(0);
    expect(clone.stderr).toMatch(/FORBIDDEN: a token limited to a folder \(plans\/\) cannot use git/);
  });

  test('the catalog’s favorites refuse a personal token (401): it is a memory credential', async () => {
    const pat = (await mint(a, alice, { name: 'x', scopes: ['memory:read'] })).token;
    const res = await a.fetch('/api/favorites', { headers: { authorization: `Bearer ${pat}` } });
    expect(res.status).toBe(401);
  });
});

describe('a token in a note is refused as a credential', () => {
  test('over /v1, MCP and a git push: nothing lands', async () => {
    const pat = await mint(a, alice, { name: 'leaky', scopes: ['memory:read', 'memory:write'], memories: ['work'] });
    const res = await put(a, alice, 'work', 'setup.md', `# Setup\n\nexport MEMORY_TOKEN=${pat.token}\n`);
    expect([res.status, (await body(res, ErrorSchema)).error]).toEqual([
      400,
      { code: 'BAD_REQUEST', message: expect.stringMatching(/line 3 looks like a personal access token of this service \(personal-access-token\)/) },
    ]);
    expect(await tool(await mcp(a, pat.token), 'memory__write', { path: '@work/setup.md', body: `token: ${pat.token}` })).toMatchObject({
      isError: true,
      error: { code: 'refused_content' },
    });
    await g.ok('', ['clone', '-q', basicUrl(a.url, 'work', pat.token), 'leaky']);
    const head = (await g.ok('leaky', ['rev-parse', 'HEAD'])).trim();
    g.write('leaky', 'notes/creds.md', `# Creds\n\n${pat.token}\n`);
    await g.ok('leaky', ['add', '-A']);
    await g.ok('leaky', ['commit', '-qm', 'oops']);
    const push = await g.run('leaky', ['push']);
    expect(push.status).not.toBe(0);
    expect(push.stderr).toMatch(/refused: notes\/creds\.md: .*personal access token/);
    expect(((await (await v1(a, alice, 'GET', '/memories/work')).json()) as { rev: string }).rev).toBe(head);
  });
});

describe('revocation across instances', () => {
  test('refused at once by the instance that revoked it, over /v1, /mcp and git; by the other within AUTH_TOKEN_CACHE_SECONDS (30)', async () => {
    const pat = await mint(a, alice, { name: 'to revoke', scopes: ['memory:read'], memories: ['work'] });
    const gitLs = async (h: MemoryStack) => (await g.run('', ['ls-remote', basicUrl(h.url, 'work', pat.token)])).status;
    // Both instances have verified (and cached) it, over every door.
    for (const h of [a, b]) {
      expect([await ls(h, pat.token), await mcpStatus(h, pat.token), await gitLs(h)]).toEqual([200, 200, 0]);
    }
    expect((await v1(a, alice, 'DELETE', `/tokens/${pat.id}`)).status).toBe(200);
    expect([await ls(a, pat.token), await mcpStatus(a, pat.token), await gitLs(a)]).toEqual([401, 401, 128]);
    const refused = await v1(a, pat.token, 'GET', '/memories');
    expect((await body(refused, ErrorSchema)).error.message).toMatch(/it was revoked/);
    // B trusts what it verified for 30 seconds at most, then asks the table.
    now += 29_000;
    expect(await ls(b, pat.token)).toBe(200);
    now += 1_000;
    expect([await ls(b, pat.token), await mcpStatus(b, pat.token), await gitLs(b)]).toEqual([401, 401, 128]);
  });
});

describe('a month of git with a personal token, signed in once', () => {
  test('clone, pull and push through git’s credential helper (not in the URL) on both instances for 31 days; refused after its 90 days', async () => {
    const pat = await mint(a, alice, { name: 'editor', scopes: ['memory:read', 'memory:write'], memories: ['work'] });
    expect(Date.parse(pat.expires) - Date.parse(pat.created)).toBe(90 * DAY);
    const start = now;
    await g.ok('', ['config', '--global', 'credential.helper', 'store']);
    for (const h of [a, b]) {
      const host = new URL(h.url).host;
      await g.ok('', ['credential', 'approve'], {}, `protocol=http\nhost=${host}\nusername=alice\npassword=${pat.token}\n\n`);
    }
    const repoA = `${a.url}/v1/memories/work.git`;
    const repoB = `${b.url}/v1/memories/work.git`;
    await g.ok('', ['clone', '-q', repoA, 'month']);
    expect(await g.ok('month', ['config', 'remote.origin.url'])).not.toContain('mcpm_pat_');
    const agent = () => a.token('alice');
    const lastUsed = async () => (await body(await v1(a, agent(), 'GET', '/tokens'), TokenListSchema)).tokens.find((t) => t.id === pat.id)?.lastUsed;

    for (const day of [1, 3, 10, 17, 24, 31]) {
      now = start + day * DAY;
      expect((await put(a, agent(), 'work', `log/day-${day}.md`, `# Day ${day}\n\nwritten by an agent`)).status).toBe(200);
      const via = day % 2 ? repoB : repoA;
      await g.ok('month', ['pull', '-q', via, 'main']);
      g.write('month', `mine/day-${day}.md`, `# Mine ${day}\n`);
      await g.ok('month', ['add', '-A']);
      await g.ok('month', ['commit', '-qm', `Day ${day} from my editor`]);
      await g.ok('month', ['push', '-q', via, 'HEAD:main']);
      await g.fsck('month');
      expect(await lastUsed()).toBe(new Date(Math.floor(now / 1000) * 1000).toISOString());
    }
    expect((await g.ok('month', ['log', '--format=%s'])).split('\n')).toContain('Day 31 from my editor');

    now = start + 91 * DAY;
    const expired = await g.run('month', ['pull', '-q', repoA, 'main']);
    expect(expired.status).not.toBe(0);
    expect(expired.stderr).toMatch(/Authentication failed/);
    expect((await body(await v1(a, agent(), 'GET', '/tokens'), TokenListSchema)).tokens.map((t) => t.id)).not.toContain(pat.id);
  }, 240_000);
});
