import { embeddedSearchIndex } from '../../lambdas/catalog-core';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { localCatalogConfig, provision } from '../../bin/local-stack/catalog-env';
import { dataDir, type DataDir } from '../../bin/local-stack/data-dir';
import { seedCatalog } from '../../bin/local-stack/seed';
import { createLocalServer, listen, type LambdaLike, type RunningServer } from '../../bin/local-stack/server';
import { createCatalogHandler } from '../../lambdas/catalog/api';
import type { CatalogDeps } from '../../lambdas/catalog/deps';
import { CATALOG_API } from '../../lambdas/catalog/routes';
import { createCatalogDeps } from '../../lambdas/catalog/wiring';
import type { CatalogConfig } from '../../lambdas/catalog/config';

/**
 * A catalog served by the real local HTTP server and real handlers against the test run's
 * DynamoDB Local and S3 server, on tables and a bucket of its own.
 */
export interface TestCatalog {
  url: string;
  deps: CatalogDeps;
  config: CatalogConfig;
  get(path: string, init?: RequestInit): Promise<Response>;
  close(): Promise<void>;
}

let counter = 0;

/** A catalog's own place in the test run's backends: the endpoints, a data dir and cursor keys of its own. */
export interface CatalogScratch {
  id: string;
  dir: DataDir;
  ddbEndpoint: string;
  s3Endpoint: string;
  /** The local config on tables, a bucket and cursor keys named after `id`, without a search snapshot. */
  config: CatalogConfig;
}

/** `prefix` names the data dir and keys file, so a harness's files are told apart in the run's tmp dir. */
export function catalogScratch(prefix = ''): CatalogScratch {
  const ddbEndpoint = process.env.TEST_DYNAMODB_ENDPOINT;
  const s3Endpoint = process.env.TEST_S3_ENDPOINT;
  const tmp = process.env.TEST_TMP_DIR;
  if (!ddbEndpoint || !s3Endpoint || !tmp) throw new Error('test backends are not running (jest globalSetup)');
  const id = `${process.pid}-${++counter}-${randomBytes(3).toString('hex')}`;
  const dir = dataDir(join(tmp, `${prefix}${id}`));
  const keys = join(tmp, `${prefix}${id}-keys.json`);
  writeFileSync(keys, JSON.stringify({ current: { id: 1, secret: randomBytes(32).toString('base64') } }));
  const config: CatalogConfig = {
    ...localCatalogConfig(dir, ddbEndpoint, s3Endpoint),
    catalogTable: `catalog-${id}`,
    rateLimitTable: `rate-${id}`,
    iconsBucket: `icons-${id}`.toLowerCase(),
    searchSnapshotPath: undefined,
    cursorKeysFile: keys,
  };
  return { id, dir, ddbEndpoint, s3Endpoint, config };
}

/** The favorites routes of the table: not what these tests are about (`auth-harness.ts` serves them). */
const notServed: LambdaLike = async () => {
  throw new Error('favorites are not served by the catalog harness; use test/support/auth-harness.ts');
};

export async function startTestCatalog(opts: { seed?: number; config?: Partial<CatalogConfig> } = {}): Promise<TestCatalog> {
  const scratch = catalogScratch();
  const { id } = scratch;
  const config: CatalogConfig = {
    ...scratch.config,
    trustTable: `trust-${id}`,
    allowList: { bucket: `org-${id}`.toLowerCase(), key: 'org/allow-list.yaml' },
    // Tests that are not about the limit run with a high one (DECISIONS); limit tests pass their own.
    anonymous: { rate: 100000, burst: 100000 },
    ...opts.config,
  };
  await provision(config, { auth: false });
  const index = embeddedSearchIndex({});
  const deps = await createCatalogDeps(config, index);
  if (opts.seed) await seedCatalog(config, index, opts.seed);
  const handler = createCatalogHandler(async () => deps);
  const running: RunningServer = await listen(
    createLocalServer({ apis: [{ table: CATALOG_API, functions: { catalog: handler, favorites: notServed } }], ready: () => true }),
    0,
  );
  return {
    url: running.url,
    deps,
    config,
    get: (path, init) => fetch(`${running.url}${path}`, init),
    close: () => running.close(),
  };
}
