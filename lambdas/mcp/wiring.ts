import { loadAuthConfig } from '../auth/config';
import type { TokenVerifier } from '../auth/verifier';
import { createAuthDeps } from '../auth/wiring';
import { loadMemoryConfig } from '../memory/config';
import { createMemoryRuntime, type MemoryRuntime } from '../memory/wiring';
import { parseKeyRing } from '../shared/cursor';
import { DynamoTokenBuckets } from '../shared/rate-limit/dynamo-rate-limiter';
import { LeasingRateLimiter } from '../shared/rate-limit/rate-limiter';
import { CachedSecret, keyRingJson, secretsClient } from '../shared/secrets';
import { loadMcpConfig } from './config';
import type { McpDeps } from './http';

type Env = Record<string, string | undefined>;

/**
 * The MCP function's dependencies from parts that already exist: the memory runtime and the
 * verifier (the local stack shares its own with /v1 and favorites), and the shared rate-limit
 * table on the runtime's DynamoDB client.
 */
export function mcpDepsFrom(parts: { env: Env; memory: MemoryRuntime; verifier: TokenVerifier; audience: string }): McpDeps {
  const config = loadMcpConfig(parts.env);
  return {
    config,
    audience: parts.audience,
    verifier: parts.verifier,
    memory: parts.memory.service,
    limiter: new LeasingRateLimiter(new DynamoTokenBuckets(parts.memory.dynamodb, config.rateLimitTable), { leaseFraction: config.rateLeaseFraction }),
  };
}

/**
 * Settings kept in a secret rather than in the environment (`MCP_SETTINGS_SECRET`, see
 * lib/memory-mcp.ts: they depend on the distribution, which depends on this function's URL). The
 * secret is a JSON object of environment variables; they are merged over the environment.
 */
async function withSettings(env: Env): Promise<Env> {
  const name = env.MCP_SETTINGS_SECRET;
  if (!name) return env;
  return mergeSettings(env, await new CachedSecret(await secretsClient(env.AWS_REGION ?? 'us-east-1'), name).get(), name);
}

/** The settings secret's variables over the environment; anything but a JSON object of strings is refused. */
export function mergeSettings(env: Env, json: string, name = 'MCP_SETTINGS_SECRET'): Env {
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    throw new Error(`${name}: the settings secret is not JSON`);
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed) || Object.values(parsed).some((v) => typeof v !== 'string')) {
    throw new Error(`${name}: the settings secret must be a JSON object of strings`);
  }
  return { ...env, ...(parsed as Record<string, string>) };
}

/** In AWS: configuration from the environment (and the settings secret), the cursor keys from Secrets Manager. */
export async function createMcpDeps(baseEnv: Env = process.env): Promise<McpDeps> {
  const env = await withSettings(baseEnv);
  const memoryConfig = loadMemoryConfig(env);
  const authConfig = loadAuthConfig(env);
  const keys = await keyRingJson({ file: env.CURSOR_KEYS_FILE, arn: env.CURSOR_SECRET_ARN, region: memoryConfig.region });
  const memory = createMemoryRuntime(memoryConfig, parseKeyRing(keys));
  return mcpDepsFrom({ env, memory, verifier: createAuthDeps(authConfig).verifier, audience: authConfig.audience });
}
