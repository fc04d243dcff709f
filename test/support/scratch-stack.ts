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
 * in force while it starts (it reads its configuration then) and restored after. With `attachTo`,
 * another instance of a scratch stack already running (its data dir, kept when this one closes),
 * as a second Lambda instance shares the first one's tables and bucket.
 */
export async function startScratchStack(
  prefix: string,
  givenEnv: Record<string, string> = {},
  opts: Pick<LocalStackOptions, 'host' | 'clock'> & { attachTo?: string } = {},
): Promise<ScratchStack> {
  // SDK budgets a loaded test machine stays within, unless a test sets its own: a 1.5 s DynamoDB
  // timeout retried by the SDK charged a rate-limit bucket twice for one request (the write had
  // landed), and a 1 s connect timeout turned a busy s3rver into 503s. The production budgets are
  // tested in aws-clients.test.ts and by the fault tests of local-stack-instances.test.ts.
  // The write budget likewise (MEMORY_WRITE_BUDGET_MS): its own tests set it.
  const env = {
    AWS_CONNECT_TIMEOUT_MS: '10000',
    AWS_DYNAMODB_TIMEOUT_MS: '20000',
    AWS_S3_TIMEOUT_MS: '30000',
    MEMORY_WRITE_BUDGET_MS: '120000',
    ...givenEnv,
  };
  const { attachTo, ...stackOpts } = opts;
  const dataDir = attachTo ?? mkdtempSync(join(process.env.TEST_TMP_DIR ?? tmpdir(), `${prefix}-`));
  const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  Object.assign(process.env, env);
  let stack: LocalStack;
  try {
    stack = await startLocalStack({ dataDir, port: 0, demoCount: 0, ...stackOpts });
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
      if (!attachTo) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
