import type { Duration, RemovalPolicy, Stack, StackProps } from 'aws-cdk-lib';
import type * as apigwv2 from 'aws-cdk-lib/aws-apigatewayv2';
import type { ICertificate } from 'aws-cdk-lib/aws-certificatemanager';
import type * as cloudfront from 'aws-cdk-lib/aws-cloudfront';
import type * as cognito from 'aws-cdk-lib/aws-cognito';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as logs from 'aws-cdk-lib/aws-logs';
import type * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import type { RateTier } from '../lambdas/catalog/config';
import type { BackupSettings } from './backup';
import type { CatalogLogLevel } from './catalog-api';
import type { CatalogChecksProps } from './catalog-checks';
import type { CatalogCrawlerProps } from './catalog-crawler';
import type { CatalogSearchDomainOptions, SearchEngine } from './catalog-data';
import type { SharpLayerSource } from './crawler/sharp-layer';
import type { CognitoEmailSettings } from './identity';
import type { MemoryApiProps } from './memory-api';
import type { MemoryMcpProps } from './memory-mcp';
import type { AlarmSettings } from './alarm-settings';
import type { OAuthFrontSettings } from './oauth-front';
import type { PersonalTokenLimits } from '../lambdas/identity/config';
import type { SiteProps } from './site';
import type { WafSettings } from './waf';

/**
 * Reserved concurrency per function: each a floor the function always has and a ceiling on what it
 * may take from the account, so anonymous catalog traffic cannot starve `/v1`, `/mcp` or OAuth.
 * Opt-in (`reservedConcurrency: 'recommended'`, or this object for the recommended set with some
 * values changed, or `-c reservedConcurrency=recommended`): Lambda keeps 100 of the account's
 * concurrency unreserved, so the recommended set (312 in the home region, 1 more in us-east-1)
 * needs a limit of at least 412 there, which new accounts do not have (`npm run preflight` reads it;
 * README, "Deployment"). 0 leaves a function unreserved.
 */
export interface ReservedConcurrency {
  /** @default 100 */
  readonly catalog?: number;
  /** @default 20 */
  readonly favorites?: number;
  /** @default 20 */
  readonly oauth?: number;
  /** /v1. @default 50 */
  readonly memory?: number;
  /** @default 50 */
  readonly mcp?: number;
  /** The pages. @default 50 */
  readonly site?: number;
  /** The git remote (`/v1/memories/<name>.git`): clones and pushes are long and few. @default 10 */
  readonly git?: number;
  /** @default - the crawl's Map concurrency + 2 (plan and finalize) */
  readonly crawler?: number;
  /** The health check rounds. @default - their Map concurrency + 1 (plan and finish run alone) */
  readonly checks?: number;
  /** The daily edge log sweep (in us-east-1): one at a time is all it needs. @default 1 */
  readonly edgeLogRetention?: number;
}

/** The recommended set (`reservedConcurrency: 'recommended'`), the crawler's and the checks' aside (their Map concurrency + 2 and + 1). */
export const RECOMMENDED_RESERVED_CONCURRENCY = {
  catalog: 100,
  favorites: 20,
  oauth: 20,
  memory: 50,
  mcp: 50,
  site: 50,
  git: 10,
  edgeLogRetention: 1,
} as const;

/** A Route 53 hosted zone of the custom domain (alias records and DNS-validated certificates go there). */
export interface HostedZoneRef {
  readonly hostedZoneId: string;
  readonly zoneName: string;
}

/** Everything a deployment may set, each with its documented default (`bin/stages.ts` sets them per stage). */
export interface CatalogStackProps extends StackProps {
  /**
   * The stage: in the stack ids, every account-global name and the metrics namespace
   * (`McpCatalog/<stage>`), so two stages (or one in two regions) deploy side by side.
   * @default 'prod'
   */
  readonly stage?: string;
  /**
   * Removal policy of the stateful resources that hold the truth (tables, buckets of icons and
   * memories, secrets, the user pool). The search domain and the snapshot bucket are derived data
   * and always go with the stack; the backup vault always stays.
   * @default RemovalPolicy.RETAIN
   */
  readonly removalPolicy?: RemovalPolicy;
  /**
   * The search engine: `opensearch` (a managed domain, `search` sizes it) or `embedded`, the
   * small-catalog mode without a domain (`-c searchEngine=embedded`).
   * @default 'opensearch'
   */
  readonly searchEngine?: SearchEngine;
  /** OpenSearch version and size. @default - 2 × t3.small.search, 10 GiB gp3, OpenSearch 2.19 */
  readonly search?: CatalogSearchDomainOptions;
  /** How often the crawler runs. @default Duration.hours(6) */
  readonly crawlSchedule?: Duration;
  /** Upstream registry. @default 'https://registry.modelcontextprotocol.io' */
  readonly registryUrl?: string;
  /** Secret holding a GitHub token for the crawler. @default - `githubTokenSecretName` */
  readonly githubTokenSecret?: secretsmanager.ISecret;
  /**
   * Name of a Secrets Manager secret (this account and region) holding a GitHub token for the
   * crawler (60 requests an hour without one, 5,000 with). Created by the operator, never by the stack.
   * @default - unauthenticated (a synth warning)
   */
  readonly githubTokenSecretName?: string;
  /** The crawler's sharp layer: built by synth, `skip`ped, or given. @default 'build' (`-c sharpLayer=skip` skips it) */
  readonly sharpLayer?: SharpLayerSource;
  /** The rest of the crawler's settings (Map concurrency, retries, execution timeout, memory, steps). */
  readonly crawler?: Omit<
    CatalogCrawlerProps,
    'data' | 'schedule' | 'registryUrl' | 'githubTokenSecret' | 'githubTokenSecretName' | 'sharpLayer' | 'alarmActions' | 'reservedConcurrentExecutions'
  >;
  /**
   * How often the hosted servers are checked (README, "Trust over time"); `false` keeps the check
   * state machine without a running schedule (rounds by hand only).
   * @default Duration.hours(1)
   */
  readonly checkSchedule?: Duration | false;
  /** The rest of the check rounds' settings (Map concurrency, batch size, concurrency per batch, down after, memory). */
  readonly checks?: Omit<CatalogChecksProps, 'data' | 'schedule' | 'scheduleEnabled' | 'reservedConcurrentExecutions'>;
  /** Days a health check is kept in the trust table (its TTL; uptime reads 30). @default 90 */
  readonly checkRetentionDays?: number;
  /**
   * Customer-managed KMS key for tables, secrets, the search domain, the alarm topic and the
   * backup vault.
   * @default - AWS-managed encryption
   */
  readonly encryptionKey?: kms.IKey;
  /** Registry feed brand (`io.<brand>.catalog/v0`). @default 'example' */
  readonly brand?: string;
  /** `CatalogMeta.url` template, e.g. `https://mcp.example.com/servers/{slug}`. @default - the site's detail page, `<publicUrl>/servers/{slug}` */
  readonly siteUrlTemplate?: string;
  /** The site's settings: name, page size, edge and browser cache, rate, sizing. @default - see `SiteProps` */
  readonly site?: Omit<SiteProps, 'data' | 'httpApi' | 'apiOriginDomainName' | 'edge' | 'publicUrl' | 'reservedConcurrentExecutions'>;
  /** Anonymous rate-limit tier per IP. @default { rate: 30, burst: 60 } */
  readonly anonymousRate?: RateTier;
  /** Authenticated rate-limit tier per user. @default { rate: 100, burst: 200 } */
  readonly authenticatedRate?: RateTier;
  /** Stage-wide API throttle. @default { rateLimit: 1000, burstLimit: 2000 } */
  readonly apiThrottle?: apigwv2.ThrottleSettings;
  /** Catalog function memory in MB (the embedded engine holds the whole index: 1024 covers 30,000 servers). @default 1024 */
  readonly catalogMemorySize?: number;
  /** Log level of every function. @default 'INFO' */
  readonly logLevel?: CatalogLogLevel;
  /** Retention of every log group of the deployment (functions, API access logs, state machine, search, edge). @default RetentionDays.ONE_MONTH */
  readonly logRetention?: logs.RetentionDays;
  /** X-Ray active tracing of every function (and of the crawl's state machine). @default true */
  readonly tracing?: boolean;
  /**
   * Reserved concurrency per function: `'recommended'` (the set of `ReservedConcurrency`), an
   * object (the recommended set with these values changed), or `false`.
   * @default false - none reserved: a first deploy fits any account (see `ReservedConcurrency`)
   */
  readonly reservedConcurrency?: ReservedConcurrency | 'recommended' | false;
  /** Where alarms go and their thresholds. @default - a topic with no subscription (see `AlarmSettings`) */
  readonly alarms?: AlarmSettings;
  /** AWS Backup of the tables and the memory bucket; `false` turns it off. @default - daily for 35 days, monthly for a year */
  readonly backup?: BackupSettings | false;
  /** Seconds CloudFront may cache catalog API responses. @default 0 (no edge cache) */
  readonly edgeCacheSeconds?: number;
  /**
   * How often CloudFront's origin secret (`x-origin-verify`) rotates, without downtime (README,
   * "Updates"); `false`: on demand only (`aws secretsmanager rotate-secret`, the same function).
   * @default Duration.days(30)
   */
  readonly originSecretRotation?: Duration | false;
  /** Lambda@Edge runtime. @default Runtime.NODEJS_22_X */
  readonly edgeRuntime?: lambda.Runtime;
  /** The WAF web ACL this stack creates on the distribution; `false` creates none. @default - see `WafSettings` */
  readonly waf?: WafSettings | false;
  /** An existing WAFv2 web ACL (CLOUDFRONT scope) ARN to attach instead of creating one. @default - the stack's own (`waf`) */
  readonly webAclArn?: string;
  /** Countries served (`allow`) or refused (`deny`), ISO 3166-1 alpha-2. @default - the whole world */
  readonly geoRestriction?: { readonly allow: string[] } | { readonly deny: string[] };
  /** @default PriceClass.PRICE_CLASS_ALL */
  readonly priceClass?: cloudfront.PriceClass;
  /** Custom domain names of the distribution (need a certificate: `certificate`, `certificateArn`, or `hostedZone` to create one). @default - none */
  readonly domainNames?: string[];
  /** ACM certificate (us-east-1) for `domainNames`. @default - `certificateArn` */
  readonly certificate?: ICertificate;
  /** ARN of that certificate. @default - created with DNS validation in `hostedZone` when one is given */
  readonly certificateArn?: string;
  /** The hosted zone of `domainNames`: alias records for the distribution (and for `apiOriginDomain`), DNS-validated certificates. @default - none (DNS is the operator's) */
  readonly hostedZone?: HostedZoneRef;
  /**
   * A custom domain for the HTTP API (the origin CloudFront calls), e.g. `origin.mcp.example.com`;
   * with it, the execute-api endpoint is disabled. Its certificate is in the stack's region:
   * `certificateArn`, or created in `hostedZone`.
   * @default - none: the execute-api endpoint stays (it answers 403 without CloudFront's header)
   */
  readonly apiOriginDomain?: { readonly domainName: string; readonly certificateArn?: string };
  /** Entry of the catalog Lambda (for tests of the infrastructure alone). @default lambdas/catalog/handler.ts */
  readonly catalogEntry?: string;
  /** Limits and sizing of the memory REST API (`/v1`). @default - the spec's values (see `MemoryApiProps`) */
  readonly memoryApi?: Omit<MemoryApiProps, 'httpApi' | 'data' | 'auth' | 'removalPolicy' | 'encryptionKey' | 'reservedConcurrentExecutions'>;
  /** Limits and sizing of the MCP endpoint (`/mcp`). @default - the spec's values (see `MemoryMcpProps`) */
  readonly mcp?: Omit<
    MemoryMcpProps,
    'table' | 'bucket' | 'rateLimitTable' | 'cursorKeysSecret' | 'auth' | 'originVerifySecret' | 'reservedConcurrentExecutions'
  >;
  /** Token lifetimes, rate limits and sizing of the OAuth front. @default - see `OAuthFrontProps` */
  readonly oauth?: Omit<OAuthFrontSettings, 'reservedConcurrentExecutions'>;
  /**
   * The deployment's public base URL (PUBLIC_URL), e.g. `https://mcp.example.com`, without a
   * trailing slash. Token audience (`<publicUrl>/mcp`), Cognito resource server and the web
   * client's callback URLs derive from it.
   * @default - `https://<first of domainNames>`, else `https://<the distribution's *.cloudfront.net domain>`
   */
  readonly publicUrl?: string;
  /** Let anyone create an account on the hosted sign-in page. @default false */
  readonly selfSignUp?: boolean;
  /** Hosted sign-in domain prefix (`<prefix>.auth.<region>.amazoncognito.com`). @default - `mcp-<stack uuid>` */
  readonly signInDomainPrefix?: string;
  /** Cognito feature plan. @default FeaturePlan.ESSENTIALS (PLUS with threat protection: the documented hardening) */
  readonly cognitoFeaturePlan?: cognito.FeaturePlan;
  /** Cognito's emails through SES. @default - Cognito's default sender (50 a day) */
  readonly cognitoEmail?: CognitoEmailSettings;
  /** Cognito MFA (TOTP). @default Mfa.OPTIONAL */
  readonly mfa?: cognito.Mfa;
  /** Web front's sign-in callback URLs. @default - [`<publicUrl>/auth/callback`] */
  readonly webCallbackUrls?: string[];
  /** Web front's sign-out URLs. @default - [`<publicUrl>/`] */
  readonly webLogoutUrls?: string[];
  /** Personal access tokens (`/v1/tokens`): lifetimes, the per-user ceiling. @default - see `IdentityProps.personalTokens` */
  readonly personalTokens?: Partial<PersonalTokenLimits>;
  /**
   * The us-east-1 stack of this deployment (the Lambda@Edge function, the WAF web ACL, the
   * certificate) when this stack is elsewhere; set by `deployCatalog` (lib/deployment.ts).
   * @default - one named `<stack id>-edge-functions` holds the function only (no WAF outside us-east-1 without it)
   */
  readonly edgeStack?: Stack;
}
