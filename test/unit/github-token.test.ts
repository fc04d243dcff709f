/**
 * The crawler's GitHub token in AWS: a Secrets Manager secret named by the stage's config
 * (`githubTokenSecretName`). A fake client stands in for Secrets Manager.
 */
import type { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { loadCrawlerConfig } from '../../lambdas/crawler/config';
import { githubTokenSource } from '../../lambdas/crawler/wiring';

function fake(answer: () => Promise<{ SecretString?: string }>): { client: SecretsManagerClient; calls: () => number } {
  let calls = 0;
  const client = {
    send: async () => {
      calls++;
      return answer();
    },
  } as unknown as SecretsManagerClient;
  return { client, calls: () => calls };
}

const config = (env: Record<string, string>) => loadCrawlerConfig(env);

it('reads a plain token or JSON {"token"}, and caches it', async () => {
  const plain = fake(async () => ({ SecretString: ' ghp_plain \n' }));
  const source = githubTokenSource(config({ GITHUB_TOKEN_SECRET_ARN: 'mcp-catalog/github-token' }), 'eu-west-1', plain.client);
  expect(await source?.()).toBe('ghp_plain');
  expect(await source?.()).toBe('ghp_plain');
  expect(plain.calls()).toBe(1);
  const json = fake(async () => ({ SecretString: '{"token":"ghp_json"}' }));
  expect(await githubTokenSource(config({ GITHUB_TOKEN_SECRET_ARN: 'x' }), 'eu-west-1', json.client)?.()).toBe('ghp_json');
});

it('a secret that does not exist yet is no token (asked once), not a failed crawl; other errors still fail', async () => {
  const absent = fake(async () => {
    throw Object.assign(new Error("Secrets Manager can't find the specified secret."), { name: 'ResourceNotFoundException' });
  });
  const source = githubTokenSource(config({ GITHUB_TOKEN_SECRET_ARN: 'mcp-catalog/github-token' }), 'eu-west-1', absent.client);
  expect(await source?.()).toBeUndefined();
  expect(await source?.()).toBeUndefined();
  expect(absent.calls()).toBe(1);
  const denied = fake(async () => {
    throw Object.assign(new Error('not authorized'), { name: 'AccessDeniedException' });
  });
  await expect(githubTokenSource(config({ GITHUB_TOKEN_SECRET_ARN: 'x' }), 'eu-west-1', denied.client)?.()).rejects.toThrow(/not authorized/);
});

it('without a secret or GITHUB_TOKEN there is no token source at all', () => {
  expect(githubTokenSource(config({}), 'eu-west-1')).toBeUndefined();
});
