import { mintOpaque, newFamilyId, parseOpaque } from '../../lambdas/identity/opaque-tokens';
import { AuthError, memoryGranted, normaliseScopes, parseMemoriesClaim, type Principal } from '../../lambdas/identity/principal';
import { bearerToken } from '../../lambdas/identity/verifier';

describe('scope normalisation', () => {
  it("keeps bare memory scopes and strips this deployment's resource-server prefix", () => {
    expect(normaliseScopes('memory:read memory:write')).toEqual(['memory:read', 'memory:write']);
    expect(normaliseScopes('https://mcp.example.com/mcp/memory:write openid https://mcp.example.com/mcp/memory:read', 'https://mcp.example.com/mcp')).toEqual([
      'memory:read',
      'memory:write',
    ]);
    // A trailing slash on the configured identifier makes no difference.
    expect(normaliseScopes('https://mcp.example.com/mcp/memory:read', 'https://mcp.example.com/mcp/')).toEqual(['memory:read']);
  });

  it('drops scopes of other resource servers, unknown scopes, duplicates and junk', () => {
    expect(normaliseScopes('https://other.example/memory:write aws.cognito.signin.user.admin', 'https://mcp.example.com/mcp')).toEqual([]);
    expect(normaliseScopes('memory:read memory:read memory:admin  ')).toEqual(['memory:read']);
    expect(normaliseScopes(['memory:write', 42, null])).toEqual(['memory:write']);
    expect(normaliseScopes(undefined)).toEqual([]);
    expect(normaliseScopes(7)).toEqual([]);
  });
});

describe('memories claim', () => {
  it('is absent for every memory, a list or a space-separated string otherwise', () => {
    expect(parseMemoriesClaim(undefined)).toBeUndefined();
    expect(parseMemoriesClaim(['work', 'default'])).toEqual(['work', 'default']);
    expect(parseMemoriesClaim('work  default work')).toEqual(['work', 'default']);
    expect(parseMemoriesClaim([])).toEqual([]);
    expect(parseMemoriesClaim('')).toEqual([]);
  });

  it.each([[42], [{ a: 1 }], [null], [['Work']], [['ok', 5]], ['../etc'], [['x'.repeat(65)]]])('rejects %j as invalid claims', (raw) => {
    expect(() => parseMemoriesClaim(raw)).toThrow(expect.objectContaining({ reason: 'invalid-claims', kind: 'unauthenticated' }));
  });

  it('decides which memories a principal may see', () => {
    const all: Principal = { sub: 'a', scopes: [], kind: 'jwt', expiresAt: 0 };
    expect(memoryGranted(all, 'anything')).toBe(true);
    expect(memoryGranted({ ...all, memories: ['work'] }, 'work')).toBe(true);
    expect(memoryGranted({ ...all, memories: ['work'] }, 'default')).toBe(false);
    expect(memoryGranted({ ...all, memories: [] }, 'work')).toBe(false);
  });
});

describe('Authorization header', () => {
  it('extracts the bearer token, scheme case-insensitive', () => {
    expect(bearerToken('Bearer abc.def.ghi')).toBe('abc.def.ghi');
    expect(bearerToken('bearer  mcpat_x')).toBe('mcpat_x');
  });

  it.each([
    [undefined, 'missing'],
    ['', 'missing'],
    ['   ', 'missing'],
    ['Basic dXNlcjpwYXNz', 'malformed'],
    ['Bearer', 'malformed'],
    ['Bearer a b', 'malformed'],
    ['Bearer a,Bearer b', 'malformed'],
    ['Bearer <script>', 'malformed'],
    [`Bearer ${'a'.repeat(8193)}`, 'malformed'],
  ])('%j is %s', (h, reason) => {
    let caught: unknown;
    try {
      bearerToken(h);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(AuthError);
    expect(caught).toMatchObject({ reason, kind: 'unauthenticated' });
  });
});

describe('opaque token format', () => {
  it('round-trips kind and family, and hashes the whole token', () => {
    const fam = newFamilyId();
    const t = mintOpaque('access', fam);
    expect(t).toMatch(/^mcpat_[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}$/);
    const p = parseOpaque(t);
    expect(p).toMatchObject({ kind: 'access', familyId: fam });
    expect(p?.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(parseOpaque(mintOpaque('refresh', fam))?.kind).toBe('refresh');
    expect(parseOpaque(`${t}x`)).toBeUndefined();
    expect(parseOpaque(t.replace('mcpat_', 'mcpxx_'))).toBeUndefined();
    // Another family in an otherwise identical token is another hash: the family cannot be swapped.
    const swapped = `mcpat_${newFamilyId()}${t.slice(6 + 22)}`;
    expect(parseOpaque(swapped)?.hash).not.toBe(p?.hash);
  });
});
