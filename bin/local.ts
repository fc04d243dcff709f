import { flags } from './cli-args';
import { startLocalStack } from './local-stack/stack';

/**
 * `npm start [-- --no-demo]`: the whole service on http://localhost:$PORT with data under
 * $DATA_DIR. An empty catalog gets 300 demo servers unless `--no-demo` or `DEMO_DATA=0` says not.
 */
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

async function main(): Promise<void> {
  const args = flags({ 'no-demo': { type: 'boolean' } });
  const noDemo = args['no-demo'] === true || /^(0|false|no|off)$/i.test(process.env.DEMO_DATA ?? '');
  const started = Date.now();
  const stack = await startLocalStack({ log: (m) => console.error(`[local] ${m}`), ...(noDemo && { demoCount: 0 }) });
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
