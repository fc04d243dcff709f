import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { keyRingJson, originSecretGetter } from '../../lambdas/shared/secrets';

/** Secrets Manager cannot run here: a client whose `send` answers GetSecretValue from a map stands in for it. */
function fakeSecrets(values: Map<string, string>): { client: SecretsManagerClient; calls: string[] } {
  const calls: string[] = [];
  const client = {
    send: async (cmd: { input: { SecretId: string; VersionStage?: string } }) => {
      const key = cmd.input.VersionStage ? `${cmd.input.SecretId}@${cmd.input.VersionStage}` : cmd.input.SecretId;
      calls.push(key);
      const v = values.get(key);
      if (v === undefined) throw Object.assign(new Error('not found'), { name: 'ResourceNotFoundException' });
      return { SecretString: v };
    },
  } as unknown as SecretsManagerClient;
  return { client, calls };
}

describe('keyRingJson', () => {
  it('reads the local file first, then the secret, and says what to set when neither is given', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'keys-')), 'cursor-keys.json');
    writeFileSync(file, '{"current":{"id":"a","secret":"x"}}');
    const { client, calls } = fakeSecrets(new Map([['arn:keys', '{"current":{"id":"b","secret":"y"}}']]));
    expect(await keyRingJson({ file, arn: 'arn:keys', region: 'us-east-1' }, client)).toContain('"a"');
    expect(calls).toEqual([]);
    expect(await keyRingJson({ arn: 'arn:keys', region: 'us-east-1' }, client)).toContain('"b"');
    await expect(keyRingJson({ region: 'us-east-1' }, client)).rejects.toThrow(/CURSOR_KEYS_FILE.*CURSOR_SECRET_ARN/);
  });
});

describe('originSecretGetter', () => {
  it('returns a literal value as it is, without reading any secret', async () => {
    const { client, calls } = fakeSecrets(new Map());
    expect((await originSecretGetter({ value: 'literal', arn: 'arn:origin', region: 'us-east-1' }, client))()).toBe('literal');
    expect((await originSecretGetter({ region: 'us-east-1' }, client))()).toBeUndefined();
    expect(calls).toEqual([]);
  });

  it('reads the secret once at init and then answers from the cache without waiting', async () => {
    const values = new Map([['arn:origin', 'v1']]);
    const { client, calls } = fakeSecrets(values);
    const get = await originSecretGetter({ arn: 'arn:origin', region: 'us-east-1' }, client);
    // The current value, and the pending one of a rotation in progress (none here: cached as none).
    expect(calls).toEqual(['arn:origin', 'arn:origin@AWSPENDING']);
    values.set('arn:origin', 'v2');
    // Within the cache's life the hot path reads nothing new.
    expect(get()).toBe('v1');
    expect(get()).toBe('v1');
    expect(calls).toEqual(['arn:origin', 'arn:origin@AWSPENDING']);
  });

  it('fails the init when the secret cannot be read (the entry answers 503 and retries)', async () => {
    const { client } = fakeSecrets(new Map());
    await expect(originSecretGetter({ arn: 'arn:missing', region: 'us-east-1' }, client)).rejects.toThrow('not found');
  });
});
