import { loadAuthConfig } from '../identity/config';
import { createIdentity } from '../identity/wiring';
import { envInt } from '../shared/env';
import { logger } from '../shared/logger';
import { createMemoryRuntime, type MemoryRuntime } from '../memory';
import { cursorCodec } from '../shared/secrets';
import { mergeSettings, settingsParameter } from '../shared/settings-parameter';
import { loadMemoryApiConfig } from './config';
import type { MemoryApiDeps } from './deps';
import { createMemoryApiDeps, v1RestoreHint } from './wiring';

type Env = Record<string, string | undefined>;

/** The settings' merge over the environment (lambdas/shared/settings-parameter.ts), as the tests of this source call it. */
export { mergeSettings };

export interface SettingsSourceOptions {
  /** Reads the settings (default: the Parameter Store parameter MEMORY_SETTINGS_PARAMETER names, when set). */
  readSettings?: () => Promise<string>;
  /** Builds the dependencies from a merged environment, over the runtime of an earlier build when given (default: the /v1 wiring). */
  build?: (env: Env, runtime?: MemoryRuntime) => Promise<Built>;
  refreshMs?: number;
  clock?: () => number;
}

export interface Built {
  deps: MemoryApiDeps;
  runtime: MemoryRuntime;
}

/** A rebuild keeps the memory runtime (its clients and caches); only the verifier's settings change. */
async function defaultBuild(env: Env, runtime?: MemoryRuntime): Promise<Built> {
  const config = loadMemoryApiConfig(env);
  const rt =
    runtime ??
    createMemoryRuntime(config.memory, await cursorCodec({ file: config.cursorKeysFile, arn: config.cursorSecretArn, region: config.memory.region }), {
      overrides: { restoreHint: v1RestoreHint },
    });
  // The git function accepts personal access tokens as git passwords; it does not manage them (`/v1/tokens` is the API's).
  return { deps: await createMemoryApiDeps(config, createIdentity(loadAuthConfig(env), { personalTokens: true }).verifier, { runtime: rt }), runtime: rt };
}

/**
 * The git remote's function in AWS sits behind a function URL that the distribution points at, and
 * the verifier's settings (the audience `<PUBLIC_URL>/mcp`, Cognito's app clients) depend on the
 * distribution: in the function's environment they would close a dependency cycle. As for `/mcp`,
 * they live in a Parameter Store parameter the function names by a fixed name
 * (`MEMORY_SETTINGS_PARAMETER`, a JSON object of variables merged over the environment), read at
 * initialisation and again every `MEMORY_SETTINGS_REFRESH_SECONDS` (300) in the background of a
 * request, so a deploy that changes them reaches warm instances; a failed re-read keeps the
 * settings in use.
 */
export function settingsDepsSource(baseEnv: Env = process.env, opts: SettingsSourceOptions = {}): () => Promise<MemoryApiDeps> {
  const clock = opts.clock ?? Date.now;
  const build = opts.build ?? defaultBuild;
  const refreshMs = opts.refreshMs ?? envInt(baseEnv, 'MEMORY_SETTINGS_REFRESH_SECONDS', 300, { min: 1 }) * 1000;
  const reader = opts.readSettings ?? settingsParameter(baseEnv, 'MEMORY_SETTINGS_PARAMETER');
  const read = (): Promise<string> | undefined => reader?.();
  const settingsName = baseEnv.MEMORY_SETTINGS_PARAMETER ?? 'MEMORY_SETTINGS_PARAMETER';
  type State = Built & { settings?: string; checkedAt: number };
  let current: Promise<State> | undefined;
  let refreshing = false;

  const refresh = async (state: State): Promise<void> => {
    refreshing = true;
    try {
      const settings = await read();
      if (settings !== undefined && settings !== state.settings) {
        current = Promise.resolve({ ...(await build(mergeSettings(baseEnv, settings, settingsName), state.runtime)), settings, checkedAt: clock() });
        logger.info('memory settings changed: the verifier was rebuilt');
      } else state.checkedAt = clock();
    } catch (err) {
      state.checkedAt = clock();
      logger.warn('could not re-read the memory settings; keeping the ones in use', { err: err instanceof Error ? err.message : String(err) });
    } finally {
      refreshing = false;
    }
  };

  return async () => {
    current ??= (async () => {
      const settings = await read();
      return { ...(await build(settings === undefined ? baseEnv : mergeSettings(baseEnv, settings, settingsName))), settings, checkedAt: clock() };
    })().catch((err: unknown) => {
      current = undefined;
      throw err;
    });
    const state = await current;
    if (!refreshing && state.settings !== undefined && clock() - state.checkedAt >= refreshMs) void refresh(state);
    return state.deps;
  };
}
