import { randomBytes } from 'node:crypto';
import { Ajv } from 'ajv';
import { AuthError, type Principal } from '../../lambdas/identity/principal';
import type { TokenVerifier } from '../../lambdas/identity/verifier';
import { InMemoryBlobStore, InMemoryRevLock } from '../../lambdas/memory/adapters/in-memory';
import { MemoryService } from '../../lambdas/memory/service';
import { loadMcpConfig } from '../../lambdas/mcp/config';
import { mergeSettings } from '../../lambdas/mcp/wiring';
import { createMcpHandler, handleMcpRequest, mcpRatePolicy, type McpDeps } from '../../lambdas/mcp/api';
import { CursorCodec } from '../../lambdas/shared/cursor';
import { InMemoryIdempotencyStore } from '../../lambdas/shared/idempotency/store';
import type { HttpEvent, LambdaContext } from '../../lambdas/shared/http/types';
import { lazyValidator } from '../../lambdas/shared/mcp/server';
import type { RateDecision, RateLimiter } from '../../lambdas/shared/rate-limit/rate-limiter';

/**
 * The MCP handler with fakes around it, for what the local stack cannot stage: a verifier whose
 * backend is down, a failing initialisation, a failing limiter, base64 bodies (function URLs send
 * JSON as text, but a client may send other content types) and oversized bodies.
 */
const principal: Principal = { sub: 'alice', scopes: ['memory:read', 'memory:write'], kind: 'jwt', expiresAt: Math.floor(Date.now() / 1000) + 600 };

const verifier = (impl: () => Promise<Principal>): TokenVerifier => ({ verify: impl });
const allowAll: RateLimiter = {
  consume: async (): Promise<RateDecision> => ({ allowed: true, limit: 120, remaining: 119, resetSeconds: 0, retryAfterSeconds: 0 }),
};

function deps(overrides: Partial<McpDeps> = {}): McpDeps {
  // Keyed writes are recorded by the rev lock with their commit: it is given the same store.
  const idempotency = overrides.idempotency instanceof InMemoryIdempotencyStore ? overrides.idempotency : undefined;
  return {
    config: loadMcpConfig({}),
    audience: 'https://mcp.example.com/mcp',
    verifier: verifier(async () => principal),
    memory: new MemoryService({
      blobs: new InMemoryBlobStore(),
      lock: new InMemoryRevLock(idempotency),
      cursors: new CursorCodec({ current: { id: 1, secret: randomBytes(32) } }),
    }),
    limiter: allowAll,
    ...overrides,
  };
}

function event(body: unknown, o: { method?: string; headers?: Record<string, string>; base64?: boolean } = {}): HttpEvent {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: '/mcp',
    rawQueryString: '',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: 'Bearer t', ...o.headers },
    requestContext: {
      accountId: 'x',
      apiId: 'x',
      domainName: 'abc.lambda-url.us-east-1.on.aws',
      domainPrefix: 'abc',
      http: { method: o.method ?? 'POST', path: '/mcp', protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'test' },
      requestId: 'r',
      routeKey: '$default',
      stage: '$default',
      time: '',
      timeEpoch: 0,
    },
    body: o.base64 ? Buffer.from(text).toString('base64') : text,
    isBase64Encoded: o.base64 === true,
  };
}

const call = (name: string, args: unknown) => ({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name, arguments: args } });

it('answers 503 with Retry-After when the token cannot be verified (JWKS or token table down)', async () => {
  const res = await handleMcpRequest(
    event(call('memory__list', {})),
    deps({ verifier: verifier(async () => Promise.reject(new AuthError('jwks-unavailable', 'down'))) }),
    'r',
  );
  expect(res.statusCode).toBe(503);
  expect(res.headers['retry-after']).toBe('1');
  expect(JSON.parse(res.body as string)).toMatchObject({ error: { data: { code: 'unavailable' } } });
});

it('answers 503 with Retry-After while the function cannot initialise, and tries again on the next request', async () => {
  let attempts = 0;
  // What the Lambda runtime passes (the function URL's event has no request id of its own here).
  const lambdaContext = { awsRequestId: 'aws-1' } as LambdaContext;
  const handler = createMcpHandler(async () => {
    attempts++;
    if (attempts === 1) throw new Error('Secrets Manager throttled');
    return deps();
  });
  const first = await handler(event(call('memory__list', {})), lambdaContext);
  expect(first.statusCode).toBe(503);
  expect(first.headers['retry-after']).toBe('1');
  expect((await handler(event(call('memory__list', {})), lambdaContext)).statusCode).toBe(200);
});

it('serves the request when the rate limiter itself fails (the gate opens, the failure is logged)', async () => {
  const res = await handleMcpRequest(event(call('memory__list', {})), deps({ limiter: { consume: async () => Promise.reject(new Error('throttled')) } }), 'r');
  expect(res.statusCode).toBe(200);
  expect(JSON.parse(res.body as string).result.structuredContent).toEqual({ folder: '', entries: [], truncated: false, files: 0 });
});

it('charges one call per JSON-RPC request of a batch (notifications are free), so a batch cannot dodge the limit', async () => {
  const keys: string[] = [];
  const limiter: RateLimiter = {
    consume: async (key, policy, cost) => {
      keys.push(`${key} ${policy.name} ${policy.burst} ×${cost}`);
      return allowAll.consume(key, policy);
    },
  };
  const batch = [call('memory__list', {}), { ...call('memory__list', {}), id: 8 }, { jsonrpc: '2.0', method: 'notifications/initialized' }];
  await handleMcpRequest(event(batch, { headers: { 'mcp-protocol-version': '2025-03-26' } }), deps({ limiter }), 'r');
  // One take of two tokens: all or nothing, so a refused batch spends none (the limiter's tests show it).
  expect(keys).toEqual(['user:alice mcp 120 ×2']);
  expect(mcpRatePolicy(loadMcpConfig({}))).toEqual({ name: 'mcp', ratePerSecond: 2, burst: 120 });
});

it('reads a base64 body (function URLs flag binary content types)', async () => {
  const res = await handleMcpRequest(event(call('memory__write', { path: 'a.md', body: 'x' }), { base64: true }), deps(), 'r');
  expect(JSON.parse(res.body as string).result.structuredContent).toEqual({
    path: 'a.md',
    updated: expect.any(String),
    rev: expect.stringMatching(/^[0-9a-f]{40}$/),
  });
});

it('answers 413 to a body over the configured size, and a JSON-RPC parse error to a body that is not JSON', async () => {
  const small = { ...deps(), config: { ...loadMcpConfig({}), maxBodyBytes: 100 } };
  expect((await handleMcpRequest(event(call('memory__write', { path: 'a.md', body: 'x'.repeat(200) })), small, 'r')).statusCode).toBe(413);
  const res = await handleMcpRequest(event('{not json'), deps(), 'r');
  expect(res.statusCode).toBe(400);
  expect(JSON.parse(res.body as string)).toMatchObject({ error: { code: -32700 } });
});

it('turns an unexpected failure inside a tool into an unavailable tool error without leaking it', async () => {
  const broken = deps();
  broken.memory.listNotes = async () => {
    throw new TypeError('secret internals');
  };
  const res = await handleMcpRequest(event(call('memory__list', { folder: 'a' })), broken, 'r');
  const result = JSON.parse(res.body as string).result;
  expect(result.isError).toBe(true);
  expect(result.structuredContent).toEqual({ error: { code: 'unavailable', message: 'internal error; retry later' } });
});

it('refuses configuration that is not an origin', () => {
  expect(() => loadMcpConfig({ MCP_ALLOWED_ORIGINS: 'https://a.example/path' })).toThrow(/not an origin/);
  expect(() => loadMcpConfig({ MCP_ALLOWED_ORIGINS: '*' })).toThrow(/not an origin/);
  expect(loadMcpConfig({ MCP_ALLOWED_ORIGINS: 'HTTPS://App.Example:443, http://localhost:5173' }).allowedOrigins).toEqual([
    'https://app.example',
    'http://localhost:5173',
  ]);
  expect(() => loadMcpConfig({ MCP_RATE_PER_MINUTE: '0' })).toThrow(/positive integer/);
});

it('merges the settings parameter (CDK: verifier settings that depend on the distribution) over the environment', () => {
  const env = mergeSettings({ AUTH_MODE: 'local', MEMORY_TABLE: 't' }, JSON.stringify({ AUTH_MODE: 'cognito', AUTH_AUDIENCE: 'https://d.example/mcp' }));
  expect(env).toEqual({ AUTH_MODE: 'cognito', MEMORY_TABLE: 't', AUTH_AUDIENCE: 'https://d.example/mcp' });
  expect(() => mergeSettings({}, '{"A":1}')).toThrow(/JSON object of strings/);
  expect(() => mergeSettings({}, '[]')).toThrow(/JSON object of strings/);
  expect(() => mergeSettings({}, 'nope')).toThrow(/not JSON/);
});

describe('tools/call arguments that are not an object', () => {
  /** The JSON-RPC response for request `id` in a POST's answer (one message or a batch). */
  async function answer(
    body: unknown,
    o: { deps?: McpDeps; id?: number } = {},
  ): Promise<{ result?: { isError?: boolean; structuredContent?: Record<string, unknown> }; error?: { code: number; message: string } }> {
    const res = await handleMcpRequest(event(body), o.deps ?? deps(), 'r');
    expect(res.statusCode).toBe(200);
    const parsed = JSON.parse(res.body as string) as unknown;
    const messages = (Array.isArray(parsed) ? parsed : [parsed]) as Array<{ id: number }>;
    const found = messages.find((m) => m.id === (o.id ?? 7));
    expect(found).toBeDefined();
    return found as never;
  }

  it.each<[string, unknown, string]>([
    ['null', null, 'null'],
    ['a string', 'folder=notes', 'a string'],
    ['an array', ['notes'], 'an array'],
    ['a number', 5, 'a number'],
  ])('answers arguments that are %s with the invalid_argument tool error, not a JSON-RPC error', async (_what, args, kind) => {
    for (const tool of ['memory__list', 'memory__search', 'memory__write']) {
      const msg = await answer(call(tool, args));
      expect(msg.error).toBeUndefined();
      expect(msg.result?.isError).toBe(true);
      expect(msg.result?.structuredContent).toEqual({
        error: { code: 'invalid_argument', message: expect.stringContaining(`arguments must be an object of named arguments`) },
      });
      expect((msg.result?.structuredContent as { error: { message: string } } | undefined)?.error.message).toMatch(new RegExp(`not ${kind}$`));
    }
  });

  it('keeps a missing arguments as no arguments: list lists, search says query is required', async () => {
    const noArgs = (name: string) => ({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name } });
    expect((await answer(noArgs('memory__list'))).result).toMatchObject({ structuredContent: { folder: '', entries: [], truncated: false, files: 0 } });
    expect((await answer(noArgs('memory__search'))).result).toMatchObject({
      isError: true,
      structuredContent: { error: { code: 'invalid_argument', message: 'query is required (string)' } },
    });
  });

  it('answers each call of a batch on its own: a bad one does not spoil a good one', async () => {
    const batch = [call('memory__list', null), { ...call('memory__list', {}), id: 8 }];
    const body = { headers: { 'mcp-protocol-version': '2025-03-26' } };
    const res = await handleMcpRequest(event(batch, body), deps(), 'r');
    const messages = JSON.parse(res.body as string) as Array<{ id: number; result: { isError?: boolean; structuredContent: Record<string, unknown> } }>;
    expect(messages.find((m) => m.id === 7)?.result).toMatchObject({ isError: true, structuredContent: { error: { code: 'invalid_argument' } } });
    expect(messages.find((m) => m.id === 8)?.result).toMatchObject({ structuredContent: { folder: '', entries: [] } });
  });

  it('checks the scope first, and keeps an unknown tool a protocol error whatever its arguments', async () => {
    const readOnly = deps({ verifier: verifier(async () => ({ ...principal, scopes: ['memory:read'] })) });
    expect((await answer(call('memory__write', 'x'), { deps: readOnly })).result).toMatchObject({
      isError: true,
      structuredContent: { error: { code: 'forbidden' } },
    });
    const unknown = await answer(call('memory__nope', null));
    expect(unknown.error).toMatchObject({ code: -32602, message: expect.stringMatching(/unknown tool "memory__nope"/) });
  });
});

describe('the 401 challenge (RFC 6750 §3.1)', () => {
  // The verifier's own parsing: no header is `missing`, any header that is not `Bearer <token>` is `malformed`.
  const rejecting = verifier(async () => Promise.reject(new AuthError('malformed', 'bad')));
  const challenge = async (authorization: string | undefined, v: TokenVerifier) => {
    const e = event(call('memory__list', {}));
    if (authorization === undefined) delete e.headers.authorization;
    else e.headers.authorization = authorization;
    const res = await handleMcpRequest(e, deps({ verifier: v }), 'r');
    expect(res.statusCode).toBe(401);
    return res.headers['www-authenticate'];
  };
  const base = 'Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp", scope="memory:read memory:write"';

  it('has no error code when no bearer token was presented: no Authorization, or another scheme', async () => {
    expect(
      await challenge(
        undefined,
        verifier(async () => Promise.reject(new AuthError('missing', 'none'))),
      ),
    ).toBe(base);
    expect(await challenge('Basic dXNlcjpwYXNz', rejecting)).toBe(base);
    expect(await challenge('Token abc', rejecting)).toBe(base);
  });

  it('says error="invalid_token" when a bearer token was presented but is bad', async () => {
    expect(
      await challenge(
        'Bearer not-valid',
        verifier(async () => Promise.reject(new AuthError('bad-signature', 'forged'))),
      ),
    ).toBe(`${base}, error="invalid_token"`);
    expect(await challenge('bearer a b', rejecting)).toBe(`${base}, error="invalid_token"`);
  });
});

describe('front matter keys over MCP', () => {
  it('keeps a constructor key like any other (zod record() refused it)', async () => {
    const d = deps();
    const res = await handleMcpRequest(event(call('memory__write', { path: 'c.md', body: 'x', frontmatter: { constructor: 'c' } })), d, 'r');
    expect(JSON.parse(res.body as string)).toMatchObject({ result: { structuredContent: { path: 'c.md' } } });
    const read = await handleMcpRequest(event(call('memory__read', { path: 'c.md' })), d, 'r');
    expect(JSON.parse(read.body as string)).toMatchObject({ result: { structuredContent: { frontmatter: { constructor: 'c' } } } });
  });
});

describe('idempotencyKey on the write tools', () => {
  it('runs a keyed call once: a retry returns the first result, other arguments under the key are refused', async () => {
    const d = deps({ idempotency: new InMemoryIdempotencyStore() });
    const send = async (args: unknown) => JSON.parse((await handleMcpRequest(event(call('memory__edit', args)), d, 'r')).body as string);
    await handleMcpRequest(event(call('memory__write', { path: 'log.md', body: 'start' })), d, 'r');
    const first = await send({ path: 'log.md', mode: 'append', body: 'once', idempotencyKey: 'k-1' });
    const again = await send({ path: 'log.md', mode: 'append', body: 'once', idempotencyKey: 'k-1' });
    expect(again.result.structuredContent).toEqual(first.result.structuredContent);
    const read = await handleMcpRequest(event(call('memory__read', { path: 'log.md' })), d, 'r');
    expect(JSON.parse(read.body as string).result.structuredContent.body).toBe('start\nonce');
    const other = await send({ path: 'log.md', mode: 'append', body: 'twice', idempotencyKey: 'k-1' });
    expect(other.result).toMatchObject({
      isError: true,
      structuredContent: { error: { code: 'invalid_argument', message: expect.stringContaining('idempotencyKey') } },
    });
    const unkeyed = await send({ path: 'log.md', mode: 'append', body: 'once' });
    expect(unkeyed.result.isError).toBeUndefined();
  });
});

describe('a tool name smuggled through __proto__', () => {
  it('refuses a message with a __proto__ key (params or arguments) whole, so nothing runs that the log did not see', async () => {
    const d = deps();
    const smuggled = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"__proto__":{"name":"memory__write"},"arguments":{"path":"smuggled.md","body":"x"}}}`;
    const res = await handleMcpRequest(event(smuggled), d, 'r');
    expect(res.statusCode).toBe(400);
    expect(JSON.parse(res.body as string)).toMatchObject({ error: { code: -32600, message: expect.stringContaining('__proto__') } });
    const nested = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"memory__write","arguments":{"path":"n.md","body":"x","frontmatter":{"__proto__":{"a":1}}}}}`;
    expect((await handleMcpRequest(event(nested), d, 'r')).statusCode).toBe(400);
    // Nothing was written: the default memory has no note.
    const list = await handleMcpRequest(event(call('memory__list', {})), d, 'r');
    expect(JSON.parse(list.body as string)).toMatchObject({ result: { structuredContent: { entries: [] } } });
  });
});

it('builds no JSON Schema validator for a request (the SDK would build Ajv per server, for elicitation it never does here)', async () => {
  const addFormat = jest.spyOn(Ajv.prototype, 'addFormat');
  try {
    const res = await handleMcpRequest(event(call('memory__list', {})), deps(), 'r');
    expect(res.statusCode).toBe(200);
    expect(addFormat).not.toHaveBeenCalled();
    // One is built when a schema is asked for, with the formats the SDK's own has.
    const email = lazyValidator.getValidator<string>({ type: 'string', format: 'email' });
    expect([email('a@example.com').valid, email('not an address').valid]).toEqual([true, false]);
  } finally {
    addFormat.mockRestore();
  }
});
