import { findCredential } from '../../lambdas/memory/credentials';

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
  ])('%p', (text) => {
    expect(findCredential(text)).toBeUndefined();
  });
});
