import { findCredential, findCredentialInValues } from '../../lambdas/memory/credentials';
import { expectMemoryError, inMemoryService } from '../support/memory-harness';

// Token-shaped strings are assembled at run time so that this file itself never trips a secret
// scanner (and never contains a real credential).
const rep = (s: string, n: number): string => s.repeat(n);
const mixed = (n: number): string => rep('aB3dE5', Math.ceil(n / 6)).slice(0, n);

describe('credentials refused (true positives)', () => {
  test.each([
    ['aws-access-key-id', `key id ${'AKIA'}${'IOSFODNN7EXAMPL1'}`],
    ['aws-access-key-id', `temporary: ${'ASIA'}${rep('Z', 12)}7Q2X`],
    ['aws-secret-access-key', `aws_secret_access_key = ${mixed(40)}`],
    ['aws-secret-access-key', `"AWS_SECRET_ACCESS_KEY": "${mixed(40)}"`],
    ['private-key', `-----BEGIN ${'RSA'} PRIVATE KEY-----`],
    ['private-key', `-----BEGIN ${'OPENSSH'} PRIVATE KEY-----`],
    ['private-key', `-----BEGIN PRIVATE KEY-----`],
    ['private-key', `-----BEGIN PGP PRIVATE KEY BLOCK-----`],
    ['github-token', `token ${'ghp'}_${mixed(36)}`],
    ['github-token', `${'github'}_pat_${mixed(22)}_${mixed(59)}`],
    ['gitlab-token', `${'glpat'}-${mixed(20)}`],
    ['slack-token', `${'xoxb'}-123456789012-${mixed(24)}`],
    ['slack-token', `https://hooks.slack.com/services/T0000/B0000/${mixed(24)}`],
    ['stripe-secret-key', `${'sk'}_live_${mixed(24)}`],
    ['stripe-secret-key', `${'rk'}_test_${mixed(24)}`],
    ['openai-api-key', `OPENAI_API_KEY ${'sk'}-${mixed(48)}`],
    ['openai-api-key', `${'sk'}-proj-${mixed(64)}`],
    ['openai-api-key', `${'sk'}-ant-api03-${mixed(80)}`],
    ['jwt', `Bearer ${'eyJ'}hbGciOiJIUzI1NiJ9.${'eyJ'}zdWIiOiIxMjM0NTY3ODkwIn0.${mixed(43)}`],
    ['password-assignment', 'password=hunter2'],
    ['password-assignment', 'DB_PASSWORD = "Tr0ub4dor&3"'],
    ['password-assignment', "client_secret='abcd1234efgh'"],
    ['password-assignment', 'api_key=0123456789abcdef'],
    ['password-assignment', 'password: hunter2'],
    ['password-assignment', '  "password": "s3cr3t!",'],
    ['password-assignment', '- secret: abc$def'],
    // A near miss earlier on the line does not hide the real one.
    ['openai-api-key', `${'sk'}-${'x'.repeat(40)} then ${'sk'}-${mixed(48)}`],
    ['password-assignment', 'password=<placeholder> and later password=hunter22'],
    // What a secret scanner also catches (the gitleaks map).
    ['private-key', '-----begin rsa private key-----'],
    ['password-assignment', `{"user": "ana", "password": "Tr0ub4dor&3"}`],
    ['connection-string', 'DATABASE_URL=postgres://app:s3cr3tPw@db.internal:5432/app'],
    ['connection-string', 'mongodb+srv://admin:hunter2@cluster0.example.net/test'],
    ['google-api-key', `maps key ${'AIza'}${mixed(35)}`],
    ['npm-token', `//registry/:_authToken=${'npm'}_${mixed(36)}`],
    ['basic-auth', `Authorization: Basic ${Buffer.from('ana:hunter2').toString('base64')}`],
  ])('%s: %p', (kind, text) => {
    expect(findCredential(`a first line\n${text}\nafter`)).toEqual({ kind, line: 2 });
  });
});

describe('ordinary text passes (false positives avoided)', () => {
  test.each([
    'Remember to reset the password every 90 days.',
    'Password: see the team vault',
    'password: rotate-monthly',
    'The password field must not be empty.',
    'password=<your password>',
    'password=${DB_PASSWORD}',
    'password="<your password here>"',
    "password = '${DB_PASSWORD}'",
    'password: ${DB_PASSWORD}',
    'password = getPassword()',
    'password=os.environ["DB_PASSWORD"]',
    'if (password == other) return;',
    'password: string,',
    'password=*****',
    'secret: REDACTED',
    'AKIA is the prefix of AWS access key ids',
    'akiaiosfodnn7examplex lowercase is not a key',
    `commit ${rep('da39a3ee5e', 4)}`,
    `aws region us-east-1, ${mixed(40)} without a secret key name`,
    '-----BEGIN PUBLIC KEY-----',
    '-----BEGIN CERTIFICATE-----',
    `${'pk'}_live_${mixed(24)} is a publishable key`,
    'we use sk-learn and scikit-learn',
    'ghp_short',
    'eyJhbGciOiJIUzI1NiJ9 alone is a JWT header, not a token',
    'xoxb- in prose',
    'token budget: 4000',
    `password:${' '.repeat(100_000)}x`,
    'postgres://localhost:5432/app has no password',
    'postgres://app:${DB_PASSWORD}@db:5432/app',
    'postgres://app:<password>@db/app',
    'https://user@example.com/path and http://example.com:8080/x',
    '{"password": "<your password>"}',
    '{"passwordPolicy": "long"}',
    'Authorization: Basic realm="api"',
    'Authorization: Bearer the token goes here',
    'AIza alone is a prefix',
    'npm_config_cache is an environment variable',
  ])('%p', (text) => {
    expect(findCredential(text)).toBeUndefined();
  });
});

describe('a JWT split at its dots', () => {
  test('is found across lines, at the line it starts on', () => {
    const jwt = [`${'eyJ'}hbGciOiJIUzI1NiJ9`, `.${'eyJ'}zdWIiOiIxMjM0NTY3ODkwIn0`, `.${mixed(43)}`].join('\n');
    expect(findCredential(`intro\n\n${jwt}\nend`)).toEqual({ kind: 'jwt', line: 3 });
  });
  test('two sentences ending in dots are not one', () => {
    expect(findCredential('eyJust kidding.\n eyJoking aside.\n nothing more here at all')).toBeUndefined();
  });
});

describe('decoded front-matter values', () => {
  test.each([
    ['an \\x escape', { k: 'AKIA' + 'IOSFODNN7EXAMPL1' }],
    ['a password under its key', { password: 'hunter22' }],
    ['a nested value', { db: { url: 'postgres://a:s3cret@h/db' } }],
    ['a list item', { keys: ['fine', '-----BEGIN PRIVATE KEY-----'] }],
  ])('finds %s and names the key', (_what, fm) => {
    expect(findCredentialInValues(fm)).toMatchObject({ key: expect.any(String) });
  });
  test('ordinary values pass', () => {
    expect(findCredentialInValues({ title: 'Notes', tags: ['a', 'b'], password: 'see the vault', n: 3 })).toBeUndefined();
  });
});

describe('through the core: YAML escapes carry no credential past the scan', () => {
  const esc = (s: string) => [...s].map((c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`).join('');
  const key = `${'AKIA'}IOSFODNN7EXAMPL1`;
  test.each([
    ['\\x escapes', `---\nnote: "${esc(key.slice(0, 4))}${key.slice(4)}"\n---\nbody`],
    ['\\u escapes', `---\nnote: "\\u0041KIA${key.slice(4)}"\n---\nbody`],
    ['an escaped space in a PEM header', '---\nk: "-----BEGIN\\x20PRIVATE KEY-----"\n---\nbody'],
    ['an escaped line break inside a token', `---\nk: "${key.slice(0, 8)}\\\n  ${key.slice(8)}"\n---\nbody`],
  ])('%s', async (_what, markdown) => {
    const svc = inMemoryService();
    const me = { account: 'acct' };
    await svc.createMemory(me, 'm');
    const err = await expectMemoryError(svc.writeNote(me, 'm', 'a.md', { markdown }), 'BAD_REQUEST', 'refused_content');
    // The body scan decodes escapes too, so the raw line may be the one named.
    expect(err.message).toMatch(/front matter value of "(note|k|password)"|line 2 /);
    await expectMemoryError(svc.readNote(me, 'm', 'a.md'), 'NOT_FOUND');
  });
});
