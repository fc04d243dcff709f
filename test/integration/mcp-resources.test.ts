import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Resource } from '@modelcontextprotocol/sdk/types.js';
import { protocolError } from '../support/mcp-errors';
import { ok, startMcpHarness, type McpHarness } from './mcp-harness';

/**
 * Notes as MCP resources, through the SDK's own client over real HTTP on the local stack: the
 * capability (no subscriptions, no list changes: stateless), the template, `resources/list` paged
 * across every memory the token may see, `resources/read` with the rev in `_meta`, the errors the
 * specification gives (-32002 for a resource that is not there, whoever's it is), and the scope.
 */
let h: McpHarness;
let alice: Client;

const NOTES = 105;

beforeAll(async () => {
  h = await startMcpHarness({ MCP_RATE_PER_MINUTE: '100000' });
  alice = await h.connect(h.token({ sub: 'alice' }));
  for (let i = 0; i < NOTES; i++) await ok(alice, 'memory__write', { path: `notes/n-${String(i).padStart(3, '0')}.md`, body: `# Note ${i}\n\nBody ${i}.` });
  await ok(alice, 'memory__write', { path: '@work/plans/june plan.md', body: '# June\n\nShip it.', frontmatter: { tags: ['plan'] } });
  await ok(alice, 'memory__write', { path: '@work/gone.md', body: '# Gone' });
  await ok(alice, 'memory__delete', { path: '@work/gone.md' });
  await ok(alice, 'memory__write', { path: '@empty/x.md', body: 'x' });
  await ok(alice, 'memory__delete', { path: '@empty/x.md' });
}, 300000);
afterAll(() => h?.close());

async function all(c: Client): Promise<{ resources: Resource[]; pages: number }> {
  const resources: Resource[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const page = await c.listResources(cursor === undefined ? {} : { cursor });
    resources.push(...page.resources);
    cursor = page.nextCursor;
    pages++;
  } while (cursor !== undefined && pages < 20);
  return { resources, pages };
}

describe('the resources capability', () => {
  it('is declared without subscriptions or list changes, and offers one template', async () => {
    expect(alice.getServerCapabilities()?.resources).toEqual({ subscribe: false, listChanged: false });
    const { resourceTemplates } = await alice.listResourceTemplates();
    expect(resourceTemplates).toEqual([expect.objectContaining({ uriTemplate: 'memory://{memory}/{path}', name: 'note', mimeType: 'text/markdown' })]);
  });
});

describe('resources/list', () => {
  it('pages through every note of every memory the token may see, memory by memory', async () => {
    const first = await alice.listResources();
    expect(first.resources).toHaveLength(100);
    expect(first.nextCursor).toBeDefined();
    const { resources, pages } = await all(alice);
    expect(pages).toBe(3);
    expect(resources).toHaveLength(NOTES + 1);
    expect(new Set(resources.map((r) => r.uri)).size).toBe(NOTES + 1);
    expect(resources[0]).toEqual({
      uri: 'memory://default/notes/n-000.md',
      name: 'notes/n-000.md',
      title: 'Note 0',
      mimeType: 'text/markdown',
      size: 17,
      annotations: { lastModified: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) },
    });
    // The vault's note: its URI encodes the space, its name is how the tools address it; the deleted note is not listed.
    expect(resources[NOTES]).toMatchObject({ uri: 'memory://work/plans/june%20plan.md', name: '@work/plans/june plan.md', title: 'June' });
  });

  it('lists only the memories a grant names, and nothing of another account', async () => {
    const narrow = await h.connect(h.token({ sub: 'alice', memories: ['work'] }));
    expect((await all(narrow)).resources.map((r) => r.uri)).toEqual(['memory://work/plans/june%20plan.md']);
    const bob = await h.connect(h.token({ sub: 'bob' }));
    expect(await bob.listResources()).toEqual({ resources: [] });
  });

  it('refuses a cursor it did not give', async () => {
    expect(await protocolError(alice.listResources({ cursor: 'not-a-cursor' }))).toMatchObject({ code: -32602 });
    const forged = Buffer.from(JSON.stringify({ m: 'default', c: 'forged' })).toString('base64url');
    expect(await protocolError(alice.listResources({ cursor: forged }))).toMatchObject({ code: -32602 });
  });
});

describe('resources/read', () => {
  it('returns the note as stored, text/markdown, with its rev in _meta; / may be percent-encoded', async () => {
    const { rev } = await ok<{ rev: string }>(alice, 'memory__read', { path: '@work/plans/june plan.md' });
    for (const uri of ['memory://work/plans/june%20plan.md', 'memory://work/plans%2Fjune%20plan.md']) {
      const { contents } = await alice.readResource({ uri });
      expect(contents).toEqual([{ uri, mimeType: 'text/markdown', text: '---\ntags:\n  - plan\n---\n# June\n\nShip it.', _meta: { rev } }]);
    }
  });

  it.each([
    ['memory://work/gone.md', 'a deleted note'],
    ['memory://work/nothing.md', 'a note that never was'],
    ['memory://nowhere/a.md', 'a memory that does not exist'],
    ['memory://Work/a.md', 'an impossible memory name'],
    ['memory://work/../default/notes/n-000.md', 'a path no note can have'],
  ])('%s (%s) is -32002, resource not found', async (uri) => {
    expect(await protocolError(alice.readResource({ uri }))).toEqual({ code: -32002, message: `MCP error -32002: Resource not found: ${uri}` });
  });

  it('is -32002 for the notes of another account and outside a grant alike; -32602 for what is no note URI', async () => {
    const bob = await h.connect(h.token({ sub: 'bob' }));
    expect((await protocolError(bob.readResource({ uri: 'memory://default/notes/n-000.md' }))).code).toBe(-32002);
    const narrow = await h.connect(h.token({ sub: 'alice', memories: ['work'] }));
    expect((await protocolError(narrow.readResource({ uri: 'memory://default/notes/n-000.md' }))).code).toBe(-32002);
    for (const uri of ['file:///etc/passwd', 'memory://work', 'memory://work/', 'memory://work/a.md%zz']) {
      expect((await protocolError(alice.readResource({ uri }))).code).toBe(-32602);
    }
  });
});

describe('scopes', () => {
  it('need memory:read for every resource method', async () => {
    const writer = await h.connect(h.token({ sub: 'alice', scope: 'memory:write' }));
    for (const p of [writer.listResources(), writer.listResourceTemplates(), writer.readResource({ uri: 'memory://default/notes/n-000.md' })]) {
      expect(await protocolError(p)).toEqual({
        code: -32600,
        message: 'MCP error -32600: resources need the memory:read scope; this token has memory:write',
      });
    }
  });
});
