import { sharedLimiter } from '../shared/rate-limit/leasing-config';
import { loadAuthConfig } from '../identity/config';
import type { TokenVerifier } from '../identity/verifier';
import { createIdentity } from '../identity/wiring';
import { createMemoryRuntime, loadMemoryConfig, type MemoryRuntime } from '../memory';
import { envInt } from '../shared/env';
import { logger } from '../shared/logger';
import { cursorCodec, originSecretGetter } from '../shared/secrets';
import { mergeSettings, settingsParameter } from '../shared/settings-parameter';
import type { OriginSecretGetter } from '../shared/http/origin-guard';
import { loadMcpConfig } from './config';
import type { McpDeps } from './api';

/** The settings' merge over the environment (lambdas/shared/settings-parameter.ts), as the tests of this wiring call it. */
export { mergeSettings };

type Env = Record<string, string | undefined>;

/**
 * How a tool result tells the user to bring back a retired vault (the 409 of a write that would
 * create it). No tool restores; the recovery is the documented `/v1` route.
 */
export const mcpRestoreHint = (name: string): string => `restore it with POST /v1/memories/${name}/restore`;

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
    limiter: sharedLimiter(parts.memory.dynamodb, config.rateLimitTable, config.rateLimiter),
    idempotency: parts.memory.idempotency,
  };
}

/**
 * The dependencies built from one set of settings over the same memory runtime and origin secret.
 * CloudFront's origin secret (ORIGIN_VERIFY_SECRET_ARN) makes the function URL refuse requests that
 * did not come through the distribution.
 */
async function buildDeps(
  env: Env,
  kept?: { memory: MemoryRuntime; originSecret?: OriginSecretGetter },
): Promise<{ deps: McpDeps; memory: MemoryRuntime; originSecret?: OriginSecretGetter }> {
  const authConfig = loadAuthConfig(env);
  let memory = kept?.memory;
  let originSecret = kept?.originSecret;
  if (!memory) {
    const memoryConfig = loadMemoryConfig(env);
    const cursors = await cursorCodec({ file: env.CURSOR_KEYS_FILE, arn: env.CURSOR_SECRET_ARN, region: memoryConfig.region });
    memory = createMemoryRuntime(memoryConfig, cursors, { overrides: { restoreHint: mcpRestoreHint } });
    originSecret = await originSecretGetter({ value: env.ORIGIN_VERIFY_SECRET, arn: env.ORIGIN_VERIFY_SECRET_ARN, region: memoryConfig.region });
  }
  const deps = mcpDepsFrom({ env, memory, verifier: createIdentity(authConfig, { personalTokens: true }).verifier, audience: authConfig.audience });
  return { deps: { ...deps, ...(originSecret && { originSecret }) }, memory, ...(originSecret && { originSecret }) };
}

export interface McpDepsSourceOptions {
  /** Reads the settings (default: the Parameter Store parameter MCP_SETTINGS_PARAMETER names, when set). */
  readSettings?: () => Promise<string>;
  /** How often a warm instance looks at the parameter again (MCP_SETTINGS_REFRESH_SECONDS, default 300). */
  refreshMs?: number;
  clock?: () => number;
}

/**
 * In AWS: the dependencies from the environment and the settings parameter
 * (`MCP_SETTINGS_PARAMETER`, see lib/memory-mcp.ts: they depend on the distribution, which depends
 * on this function's URL), the cursor keys from Secrets Manager. The first request waits for them.
 * A deploy that changes the settings (another domain, other app clients) leaves this function's own
 * configuration untouched, so warm instances would keep the old audience until recycled: every
 * `refreshMs` a request reads the parameter again in the background, and when it changed the
 * verifier is rebuilt over the same memory runtime (its caches survive). A failed re-read keeps the settings in use; a failed first read fails the request
 * and is retried by the next.
 */
export function mcpDepsSource(baseEnv: Env = process.env, opts: McpDepsSourceOptions = {}): McpDepsSource {
  const clock = opts.clock ?? Date.now;
  const refreshMs = opts.refreshMs ?? envInt(baseEnv, 'MCP_SETTINGS_REFRESH_SECONDS', 300, { min: 1 }) * 1000;
  let current: Promise<{ deps: McpDeps; memory: MemoryRuntime; originSecret?: OriginSecretGetter; settings?: string; checkedAt: number }> | undefined;
  let refreshing: Promise<void> | undefined;
  const reader = opts.readSettings ?? settingsParameter(baseEnv, 'MCP_SETTINGS_PARAMETER');
  const read = (): Promise<string> | undefined => reader?.();
  const settingsName = baseEnv.MCP_SETTINGS_PARAMETER ?? 'MCP_SETTINGS_PARAMETER';

  const first = async () => {
    const settings = await read();
    const built = await buildDeps(settings === undefined ? baseEnv : mergeSettings(baseEnv, settings, settingsName));
    return { ...built, settings, checkedAt: clock() };
  };

  const refresh = async (state: Awaited<NonNullable<typeof current>>) => {
    try {
      const settings = await read();
      if (settings === undefined || settings === state.settings) {
        state.checkedAt = clock();
        return;
      }
      const built = await buildDeps(mergeSettings(baseEnv, settings, settingsName), state);
      current = Promise.resolve({ ...built, settings, checkedAt: clock() });
      logger.info('MCP settings changed: the verifier was rebuilt', { audience: built.deps.audience });
    } catch (err) {
      state.checkedAt = clock(); // try again after another interval, not on every request
      logger.warn('could not re-read the MCP settings; keeping the ones in use', { err: err instanceof Error ? err.message : String(err) });
    } finally {
      refreshing = undefined;
    }
  };

  const source = async () => {
    current ??= first().catch((err: unknown) => {
      current = undefined;
      throw err;
    });
    const state = await current;
    if (!refreshing && state.settings !== undefined && clock() - state.checkedAt >= refreshMs) refreshing = refresh(state);
    return state.deps;
  };
  return Object.assign(source, { refreshed: async () => refreshing });
}

/** The dependencies of a request; `refreshed()` settles when a background re-read in flight is done. */
export type McpDepsSource = (() => Promise<McpDeps>) & { refreshed: () => Promise<void> };
