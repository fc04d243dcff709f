import type { SSMClient } from '@aws-sdk/client-ssm';
import { traced } from './observability/tracing';

type Env = Record<string, string | undefined>;

/**
 * Deploy-time settings of a function that CloudFormation cannot put in its environment (they
 * depend on the distribution whose origin is the function's own URL: lib/settings-parameter.ts),
 * kept in an SSM Parameter Store String parameter of a fixed name: a JSON object of environment
 * variables. Nothing in it is a credential, so it is not a secret (a standard parameter costs
 * nothing; a secret $0.40 a month).
 *
 * GetParameter's default throughput (40 calls a second, shared by the account's GetParameter,
 * GetParameters and GetParametersByPath in the region) is far above a read per instance at init
 * and one per instance every few minutes, but a burst of cold starts can meet it: the client makes
 * one attempt more than the SDK's default 3, whose backoff after a throttled call (a random wait of
 * up to 1, 2, then 4 s) keeps the worst first request within 7 s, well inside the functions'
 * timeouts; past that the request is a 503 the client retries.
 */
const MAX_ATTEMPTS = 4;

/** Loaded on first use, as secrets.ts's client: only the functions whose settings depend on the distribution read one. */
async function parameterStoreClient(region: string): Promise<SSMClient> {
  const { SSMClient: Client } = await import('@aws-sdk/client-ssm');
  return traced(new Client({ region, maxAttempts: MAX_ATTEMPTS }));
}

/**
 * The reader of a settings source: the String parameter named by `env[variable]`, read afresh on
 * each call (the source decides how often: its refresh interval) over one client made on the first
 * read; undefined when the variable is unset (the local stack and tests set the environment itself).
 */
export function settingsParameter(env: Env, variable: string): (() => Promise<string>) | undefined {
  const name = env[variable];
  if (!name) return undefined;
  let client: Promise<SSMClient> | undefined;
  return async () => {
    client ??= parameterStoreClient(env.AWS_REGION ?? 'us-east-1');
    const [{ GetParameterCommand }, ssm] = await Promise.all([import('@aws-sdk/client-ssm'), client]);
    const out = await ssm.send(new GetParameterCommand({ Name: name }));
    if (out.Parameter?.Value === undefined) throw new Error(`parameter ${name} has no value`);
    return out.Parameter.Value;
  };
}

/** The settings parameter's variables over the environment; anything but a JSON object of strings is refused (`name`: which parameter). */
export function mergeSettings(env: Env, json: string, name?: string): Env {
  const which = name ? `${name}: the settings parameter` : 'the settings parameter';
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    throw new Error(`${which} is not JSON`);
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed) || Object.values(parsed).some((v) => typeof v !== 'string')) {
    throw new Error(`${which} must be a JSON object of strings`);
  }
  return { ...env, ...(parsed as Record<string, string>) };
}
