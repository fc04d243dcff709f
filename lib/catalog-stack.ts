import { CfnOutput, type Duration, Lazy, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import type * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import type * as apigwv2 from 'aws-cdk-lib/aws-apigatewayv2';
import type { ICertificate } from 'aws-cdk-lib/aws-certificatemanager';
import type * as cloudfront from 'aws-cdk-lib/aws-cloudfront';
import type * as cognito from 'aws-cdk-lib/aws-cognito';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type { Construct } from 'constructs';
import type { RateTier } from '../lambdas/catalog/config';
import { CatalogApi, type CatalogLogLevel } from './catalog-api';
import { Identity } from './identity';
import { CatalogCrawler } from './catalog-crawler';
import { CatalogData, type CatalogSearchDomainOptions } from './catalog-data';
import { Edge } from './edge';
import { OAuthFront } from './oauth-front';
import { MemoryApi, type MemoryApiProps } from './memory-api';
import { MemoryGit } from './memory-git';
import { MemoryMcp, type MemoryMcpProps } from './memory-mcp';
import { Site, type SiteProps } from './site';

export interface CatalogStackProps extends StackProps {
  /**
   * Removal policy of the stateful resources (tables, buckets, search domain, secrets).
   * @default RemovalPolicy.RETAIN
   */
  readonly removalPolicy?: RemovalPolicy;
  /** How often the crawler runs. @default Duration.hours(6) */
  readonly crawlSchedule?: Duration;
  /** Upstream registry. @default 'https://registry.modelcontextprotocol.io' */
  readonly registryUrl?: string;
  /** Secret holding a GitHub token for the crawler (raises its API quota). @default - unauthenticated */
  readonly githubTokenSecret?: secretsmanager.ISecret;
  /**
   * Customer-managed KMS key for tables, secrets and the search domain.
   * @default - AWS-managed encryption
   */
  readonly encryptionKey?: kms.IKey;
  /** OpenSearch version and size. @default - 2 × t3.small.search, 10 GiB gp3, OpenSearch 2.19 */
  readonly search?: CatalogSearchDomainOptions;
  /** Registry feed brand (`io.<brand>.catalog/v0`). @default 'example' */
  readonly brand?: string;
  /** `CatalogMeta.url` template, e.g. `https://mcp.example.com/servers/{slug}`. @default - the site's detail page, `<publicUrl>/servers/{slug}` */
  readonly siteUrlTemplate?: string;
  /** The site's settings: name, page size, edge and browser cache, rate, sizing. @default - see `SiteProps` */
  readonly site?: Omit<SiteProps, 'data' | 'httpApi' | 'apiOriginDomainName' | 'edge' | 'publicUrl'>;
  /** Anonymous rate-limit tier per IP. @default { rate: 30, burst: 60 } */
  readonly anonymousRate?: RateTier;
  /** Authenticated rate-limit tier per user. @default { rate: 100, burst: 200 } */
  readonly authenticatedRate?: RateTier;
  /** Stage-wide API throttle. @default { rateLimit: 1000, burstLimit: 2000 } */
  readonly apiThrottle?: apigwv2.ThrottleSettings;
  /** Catalog function memory in MB. @default 1024 */
  readonly catalogMemorySize?: number;
  /** Catalog function log level. @default 'INFO' */
  readonly logLevel?: CatalogLogLevel;
  /** Seconds CloudFront may cache catalog API responses. @default 0 (no edge cache) */
  readonly edgeCacheSeconds?: number;
  /** Lambda@Edge runtime. @default Runtime.NODEJS_22_X */
  readonly edgeRuntime?: lambda.Runtime;
  /** Custom domain names of the distribution (need `certificate`). @default - none */
  readonly domainNames?: string[];
  /** ACM certificate (us-east-1) for `domainNames`. @default - none */
  readonly certificate?: ICertificate;
  /** WAFv2 web ACL (CLOUDFRONT scope) ARN. @default - none */
  readonly webAclArn?: string;
  /** @default PriceClass.PRICE_CLASS_ALL */
  readonly priceClass?: cloudfront.PriceClass;
  /**
   * Entry of the catalog Lambda (for tests of the infrastructure alone).
   * @default lambdas/catalog/handler.ts
   */
  readonly catalogEntry?: string;
  /**
   * Limits and sizing of the memory REST API (`/v1`): rate limit, ceilings, export limits, entry.
   * @default - the spec's values (see `MemoryApiProps`)
   */
  readonly memoryApi?: Omit<MemoryApiProps, 'httpApi' | 'data' | 'auth' | 'removalPolicy' | 'encryptionKey'>;
  /**
   * Limits and sizing of the MCP endpoint (`/mcp`): rate limit per user, list limit, allowed browser origins, entry.
   * @default - the spec's values (see `MemoryMcpProps`)
   */
  readonly mcp?: Omit<MemoryMcpProps, 'table' | 'bucket' | 'rateLimitTable' | 'cursorKeysSecret' | 'auth'>;
  /**
   * The deployment's public base URL (PUBLIC_URL), e.g. `https://mcp.example.com`, without a
   * trailing slash. Token audience (`<publicUrl>/mcp`), Cognito resource server and the web
   * client's callback URLs derive from it.
   * @default - `https://<first of domainNames>` when custom domains are set, else
   *   `https://<the distribution's *.cloudfront.net domain>`
   */
  readonly publicUrl?: string;
  /** Let anyone create an account on the hosted sign-in page. @default false */
  readonly selfSignUp?: boolean;
  /** Hosted sign-in domain prefix (`<prefix>.auth.<region>.amazoncognito.com`). @default - `mcp-<stack uuid>` */
  readonly signInDomainPrefix?: string;
  /** Cognito feature plan. @default FeaturePlan.PLUS (threat protection enforced) */
  readonly cognitoFeaturePlan?: cognito.FeaturePlan;
  /** Cognito MFA (TOTP). @default Mfa.OPTIONAL */
  readonly mfa?: cognito.Mfa;
  /** Web front's sign-in callback URLs. @default - [`<publicUrl>/auth/callback`] */
  readonly webCallbackUrls?: string[];
  /** Web front's sign-out URLs. @default - [`<publicUrl>/`] */
  readonly webLogoutUrls?: string[];
}

/**
 * The catalog deployment: stateful data, the catalog API and the CloudFront distribution, in one
 * stack. One stack because the parts reference each other both ways (the search domain's access
 * policy names the API's role; the API reads the data) and because later APIs add their behaviours
 * to the same distribution; stateful resources are protected by RemovalPolicy.RETAIN and deletion
 * protection instead of a separate stack. Lambda@Edge lives in us-east-1: outside that region CDK's
 * EdgeFunction adds a small `edge-lambda-stack-…` there on its own.
 */
export class CatalogStack extends Stack {
  readonly data: CatalogData;
  /** The scheduled crawler that fills the catalog. */
  readonly crawler: CatalogCrawler;
  readonly auth: Identity;
  readonly api: CatalogApi;
  readonly edge: Edge;
  /** The OAuth 2.1 front MCP clients sign in through (`/oauth/*`, `/.well-known/*`). */
  readonly oauth: OAuthFront;
  /** The memory REST API (`/v1`): bucket, rev-lock table, function, routes. */
  readonly memory: MemoryApi;
  /** The git remote (`/v1/memories/<name>.git`): a streaming function URL behind CloudFront. */
  readonly memoryGit: MemoryGit;
  /** The MCP endpoint (`/mcp`): function, function URL. */
  readonly mcp: MemoryMcp;
  /** The site (`/`, `/servers`, …): render function, routes, CloudFront behaviours. */
  readonly site: Site;

  constructor(scope: Construct, id: string, props: CatalogStackProps = {}) {
    super(scope, id, {
      description: 'MCP catalog: DynamoDB, OpenSearch, S3 icons, Cognito, HTTP API + Lambdas, CloudFront',
      ...props,
    });

    this.data = new CatalogData(this, 'Data', {
      removalPolicy: props.removalPolicy ?? RemovalPolicy.RETAIN,
      encryptionKey: props.encryptionKey,
      search: props.search,
    });

    this.crawler = new CatalogCrawler(this, 'Crawler', {
      data: this.data,
      schedule: props.crawlSchedule,
      registryUrl: props.registryUrl,
      githubTokenSecret: props.githubTokenSecret,
    });

    // PUBLIC_URL (and the audience `<PUBLIC_URL>/mcp`): given, or the first custom domain, or the
    // distribution's own domain. The last is a deploy-time reference to the distribution, which the
    // distribution is created after: it depends on the HTTP API's id only (never on the functions,
    // routes or user pool), so the functions and the resource server wait for the distribution and
    // no cycle forms. The reference is Lazy because the distribution is declared below the API.
    // Replacing the distribution (not an update) changes that domain, and with it the audience.
    const publicUrl =
      props.publicUrl?.replace(/\/+$/, '') ??
      (props.domainNames?.length
        ? `https://${props.domainNames[0]}`
        : Lazy.string({ produce: () => `https://${this.edge.distribution.distributionDomainName}` }));

    this.auth = new Identity(this, 'Auth', {
      publicUrl,
      removalPolicy: props.removalPolicy ?? RemovalPolicy.RETAIN,
      encryptionKey: props.encryptionKey,
      selfSignUp: props.selfSignUp,
      signInDomainPrefix: props.signInDomainPrefix,
      featurePlan: props.cognitoFeaturePlan,
      mfa: props.mfa,
      webCallbackUrls: props.webCallbackUrls,
      webLogoutUrls: props.webLogoutUrls,
    });

    this.api = new CatalogApi(this, 'Api', {
      data: this.data,
      auth: this.auth,
      entry: props.catalogEntry,
      brand: props.brand,
      // The site serves the detail pages, so the registry feed's CatalogMeta.url points at them by default.
      siteUrlTemplate: props.siteUrlTemplate ?? `${publicUrl}/servers/{slug}`,
      anonymousRate: props.anonymousRate,
      authenticatedRate: props.authenticatedRate,
      throttle: props.apiThrottle,
      memorySize: props.catalogMemorySize,
      logLevel: props.logLevel,
    });

    this.edge = new Edge(this, 'Edge', {
      apiOriginDomainName: this.api.originDomainName,
      iconsBucket: this.data.iconsBucket,
      originVerifySecret: this.data.originVerifySecret,
      accessLogsBucket: this.data.accessLogsBucket,
      edgeCacheSeconds: props.edgeCacheSeconds,
      edgeRuntime: props.edgeRuntime,
      domainNames: props.domainNames,
      certificate: props.certificate,
      webAclArn: props.webAclArn,
      priceClass: props.priceClass,
    });

    // The front's routes live on the catalog's HTTP API; CloudFront sends its two prefixes there
    // explicitly rather than through the default behaviour, so they keep working whatever becomes
    // the default origin.
    this.oauth = new OAuthFront(this, 'OAuth', {
      auth: this.auth,
      httpApi: this.api.httpApi,
      signingKeysSecret: this.data.cursorKeysSecret,
      rateLimitTable: this.data.rateLimitTable,
      originVerifySecret: this.data.originVerifySecret,
      logLevel: props.logLevel,
    });
    this.edge.addApiBehavior('/oauth/*', this.api.originDomainName);
    this.edge.addApiBehavior('/.well-known/*', this.api.originDomainName);

    // The memory REST API: its routes on the same HTTP API, and /v1/* sent there explicitly too.
    this.memory = new MemoryApi(this, 'Memory', {
      ...props.memoryApi,
      httpApi: this.api.httpApi,
      data: this.data,
      auth: this.auth,
      removalPolicy: props.removalPolicy ?? RemovalPolicy.RETAIN,
      encryptionKey: props.encryptionKey,
      logLevel: props.memoryApi?.logLevel ?? props.logLevel,
    });
    // The git remote first: CloudFront takes the first behaviour that matches, and /v1/* matches too.
    this.memoryGit = new MemoryGit(this, 'MemoryGit', {
      memory: this.memory,
      data: this.data,
      auth: this.auth,
      logLevel: props.memoryApi?.logLevel ?? props.logLevel,
    });
    this.memoryGit.addBehaviors(this.edge);
    this.edge.addApiBehavior('/v1/*', this.api.originDomainName);

    // The MCP endpoint: the same memory data, its own function behind a function URL at /mcp.
    this.mcp = new MemoryMcp(this, 'Mcp', {
      maxMemoriesPerAccount: props.memoryApi?.maxMemoriesPerAccount,
      maxNoteBytes: props.memoryApi?.maxNoteBytes,
      limits: props.memoryApi?.limits,
      ...props.mcp,
      table: this.memory.table,
      bucket: this.memory.bucket,
      rateLimitTable: this.data.rateLimitTable,
      cursorKeysSecret: this.data.cursorKeysSecret,
      auth: this.auth,
      logLevel: props.mcp?.logLevel ?? props.logLevel,
    });
    this.edge.addFunctionUrlBehavior('/mcp', this.mcp.functionUrl);

    // The site: pages rendered on the same HTTP API, cached briefly at the edge.
    this.site = new Site(this, 'Site', {
      logLevel: props.logLevel,
      ...props.site,
      data: this.data,
      httpApi: this.api.httpApi,
      apiOriginDomainName: this.api.originDomainName,
      edge: this.edge,
      publicUrl,
    });

    this.addOutputs(publicUrl);
  }

  /** What an operator reads after `cdk deploy` (README, "Deployment"). */
  private addOutputs(publicUrl: string): void {
    new CfnOutput(this, 'DistributionDomainName', {
      description: 'CloudFront domain serving /api/* and the icons',
      value: this.edge.distribution.distributionDomainName,
    });
    new CfnOutput(this, 'PublicUrl', { description: 'PUBLIC_URL of this deployment (token audience: <PublicUrl>/mcp)', value: publicUrl });
    new CfnOutput(this, 'UserPoolId', { description: 'Cognito user pool (COGNITO_USER_POOL_ID)', value: this.auth.userPool.userPoolId });
    new CfnOutput(this, 'WebClientId', {
      description: 'App client of the web front (authorization code + PKCE, no secret)',
      value: this.auth.webClient.userPoolClientId,
    });
    new CfnOutput(this, 'SignInUrl', {
      description: 'Hosted sign-in base URL (/oauth2/authorize, /oauth2/token, /login)',
      value: this.auth.signInDomain.baseUrl(),
    });
    new CfnOutput(this, 'McpUrl', { description: 'The URL MCP clients connect to (Streamable HTTP; OAuth discovery from its 401)', value: `${publicUrl}/mcp` });
    new CfnOutput(this, 'ApiUrl', {
      description: 'HTTP API endpoint (origin of CloudFront; direct calls are not trusted for client IPs)',
      value: this.api.httpApi.apiEndpoint,
    });
  }
}
