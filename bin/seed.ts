import { embeddedSearchIndex } from '../lambdas/catalog-core';
import { flags, nonNegativeInt, positiveInt } from './cli-args';
import { openBackends } from './local-stack/catalog-env';
import { seedCatalog } from './local-stack/seed';

/** `npm run seed -- --count N [--seed S]`: N synthetic servers into the catalog in DATA_DIR (replacing it; 0 empties it). */
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

async function main(): Promise<void> {
  const args = flags({ count: { type: 'string' }, seed: { type: 'string' } });
  const count = nonNegativeInt(args.count, 'count', 300);
  const seed = positiveInt(args.seed, 'seed', 1);
  const started = Date.now();
  const backends = await openBackends();
  try {
    console.error(`[seed] ${backends.attached ? 'using the running local stack' : 'started local backends'} in ${backends.dir.root}`);
    const index = embeddedSearchIndex({ snapshotPath: backends.config.searchSnapshotPath });
    // A terminal gets one line rewritten in place; a pipe or a log file gets a line per tenth.
    const tty = process.stderr.isTTY === true;
    let reported = 0;
    const result = await seedCatalog(backends.config, index, count, {
      seed,
      onProgress: (done, total) => {
        if (tty) process.stderr.write(`\r[seed] ${done}/${total} servers`);
        else if (done === total || done - reported >= total / 10) {
          reported = done;
          process.stderr.write(`[seed] ${done}/${total} servers\n`);
        }
      },
    });
    if (tty) process.stderr.write('\n');
    console.log(
      `seeded ${result.servers} servers (${result.icons} icons, ${result.removed} removed), ${result.withHistory} with check history, in ${((Date.now() - started) / 1000).toFixed(1)} s`,
    );
  } finally {
    await backends.stop();
  }
}

main().catch((err: unknown) => {
  console.error('[seed] failed:', err instanceof Error ? err.message : err);
  process.exit(1);
});
