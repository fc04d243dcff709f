import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { MemoryService } from '../../lambdas/memory';
import { unavailable } from '../../lambdas/memory/errors';
import type { McpConfig } from '../../lambdas/mcp/config';
import { noteUri, parseNoteUri } from '../../lambdas/mcp/resources';
import { createMcpServer } from '../../lambdas/mcp/server';
import { protocolError } from '../support/mcp-errors';

/**
 * The resources methods' failures in protocol terms, on a server whose memory core fails: a storage
 * outage is a retryable internal error, a bug is an internal error that describes nothing; and
 * note URIs both ways. The behaviour over HTTP, with the SDK's client: test/integration/mcp-resources.test.ts.
 */
async function clientOver(service: Partial<MemoryService>): Promise<Client> {
  const server = createMcpServer({
    service: service as MemoryService,
    principal: { sub: 'u', scopes: ['memory:read'] } as never,
    caller: { account: 'u' },
    config: {} as McpConfig,
    requestId: 'test',
  });
  const [a, b] = InMemoryTransport.createLinkedPair();
  await server.connect(a);
  const client = new Client({ name: 'unit', version: '1.0.0' });
  await client.connect(b);
  return client;
}

it('answers a storage outage as a retryable internal error, and a bug without describing it', async () => {
  const outage = await clientOver({ listMemories: () => Promise.reject(unavailable(new Error('S3 down'))) });
  expect(await protocolError(outage.listResources())).toEqual({ code: -32603, message: 'MCP error -32603: memory storage is unavailable; retry shortly' });
  const bug = await clientOver({
    listMemories: () => Promise.reject(new TypeError('secret internals')),
    readNote: () => Promise.reject(new TypeError('secret internals')),
  });
  expect(await protocolError(bug.listResources())).toEqual({ code: -32603, message: 'MCP error -32603: internal error; retry later' });
  expect(await protocolError(bug.readResource({ uri: 'memory://work/a.md' }))).toEqual({
    code: -32603,
    message: 'MCP error -32603: internal error; retry later',
  });
});

it('writes and reads note URIs: segments percent-encoded, a / encoded or not', () => {
  expect(noteUri('work', 'plans/june plan.md')).toBe('memory://work/plans/june%20plan.md');
  expect(parseNoteUri('memory://work/plans/june%20plan.md')).toEqual({ memory: 'work', path: 'plans/june plan.md' });
  expect(parseNoteUri('memory://work/plans%2Fjune.md')).toEqual({ memory: 'work', path: 'plans/june.md' });
  for (const bad of ['memory://work', 'memory://work/', 'file:///a.md', 'memory://work/a.md?x=1', 'memory://work/%zz.md'])
    expect(parseNoteUri(bad)).toBeUndefined();
});
