/**
 * `npm run memory:sweep`: deletes, memory by memory, the objects no head references (what writes
 * that lost a race or ran out of time stored), never one a head reaches (why: lambdas/memory/sweep.ts).
 * Prints one JSON line per memory that had any and a summary. With `--dry-run` it only counts.
 *
 *   MEMORY_TABLE=<table> MEMORY_BUCKET=<bucket> AWS_REGION=<region> npm run memory:sweep -- [--dry-run] [--grace-minutes 60]
 *
 * Locally it sweeps the stack of DATA_DIR when MEMORY_TABLE and MEMORY_BUCKET are not set (`npm
 * start` may be running: its writers wait while a memory is swept). In AWS it needs credentials that
 * may delete in the memory bucket (the functions' roles may not); a deleted object's version stays
 * for the bucket's noncurrent-version retention.
 */
import { DynamoRevLock } from '../lambdas/memory/adapters/dynamo-rev-lock';
import { S3BlobStore } from '../lambdas/memory/adapters/s3-blob-store';
import { DEFAULT_SWEEP, sweepMemory, type SweepOptions } from '../lambdas/memory/sweep';
import { dynamoClient, loadBatchSdkBudget, s3Client } from '../lambdas/shared/aws/clients';
import { flags, positiveInt } from './cli-args';
import { type MemoryTarget, memoryTarget } from './memory-target';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

export interface SweepSummary {
  memories: number;
  stored: number;
  orphans: number;
  deleted: number;
  young: number;
  skipped: number;
}

/** Sweeps every memory of `table` in `bucket`; `report` receives each memory that had unreachable items. */
export async function sweepMemories(o: MemoryTarget, opts: SweepOptions, report: (line: object) => void): Promise<SweepSummary> {
  // The head moves and deletes are the request budget's (a sweep holds writers back); listing is bulk work.
  const ddb = dynamoClient(o);
  const s3 = s3Client(o, loadBatchSdkBudget());
  const lock = new DynamoRevLock(ddb, o.table);
  const blobs = new S3BlobStore(s3, o.bucket);
  const summary: SweepSummary = { memories: 0, stored: 0, orphans: 0, deleted: 0, young: 0, skipped: 0 };
  try {
    for await (const rec of lock.scanAll()) {
      const r = await sweepMemory(lock, blobs, rec, opts);
      summary.memories++;
      summary.stored += r.stored;
      summary.orphans += r.orphans;
      summary.deleted += r.deleted;
      summary.young += r.young;
      if (r.skipped) summary.skipped++;
      if (r.orphans > 0 || r.young > 0) report(r);
    }
  } finally {
    ddb.destroy();
    s3.destroy();
  }
  return summary;
}

async function main(): Promise<void> {
  const args = flags({ 'dry-run': { type: 'boolean', default: false }, 'grace-minutes': { type: 'string' } });
  const opts: SweepOptions = {
    ...DEFAULT_SWEEP,
    dryRun: args['dry-run'] === true,
    graceMs: positiveInt(args['grace-minutes'] as string | undefined, 'grace-minutes', DEFAULT_SWEEP.graceMs / 60_000) * 60_000,
  };
  const { target, stop } = await memoryTarget();
  try {
    const s = await sweepMemories(target, opts, (line) => console.log(JSON.stringify(line)));
    console.error(
      `[memory:sweep] ${s.memories} memories, ${s.stored} stored items in ${target.table} / ${target.bucket}: ` +
        `${s.orphans} unreachable older than ${opts.graceMs / 60_000} min, ${opts.dryRun ? 'none deleted (dry run)' : `${s.deleted} deleted`}` +
        `; ${s.young} younger left` +
        (s.skipped > 0 ? `; ${s.skipped} memories skipped (retired, or a writer held the ticket: run again)` : ''),
    );
  } finally {
    await stop();
  }
}

if (require.main === module) {
  main().catch((err: unknown) => {
    console.error('[memory:sweep] failed:', err instanceof Error ? err.message : err);
    process.exit(2);
  });
}
