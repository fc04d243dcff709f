import { loadAuthConfig } from '../../lambdas/identity/config';
import { loadFavoritesConfig } from '../../lambdas/catalog/favorites/deps';
import type { AuthTableNames } from '../../lambdas/identity/tables';
import { dynamoClient, loadBatchSdkBudget, s3Client } from '../../lambdas/shared/aws/clients';
import { loadCatalogConfig, type CatalogConfig } from '../../lambdas/catalog/config';
import { startDynamoLocal, startS3Server, type Backend } from './backends';
import { dataDir, ensureCursorKeys, runningStack, type DataDir } from './data-dir';
import { ensureBuckets, ensureTables, tableDefinitions } from './provision';

/**
 * The backends of one data dir, provisioned: either those of a running `npm start` (so CLIs can
 * write while the server runs, without a second DynamoDB Local on the same files) or our own.
 */
export interface LocalBackends {
  dir: DataDir;
  config: CatalogConfig;
  /** True when these backends belong to a running `npm start`. */
  attached: boolean;
  stop(): Promise<void>;
}

export function localCatalogConfig(dir: DataDir, dynamoEndpoint: string, s3Endpoint: string): CatalogConfig {
  return {
    ...loadCatalogConfig(),
    dynamoEndpoint,
    s3Endpoint,
    searchBackend: 'embedded',
    searchSnapshotPath: dir.searchSnapshot,
    cursorKeysFile: dir.cursorKeys,
  };
}

export async function openBackends(root?: string, opts: { attach?: boolean } = {}): Promise<LocalBackends> {
  const dir = dataDir(root);
  ensureCursorKeys(dir);
  const running = opts.attach === false ? undefined : runningStack(dir);
  let owned: Backend[] = [];
  let dynamoEndpoint: string;
  let s3Endpoint: string;
  if (running) {
    dynamoEndpoint = running.dynamoEndpoint;
    s3Endpoint = running.s3Endpoint;
  } else {
    const [ddb, s3] = await Promise.all([
      startDynamoLocal({ dbPath: dir.dynamo, pidFile: `${dir.runDir}/dynamodb.pid` }),
      startS3Server({ dir: dir.s3, pidFile: `${dir.runDir}/s3.pid`, buckets: [] }),
    ]);
    owned = [ddb, s3];
    dynamoEndpoint = ddb.endpoint;
    s3Endpoint = s3.endpoint;
  }
  const config = localCatalogConfig(dir, dynamoEndpoint, s3Endpoint);
  await provision(config);
  return {
    dir,
    config,
    attached: !!running,
    stop: async () => {
      await Promise.all(owned.map((b) => b.stop()));
    },
  };
}

/** The auth context's table names as the handlers read them (AUTH_TOKEN_TABLE, AUTH_CLIENT_TABLE, FAVORITES_TABLE). */
export function authTableNames(env: Record<string, string | undefined> = process.env): AuthTableNames {
  const auth = loadAuthConfig(env);
  return { tokens: auth.tokenTable ?? 'auth-tokens', clients: auth.clientTable, favorites: loadFavoritesConfig(env).favoritesTable };
}

/**
 * Creates what is missing of the catalog's tables and bucket and of the auth tables (tokens,
 * clients, favorites). Tests pass table names of their own, or `auth: false` to skip the latter.
 */
export async function provision(config: CatalogConfig, opts: { auth?: AuthTableNames | false } = {}): Promise<void> {
  const clientOpts = { region: config.region, dynamoEndpoint: config.dynamoEndpoint, s3Endpoint: config.s3Endpoint };
  const ddb = dynamoClient(clientOpts, loadBatchSdkBudget());
  const s3 = s3Client(clientOpts, loadBatchSdkBudget());
  const auth = opts.auth ?? authTableNames();
  try {
    await ensureTables(ddb, [...tableDefinitions({ catalog: config.catalogTable, trust: config.trustTable, rateLimits: config.rateLimitTable }, auth)]);
    await ensureBuckets(s3, [config.iconsBucket, config.allowList.bucket]);
  } finally {
    ddb.destroy();
    s3.destroy();
  }
}
