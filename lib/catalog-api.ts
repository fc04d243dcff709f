import * as path from 'node:path';
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import * as apigwv2 from 'aws-cdk-lib/aws-apigatewayv2';
import * as iam from 'aws-cdk-lib/aws-iam';
import type { ICertificate } from 'aws-cdk-lib/aws-certificatemanager';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as route53 from 'aws-cdk-lib/aws-route53';
import * as route53Targets from 'aws-cdk-lib/aws-route53-targets';
import { Construct } from 'constructs';
import { CATALOG_API } from '../lambdas/catalog/routes';
import { CATALOG_MCP_API } from '../lambdas/catalog/mcp/routes';
import type { RateTier } from '../lambdas/catalog/config';
import { routeKey } from '../lambdas/shared/http/route-table';
import type { Identity } from './identity';
import { grantTable } from './tables';
import type { CatalogData } from './catalog-data';
import { addRoutesFromTable, type TableRoutes } from './http-routes';
import { AJV_CHUNK, appFunction, combineHooks, functionDefaults, sideChunk, type FunctionLogLevel } from './lambda-function';
import { acknowledge, nagRef } from './nag';

/** Log levels the Powertools logger of the handlers accepts. */
export type CatalogLogLevel = FunctionLogLevel;

export interface CatalogApiProps {
  /** Tables, bucket, search domain and secrets the catalog function reads. */
  readonly data: CatalogData;
  /** The user pool and the auth tables: token verification (both functions) and favorites. */
  readonly auth: Identity;
  /**
   * The catalog Lambda's entry file; it must export `handler`.
   * @default lambdas/catalog/handler.ts
   */
  readonly entry?: string;
  /**
   * The favorites Lambda's entry file; it must export `handler`.
   * @default lambdas/catalog/favorites/handler.ts
   */
  readonly favoritesEntry?: string;
  /**
   * Memory of the favorites function, in MB.
   * @default 512
   */
  readonly favoritesMemorySize?: number;
  /**
   * Memory of the catalog function, in MB (arm64 CPU share grows with it).
   * @default 1024
   */
  readonly memorySize?: number;
  /**
   * Timeout of the catalog function; API Gateway gives up after 30 s whatever this is.
   * @default Duration.seconds(10)
   */
  readonly timeout?: Duration;
  /**
   * Reserved concurrency of the catalog function: a ceiling on what anonymous traffic may take
   * from the account, and a floor it always has.
   * @default - unreserved (the account's shared pool); `CatalogStack` reserves 100
   */
  readonly reservedConcurrentExecutions?: number;
  /** Reserved concurrency of the favorites function. @default - unreserved; `CatalogStack` reserves 20 */
  readonly favoritesReservedConcurrentExecutions?: number;
  /**
   * A custom domain for the HTTP API itself, the origin CloudFront calls (e.g. `api-origin.example.com`),
   * with a certificate in the stack's region. With it, the default execute-api endpoint is
   * disabled: the API answers only on this name, and only with CloudFront's origin header.
   * With `hostedZone`, an alias record points the name at the API.
   * @default - CloudFront calls the execute-api endpoint, which stays reachable (and answers 403
   *   without the origin header)
   */
  readonly originDomain?: { domainName: string; certificate: ICertificate; hostedZone?: route53.IHostedZone };
  /**
   * Brand in the registry feed's `_meta` key, `io.<brand>.catalog/v0` (CATALOG_BRAND).
   * @default 'example'
   */
  readonly brand?: string;
  /**
   * Site URL template for `CatalogMeta.url`, e.g. `https://mcp.example.com/servers/{slug}`
   * (SITE_URL_TEMPLATE).
   * @default - no template: `url` is omitted
   */
  readonly siteUrlTemplate?: string;
  /**
   * Name of the OpenSearch index (or alias) the catalog queries (OPENSEARCH_INDEX).
   * @default 'catalog'
   */
  readonly searchIndex?: string;
  /**
   * Anonymous rate-limit tier, per client IP (RATE_ANON_RPS, RATE_ANON_BURST).
   * @default { rate: 30, burst: 60 } (the spec's values)
   */
  readonly anonymousRate?: RateTier;
  /**
   * Rate-limit tier of callers with a valid bearer token, per user (RATE_USER_RPS, RATE_USER_BURST).
   * @default { rate: 100, burst: 200 } (the spec's values)
   */
  readonly authenticatedRate?: RateTier;
  /**
   * Stage-wide throttling of the HTTP API: a safety net over all callers together, well above the
   * per-caller limits the function enforces.
   * @default { rateLimit: 1000, burstLimit: 2000 }
   */
  readonly throttle?: apigwv2.ThrottleSettings;
  /**
   * Retention of the function's logs and of the API's access logs (both log groups are operational
   * data: they go with the stack).
   * @default RetentionDays.ONE_MONTH
   */
  readonly logRetention?: logs.RetentionDays;
  /**
   * Level of the function's structured logs (LOG_LEVEL).
   * @default 'INFO'
   */
  readonly logLevel?: CatalogLogLevel;
}

const DEFAULT_ENTRY = path.join(__dirname, '..', 'lambdas', 'catalog', 'handler.ts');
/** The SDK part of `/api/mcp`, bundled beside the catalog function's index.js (see lambdas/catalog/mcp/mcp-endpoint.ts). */
const MCP_ENDPOINT = path.join(__dirname, '..', 'lambdas', 'catalog', 'mcp', 'mcp-endpoint.ts');
const DEFAULT_FAVORITES_ENTRY = path.join(__dirname, '..', 'lambdas', 'catalog', 'favorites', 'handler.ts');

/**
 * The catalog Lambda and the favorites Lambda (Node.js 24, arm64, bundled locally with esbuild) and
 * the HTTP API whose routes come from the route table `CATALOG_API`: each route is integrated with
 * the function its `fn` names, and the `$default` catch-all with the catalog function.
 */
export class CatalogApi extends Construct {
  readonly fn: NodejsFunction;
  readonly role: iam.Role;
  /** `GET|POST /api/favorites`, `DELETE /api/favorites/{slug}` (fn `favorites`). `POST /api/mcp` is the catalog function's (`CATALOG_MCP_API`). */
  readonly favoritesFn: NodejsFunction;
  readonly favoritesRole: iam.Role;
  /** The catalog function's environment: the organisation registry's function starts from it. */
  readonly environment: Readonly<Record<string, string>>;
  readonly httpApi: apigwv2.HttpApi;
  readonly stage: apigwv2.HttpStage;
  readonly routes: TableRoutes;
  /** The origin CloudFront calls: the custom origin domain, else `<id>.execute-api.<region>.amazonaws.com`. */
  readonly originDomainName: string;
  /** The API's own custom domain, when `originDomain` is given (the execute-api endpoint is then disabled). */
  readonly originDomain?: apigwv2.DomainName;

  constructor(scope: Construct, id: string, props: CatalogApiProps) {
    super(scope, id);
    const { data, auth } = props;
    const retention = props.logRetention ?? functionDefaults(this).logRetention ?? logs.RetentionDays.ONE_MONTH;
    const anonymous = props.anonymousRate ?? { rate: 30, burst: 60 };
    const authenticated = props.authenticatedRate ?? { rate: 100, burst: 200 };

    // What both functions read: the catalog's rate tiers (one shared limiter), the origin secret, auth.
    const shared: Record<string, string> = {
      CATALOG_TABLE: data.catalogTable.tableName,
      RATE_LIMIT_TABLE: data.rateLimitTable.tableName,
      RATE_ANON_RPS: String(anonymous.rate),
      RATE_ANON_BURST: String(anonymous.burst),
      RATE_USER_RPS: String(authenticated.rate),
      RATE_USER_BURST: String(authenticated.burst),
      ORIGIN_VERIFY_SECRET_ARN: data.originVerifySecret.secretArn,
      ...auth.verifierEnvironment(),
    };
    const environment: Record<string, string> = {
      ...shared,
      ICONS_BUCKET: data.iconsBucket.bucketName,
      ...data.trustEnvironment(),
      ...data.searchEnvironment(props.searchIndex ?? 'catalog'),
      CATALOG_BRAND: props.brand ?? 'example',
      CURSOR_SECRET_ARN: data.cursorKeysSecret.secretArn,
    };
    if (props.siteUrlTemplate !== undefined) environment.SITE_URL_TEMPLATE = props.siteUrlTemplate;
    this.environment = environment;

    ({ fn: this.fn, role: this.role } = appFunction(this, 'Function', {
      description: 'MCP catalog API (routes of CATALOG_API and CATALOG_MCP_API, /api/mcp, plus $default)',
      roleDescription: 'Catalog API function: reads the catalog, icons and search; writes rate-limit buckets',
      entry: props.entry ?? DEFAULT_ENTRY,
      memorySize: props.memorySize ?? 1024,
      timeout: props.timeout ?? Duration.seconds(10),
      reservedConcurrentExecutions: props.reservedConcurrentExecutions,
      logRetention: retention,
      logLevel: props.logLevel,
      serviceName: 'catalog',
      environment,
      // The catalog over MCP's SDK part travels beside the bundle, loaded by the first /api/mcp request;
      // Ajv of its servers' validator (lazyValidator) too, loaded if a schema is ever asked for.
      bundling: { commandHooks: combineHooks(sideChunk(MCP_ENDPOINT, 'mcp-endpoint.js'), AJV_CHUNK) },
    }));

    // Least privilege: read the catalog, conditional writes of the rate limiter's buckets (one
    // UpdateItem, or a PartiQL INSERT/UPDATE in a batch of new callers: RATE_BATCH_TAKES), and read
    // the opaque-token table for the bearer tier.
    data.catalogTable.grantReadData(this.role);
    // A server's checks (`/health`) and changes (`/changes`): one Query each (DynamoTrustStore).
    grantTable(data.trustTable, this.role, ['dynamodb:Query']);
    grantTable(data.rateLimitTable, this.role, ['dynamodb:GetItem', 'dynamodb:UpdateItem', 'dynamodb:PartiQLInsert', 'dynamodb:PartiQLUpdate']);
    auth.grantTokenVerification(this.role);
    // Icons live under api/icons/; ListBucket makes a missing key a 404 (NoSuchKey) rather than a 403.
    this.role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['s3:GetObject'], resources: [data.iconsBucket.arnForObjects('api/icons/*')] }));
    this.role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['s3:ListBucket'], resources: [data.iconsBucket.bucketArn] }));
    acknowledge(
      this.role,
      `AwsSolutions-IAM5[Resource::${nagRef(data.iconsBucket, 'Arn')}/api/icons/*]`,
      'The function serves any icon by slug, so it reads the objects under the api/icons/ prefix of the icons bucket (read-only, one prefix of one bucket).',
    );
    data.grantSearch(this.role, 'read');
    data.cursorKeysSecret.grantRead(this.role);
    data.originVerifySecret.grantRead(this.role);

    // The favorites function: its own role and log group, only what the favorites handlers touch.
    ({ fn: this.favoritesFn, role: this.favoritesRole } = appFunction(this, 'FavoritesFunction', {
      description: 'MCP catalog favorites (the fn "favorites" routes of CATALOG_API)',
      roleDescription: "Favorites function: verifies bearer tokens, reads catalog servers, writes the user's favorites and rate-limit buckets",
      entry: props.favoritesEntry ?? DEFAULT_FAVORITES_ENTRY,
      memorySize: props.favoritesMemorySize ?? 512,
      timeout: props.timeout ?? Duration.seconds(10),
      logRetention: retention,
      logLevel: props.logLevel,
      serviceName: 'favorites',
      reservedConcurrentExecutions: props.favoritesReservedConcurrentExecutions,
      environment: { ...shared, FAVORITES_TABLE: auth.favoritesTable.tableName },
    }));
    auth.grantFavorites(this.favoritesRole);
    // Whether a slug is (still) in the catalog: one item read per server.
    grantTable(data.catalogTable, this.favoritesRole, ['dynamodb:GetItem']);
    grantTable(data.rateLimitTable, this.favoritesRole, ['dynamodb:UpdateItem']);
    auth.grantTokenVerification(this.favoritesRole);
    data.originVerifySecret.grantRead(this.favoritesRole);

    // HTTP API: routes from the route table, a $default stage with throttling and access logs.
    this.httpApi = new apigwv2.HttpApi(this, 'HttpApi', {
      description: 'MCP catalog API (served under /api behind CloudFront)',
      createDefaultStage: false,
      // With a custom origin domain, the API answers only there: nobody can reach it around CloudFront by its default host name.
      disableExecuteApiEndpoint: props.originDomain !== undefined,
    });
    const accessLogs = new logs.LogGroup(this, 'AccessLogs', { retention, removalPolicy: RemovalPolicy.DESTROY });
    this.stage = new apigwv2.HttpStage(this, 'DefaultStage', {
      httpApi: this.httpApi,
      stageName: '$default',
      autoDeploy: true,
      throttle: props.throttle ?? { rateLimit: 1000, burstLimit: 2000 },
      accessLogSettings: {
        destination: new apigwv2.LogGroupLogDestination(accessLogs),
        format: AccessLogFormat.custom(
          JSON.stringify({
            requestId: '$context.requestId',
            requestTime: '$context.requestTimeEpoch',
            sourceIp: '$context.identity.sourceIp',
            userAgent: '$context.identity.userAgent',
            method: '$context.httpMethod',
            path: '$context.path',
            routeKey: '$context.routeKey',
            status: '$context.status',
            protocol: '$context.protocol',
            responseLength: '$context.responseLength',
            latency: '$context.responseLatency',
            integrationLatency: '$context.integrationLatency',
            integrationError: '$context.integrationErrorMessage',
            error: '$context.error.message',
          }),
        ),
      },
    });

    // The catalog over MCP (`POST /api/mcp`) is the catalog function's too: its other verbs reach it through $default.
    const table = { ...CATALOG_API, routes: [...CATALOG_API.routes, ...CATALOG_MCP_API.routes] };
    this.routes = addRoutesFromTable(this.httpApi, table, { catalog: this.fn, favorites: this.favoritesFn });
    const catalogReason =
      'The catalog is public (spec 1). A bearer token only raises the rate limit and is verified in the function, where a bad or expired token falls back to the anonymous tier; an API Gateway authorizer would answer 401 instead.';
    const favoritesReason =
      "The favorites function verifies the bearer itself: Cognito JWTs with aws-jwt-verify and the OAuth front's opaque tokens against DynamoDB, which an API Gateway JWT authorizer cannot check; it answers 401 UNAUTHORIZED or 503 AUTH_UNAVAILABLE in the catalog envelope (spec 1).";
    for (const def of table.routes) {
      const route = this.routes.routes.get(routeKey(def));
      if (route) acknowledge(route, 'AwsSolutions-APIG4', def.fn === 'favorites' ? favoritesReason : catalogReason);
    }
    if (this.routes.catchAll) acknowledge(this.routes.catchAll, 'AwsSolutions-APIG4', catalogReason);

    if (props.originDomain) {
      const { domainName, certificate, hostedZone } = props.originDomain;
      const domain = new apigwv2.DomainName(this, 'OriginDomain', { domainName, certificate, securityPolicy: apigwv2.SecurityPolicy.TLS_1_2 });
      new apigwv2.ApiMapping(this, 'OriginMapping', { api: this.httpApi, domainName: domain, stage: this.stage });
      if (hostedZone) {
        const target = route53.RecordTarget.fromAlias(new route53Targets.ApiGatewayv2DomainProperties(domain.regionalDomainName, domain.regionalHostedZoneId));
        new route53.ARecord(this, 'OriginAlias', { zone: hostedZone, recordName: domainName, target });
        new route53.AaaaRecord(this, 'OriginAliasIpv6', { zone: hostedZone, recordName: domainName, target });
      }
      this.originDomain = domain;
      this.originDomainName = domainName;
    } else {
      this.originDomainName = `${this.httpApi.apiId}.execute-api.${this.httpApi.stack.region}.${this.httpApi.stack.urlSuffix}`;
    }
  }
}
