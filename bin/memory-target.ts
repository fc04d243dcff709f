/**
 * The memory table and bucket an operator command works on (`memory:sweep`, `memory:verify`):
 * MEMORY_TABLE and MEMORY_BUCKET as set (AWS, with AWS_REGION), else the local stack of DATA_DIR
 * (the running one, or its backends started for the command and stopped by `stop`).
 */
import { loadMemoryConfig } from '../lambdas/memory/config';
import { openBackends } from './local-stack/catalog-env';

export interface MemoryTarget {
  table: string;
  bucket: string;
  region: string;
  dynamoEndpoint?: string;
  s3Endpoint?: string;
}

export async function memoryTarget(env: NodeJS.ProcessEnv = process.env): Promise<{ target: MemoryTarget; stop: () => Promise<void> }> {
  const c = loadMemoryConfig(env);
  if (env.MEMORY_TABLE && env.MEMORY_BUCKET) {
    return {
      target: { table: c.memoryTable, bucket: c.memoryBucket, region: c.region, dynamoEndpoint: c.dynamoEndpoint, s3Endpoint: c.s3Endpoint },
      stop: async () => undefined,
    };
  }
  const backends = await openBackends();
  return {
    target: {
      table: c.memoryTable,
      bucket: c.memoryBucket,
      region: backends.config.region,
      dynamoEndpoint: backends.config.dynamoEndpoint,
      s3Endpoint: backends.config.s3Endpoint,
    },
    stop: backends.stop,
  };
}
