/**
 * `npm run memory:verify`: after a restore (README, "Restore"), checks that every memory of a rev
 * table can be read back from the memory bucket: every object its head commit reaches is there.
 * Prints one JSON line per memory with missing objects (their S3 keys) and a summary; exits 1 when
 * anything is missing. Read-only: it scans the table and reads objects, nothing else.
 *
 *   MEMORY_TABLE=<restored table> MEMORY_BUCKET=<bucket> AWS_REGION=<region> npm run memory:verify
 *
 * Locally it checks the stack of DATA_DIR when MEMORY_TABLE and MEMORY_BUCKET are not set
 * (`npm start` must be running, or its backends are started for the check).
 */
import { DynamoRevLock } from '../lambdas/memory/adapters/dynamo-rev-lock';
import { S3BlobStore } from '../lambdas/memory/adapters/s3-blob-store';
import { checkHistory } from '../lambdas/memory/integrity';
import { dynamoClient, loadBatchSdkBudget, s3Client } from '../lambdas/shared/aws/clients';
import { type MemoryTarget, memoryTarget } from './memory-target';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

export interface VerifySummary {
  memories: number;
  objects: number;
  damaged: number;
  missingObjects: number;
  missingIndexes: number;
}

/** Checks every memory of `table` against `bucket`; `report` receives each damaged memory. */
export async function verifyMemories(o: MemoryTarget, report: (line: object) => void): Promise<VerifySummary> {
  const ddb = dynamoClient(o, loadBatchSdkBudget());
  const s3 = s3Client(o, loadBatchSdkBudget());
  const lock = new DynamoRevLock(ddb, o.table);
  const blobs = new S3BlobStore(s3, o.bucket);
  const summary: VerifySummary = { memories: 0, objects: 0, damaged: 0, missingObjects: 0, missingIndexes: 0 };
  try {
    for await (const rec of lock.scanAll()) {
      const r = await checkHistory(blobs, rec);
      summary.memories++;
      summary.objects += r.objects;
      if (r.indexMissing) summary.missingIndexes++;
      if (r.missing.length > 0) {
        summary.damaged++;
        summary.missingObjects += r.missing.length;
        report({ account: r.account, memory: r.name, state: r.state, head: r.head, missing: r.missing.map((m) => m.key) });
      }
    }
  } finally {
    ddb.destroy();
    s3.destroy();
  }
  return summary;
}

async function main(): Promise<void> {
  const { target, stop } = await memoryTarget();
  try {
    const summary = await verifyMemories(target, (line) => console.log(JSON.stringify(line)));
    console.error(
      `[memory:verify] ${summary.memories} memories, ${summary.objects} objects checked in ${target.table} / ${target.bucket}: ` +
        (summary.damaged === 0
          ? 'every head is complete'
          : `${summary.damaged} memories miss ${summary.missingObjects} objects (keys above): bring them back from their versions (README, "Restore")`) +
        (summary.missingIndexes > 0 ? `; ${summary.missingIndexes} head indexes are missing (rebuilt on the next read)` : ''),
    );
    if (summary.damaged > 0) process.exitCode = 1;
  } finally {
    await stop();
  }
}

if (require.main === module) {
  main().catch((err: unknown) => {
    console.error('[memory:verify] failed:', err instanceof Error ? err.message : err);
    process.exit(2);
  });
}
