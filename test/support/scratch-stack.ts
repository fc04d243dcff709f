import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLocalStack, type LocalStack, type LocalStackOptions } from '../../bin/local-stack/stack';

export interface ScratchStack {
  stack: LocalStack;
  dataDir: string;
  /** Stops the stack and removes its data dir. */
  close(): Promise<void>;
}

/**
 * The whole local stack on a fresh temporary data dir, without demo data, on a free port. `env` is
 * in force while it starts (it reads its configuration then) and restored after.
 */
export async function startScratchStack(prefix: string, env: Record<string, string> = {}, opts: Pick<LocalStackOptions, 'host'> = {}): Promise<ScratchStack> {
  const dataDir = mkdtempSync(join(process.env.TEST_TMP_DIR ?? tmpdir(), `${prefix}-`));
  const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  Object.assign(process.env, env);
  let stack: LocalStack;
  try {
    stack = await startLocalStack({ dataDir, port: 0, demoCount: 0, ...opts });
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
  return {
    stack,
    dataDir,
    async close() {
      await stack.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
