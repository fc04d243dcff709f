import { createCatalogHandler } from '../../lambdas/catalog/api';
import { CATALOG_API } from '../../lambdas/catalog/routes';
import { EmbeddedSearchIndex } from '../../lambdas/catalog/search/embedded';
import { createCatalogDeps } from '../../lambdas/catalog/wiring';
import type { CatalogDeps } from '../../lambdas/catalog/deps';
import { startDynamoLocal, startS3Server, type Backend } from './backends';
import { localCatalogConfig, provision } from './catalog-env';
import { clearStackInfo, dataDir, ensureCursorKeys, writeStackInfo } from './data-dir';
import { seedCatalog } from './seed';
import { createLocalServer, listen, type RunningServer } from './server';

export interface LocalStackOptions {
  /** Data directory (default `DATA_DIR` or `.data/`). */
  dataDir?: string;
  port?: number;
  host?: string;
  /** Servers seeded into an empty catalog (default 300; 0 disables). */
  demoCount?: number;
  log?: (msg: string) => void;
}

export interface LocalStack {
  url: string;
  port: number;
  catalog: CatalogDeps;
  backends: Backend[];
  close(): Promise<void>;
}

/** `npm start`: the backends, the provisioned resources, demo data when empty, and the HTTP server. */
export async function startLocalStack(opts: LocalStackOptions = {}): Promise<LocalStack> {
  const log = opts.log ?? (() => undefined);
  const dir = dataDir(opts.dataDir);
  ensureCursorKeys(dir);
  let ready = false;
  const backends: Backend[] = [];
  let running: RunningServer | undefined;
  const close = async () => {
    clearStackInfo(dir);
    await running?.close();
    await Promise.all(backends.map((b) => b.stop()));
  };
  try {
    // The port is taken first so /healthz answers 503 while the backends start.
    let deps: CatalogDeps | undefined;
    const handler = createCatalogHandler(async () => {
      if (!deps) throw new Error('catalog not ready');
      return deps;
    });
    running = await listen(
      createLocalServer({ apis: [{ table: CATALOG_API, functions: { catalog: handler } }], ready: () => ready }),
      opts.port ?? Number(process.env.PORT ?? 3000),
      opts.host,
    );
    log(`listening on ${running.url} (starting backends…)`);
    const [ddb, s3] = await Promise.all([
      startDynamoLocal({ dbPath: dir.dynamo, pidFile: `${dir.runDir}/dynamodb.pid` }),
      startS3Server({ dir: dir.s3, pidFile: `${dir.runDir}/s3.pid`, buckets: [] }),
    ]);
    backends.push(ddb, s3);
    const config = localCatalogConfig(dir, ddb.endpoint, s3.endpoint);
    await provision(config);
    const index = new EmbeddedSearchIndex({ snapshotPath: dir.searchSnapshot });
    deps = await createCatalogDeps(config, index);
    writeStackInfo(dir, { pid: process.pid, url: running.url, dynamoEndpoint: ddb.endpoint, s3Endpoint: s3.endpoint });

    const demo = opts.demoCount ?? 300;
    if (demo > 0 && (await index.slugs()).length === 0) {
      log(`empty catalog: seeding ${demo} demo servers`);
      await seedCatalog(config, index, demo);
    }
    ready = true;
    return { url: running.url, port: running.port, catalog: deps, backends, close };
  } catch (err) {
    await close();
    throw err;
  }
}
