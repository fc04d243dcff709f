import { startLocalStack } from './local-stack/stack';

/** `npm start`: the whole service on http://localhost:$PORT with data under $DATA_DIR. */
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

async function main(): Promise<void> {
  const started = Date.now();
  const stack = await startLocalStack({ log: (m) => console.error(`[local] ${m}`) });
  console.error(`[local] ready in ${Date.now() - started} ms: catalog ${stack.url}/api/mcps · health ${stack.url}/healthz`);
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.error(`[local] ${signal}: stopping`);
    stack.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}

main().catch((err: unknown) => {
  console.error('[local] failed to start:', err instanceof Error ? err.message : err);
  process.exit(1);
});
