import * as path from 'node:path';
import { Duration } from 'aws-cdk-lib';
import type * as apigwv2 from 'aws-cdk-lib/aws-apigatewayv2';
import * as cloudfront from 'aws-cdk-lib/aws-cloudfront';
import type * as iam from 'aws-cdk-lib/aws-iam';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import type * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import type { RateTier } from '../lambdas/catalog/config';
import { SITE_ANY_PATHS, SITE_API, SITE_PATH_PATTERNS } from '../lambdas/site/routes';
import type { CatalogData } from './catalog-data';
import type { Edge } from './edge';
import type { OrgRegistry } from './org-registry';
import { addAnyRoutes, addRoutesFromTable, type TableRoutes } from './http-routes';
import { appFunction, combineHooks, type FunctionLogLevel, sideChunk } from './lambda-function';
import { acknowledge } from './nag';
import { grantTable } from './tables';

export interface SiteProps {
  /** The catalog's table (a server's page), the rate-limit table, the search domain and the origin secret. */
  readonly data: Pick<
    CatalogData,
    'catalogTable' | 'trustTable' | 'trustEnvironment' | 'rateLimitTable' | 'searchDomain' | 'originVerifySecret' | 'grantSearch' | 'searchEnvironment'
  >;
  /** The HTTP API the pages' routes go on (the catalog's: one origin for CloudFront). */
  readonly httpApi: apigwv2.IHttpApi;
  /** `<id>.execute-api.<region>.amazonaws.com` of that API. */
  readonly apiOriginDomainName: string;
  /** The distribution the pages are served from; the site adds its behaviours and the default root object. */
  readonly edge: Edge;
  /**
   * The organisation registry: the site reads its allow-list for the "allowed in your organisation" badges.
   * @default - no badges
   */
  readonly org?: Pick<OrgRegistry, 'allowListEnvironment' | 'grantAllowListRead'>;
  /** The deployment's public base URL (PUBLIC_URL): canonical links, feeds, the sign-in client id. */
  readonly publicUrl: string;
  /**
   * The site's entry file; it must export `handler`.
   * @default lambdas/site/handler.ts
   */
  readonly entry?: string;
  /** Name in titles and feeds (SITE_NAME). @default 'MCP Catalog' */
  readonly siteName?: string;
  /** Servers per list page (SITE_PAGE_SIZE). @default 24 */
  readonly pageSize?: number;
  /**
   * How long CloudFront keeps a page (the pages' `s-maxage`, SITE_EDGE_CACHE_SECONDS; also the cache
   * policy's maximum). The crawl runs every few hours; a few minutes cost nothing in freshness.
   * @default Duration.minutes(5)
   */
  readonly edgeCache?: Duration;
  /** How long browsers keep a page (`max-age`, SITE_BROWSER_CACHE_SECONDS). @default Duration.minutes(1) */
  readonly browserCache?: Duration;
  /** Pages rendered per client IP (SITE_RATE_RPS, SITE_RATE_BURST): what reaches the function past the edge cache. @default { rate: 30, burst: 60 } */
  readonly rate?: RateTier;
  /** README characters rendered on a page (SITE_README_MAX_CHARS). @default 40000 */
  readonly readmeMaxChars?: number;
  /** @default 512 */
  readonly memorySize?: number;
  /** @default Duration.seconds(10) */
  readonly timeout?: Duration;
  /** Reserved concurrency, a ceiling on what rendering may cost. @default - unreserved */
  readonly reservedConcurrentExecutions?: number;
  /** @default RetentionDays.ONE_MONTH */
  readonly logRetention?: logs.RetentionDays;
  /** @default 'INFO' */
  readonly logLevel?: FunctionLogLevel;
}

const DEFAULT_ENTRY = path.join(__dirname, '..', 'lambdas', 'site', 'handler.ts');
/** The stylesheet and scripts the function serves, read beside its bundle (`lambdas/site/assets.ts`). */
const CLIENT_DIR = path.join(__dirname, '..', 'lambdas', 'site', 'client');
const MARKDOWN_LIBS = path.join(__dirname, '..', 'lambdas', 'site', 'render', 'markdown-libs.ts');

/**
 * The site: pages rendered by a function behind CloudFront with a short edge cache (README,
 * "The site in AWS" says why not pages generated into S3, and what it costs). The function reads
 * the catalog through the same adapters as the catalog API (DynamoDB for a server's page,
 * OpenSearch for lists and search); its routes are on the catalog's HTTP API (one origin), plus
 * `ANY` on each page's path so a wrong verb is the site's 405 page rather than the catalog's JSON.
 * CloudFront sends the pages' paths there with a cache policy of their own (path and query in the
 * key, nothing else: pages are the same for every reader), and maps `/` to `/index.html`, since a
 * behaviour cannot match the root itself.
 */
export class Site extends Construct {
  readonly fn: NodejsFunction;
  readonly role: iam.Role;
  readonly routes: TableRoutes;
  /** `ANY <path>` of every page. */
  readonly anyRoutes: apigwv2.HttpRoute[];
  readonly cachePolicy: cloudfront.CachePolicy;

  constructor(scope: Construct, id: string, props: SiteProps) {
    super(scope, id);
    const { data } = props;
    const edgeCache = props.edgeCache ?? Duration.minutes(5);
    const browserCache = props.browserCache ?? Duration.minutes(1);
    const rate = props.rate ?? { rate: 30, burst: 60 };

    ({ fn: this.fn, role: this.role } = appFunction(this, 'Function', {
      description: 'MCP catalog site: the pages at /, /servers, /search, /favorites, feeds and sitemap',
      roleDescription: 'Site function: reads the catalog and the search domain; writes rate-limit buckets',
      entry: props.entry ?? DEFAULT_ENTRY,
      memorySize: props.memorySize ?? 512,
      timeout: props.timeout ?? Duration.seconds(10),
      reservedConcurrentExecutions: props.reservedConcurrentExecutions,
      logRetention: props.logRetention,
      logLevel: props.logLevel,
      serviceName: 'site',
      environment: {
        PUBLIC_URL: props.publicUrl,
        CATALOG_TABLE: data.catalogTable.tableName,
        ...data.trustEnvironment(),
        RATE_LIMIT_TABLE: data.rateLimitTable.tableName,
        ...data.searchEnvironment('catalog'),
        ORIGIN_VERIFY_SECRET_ARN: data.originVerifySecret.secretArn,
        SITE_NAME: props.siteName ?? 'MCP Catalog',
        SITE_PAGE_SIZE: String(props.pageSize ?? 24),
        SITE_EDGE_CACHE_SECONDS: String(edgeCache.toSeconds()),
        SITE_BROWSER_CACHE_SECONDS: String(browserCache.toSeconds()),
        SITE_RATE_RPS: String(rate.rate),
        SITE_RATE_BURST: String(rate.burst),
        SITE_README_MAX_CHARS: String(props.readmeMaxChars ?? 40_000),
        ...props.org?.allowListEnvironment(),
      },
      bundling: {
        // The stylesheet and scripts travel beside the bundle, where `lambdas/site/assets.ts` reads them.
        // The README renderer's libraries go beside it too, loaded by the first README (lambdas/site/render/markdown-libs.ts).
        commandHooks: combineHooks(
          {
            beforeBundling: () => [],
            beforeInstall: () => [],
            afterBundling: (_input: string, output: string) => [`cp -R "${CLIENT_DIR}" "${path.join(output, 'client')}"`],
          },
          sideChunk(MARKDOWN_LIBS, 'markdown-libs.js'),
        ),
      },
    }));

    // Least privilege: a server's items (one Query per page), the limiter's conditional update, search reads.
    grantTable(data.catalogTable, this.role, ['dynamodb:Query']);
    // A server's checks and changes (the chart, "Changes", its feed) and the breaking changes of the site's feed: Queries only.
    grantTable(data.trustTable, this.role, ['dynamodb:Query']);
    grantTable(data.rateLimitTable, this.role, ['dynamodb:UpdateItem']);
    data.grantSearch(this.role, 'read');
    data.originVerifySecret.grantRead(this.role);
    props.org?.grantAllowListRead(this.role);

    this.routes = addRoutesFromTable(props.httpApi, SITE_API, { site: this.fn }, { catchAll: false });
    this.anyRoutes = addAnyRoutes(this, props.httpApi, SITE_ANY_PATHS, this.fn, { route: 'AnyRoute', integration: 'SiteAnyIntegration' });
    const reason =
      'The site is public: its pages are the same for every reader and carry no secret; sign-in happens in the browser against the OAuth front, and the favorites the pages show are fetched from /api/favorites with the reader’s own token.';
    for (const route of [...this.routes.routes.values(), ...this.anyRoutes]) acknowledge(route, 'AwsSolutions-APIG4', reason);

    this.cachePolicy = new cloudfront.CachePolicy(this, 'CachePolicy', {
      comment: `Site pages: the function's Cache-Control decides (s-maxage ${edgeCache.toSeconds()}s), keyed by path and query string only`,
      // The pages say how long (`s-maxage`); errors say `no-store`, which minTtl 0 lets CloudFront honour.
      minTtl: Duration.seconds(0),
      defaultTtl: Duration.seconds(0),
      maxTtl: edgeCache.toSeconds() > 0 ? Duration.days(365) : Duration.seconds(0),
      headerBehavior: cloudfront.CacheHeaderBehavior.none(),
      queryStringBehavior: cloudfront.CacheQueryStringBehavior.all(),
      cookieBehavior: cloudfront.CacheCookieBehavior.none(),
      enableAcceptEncodingGzip: true,
      enableAcceptEncodingBrotli: true,
    });
    for (const pattern of SITE_PATH_PATTERNS) props.edge.addApiBehavior(pattern, props.apiOriginDomainName, this.cachePolicy);
    // `/` matches no behaviour but the default; CloudFront rewrites it to this object, which one does match.
    const distribution = props.edge.distribution.node.defaultChild as cloudfront.CfnDistribution;
    distribution.addPropertyOverride('DistributionConfig.DefaultRootObject', 'index.html');
  }
}
