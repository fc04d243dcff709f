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
  const dir = mkdtempSync(join(tmpdir(), 'catalog-test-'));
  const [ddb, s3] = await Promise.all([startDynamoLocal({}), startS3Server({ dir: join(dir, 's3'), buckets: [] })]);
  process.env.TEST_DYNAMODB_ENDPOINT = ddb.endpoint;
  process.env.TEST_S3_ENDPOINT = s3.endpoint;
  process.env.TEST_TMP_DIR = dir;
  (globalThis as { __backends?: Backend[] }).__backends = [ddb, s3];
}
