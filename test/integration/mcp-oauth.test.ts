import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { LocalStack } from '../../bin/local-stack/stack';
import { startScratchStack, type ScratchStack } from '../support/scratch-stack';
import { TestProvider } from '../support/oauth-browser';

/**
 * What a real MCP client does on first contact, on the local stack: connect to /mcp with no token,
 * get the 401 challenge, follow `resource_metadata` to the front, register, sign in and consent
 * (PKCE), finish the auth, reconnect and use the tools; the same token then works on /v1 and sees
 * the note the tool wrote (one audience per deployment).
 */
let scratch: ScratchStack | undefined;
let stack: LocalStack;

beforeAll(async () => {
  scratch = await startScratchStack('mcp-oauth');
  stack = scratch.stack;
}, 120_000);

afterAll(async () => {
  await scratch?.close();
});

// The client uses the public MCP URL (PUBLIC_URL/mcp), the resource the metadata names: the SDK
// refuses a protected resource whose URL differs from the one it connected to.
async function connect(provider: TestProvider): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const transport = new StreamableHTTPClientTransport(new URL(stack.auth.audience), { authProvider: provider });
  const client = new Client({ name: 'oauth-e2e', version: '1.0.0' });
  await client.connect(transport);
  return { client, transport };
}

it('signs an MCP client in from the 401 challenge and serves its tools; the token also works on /v1', async () => {
  const provider = new TestProvider({ username: 'carol' });

  // No token: the transport meets the 401, runs discovery + registration + PKCE up to the redirect.
  await expect(connect(provider)).rejects.toBeInstanceOf(UnauthorizedError);
  expect(provider.info?.client_id).toMatch(/^mcpc_/);
  const code = provider.callback?.searchParams.get('code');
  expect(code).toMatch(/^mcpac_/);

  // The app's redirect handler hands the code back; the transport exchanges it (PKCE verifier).
  const pending = new StreamableHTTPClientTransport(new URL(stack.auth.audience), { authProvider: provider });
  await pending.finishAuth(code as string);
  expect(provider.saved?.access_token).toMatch(/^mcpat_/);

  const { client } = await connect(provider);
  try {
    const tools = await client.listTools();
    expect(tools.tools.map((t) => t.name).sort()).toEqual([
      'memory__delete',
      'memory__edit',
      'memory__list',
      'memory__read',
      'memory__search',
      'memory__write',
    ]);
    const wrote = await client.callTool({ name: 'memory__write', arguments: { path: 'inbox/hello.md', body: '# Hello\nfrom MCP #greeting' } });
    expect(wrote.isError).toBeFalsy();
    expect(wrote.structuredContent).toMatchObject({ path: 'inbox/hello.md' });
  } finally {
    await client.close();
  }

  // The same opaque token on the REST API: the default memory holds the note.
  const res = await fetch(`${stack.url}/v1/memories/default/notes/inbox%2Fhello.md`, {
    headers: { authorization: `Bearer ${provider.saved?.access_token}` },
  });
  expect(res.status).toBe(200);
  expect(await res.json()).toMatchObject({ path: 'inbox/hello.md', title: 'Hello', tags: ['greeting'] });
});
