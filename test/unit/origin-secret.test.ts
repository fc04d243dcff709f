/**
 * The origin secret through a rotation: CloudFront takes a new header value edge by edge while
 * warm Lambda instances hold the old one. `admits` keeps the previous value for 15 minutes and reads
 * the secret again (at most once a minute) when a header matches neither, so neither side of the
 * rotation is refused; anything else is.
 */
import type { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { originAdmits, sameSecret } from '../../lambdas/shared/http/origin-guard';
import { originSecretGetter } from '../../lambdas/shared/secrets';

function fakeSecrets(initial: string): { client: SecretsManagerClient; set(v: string): void; reads(): number } {
  let value = initial;
  let reads = 0;
  const client = {
    send: async (command: { input: { VersionStage?: string } }) => {
      // No rotation in progress: no AWSPENDING version (reads of it are not counted).
      if (command.input.VersionStage === 'AWSPENDING') throw Object.assign(new Error('no pending version'), { name: 'ResourceNotFoundException' });
      reads++;
      return { SecretString: value };
    },
  } as unknown as SecretsManagerClient;
  return { client, set: (v) => (value = v), reads: () => reads };
}

describe('sameSecret', () => {
  it('compares whole values, whatever their lengths', () => {
    expect(sameSecret('abc', 'abc')).toBe(true);
    expect(sameSecret('ab', 'abc')).toBe(false);
    expect(sameSecret('abcd', 'abc')).toBe(false);
    expect(sameSecret('', 'abc')).toBe(false);
  });
});

describe('originAdmits', () => {
  it('admits everything when no secret is configured (the local stack), and only the value when one is', async () => {
    expect(await originAdmits(() => undefined, undefined)).toBe(true);
    expect(await originAdmits(() => 'v', undefined)).toBe(false);
    expect(await originAdmits(() => 'v', 'w')).toBe(false);
    expect(await originAdmits(() => 'v', 'v')).toBe(true);
  });
});

describe('originSecretGetter.admits through a rotation', () => {
  it('takes up a new value at once, keeps the old one for 15 minutes, and forces at most one read a minute', async () => {
    let now = 1_000_000;
    const fake = fakeSecrets('old-value');
    const secret = await originSecretGetter({ arn: 'arn:origin', region: 'us-east-1' }, fake.client, () => now);
    expect(fake.reads()).toBe(1);
    expect(await originAdmits(secret, 'old-value')).toBe(true);
    expect(await originAdmits(secret, undefined)).toBe(false);

    // The operator rotates: CloudFront starts sending the new value; this instance has the old one cached.
    fake.set('new-value');
    expect(await originAdmits(secret, 'new-value')).toBe(true);
    expect(fake.reads()).toBe(2);
    // Edges that still send the old value keep working during the rollout…
    expect(await originAdmits(secret, 'old-value')).toBe(true);
    // …a guess costs no read (one forced read a minute at most)…
    expect(await originAdmits(secret, 'guess')).toBe(false);
    expect(fake.reads()).toBe(2);
    // …and after 15 minutes the old value is refused too.
    now += 15 * 60 * 1000 + 1;
    expect(await originAdmits(secret, 'old-value')).toBe(false);
    expect(await originAdmits(secret, 'new-value')).toBe(true);
  });

  it('a flood of wrong headers reads the secret once a minute, not once a request', async () => {
    let now = 0;
    const fake = fakeSecrets('value');
    const secret = await originSecretGetter({ arn: 'arn:origin', region: 'us-east-1' }, fake.client, () => now);
    for (let i = 0; i < 50; i++) expect(await originAdmits(secret, `guess-${i}`)).toBe(false);
    expect(fake.reads()).toBe(2);
    now += 61_000;
    expect(await originAdmits(secret, 'guess')).toBe(false);
    expect(fake.reads()).toBe(3);
  });
});
