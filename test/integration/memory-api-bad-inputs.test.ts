import { request } from 'node:http';
import { AuthError } from '../../lambdas/identity/principal';
import { ErrorSchema } from '../../lambdas/memory-api/response-schemas';
import { claims, forgeNone, forgeWithStrangerKey, nowSeconds, tamper } from '../support/auth-jwks';
import { startMemoryStack, type MemoryStack } from './memory-api-harness';

/**
 * Bad input for every `/v1` endpoint, sent as raw HTTP (paths byte for byte, no client-side
 * normalisation of `..` or `%2e%2e`): each gets the spec's code in the `/v1` envelope, never a 500.
 */
let s: MemoryStack;
const U = 'bad-inputs';
let rev = '';
let cursor = '';

interface Raw {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

function raw(method: string, path: string, headers: Record<string, string> = {}, body?: string | Buffer): Promise<Raw> {
  const url = new URL(s.url);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        method,
        path,
        headers: { ...headers, ...(body !== undefined && { 'content-length': String(Buffer.byteLength(body)) }) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
      },
    );
    req.on('error', reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

const auth = (o?: Parameters<MemoryStack['token']>[1]) => ({ authorization: `Bearer ${s.token(U, o)}` });
const JSON_CT = { 'content-type': 'application/json' };
const j = (v: unknown) => JSON.stringify(v);

beforeAll(async () => {
  s = await startMemoryStack({ MEMORY_RATE_LIMIT: '100000' });
  const ok = async (r: Promise<Raw>) => {
    const res = await r;
    if (res.status >= 300) throw new Error(`setup failed: ${res.status} ${res.text}`);
    return JSON.parse(res.text) as Record<string, unknown>;
  };
  await ok(raw('POST', '/v1/memories', { ...auth(), ...JSON_CT }, j({ name: 'm' })));
  await ok(raw('PUT', '/v1/memories/m/notes/a.md', { ...auth(), ...JSON_CT }, j({ body: 'alpha alpha' })));
  await ok(raw('PUT', '/v1/memories/m/notes/d/b.md', { ...auth(), ...JSON_CT }, j({ body: 'beta' })));
  rev = String((await ok(raw('PUT', '/v1/memories/m/notes/d/c.md', { ...auth(), ...JSON_CT }, j({ body: 'gamma' })))).rev);
  cursor = String((await ok(raw('GET', '/v1/memories/m/notes?depth=all&limit=1', auth()))).nextCursor);
}, 120000);
afterAll(() => s?.close());

type Row = [
  what: string,
  method: string,
  path: string,
  headers: () => Record<string, string>,
  body: (() => string | Buffer) | undefined,
  status: number,
  code: string,
];

const A = () => auth();
const AJ = () => ({ ...auth(), ...JSON_CT });
const big = (n: number) => 'x'.repeat(n);

const ROWS: Row[] = [
  // memory names
  ['an upper-case name', 'POST', '/v1/memories', AJ, () => j({ name: 'Work' }), 400, 'BAD_REQUEST'],
  ['an empty name', 'POST', '/v1/memories', AJ, () => j({ name: '   ' }), 400, 'BAD_REQUEST'],
  ['a 65-character name', 'POST', '/v1/memories', AJ, () => j({ name: 'a'.repeat(65) }), 400, 'BAD_REQUEST'],
  ['the reserved name export', 'POST', '/v1/memories', AJ, () => j({ name: 'export' }), 400, 'BAD_REQUEST'],
  ['a name that is a number', 'POST', '/v1/memories', AJ, () => j({ name: 5 }), 400, 'BAD_REQUEST'],
  ['no name', 'POST', '/v1/memories', AJ, () => j({}), 400, 'BAD_REQUEST'],
  ['no body', 'POST', '/v1/memories', A, undefined, 400, 'BAD_REQUEST'],
  ['malformed JSON', 'POST', '/v1/memories', AJ, () => '{"name":', 400, 'BAD_REQUEST'],
  ['a JSON array', 'POST', '/v1/memories', AJ, () => '["m"]', 400, 'BAD_REQUEST'],
  ['a form body', 'POST', '/v1/memories', () => ({ ...auth(), 'content-type': 'application/x-www-form-urlencoded' }), () => 'name=m', 400, 'BAD_REQUEST'],
  ['a name with an encoded slash', 'GET', '/v1/memories/a%2Fb', A, undefined, 400, 'BAD_REQUEST'],
  ['an invalid name on GET', 'GET', '/v1/memories/No_Such', A, undefined, 400, 'BAD_REQUEST'],
  ['a memory that does not exist', 'GET', '/v1/memories/nope', A, undefined, 404, 'NOT_FOUND'],
  ['retiring the reserved name', 'DELETE', '/v1/memories/export', A, undefined, 400, 'BAD_REQUEST'],
  ['retiring a memory that does not exist', 'DELETE', '/v1/memories/nope', A, undefined, 404, 'NOT_FOUND'],
  ['restoring a memory that never existed', 'POST', '/v1/memories/nope/restore', A, undefined, 404, 'NOT_FOUND'],
  ['a restore body that is not an object', 'POST', '/v1/memories/m/restore', AJ, () => '"a.md"', 400, 'BAD_REQUEST'],
  ['a restore path that is not a string', 'POST', '/v1/memories/m/restore', AJ, () => j({ path: 1 }), 400, 'BAD_REQUEST'],
  // bytes that are not UTF-8 (were stored with U+FFFD in their place)
  [
    'markdown that is not UTF-8',
    'PUT',
    '/v1/memories/m/notes/bytes.md',
    () => ({ ...auth(), 'content-type': 'text/markdown' }),
    () => Buffer.from([0x61, 0xff, 0xfe, 0x62]),
    400,
    'BAD_REQUEST',
  ],
  [
    'JSON that is not UTF-8',
    'PUT',
    '/v1/memories/m/notes/bytes.md',
    AJ,
    () => Buffer.concat([Buffer.from('{"body":"a'), Buffer.from([0xc3, 0x28]), Buffer.from('"}')]),
    400,
    'BAD_REQUEST',
  ],
  // note paths
  ['a path with ..', 'GET', '/v1/memories/m/notes/d/../a.md', A, undefined, 400, 'BAD_REQUEST'],
  ['a path with %2e%2e', 'GET', '/v1/memories/m/notes/%2e%2e/a.md', A, undefined, 400, 'BAD_REQUEST'],
  ['a path with ..%2F', 'PUT', '/v1/memories/m/notes/..%2Fescape.md', AJ, () => j({ body: 'x' }), 400, 'BAD_REQUEST'],
  ['a path with a backslash', 'PUT', '/v1/memories/m/notes/d%5Cx.md', AJ, () => j({ body: 'x' }), 400, 'BAD_REQUEST'],
  ['a path with NUL', 'PUT', '/v1/memories/m/notes/a%00.md', AJ, () => j({ body: 'x' }), 400, 'BAD_REQUEST'],
  ['a path with a control character', 'GET', '/v1/memories/m/notes/a%0A.md', A, undefined, 400, 'BAD_REQUEST'],
  ['a path into .git', 'PUT', '/v1/memories/m/notes/.git/x.md', AJ, () => j({ body: 'x' }), 400, 'BAD_REQUEST'],
  ['a path that is not .md', 'PUT', '/v1/memories/m/notes/a.txt', AJ, () => j({ body: 'x' }), 400, 'BAD_REQUEST'],
  ['a path beginning with @', 'PUT', '/v1/memories/m/notes/@v.md', AJ, () => j({ body: 'x' }), 400, 'BAD_REQUEST'],
  ['a path with an empty segment', 'PUT', '/v1/memories/m/notes/d//x.md', AJ, () => j({ body: 'x' }), 400, 'BAD_REQUEST'],
  ['a path over 1,024 bytes', 'PUT', `/v1/memories/m/notes/${'a/'.repeat(520)}x.md`, AJ, () => j({ body: 'x' }), 400, 'BAD_REQUEST'],
  ['a note that does not exist', 'GET', '/v1/memories/m/notes/none.md', A, undefined, 404, 'NOT_FOUND'],
  ['a note in a memory that does not exist', 'PUT', '/v1/memories/nope/notes/a.md', AJ, () => j({ body: 'x' }), 404, 'NOT_FOUND'],
  ['deleting a note that does not exist', 'DELETE', '/v1/memories/m/notes/none.md', A, undefined, 404, 'NOT_FOUND'],
  // PUT bodies
  ['a PUT without body', 'PUT', '/v1/memories/m/notes/a.md', AJ, () => j({ frontmatter: {} }), 400, 'BAD_REQUEST'],
  ['a PUT with an empty request', 'PUT', '/v1/memories/m/notes/a.md', AJ, undefined, 400, 'BAD_REQUEST'],
  ['an empty raw markdown PUT', 'PUT', '/v1/memories/m/notes/a.md', () => ({ ...auth(), 'content-type': 'text/markdown' }), () => '', 400, 'BAD_REQUEST'],
  ['a JSON body starting with a fence', 'PUT', '/v1/memories/m/notes/a.md', AJ, () => j({ body: '---\nk: v\n---\ntext' }), 400, 'BAD_REQUEST'],
  ['front matter that is an array', 'PUT', '/v1/memories/m/notes/a.md', AJ, () => j({ body: 'x', frontmatter: ['a'] }), 400, 'BAD_REQUEST'],
  ['a body that is a number', 'PUT', '/v1/memories/m/notes/a.md', AJ, () => j({ body: 42 }), 400, 'BAD_REQUEST'],
  ['malformed JSON on PUT', 'PUT', '/v1/memories/m/notes/a.md', AJ, () => '{"body": "x"', 400, 'BAD_REQUEST'],
  ['text/plain on PUT', 'PUT', '/v1/memories/m/notes/a.md', () => ({ ...auth(), 'content-type': 'text/plain' }), () => 'x', 400, 'BAD_REQUEST'],
  ['application/xml on PUT', 'PUT', '/v1/memories/m/notes/a.md', () => ({ ...auth(), 'content-type': 'application/xml' }), () => '<a/>', 400, 'BAD_REQUEST'],
  [
    'a latin-1 charset',
    'PUT',
    '/v1/memories/m/notes/a.md',
    () => ({ ...auth(), 'content-type': 'text/markdown; charset=iso-8859-1' }),
    () => 'x',
    400,
    'BAD_REQUEST',
  ],
  // Invalid UTF-8 in a textual body: the gateway (and the local server) hand text/* over decoded, so
  // only base64 bodies reach the strict decoder; see the unit test of body.ts.
  [
    'a note over 1 MiB',
    'PUT',
    '/v1/memories/m/notes/a.md',
    () => ({ ...auth(), 'content-type': 'text/markdown' }),
    () => big(1024 * 1024 + 1),
    400,
    'BAD_REQUEST',
  ],
  ['a request over the request cap', 'PUT', '/v1/memories/m/notes/a.md', AJ, () => j({ body: big(2 * 1024 * 1024 + 70 * 1024) }), 400, 'BAD_REQUEST'],
  ['an AWS access key id', 'PUT', '/v1/memories/m/notes/a.md', AJ, () => j({ body: 'key AKIAIOSFODNN7EXAMPLE here' }), 400, 'BAD_REQUEST'],
  [
    'a private key',
    'PUT',
    '/v1/memories/m/notes/a.md',
    () => ({ ...auth(), 'content-type': 'text/markdown' }),
    () => '-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----\n',
    400,
    'BAD_REQUEST',
  ],
  [
    'a custom YAML tag in raw front matter',
    'PUT',
    '/v1/memories/m/notes/a.md',
    () => ({ ...auth(), 'content-type': 'text/markdown' }),
    () => '---\nk: !!js/function "x"\n---\nbody',
    400,
    'BAD_REQUEST',
  ],
  // PATCH modes
  ['an invalid mode', 'PATCH', '/v1/memories/m/notes/a.md', AJ, () => j({ mode: 'sideways', body: 'x' }), 400, 'BAD_REQUEST'],
  ['old_str with append', 'PATCH', '/v1/memories/m/notes/a.md', AJ, () => j({ mode: 'append', body: 'x', old_str: 'a' }), 400, 'BAD_REQUEST'],
  ['str_replace without old_str', 'PATCH', '/v1/memories/m/notes/a.md', AJ, () => j({ mode: 'str_replace', new_str: 'x' }), 400, 'BAD_REQUEST'],
  [
    'a str_replace that matches twice',
    'PATCH',
    '/v1/memories/m/notes/a.md',
    AJ,
    () => j({ mode: 'str_replace', old_str: 'alpha', new_str: 'x' }),
    400,
    'BAD_REQUEST',
  ],
  [
    'a str_replace that matches nothing',
    'PATCH',
    '/v1/memories/m/notes/a.md',
    AJ,
    () => j({ mode: 'str_replace', old_str: 'omega', new_str: 'x' }),
    400,
    'BAD_REQUEST',
  ],
  ['a mode that is not a string', 'PATCH', '/v1/memories/m/notes/a.md', AJ, () => j({ mode: 1 }), 400, 'BAD_REQUEST'],
  ['front matter that is a string', 'PATCH', '/v1/memories/m/notes/a.md', AJ, () => j({ frontmatter: 'k: v' }), 400, 'BAD_REQUEST'],
  ['a PATCH without body', 'PATCH', '/v1/memories/m/notes/a.md', A, undefined, 400, 'BAD_REQUEST'],
  ['a PATCH of a note that does not exist', 'PATCH', '/v1/memories/m/notes/none.md', AJ, () => j({ body: 'x' }), 404, 'NOT_FOUND'],
  // listing and search parameters
  ['limit 0', 'GET', '/v1/memories/m/notes?limit=0', A, undefined, 400, 'BAD_REQUEST'],
  ['limit 501', 'GET', '/v1/memories/m/notes?limit=501', A, undefined, 400, 'BAD_REQUEST'],
  ['limit 1.5', 'GET', '/v1/memories/m/notes?limit=1.5', A, undefined, 400, 'BAD_REQUEST'],
  ['limit abc', 'GET', '/v1/memories/m/notes?limit=abc', A, undefined, 400, 'BAD_REQUEST'],
  ['limit given twice', 'GET', '/v1/memories/m/notes?limit=1&limit=2', A, undefined, 400, 'BAD_REQUEST'],
  ['depth 0', 'GET', '/v1/memories/m/notes?depth=0', A, undefined, 400, 'BAD_REQUEST'],
  ['depth deep', 'GET', '/v1/memories/m/notes?depth=deep', A, undefined, 400, 'BAD_REQUEST'],
  ['an unknown type', 'GET', '/v1/memories/m/notes?type=link', A, undefined, 400, 'BAD_REQUEST'],
  ['an unknown sort', 'GET', '/v1/memories/m/notes?sort=size', A, undefined, 400, 'BAD_REQUEST'],
  ['an unknown fields value', 'GET', '/v1/memories/m/notes?fields=title', A, undefined, 400, 'BAD_REQUEST'],
  ['a tag with #', 'GET', '/v1/memories/m/notes?tags=%23x', A, undefined, 400, 'BAD_REQUEST'],
  ['a folder with ..', 'GET', '/v1/memories/m/notes?folder=../d', A, undefined, 400, 'BAD_REQUEST'],
  ['a garbage cursor', 'GET', '/v1/memories/m/notes?cursor=garbage', A, undefined, 400, 'BAD_REQUEST'],
  ['a tampered cursor', 'GET', '/v1/memories/m/notes?depth=all&limit=1&cursor=__TAMPERED__', A, undefined, 400, 'BAD_REQUEST'],
  ['a cursor of another query', 'GET', '/v1/memories/m/notes?depth=1&limit=1&cursor=__CURSOR__', A, undefined, 400, 'BAD_REQUEST'],
  ['a listing cursor on search', 'GET', '/v1/memories/m/search?q=a&cursor=__CURSOR__', A, undefined, 400, 'BAD_REQUEST'],
  ['search without q', 'GET', '/v1/memories/m/search', A, undefined, 400, 'BAD_REQUEST'],
  ['search with a blank q', 'GET', '/v1/memories/m/search?q=%20%20', A, undefined, 400, 'BAD_REQUEST'],
  ['q given twice', 'GET', '/v1/memories/m/search?q=a&q=b', A, undefined, 400, 'BAD_REQUEST'],
  ['q over 256 characters', 'GET', `/v1/memories/m/search?q=${'a'.repeat(257)}`, A, undefined, 400, 'BAD_REQUEST'],
  ['search limit 51', 'GET', '/v1/memories/m/search?q=a&limit=51', A, undefined, 400, 'BAD_REQUEST'],
  ['search in a memory that does not exist', 'GET', '/v1/memories/nope/search?q=a', A, undefined, 404, 'NOT_FOUND'],
  ['exporting a memory that does not exist', 'GET', '/v1/memories/nope/export', A, undefined, 404, 'NOT_FOUND'],
  // If-Match
  ['If-Match that is not a sha', 'PUT', '/v1/memories/m/notes/a.md', () => ({ ...AJ(), 'if-match': 'abc' }), () => j({ body: 'x' }), 400, 'BAD_REQUEST'],
  // RFC 9110 compares If-Match strongly: a weak tag never matches, like a stale rev.
  ['a weak If-Match', 'PUT', '/v1/memories/m/notes/a.md', () => ({ ...AJ(), 'if-match': `W/"${rev}"` }), () => j({ body: 'x' }), 409, 'CONFLICT'],
  ['an If-Match list', 'DELETE', '/v1/memories/m/notes/a.md', () => ({ ...A(), 'if-match': `"${rev}", "${rev}"` }), undefined, 400, 'BAD_REQUEST'],
  ['a bad If-Match on memory restore', 'POST', '/v1/memories/m/restore', () => ({ ...A(), 'if-match': 'nope' }), undefined, 400, 'BAD_REQUEST'],
  ['a bad If-Match on create', 'POST', '/v1/memories', () => ({ ...AJ(), 'if-match': 'zz' }), () => j({ name: 'm' }), 400, 'BAD_REQUEST'],
  ['If-Match on a memory that does not exist', 'POST', '/v1/memories', () => ({ ...AJ(), 'if-match': rev }), () => j({ name: 'fresh' }), 409, 'CONFLICT'],
  [
    'a stale If-Match on PATCH',
    'PATCH',
    '/v1/memories/m/notes/a.md',
    () => ({ ...AJ(), 'if-match': '0'.repeat(40) }),
    () => j({ mode: 'append', body: 'x' }),
    409,
    'CONFLICT',
  ],
  // tokens
  ['no token', 'GET', '/v1/memories', () => ({}), undefined, 401, 'UNAUTHENTICATED'],
  ['a Basic header', 'GET', '/v1/memories', () => ({ authorization: 'Basic YTpi' }), undefined, 401, 'UNAUTHENTICATED'],
  [
    'a garbage bearer',
    'PUT',
    '/v1/memories/m/notes/a.md',
    () => ({ authorization: 'Bearer garbage', ...JSON_CT }),
    () => j({ body: 'x' }),
    401,
    'UNAUTHENTICATED',
  ],
  ['an expired token', 'GET', '/v1/memories', () => auth({ issuedAt: nowSeconds() - 7200, ttlSeconds: 60 }), undefined, 401, 'UNAUTHENTICATED'],
  ['a token for another audience', 'GET', '/v1/memories', () => auth({ audience: 'https://elsewhere.example/mcp' }), undefined, 401, 'UNAUTHENTICATED'],
  [
    'a forged signature',
    'GET',
    '/v1/memories',
    () => ({ authorization: `Bearer ${forgeWithStrangerKey(s.forger, claims({ issuer: s.stack.issuer.issuer, audience: s.stack.auth.audience, sub: U }))}` }),
    undefined,
    401,
    'UNAUTHENTICATED',
  ],
  [
    'alg none',
    'GET',
    '/v1/memories',
    () => ({ authorization: `Bearer ${forgeNone(s.forger, claims({ issuer: s.stack.issuer.issuer, audience: s.stack.auth.audience, sub: U }))}` }),
    undefined,
    401,
    'UNAUTHENTICATED',
  ],
  [
    'a tampered payload',
    'GET',
    '/v1/memories',
    () => ({ authorization: `Bearer ${tamper(s.token(U), (p) => (p.sub = 'someone-else'))}` }),
    undefined,
    401,
    'UNAUTHENTICATED',
  ],
  [
    'a read-only token on PUT',
    'PUT',
    '/v1/memories/m/notes/a.md',
    () => ({ ...auth({ scope: 'memory:read' }), ...JSON_CT }),
    () => j({ body: 'x' }),
    403,
    'FORBIDDEN',
  ],
  ['a read-only token on DELETE', 'DELETE', '/v1/memories/m', () => auth({ scope: 'memory:read' }), undefined, 403, 'FORBIDDEN'],
  ['a write-only token on GET', 'GET', '/v1/memories/m/notes/a.md', () => auth({ scope: 'memory:write' }), undefined, 403, 'FORBIDDEN'],
  ['a token without memory scopes on export', 'GET', '/v1/memories/export', () => auth({ scope: 'openid' }), undefined, 403, 'FORBIDDEN'],
  ['an existing memory not granted', 'GET', '/v1/memories/m', () => auth({ memories: ['other'] }), undefined, 403, 'FORBIDDEN'],
  ['a missing memory not granted', 'GET', '/v1/memories/ghost', () => auth({ memories: ['other'] }), undefined, 403, 'FORBIDDEN'],
  [
    'a write to a memory not granted',
    'PUT',
    '/v1/memories/m/notes/a.md',
    () => ({ ...auth({ memories: [] }), ...JSON_CT }),
    () => j({ body: 'x' }),
    403,
    'FORBIDDEN',
  ],
  // routing
  ['an unknown path', 'GET', '/v1/whatever', A, undefined, 404, 'NOT_FOUND'],
  ['a note route without a path', 'GET', '/v1/memories/m/notes/', A, undefined, 404, 'NOT_FOUND'],
  ['a wrong verb', 'PATCH', '/v1/memories/m', A, undefined, 405, 'METHOD_NOT_ALLOWED'],
];

describe('bad input gets the spec code, never a 500', () => {
  it.each(ROWS)('%s: %s %s', async (_what, method, path, headers, makeBody, status, code) => {
    const tampered = cursor.slice(0, -2) + (cursor.endsWith('AA') ? 'BB' : 'AA');
    const p = path.replace('__CURSOR__', encodeURIComponent(cursor)).replace('__TAMPERED__', encodeURIComponent(tampered));
    const res = await raw(method, p, headers(), makeBody?.());
    expect({ status: res.status, body: res.text.slice(0, 300) }).toEqual({ status, body: expect.any(String) });
    const parsed = ErrorSchema.parse(JSON.parse(res.text));
    expect(parsed.error.code).toBe(code);
    expect(res.headers.ratelimit).toMatch(/^limit=/);
    if (status === 401) expect(res.headers['www-authenticate']).toMatch(/^Bearer/);
  });

  it('says which check a refused token failed, without echoing it', async () => {
    const message = async (headers: Record<string, string>) => ErrorSchema.parse(JSON.parse((await raw('GET', '/v1/memories', headers)).text)).error.message;
    expect(await message(auth({ audience: 'https://elsewhere.example/mcp' }))).toMatch(/another audience/);
    expect(await message(auth({ issuedAt: nowSeconds() - 7200, ttlSeconds: 60 }))).toMatch(/expired/);
    const stranger = forgeWithStrangerKey(s.forger, claims({ issuer: s.stack.issuer.issuer, audience: s.stack.auth.audience, sub: U }));
    const why = await message({ authorization: `Bearer ${stranger}` });
    expect(why).toMatch(/key this deployment does not know|signature does not verify/);
    expect(why).not.toContain(stranger.slice(0, 20));
  });

  it('left the memory untouched by all of it', async () => {
    const res = await raw('GET', '/v1/memories/m', auth());
    expect(JSON.parse(res.text)).toMatchObject({ files: 3, rev });
    const note = await raw('GET', '/v1/memories/m/notes/a.md', { ...auth(), accept: 'text/markdown' });
    expect(note.text).toBe('alpha alpha');
  });

  it('treats front matter keys the same in JSON and YAML: __proto__ refused by name, constructor kept like any key', async () => {
    const proto = await raw('PUT', '/v1/memories/m/notes/fm-proto.md', AJ(), '{"body":"x","frontmatter":{"__proto__":{"a":1},"b":2}}');
    expect(proto.status).toBe(400);
    expect(JSON.parse(proto.text)).toEqual({ error: { code: 'BAD_REQUEST', message: expect.stringContaining('__proto__') } });
    const yaml = await raw('PUT', '/v1/memories/m/notes/fm-proto.md', { ...A(), 'content-type': 'text/markdown' }, '---\n__proto__: {a: 1}\n---\nx');
    expect(yaml.status).toBe(400);
    expect(JSON.parse(yaml.text).error.message).toContain('__proto__');
    expect((await raw('GET', '/v1/memories/m/notes/fm-proto.md', A())).status).toBe(404);

    const ctor = await raw('PUT', '/v1/memories/m/notes/fm-ctor.md', AJ(), j({ body: 'x', frontmatter: { constructor: 'c', toString: 't' } }));
    expect(ctor.status).toBe(200);
    const read = JSON.parse((await raw('GET', '/v1/memories/m/notes/fm-ctor.md', A())).text) as { frontmatter: Record<string, unknown> };
    expect(read.frontmatter).toEqual({ constructor: 'c', toString: 't' });
    const edit = await raw('PATCH', '/v1/memories/m/notes/fm-ctor.md', AJ(), j({ frontmatter: { constructor: 'd' } }));
    expect(edit.status).toBe(200);
    await raw('DELETE', '/v1/memories/m/notes/fm-ctor.md', A());
  });

  it('says a soft-deleted note was deleted and how to restore it', async () => {
    await raw('PUT', '/v1/memories/m/notes/gone.md', AJ(), j({ body: 'x' }));
    expect((await raw('DELETE', '/v1/memories/m/notes/gone.md', A())).status).toBe(200);
    const res = await raw('GET', '/v1/memories/m/notes/gone.md', A());
    expect(res.status).toBe(404);
    expect(JSON.parse(res.text).error.message).toMatch(
      /^note "gone\.md" was deleted at \S+; restore it with POST \/v1\/memories\/m\/restore and the body \{"path": "gone\.md"\}$/,
    );
    expect(JSON.parse((await raw('GET', '/v1/memories/m/notes/never.md', A())).text).error.message).toBe('note "never.md" does not exist');
  });

  it('says what a refused parameter accepts', async () => {
    const message = async (path: string) => ErrorSchema.parse(JSON.parse((await raw('GET', path, auth())).text)).error.message;
    expect(await message('/v1/memories/m/notes?depth=ALL')).toMatch(/depth.*must be an integer of at least 1, or all/);
    expect(await message('/v1/memories/m/notes?fields=title')).toMatch(/fields must be path or full/);
  });

  it('ignores unknown query parameters', async () => {
    expect((await raw('GET', '/v1/memories/m/notes?color=blue&limit=5&x', auth())).status).toBe(200);
    expect((await raw('GET', '/v1/memories/m/search?q=alpha&color=blue', auth())).status).toBe(200);
  });

  it('answers 503 UPSTREAM_UNAVAILABLE with Retry-After when the token cannot be checked', async () => {
    const deps = s.stack.memoryApi;
    const verifier = deps.verifier;
    deps.verifier = { verify: () => Promise.reject(new AuthError('jwks-unavailable', 'JWKS unreachable')) };
    try {
      for (const [method, path] of [
        ['GET', '/v1/memories'],
        ['PUT', '/v1/vaults/m/notes/a.md'],
      ]) {
        const res = await raw(method, path, AJ(), method === 'PUT' ? j({ body: 'x' }) : undefined);
        expect(res.status).toBe(503);
        expect(res.headers['retry-after']).toBe('5');
        expect(ErrorSchema.parse(JSON.parse(res.text)).error.code).toBe('UPSTREAM_UNAVAILABLE');
      }
    } finally {
      deps.verifier = verifier;
    }
  });
});
