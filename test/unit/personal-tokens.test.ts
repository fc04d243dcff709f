import { crc32 } from 'node:zlib';
import { normalisePathPrefix, PersonalTokenError, PersonalTokens } from '../../lambdas/identity/personal-token-service';
import type { PersonalTokenStore } from '../../lambdas/identity/personal-token-store';
import { looksPersonal, mintPersonalToken, parsePersonalToken, PERSONAL_TOKEN_PREFIX } from '../../lambdas/identity/personal-tokens';
import type { Principal } from '../../lambdas/identity/principal';
import { findCredential } from '../../lambdas/memory/credentials';

/**
 * The personal access token's shape (prefix, id, secret, checksum) and the rules of what a new one
 * may hold. The store and the verifier against DynamoDB Local are in
 * test/integration/personal-tokens.test.ts; over HTTP, MCP and git in personal-tokens-http.test.ts.
 */
describe('the token format', () => {
  test('mcpm_pat_<12 id>_<32 secret><6 checksum>, base62, parsed back to its id and the hash of the whole', () => {
    const { id, token, hash } = mintPersonalToken();
    expect(token).toMatch(/^mcpm_pat_[0-9A-Za-z]{12}_[0-9A-Za-z]{38}$/);
    expect(token.slice(PERSONAL_TOKEN_PREFIX.length, PERSONAL_TOKEN_PREFIX.length + 12)).toBe(id);
    expect(parsePersonalToken(token)).toEqual({ id, hash });
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
    expect(looksPersonal(token)).toBe(true);
    expect(looksPersonal('mcpat_x')).toBe(false);
  });

  test('a changed, dropped or added character fails the checksum (a typo costs no table read)', () => {
    const { token } = mintPersonalToken();
    const flip = (i: number) => token.slice(0, i) + (token[i] === 'a' ? 'b' : 'a') + token.slice(i + 1);
    for (const i of [PERSONAL_TOKEN_PREFIX.length, 20, 30, token.length - 7, token.length - 1]) expect(parsePersonalToken(flip(i))).toBeUndefined();
    expect(parsePersonalToken(token.slice(0, -1))).toBeUndefined();
    expect(parsePersonalToken(`${token}0`)).toBeUndefined();
    expect(parsePersonalToken(token.replace('mcpm_pat_', 'mcpm_pax_'))).toBeUndefined();
    expect(parsePersonalToken(token.replace('_', '-'))).toBeUndefined();
  });

  test('the checksum is CRC-32 of the rest, in six base62 digits, as a scanner can check it', () => {
    const { token } = mintPersonalToken();
    const body = token.slice(0, -6);
    let v = crc32(body);
    let digits = '';
    for (let i = 0; i < 6; i++) {
      digits = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'[v % 62] + digits;
      v = Math.floor(v / 62);
    }
    expect(token.slice(-6)).toBe(digits);
  });

  test('ids are unique and the secret part is not predictable from the id (a thousand tokens)', () => {
    const ids = new Set<string>();
    const secrets = new Set<string>();
    for (let i = 0; i < 1000; i++) {
      const { id, token } = mintPersonalToken();
      ids.add(id);
      secrets.add(token.slice(22, 54));
    }
    expect(ids.size).toBe(1000);
    expect(secrets.size).toBe(1000);
  });

  test('the memory credential scanner recognises a token in a note, and only the real shape', () => {
    const { token } = mintPersonalToken();
    expect(findCredential(`# Setup\n\nexport MEMORY_TOKEN=${token}\n`)).toEqual({ kind: 'personal-access-token', line: 3 });
    expect(findCredential(`git clone http://x:${token}@localhost/v1/memories/work.git`)).toMatchObject({ line: 1 });
    expect(findCredential('tokens look like mcpm_pat_<id>_<secret>, see the README')).toBeUndefined();
    expect(findCredential(`mcpm_pat_${'a'.repeat(12)}_${'b'.repeat(20)}`)).toBeUndefined();
  });
});

const signedIn = (over: Partial<Principal> = {}): Principal => ({ sub: 'alice', scopes: ['memory:read', 'memory:write'], kind: 'jwt', expiresAt: 0, ...over });
const limits = { maxPerUser: 50, defaultDays: 90, maxDays: 366, lastUsedSeconds: 3600 };
const NOW = Date.parse('2026-12-01T00:00:00Z');
const rules = new PersonalTokens({} as PersonalTokenStore, limits, { clock: () => NOW });

function refusal(fn: () => unknown): { kind: string; message: string } {
  try {
    fn();
  } catch (err) {
    if (err instanceof PersonalTokenError) return { kind: err.kind, message: err.message };
    throw err;
  }
  throw new Error('expected a refusal');
}

describe('what a new token may hold', () => {
  test('defaults: the creator’s memory grant, 90 days; the name trimmed', () => {
    expect(rules.grantOf(signedIn(), { name: ' laptop ', scopes: ['memory:read'] })).toEqual({
      sub: 'alice',
      name: 'laptop',
      scopes: ['memory:read'],
      expiresAt: NOW / 1000 + 90 * 86400,
    });
    expect(rules.grantOf(signedIn({ memories: ['work'] }), { name: 'x', scopes: ['memory:write', 'memory:read'] })).toMatchObject({
      scopes: ['memory:read', 'memory:write'],
      memories: ['work'],
    });
    expect(
      rules.grantOf(signedIn(), { name: 'x', scopes: ['memory:read'], memories: ['a', 'b', 'a'], pathPrefix: 'notes/daily/', expiresInDays: 366 }),
    ).toMatchObject({
      memories: ['a', 'b'],
      pathPrefix: 'notes/daily',
      expiresAt: NOW / 1000 + 366 * 86400,
    });
  });

  test.each([
    ['an empty name', { name: '  ', scopes: ['memory:read'] }, /name must be 1-100/],
    ['a long name', { name: 'x'.repeat(101), scopes: ['memory:read'] }, /name must be 1-100/],
    ['a control character in the name', { name: 'a\tb', scopes: ['memory:read'] }, /name must be/],
    ['no scope', { name: 'x', scopes: [] }, /scopes must list/],
    ['an unknown scope', { name: 'x', scopes: ['memory:read', 'admin'] }, /"admin" is not a scope/],
    ['write alone', { name: 'x', scopes: ['memory:write'] }, /write alone is not offered/],
    ['an empty memory list', { name: 'x', scopes: ['memory:read'], memories: [] }, /memories must name 1-100/],
    ['a bad memory name', { name: 'x', scopes: ['memory:read'], memories: ['Work'] }, /"Work" is not a memory name/],
    ['the reserved name', { name: 'x', scopes: ['memory:read'], memories: ['export'] }, /"export" is not a memory name/],
    ['zero days', { name: 'x', scopes: ['memory:read'], expiresInDays: 0 }, /from 1 to 366/],
    ['367 days', { name: 'x', scopes: ['memory:read'], expiresInDays: 367 }, /from 1 to 366/],
    ['a fraction of a day', { name: 'x', scopes: ['memory:read'], expiresInDays: 1.5 }, /integer/],
  ])('refuses %s (400)', (_, input, message) => {
    expect(refusal(() => rules.grantOf(signedIn(), input))).toEqual({ kind: 'invalid', message: expect.stringMatching(message) });
  });

  test('never more than the creator holds (403): a scope or a memory it lacks', () => {
    expect(refusal(() => rules.grantOf(signedIn({ scopes: ['memory:read'] }), { name: 'x', scopes: ['memory:read', 'memory:write'] }))).toEqual({
      kind: 'forbidden',
      message: expect.stringMatching(/does not hold memory:write/),
    });
    expect(refusal(() => rules.grantOf(signedIn({ memories: ['work'] }), { name: 'x', scopes: ['memory:read'], memories: ['work', 'home'] }))).toEqual({
      kind: 'forbidden',
      message: expect.stringMatching(/"home" is not granted to this sign-in/),
    });
  });

  test.each([
    ['', /must name a folder/],
    ['/', /must name a folder/],
    ['/abs', /no leading \//],
    ['@work/a', /no leading \/ or @/],
    ['a\\b', /backslash/],
    ['a//b', /empty/],
    ['a/../b', /"\.\."/],
    ['./a', /"\."/],
    ['notes.md', /end in \.md/],
    ['a\u0000b', /control/],
    ['x'.repeat(513), /longer than 512 bytes/],
  ])('a path prefix %j is refused', (raw, message) => {
    expect(refusal(() => normalisePathPrefix(raw))).toEqual({ kind: 'invalid', message: expect.stringMatching(message) });
  });
});
