import { rebuildIndex, embeddedSearchIndex } from '../../lambdas/catalog-core';
import { loadAuthConfig, localIssuerIdentity, publicUrl, type AuthConfig } from '../../lambdas/identity/config';
import { createFavoritesHandler } from '../../lambdas/catalog/favorites/api';
import { loadFavoritesConfig, type FavoritesDeps } from '../../lambdas/catalog/favorites/deps';
import { createFavoritesDeps } from '../../lambdas/catalog/favorites/wiring';
import { createJwksHandler, LocalIssuer, LOCAL_ISSUER_API } from '../../lambdas/identity/local-issuer';
import type { PersonalTokens } from '../../lambdas/identity/personal-token-service';
import { createIdentity } from '../../lambdas/identity/wiring';
import { createOAuthHandler, oauthPolicy } from '../../lambdas/oauth/api';
import { loadOAuthFrontConfig } from '../../lambdas/oauth/config';
import type { OAuthDeps } from '../../lambdas/oauth/deps';
import { OAUTH_API, wellKnownTable } from '../../lambdas/oauth/routes';
import { createClientStore, createOAuthDeps, createOAuthLimiter } from '../../lambdas/oauth/wiring';
import { CATALOG_POLICY, createCatalogHandler } from '../../lambdas/catalog/api';
import { CATALOG_API } from '../../lambdas/catalog/routes';
import { createOrgHandler, ORG_POLICY } from '../../lambdas/catalog/org/api';
import { createOrgDeps, loadOrgConfig, type OrgDeps } from '../../lambdas/catalog/org/deps';
import { ORG_API } from '../../lambdas/catalog/org/routes';
import { createCatalogDeps } from '../../lambdas/catalog/wiring';
import type { CatalogDeps } from '../../lambdas/catalog/deps';
import type { HttpResult } from '../../lambdas/shared/http/types';
import type { TokenVerifier } from '../../lambdas/identity/verifier';
import { createMemoryRuntime, loadMemoryConfig, memoryTableDefinitions, type MemoryConfig, type MemoryRuntime } from '../../lambdas/memory';
import { createMemoryApiHandler, MEMORY_POLICY } from '../../lambdas/memory-api/api';
import { loadMemoryApiConfig } from '../../lambdas/memory-api/config';
import type { MemoryApiDeps } from '../../lambdas/memory-api/deps';
import { MEMORY_API } from '../../lambdas/memory-api/routes';
import { createMemoryApiDeps, v1RestoreHint } from '../../lambdas/memory-api/wiring';
import { createMcpHandler, MCP_POLICY, type McpDeps } from '../../lambdas/mcp/api';
import { MCP_API } from '../../lambdas/mcp/routes';
import { mcpDepsFrom } from '../../lambdas/mcp/wiring';
import { parseKeyRing } from '../../lambdas/shared/cursor';
import { cursorCodec } from '../../lambdas/shared/secrets';
import { dynamoClient, loadBatchSdkBudget, s3Client } from '../../lambdas/shared/aws/clients';
import { readFileSync } from 'node:fs';
import { ensureBuckets, ensureTables } from './provision';
import { answers, startDynamoLocal, startS3Server, type Backend } from './backends';
import { authTableNames, localCatalogConfig, provision } from './catalog-env';
import { clearStackInfo, dataDir, ensureCursorKeys, runningStack, writeStackInfo } from './data-dir';
import { seedCatalog } from './seed';
import { createLocalServer, listen, type LambdaLike, type RunningServer } from './server';
import { createSiteHandler, sitePolicy } from '../../lambdas/site/api';
import { loadSiteConfig, type SiteConfig } from '../../lambdas/site/config';
import type { SiteDeps } from '../../lambdas/site/deps';
import { SITE_API } from '../../lambdas/site/routes';
import { createSiteDeps } from '../../lambdas/site/wiring';

export interface LocalStackOptions {
  /** Data directory (default `DATA_DIR` or `.data/`). */
  dataDir?: string;
  port?: number;
  host?: string;
  /**
   * Demo servers seeded into an empty catalog (default 300; 0 disables: `npm start -- --no-demo`,
   * `DEMO_DATA=0`). Demo data is for an empty catalog only: the first crawl removes it.
   */
  demoCount?: number;
  /**
   * Attach to the backends of a stack already running on this data dir, as another instance (as a
   * second Lambda instance would share DynamoDB and S3). Default true; false starts backends of its own
   * (and fails if they are in use).
   */
  attach?: boolean;
  log?: (msg: string) => void;
  /**
   * Milliseconds since the epoch for the lifetimes and caches of opaque and personal access tokens
   * (tests hold it to cross a token's expiry or a cache's life without waiting). Default: the wall clock.
   */
  clock?: () => number;
}

export interface LocalStack {
  url: string;
  port: number;
  catalog: CatalogDeps;
  /** The organisation registry (`/org`): the catalog's dependencies plus the allow-list. */
  org: OrgDeps;
  favorites: FavoritesDeps;
  /** The local stand-in for Cognito: signs tokens (as `npm run token` does) and serves its JWKS. */
  issuer: LocalIssuer;
  auth: AuthConfig;
  /** The OAuth front (`/oauth/*`, `/.well-known/oauth-*`): its config, stores and signer. */
  oauth: OAuthDeps;
  /** The verifier of /v1, /mcp and git (JWKS cache, opaque and personal token caches); the catalog and favorites have their own, which refuses personal access tokens. */
  verifier: TokenVerifier;
  /** Personal access tokens (`/v1/tokens`), over the same caches as `verifier`. */
  personalTokens: PersonalTokens;
  /** The memory core (rev-lock table and object bucket on the local backends), shared by /v1 and /mcp. */
  memory: MemoryRuntime;
  memoryConfig: MemoryConfig;
  /** The memory REST API (`/v1`): its config (rate limit, export limits) and dependencies. */
  memoryApi: MemoryApiDeps;
  /** The MCP endpoint (`/mcp`): its config (rate limit, list limit, origins) and dependencies. */
  mcp: McpDeps;
  /** The site (`/`, `/servers`, …): its configuration and dependencies (the catalog's store and index). */
  site: SiteDeps;
  backends: Backend[];
  close(): Promise<void>;
}

const NOT_READY: HttpResult = {
  statusCode: 503,
  headers: { 'content-type': 'application/json', 'retry-after': '1' },
  body: JSON.stringify({ error: 'starting' }),
};

/**
 * `npm start`: the backends, the provisioned resources, demo data when empty, and the HTTP server
 * with the catalog API (catalog and favorites functions) and the local issuer's JWKS.
 *
 * Auth is the AWS code path with local endpoints: the verifier takes JWTs of the local issuer
 * (key in `DATA_DIR/keys/issuer.json`, the one `npm run token` signs with) through aws-jwt-verify,
 * fetching the JWKS from this very server, and opaque and personal access tokens from the token table.
 */
export async function startLocalStack(opts: LocalStackOptions = {}): Promise<LocalStack> {
  const log = opts.log ?? (() => undefined);
  const dir = dataDir(opts.dataDir);
  ensureCursorKeys(dir);
  let ready = false;
  const backends: Backend[] = [];
  let running: RunningServer | undefined;
  let closing = false;
  // The instance that started the backends owns them (and the stack file); another one attaches.
  const owner = opts.attach === false ? undefined : runningStack(dir);
  const close = async () => {
    closing = true;
    if (!owner) clearStackInfo(dir);
    await running?.close();
    await Promise.all(backends.map((b) => b.stop()));
  };
  try {
    let endpoints: Record<string, string> | undefined;
    // The port is taken first so /healthz answers 503 while the backends start.
    let deps: CatalogDeps | undefined;
    let favoritesDeps: FavoritesDeps | undefined;
    let orgDeps: OrgDeps | undefined;
    let jwks: LambdaLike | undefined;
    let memoryApiDeps: MemoryApiDeps | undefined;
    let oauthDeps: OAuthDeps | undefined;
    let mcpDeps: McpDeps | undefined;
    const catalog = createCatalogHandler(async () => {
      if (!deps) throw new Error('catalog not ready');
      return deps;
    });
    const org = createOrgHandler(async () => {
      if (!orgDeps) throw new Error('org registry not ready');
      return orgDeps;
    });
    const favorites = createFavoritesHandler(async () => {
      if (!favoritesDeps) throw new Error('favorites not ready');
      return favoritesDeps;
    });
    const auth: LambdaLike = async (event, context) => (jwks ? jwks(event, context) : NOT_READY);
    const oauth = createOAuthHandler(async () => {
      if (!oauthDeps) throw new Error('oauth front not ready');
      return oauthDeps;
    }, LOCAL_ISSUER_API.routes);
    // Until the backends are up, /v1 answers 503 UPSTREAM_UNAVAILABLE with Retry-After in its own envelope.
    const memoryApi = createMemoryApiHandler(async () => {
      if (!memoryApiDeps) throw new Error('memory API not ready');
      return memoryApiDeps;
    });
    // Until the backends are up, /mcp answers 503 with Retry-After.
    const mcp = createMcpHandler(async () => {
      if (!mcpDeps) throw new Error('mcp not ready');
      return mcpDeps;
    });
    const port = opts.port ?? Number(process.env.PORT ?? 3000);
    // The site's pages name the deployment's public URL (canonical links, the OAuth client id), known
    // once the port is bound; until its handler is built, pages answer the site's own 503 page.
    let siteConfig: SiteConfig = loadSiteConfig();
    const siteStarting = createSiteHandler(siteConfig, async () => {
      throw new Error('site not ready');
    });
    let siteHandler: LambdaLike | undefined;
    const site: LambdaLike = async (event, context) => (siteHandler ?? siteStarting)(event, context);
    running = await listen(
      createLocalServer({
        apis: [
          { table: CATALOG_API, functions: { catalog, favorites }, problem: CATALOG_POLICY.problem },
          { table: ORG_API, functions: { org }, problem: ORG_POLICY.problem },
          { table: MEMORY_API, functions: { memory: memoryApi }, problem: MEMORY_POLICY.problem },
          { table: MCP_API, functions: { mcp }, problem: MCP_POLICY.problem },
          // One /.well-known mount: the issuer's JWKS (fn auth) beside the front's metadata (fn oauth).
          { table: wellKnownTable(LOCAL_ISSUER_API.routes), functions: { auth, oauth }, problem: oauthPolicy().problem },
          { table: OAUTH_API, functions: { oauth }, problem: oauthPolicy().problem },
          // Last: it owns only the exact paths of its routes at the root; other paths stay the catalog's 404.
          { table: SITE_API, functions: { site }, problem: (p, e) => sitePolicy(siteConfig).problem(p, e) },
        ],
        ready: () => ready,
        down: async () => {
          if (!endpoints) return [];
          const checks = await Promise.all(Object.entries(endpoints).map(async ([name, url]) => ((await answers(url)) ? undefined : name)));
          return checks.filter((n): n is string => n !== undefined);
        },
      }),
      port,
      opts.host,
    );
    log(`listening on ${running.url} (starting backends…)`);

    // The issuer and audience `npm run token` derives from the same env (PORT or PUBLIC_URL, AUTH_*):
    // the port actually bound, so a stack started on an ephemeral port still agrees with itself. An
    // attached instance serves the same deployment as the first: its public URL, unless one is given.
    const authEnv = { ...process.env, PORT: String(running.port), ...(owner?.publicUrl && !process.env.PUBLIC_URL && { PUBLIC_URL: owner.publicUrl }) };
    const issuer = LocalIssuer.loadOrCreate(dir.issuerKey, localIssuerIdentity(authEnv).issuer);
    jwks = createJwksHandler(issuer);

    let ddb: { endpoint: string };
    let s3: { endpoint: string };
    if (owner) {
      ddb = { endpoint: owner.dynamoEndpoint };
      s3 = { endpoint: owner.s3Endpoint };
      log(`attached to the backends of the stack at ${owner.url} (pid ${owner.pid}) as another instance`);
    } else {
      const startDynamo = (port?: number) => startDynamoLocal({ dbPath: dir.dynamo, pidFile: `${dir.runDir}/dynamodb.pid`, port });
      const startS3 = (port?: number) => startS3Server({ dir: dir.s3, pidFile: `${dir.runDir}/s3.pid`, buckets: [], port });
      const started = await Promise.all([startDynamo(), startS3()]);
      [ddb, s3] = started;
      backends.push(...started);
      // A child that dies (a crash, a kill) comes back on the same port, so every client keeps working.
      supervise(backends, 0, startDynamo, () => closing, log);
      supervise(backends, 1, startS3, () => closing, log);
    }
    endpoints = { dynamodb: ddb.endpoint, s3: s3.endpoint };
    // CatalogMeta.url of the registry feed points at the site's detail pages, which this stack serves.
    const config = { ...localCatalogConfig(dir, ddb.endpoint, s3.endpoint) };
    config.siteUrlTemplate ??= `${publicUrl(authEnv)}/servers/{slug}`;
    siteConfig = loadSiteConfig(authEnv);
    await provision(config, { auth: authTableNames(authEnv) });

    const loaded = loadAuthConfig(authEnv);
    const authConfig: AuthConfig = {
      ...loaded,
      region: config.region,
      dynamoEndpoint: ddb.endpoint,
      // The verifier reads the JWKS from this server, wherever the issuer URL says it lives.
      jwt: loaded.jwt.kind === 'local' ? { ...loaded.jwt, jwksUri: `${running.url}/.well-known/jwks.json` } : loaded.jwt,
    };
    // One verifier for the catalog and favorites, another (personal access tokens accepted and managed)
    // for /v1, /mcp and git, as in AWS, where each function has its own.
    const authDeps = createIdentity(authConfig, { clock: opts.clock });
    const memoryAuth = createIdentity(authConfig, { personalTokens: true, clock: opts.clock });
    const { verifier, personalTokens } = memoryAuth;
    if (!personalTokens) throw new Error('the token table is not configured (AUTH_TOKEN_TABLE)');
    const oauthConfig = loadOAuthFrontConfig({ ...authEnv, RATE_LIMIT_TABLE: config.rateLimitTable });
    oauthDeps = createOAuthDeps(oauthConfig, {
      tokens: authDeps.tokens,
      clients: createClientStore(authConfig),
      keyRing: parseKeyRing(readFileSync(dir.cursorKeys, 'utf8')),
      limiter: createOAuthLimiter(oauthConfig, authConfig),
    });
    const index = embeddedSearchIndex({ snapshotPath: dir.searchSnapshot });
    deps = await createCatalogDeps(config, index, authDeps.verifier);
    orgDeps = createOrgDeps(loadOrgConfig(config, authEnv), deps, authDeps.verifier);
    // One allow-list cache for /org, /api/mcp and the site: an edit through the admin API shows on all at once.
    deps.allowList = orgDeps.allowList;
    favoritesDeps = await createFavoritesDeps(config, loadFavoritesConfig(authEnv), authDeps.verifier);
    const siteDeps = await createSiteDeps(siteConfig, {
      store: deps.store,
      index,
      trust: deps.trust,
      limiter: deps.limiter,
      originSecret: () => config.originVerifySecret,
      allowList: orgDeps.allowList,
    });
    siteHandler = createSiteHandler(siteConfig, async () => siteDeps);
    const memoryConfig: MemoryConfig = {
      ...loadMemoryConfig(authEnv),
      region: config.region,
      dynamoEndpoint: ddb.endpoint,
      s3Endpoint: s3.endpoint,
      idempotencyTable: config.rateLimitTable,
    };
    await provisionMemory(memoryConfig);
    // One core for /v1 and /mcp: both point a retired memory's user at the /v1 restore route.
    const memory = createMemoryRuntime(memoryConfig, await cursorCodec({ file: dir.cursorKeys, region: config.region }), {
      overrides: { restoreHint: v1RestoreHint },
    });
    // MEMORY_RATE_LIMIT etc. from the env; the tables, bucket and keys are the stack's own.
    memoryApiDeps = await createMemoryApiDeps(
      {
        ...loadMemoryApiConfig(authEnv),
        memory: memoryConfig,
        rateLimitTable: config.rateLimitTable,
        cursorKeysFile: dir.cursorKeys,
        originVerifySecret: config.originVerifySecret,
      },
      verifier,
      { runtime: memory, personalTokens },
    );
    // MCP_* limits from the env; the memory core, verifier and rate-limit table are the stack's own.
    mcpDeps = mcpDepsFrom({ env: { ...authEnv, RATE_LIMIT_TABLE: config.rateLimitTable }, memory, verifier, audience: authConfig.audience });
    // ORIGIN_VERIFY_SECRET (unset by default) makes every API refuse requests without the header, as behind CloudFront.
    const originSecret = config.originVerifySecret;
    if (originSecret !== undefined) mcpDeps = { ...mcpDeps, originSecret: () => originSecret };
    if (!owner)
      writeStackInfo(dir, { pid: process.pid, url: running.url, publicUrl: publicUrl(authEnv), dynamoEndpoint: ddb.endpoint, s3Endpoint: s3.endpoint });

    const demo = opts.demoCount ?? 300;
    if (!owner && (await index.slugs()).length === 0) {
      // An empty search index over a catalog table that is not (a snapshot of an older format, a
      // deleted file) is rebuilt from the table, the source of truth: only an empty catalog is seeded.
      const rebuilt = await rebuildIndex(deps.store, index);
      if (rebuilt > 0) log(`search index rebuilt from the catalog table: ${rebuilt} servers`);
      else if (demo > 0) {
        log(`empty catalog: seeding ${demo} demo servers (npm run crawl replaces them with the registry; --no-demo or DEMO_DATA=0 starts empty)`);
        await seedCatalog(config, index, demo);
      } else log('empty catalog: no demo data (npm run crawl fills it from the registry)');
    }
    ready = true;
    return {
      url: running.url,
      port: running.port,
      catalog: deps,
      org: orgDeps,
      favorites: favoritesDeps,
      issuer,
      auth: authConfig,
      oauth: oauthDeps,
      verifier,
      personalTokens,
      memory,
      memoryConfig,
      memoryApi: memoryApiDeps,
      mcp: mcpDeps,
      site: siteDeps,
      backends,
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}

/** The memory core's rev-lock table and object bucket (MEMORY_TABLE, MEMORY_BUCKET), created when missing. */
async function provisionMemory(config: MemoryConfig): Promise<void> {
  const clientOpts = { region: config.region, dynamoEndpoint: config.dynamoEndpoint, s3Endpoint: config.s3Endpoint };
  const ddb = dynamoClient(clientOpts, loadBatchSdkBudget());
  const s3 = s3Client(clientOpts, loadBatchSdkBudget());
  try {
    await ensureTables(ddb, memoryTableDefinitions({ memories: config.memoryTable }));
    await ensureBuckets(s3, [config.memoryBucket]);
  } finally {
    ddb.destroy();
    s3.destroy();
  }
}

/**
 * Restarts `backends[i]` on its own port whenever its process ends while the stack is not closing
 * (retrying every second until it is back), so a killed child is not the end of the local stack.
 */
function supervise(backends: Backend[], i: number, start: (port: number) => Promise<Backend>, closing: () => boolean, log: (m: string) => void): void {
  const b = backends[i];
  const port = Number(new URL(b.endpoint).port);
  void b.exited.then(async () => {
    while (!closing()) {
      log(`${b.name} exited; restarting it on port ${port}`);
      try {
        const next = await start(port);
        if (closing()) {
          await next.stop();
          return;
        }
        backends[i] = next;
        log(`${b.name} is back (pid ${next.pid})`);
        supervise(backends, i, start, closing, log);
        return;
      } catch (err) {
        log(`${b.name} restart failed: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`);
        await new Promise((r) => setTimeout(r, 1000));
      }
    }
  });
}
