import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDynamoLocal, startS3Server, type Backend } from '../../bin/local-stack/backends';

/**
 * One DynamoDB Local (in memory) and one S3 server for the whole test run; each test file gets
 * its own tables and buckets on them (see `catalog-harness.ts`). The watchdogs kill both if jest dies.
 */
export default async function globalSetup(): Promise<void> {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
  // The SDK clients of the run (this readiness check, the harnesses and fixtures in the workers, the
  // stacks tests spawn: all inherit this environment) wait as long as a loaded machine needs. The
  // production budgets (1 s to connect, 1.5 s per DynamoDB call) are for a Lambda beside DynamoDB,
  // not for a DynamoDB Local starting or sharing two cores with other test files: there a call timed
  // out, the backends did not start, or a 503 failed a test. Tests of the budgets pass their own
  // (aws-clients.test.ts); the fault tests give their instances theirs (local-stack-instances.test.ts).
  process.env.AWS_CONNECT_TIMEOUT_MS ??= '10000';
  process.env.AWS_DYNAMODB_TIMEOUT_MS ??= '20000';
  process.env.AWS_S3_TIMEOUT_MS ??= '30000';
  const dir = mkdtempSync(join(tmpdir(), 'catalog-test-'));
  const [ddb, s3] = await Promise.all([startDynamoLocal({}), startS3Server({ dir: join(dir, 's3'), buckets: [] })]);
  process.env.TEST_DYNAMODB_ENDPOINT = ddb.endpoint;
  process.env.TEST_S3_ENDPOINT = s3.endpoint;
  process.env.TEST_TMP_DIR = dir;
  (globalThis as { __backends?: Backend[] }).__backends = [ddb, s3];
}
