import { Aspects, CfnOutput, Duration, Lazy, RemovalPolicy, Stack, Tags, Token } from 'aws-cdk-lib';
import * as acm from 'aws-cdk-lib/aws-certificatemanager';
import * as cloudfront from 'aws-cdk-lib/aws-cloudfront';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as route53 from 'aws-cdk-lib/aws-route53';
import * as route53Targets from 'aws-cdk-lib/aws-route53-targets';
import type { Construct } from 'constructs';
import { metricsNamespace } from '../lambdas/shared/observability/metric-names';
import { DataBackup } from './backup';
import { CatalogApi } from './catalog-api';
import { CatalogChecks } from './catalog-checks';
import { CatalogCrawler } from './catalog-crawler';
import { CatalogData } from './catalog-data';
import { type CatalogStackProps, RECOMMENDED_RESERVED_CONCURRENCY } from './catalog-stack-props';
import { Edge, usEast1Stack } from './edge';
import { EdgeLogRetention } from './edge-log-retention';
import { Identity } from './identity';
import { setFunctionDefaults } from './lambda-function';
import { MemoryApi } from './memory-api';
import { MemoryMcp } from './memory-mcp';
import { Monitoring } from './monitoring';
import { LogGroupsWithRetention } from './log-groups';
import { AccountGlobalNames, checkStage } from './naming';
import { OAuthFront } from './oauth-front';
import { OriginSecretRotation } from './origin-secret-rotation';
import { MemoryGit } from './memory-git';
import { Site } from './site';
import { OrgRegistry } from './org-registry';
import { watchDeployment } from './watch-deployment';
import { EdgeWebAcl } from './waf';

export type { CatalogStackProps, ReservedConcurrency } from './catalog-stack-props';

/**
 * The deployment: stateful data, the APIs, the crawler and the CloudFront distribution in one
 * stack (they reference each other both ways), with the truth protected by RETAIN, deletion
 * protection, versions and backups rather than by a separate stack. What must live in us-east-1
 * (the Lambda@Edge function, the WAF web ACL, the distribution's certificate) goes into
 * `edgeStack` when this stack is elsewhere; `deployCatalog` (lib/deployment.ts) builds the set.
 */
export class CatalogStack extends Stack {
  readonly stage: string;
  readonly data: CatalogData;
  /** The scheduled crawler that fills the catalog. */
  readonly crawler: CatalogCrawler;
  /** The scheduled health check rounds of the hosted servers (history in the trust table). */
  readonly checks: CatalogChecks;
  readonly auth: Identity;
  readonly api: CatalogApi;
  readonly edge: Edge;
  /** The OAuth 2.1 front MCP clients sign in through (`/oauth/*`, `/.well-known/*`). */
  readonly oauth: OAuthFront;
  /** The memory REST API (`/v1`): bucket, rev-lock table, function, routes. */
  readonly memory: MemoryApi;
  /** The git remote (`/v1/memories/<name>.git`): a streaming function URL behind CloudFront. */
  readonly memoryGit: MemoryGit;
  /** The organisation registry (`/org/v0.1`, the allow-list's admin API): function, settings bucket, admin group. */
  readonly org: OrgRegistry;
  /** The MCP endpoint (`/mcp`): function, function URL. */
  readonly mcp: MemoryMcp;
  /** The site (`/`, `/servers`, …): render function, routes, CloudFront behaviours. */
  readonly site: Site;
  /** The alarm topic, every alarm and the dashboard. */
  readonly monitoring: Monitoring;
  /** The web ACL this stack created (in `edgeStack` outside us-east-1). */
  readonly webAcl?: EdgeWebAcl;
  readonly backup?: DataBackup;
  /** Rotates CloudFront's origin secret (on a schedule unless `originSecretRotation: false`). */
  readonly originSecretRotation: OriginSecretRotation;
  /** Sets the Lambda@Edge log group's retention in every region (lives beside the function, in us-east-1). */
  readonly edgeLogRetention: EdgeLogRetention;

  constructor(scope: Construct, id: string, props: CatalogStackProps = {}) {
    const searchEngine = props.searchEngine ?? 'opensearch';
    const region = props.env?.region;
    super(scope, id, {
      description: `MCP catalog and memory (${searchEngine === 'embedded' ? 'embedded search' : 'OpenSearch'}): DynamoDB, S3, Cognito, HTTP API + Lambdas, CloudFront, alarms`,
      // Outside us-east-1 this stack reads the WAF web ACL and the certificate from its us-east-1 stack.
      crossRegionReferences: props.crossRegionReferences ?? (region !== undefined && region !== 'us-east-1'),
      ...props,
    });
    this.stage = checkStage(props.stage ?? 'prod');
    const removalPolicy = props.removalPolicy ?? RemovalPolicy.RETAIN;
    const logRetention = props.logRetention ?? logs.RetentionDays.ONE_MONTH;
    const namespace = metricsNamespace(this.stage);
    const reserved = reservations(props);
    // What CloudFront needs in us-east-1 goes here: this stack, or the deployment's edge stack.
    const usEast1 = this.region === 'us-east-1' ? this : (props.edgeStack ?? usEast1Stack(this, `${id}-edge-functions`));
    const homeRegion = Token.isUnresolved(this.region) ? 'any-region' : this.region;
    for (const stack of new Set([this, usEast1])) {
      // Before any function exists: every appFunction of the deployment reads these (the edge log
      // sweep's in us-east-1 too).
      setFunctionDefaults(stack, { metricsNamespace: namespace, tracing: props.tracing ?? true, logRetention });
      Tags.of(stack).add('mcp-catalog:stage', this.stage);
      Aspects.of(stack).add(new AccountGlobalNames(this.stage, homeRegion));
      Aspects.of(stack).add(new LogGroupsWithRetention(logRetention));
    }

    this.monitoring = new Monitoring(this, 'Monitoring', {
      settings: props.alarms,
      namespace,
      encryptionKey: props.encryptionKey,
      dashboardName: `${this.stage}-mcp-catalog-${this.region}`,
    });

    this.data = new CatalogData(this, 'Data', {
      removalPolicy,
      encryptionKey: props.encryptionKey,
      searchEngine,
      search: props.search,
      searchLogRetention: logRetention,
      checkRetentionDays: props.checkRetentionDays,
    });

    this.crawler = new CatalogCrawler(this, 'Crawler', {
      ...props.crawler,
      data: this.data,
      schedule: props.crawlSchedule,
      registryUrl: props.registryUrl,
      githubTokenSecret: props.githubTokenSecret,
      githubTokenSecretName: props.githubTokenSecretName,
      sharpLayer: props.sharpLayer,
      reservedConcurrentExecutions: reserved('crawler', (props.crawler?.maxConcurrency ?? 4) + 2),
      logLevel: props.crawler?.logLevel ?? props.logLevel,
    });

    this.checks = new CatalogChecks(this, 'Checks', {
      ...props.checks,
      data: this.data,
      ...(props.checkSchedule !== false && props.checkSchedule !== undefined && { schedule: props.checkSchedule }),
      scheduleEnabled: props.checkSchedule !== false,
      reservedConcurrentExecutions: reserved('checks', (props.checks?.maxConcurrency ?? 4) + 1),
      logLevel: props.checks?.logLevel ?? props.logLevel,
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
      removalPolicy,
      encryptionKey: props.encryptionKey,
      selfSignUp: props.selfSignUp,
      signInDomainPrefix: props.signInDomainPrefix,
      featurePlan: props.cognitoFeaturePlan,
      email: props.cognitoEmail,
      mfa: props.mfa,
      webCallbackUrls: props.webCallbackUrls,
      webLogoutUrls: props.webLogoutUrls,
      personalTokens: props.personalTokens,
    });

    const zone = props.hostedZone ? route53.HostedZone.fromHostedZoneAttributes(this, 'Zone', props.hostedZone) : undefined;
    const apiOrigin = props.apiOriginDomain;
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
      reservedConcurrentExecutions: reserved('catalog'),
      favoritesReservedConcurrentExecutions: reserved('favorites'),
      ...(apiOrigin && {
        originDomain: {
          domainName: apiOrigin.domainName,
          certificate: this.certificate('ApiOriginCertificate', this, apiOrigin.certificateArn, [apiOrigin.domainName], zone),
          hostedZone: zone,
        },
      }),
    });

    this.webAcl =
      props.waf === false || props.webAclArn
        ? undefined
        : new EdgeWebAcl(usEast1, usEast1 === this ? 'Waf' : `${id}Waf`, { ...props.waf, metricPrefix: `${this.stage}-${homeRegion}`, logRetention });
    const certificate =
      props.certificate ?? (props.domainNames?.length ? this.certificate('Certificate', usEast1, props.certificateArn, props.domainNames, zone) : undefined);

    this.edge = new Edge(this, 'Edge', {
      apiOriginDomainName: this.api.originDomainName,
      iconsBucket: this.data.iconsBucket,
      originVerifySecret: this.data.originVerifySecret,
      accessLogsBucket: this.data.accessLogsBucket,
      edgeCacheSeconds: props.edgeCacheSeconds,
      edgeRuntime: props.edgeRuntime,
      domainNames: props.domainNames,
      certificate,
      webAclArn: props.webAclArn ?? this.webAcl?.arn,
      priceClass: props.priceClass,
      geoRestriction: props.geoRestriction && geoRestriction(props.geoRestriction),
      edgeStack: usEast1 === this ? undefined : usEast1,
      edgeLogGroupName: `/mcp-catalog/${this.stage}-${this.region}/icon-not-found`,
      edgeLogRetention: logRetention,
    });
    this.edgeLogRetention = new EdgeLogRetention(usEast1, usEast1 === this ? 'EdgeLogRetention' : `${id}EdgeLogRetention`, {
      logGroupName: this.edge.edgeLogGroup.logGroupName,
      retention: logRetention,
      reservedConcurrentExecutions: reserved('edgeLogRetention'),
    });
    if (zone && props.domainNames?.length) {
      const target = route53.RecordTarget.fromAlias(new route53Targets.CloudFrontTarget(this.edge.distribution));
      props.domainNames.forEach((name, i) => {
        new route53.ARecord(this, `Alias${i}`, { zone, recordName: name, target });
        new route53.AaaaRecord(this, `AliasIpv6${i}`, { zone, recordName: name, target });
      });
    }

    // The front's routes live on the catalog's HTTP API; CloudFront sends its two prefixes there
    // explicitly rather than through the default behaviour, so they keep working whatever becomes
    // the default origin.
    this.oauth = new OAuthFront(this, 'OAuth', {
      ...props.oauth,
      auth: this.auth,
      httpApi: this.api.httpApi,
      signingKeysSecret: this.data.cursorKeysSecret,
      rateLimitTable: this.data.rateLimitTable,
      originVerifySecret: this.data.originVerifySecret,
      reservedConcurrentExecutions: reserved('oauth'),
      logLevel: props.oauth?.logLevel ?? props.logLevel,
    });
    this.edge.addApiBehavior('/oauth/*', this.api.originDomainName);
    this.edge.addApiBehavior('/.well-known/*', this.api.originDomainName);

    // The memory REST API: its routes on the same HTTP API, and /v1/* sent there explicitly too.
    this.memory = new MemoryApi(this, 'Memory', {
      ...props.memoryApi,
      httpApi: this.api.httpApi,
      data: this.data,
      auth: this.auth,
      removalPolicy,
      encryptionKey: props.encryptionKey,
      reservedConcurrentExecutions: reserved('memory'),
      logLevel: props.memoryApi?.logLevel ?? props.logLevel,
    });
    // The git remote first: CloudFront takes the first behaviour that matches, and /v1/* matches too.
    this.memoryGit = new MemoryGit(this, 'MemoryGit', {
      memory: this.memory,
      data: this.data,
      auth: this.auth,
      reservedConcurrentExecutions: reserved('git'),
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
      originVerifySecret: this.data.originVerifySecret,
      auth: this.auth,
      reservedConcurrentExecutions: reserved('mcp'),
      logLevel: props.mcp?.logLevel ?? props.logLevel,
    });
    this.edge.addFunctionUrlBehavior('/mcp', this.mcp.functionUrl);

    // The organisation registry: /org/v0.1 over the catalog, filtered by the operator's allow-list.
    this.org = new OrgRegistry(this, 'Org', {
      data: this.data,
      auth: this.auth,
      api: this.api,
      edge: this.edge,
      removalPolicy,
      logLevel: props.logLevel,
    });
    // The catalog function's MCP endpoint reads the allow-list too (search_servers' orgOnly, allowedInOrg): the file, read-only.
    for (const [name, value] of Object.entries(this.org.allowListEnvironment())) this.api.fn.addEnvironment(name, value);
    this.org.grantAllowListRead(this.api.role);

    // The site: pages rendered on the same HTTP API, cached briefly at the edge.
    this.site = new Site(this, 'Site', {
      logLevel: props.logLevel,
      ...props.site,
      reservedConcurrentExecutions: reserved('site'),
      data: this.data,
      httpApi: this.api.httpApi,
      apiOriginDomainName: this.api.originDomainName,
      edge: this.edge,
      publicUrl,
      org: this.org,
    });

    // `false` keeps the function without a schedule: `aws secretsmanager rotate-secret` still rotates on demand.
    this.originSecretRotation = new OriginSecretRotation(this, 'OriginSecretRotation', {
      secret: this.data.originVerifySecret,
      distribution: this.edge.distribution,
      edgeFunctionVersion: this.edge.iconNotFoundFunction.currentVersion,
      every: props.originSecretRotation === false ? Duration.days(0) : (props.originSecretRotation ?? Duration.days(30)),
    });
    this.monitoring.watchFunction('OriginSecretRotationFunction', this.originSecretRotation.fn);

    if (props.backup !== false) {
      this.backup = new DataBackup(this, 'Backup', {
        settings: props.backup,
        tables: [this.memory.table, this.auth.tokenTable, this.auth.clientTable, this.auth.favoritesTable, this.data.catalogTable, this.crawler.stateTable],
        buckets: [this.memory.bucket],
        monitoring: this.monitoring,
        encryptionKey: props.encryptionKey,
      });
    }

    watchDeployment(this, props);
    this.addOutputs(publicUrl);
  }

  /** A certificate by ARN, or one created with DNS validation in `zone`, in `stack` (us-east-1 for CloudFront). */
  private certificate(id: string, stack: Stack, arn: string | undefined, names: string[], zone: route53.IHostedZone | undefined): acm.ICertificate {
    const scope = stack === this ? this : stack;
    const cid = stack === this ? id : `${this.node.id}${id}`;
    if (arn) return acm.Certificate.fromCertificateArn(scope, cid, arn);
    if (!zone) throw new Error(`${id}: give a certificate ARN or a hostedZone to validate one in (domains: ${names.join(', ')})`);
    const z =
      stack === this ? zone : route53.HostedZone.fromHostedZoneAttributes(stack, `${cid}Zone`, { hostedZoneId: zone.hostedZoneId, zoneName: zone.zoneName });
    return new acm.Certificate(scope, cid, { domainName: names[0], subjectAlternativeNames: names.slice(1), validation: acm.CertificateValidation.fromDns(z) });
  }

  /** What an operator reads after `cdk deploy` (README, "Deployment"). */
  private addOutputs(publicUrl: string): void {
    new CfnOutput(this, 'DistributionDomainName', {
      description: 'CloudFront domain serving the APIs and the icons',
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
      description: this.api.originDomain
        ? "The HTTP API's own domain (CloudFront's origin; the execute-api endpoint is disabled)"
        : "HTTP API endpoint (CloudFront's origin; it answers 403 to anyone else)",
      value: this.api.originDomain ? `https://${this.api.originDomainName}` : this.api.httpApi.apiEndpoint,
    });
    new CfnOutput(this, 'AlarmTopicArn', { description: 'SNS topic every alarm notifies (subscribe here)', value: this.monitoring.topic.topicArn });
    new CfnOutput(this, 'CrawlerStateMachineArn', {
      description: 'Start a crawl by hand: aws stepfunctions start-execution --state-machine-arn <this> --input \'{"mode":"full"}\'',
      value: this.crawler.stateMachine.stateMachineArn,
    });
    new CfnOutput(this, 'CheckStateMachineArn', {
      description: "Start a health check round by hand: aws stepfunctions start-execution --state-machine-arn <this> --input '{}'",
      value: this.checks.stateMachine.stateMachineArn,
    });
    new CfnOutput(this, 'MemoryBucketName', { description: 'Memory objects (versioned; see README, "Restore")', value: this.memory.bucket.bucketName });
    new CfnOutput(this, 'MemoryTableName', {
      description: 'Memory rev table (point-in-time recovery; see README, "Restore")',
      value: this.memory.table.tableName,
    });
    new CfnOutput(this, 'CatalogTableName', { description: 'The catalog table (CATALOG_TABLE of `npm run reindex`)', value: this.data.catalogTable.tableName });
    if (this.data.searchDomain)
      new CfnOutput(this, 'SearchDomainEndpoint', {
        description: 'The OpenSearch domain (OPENSEARCH_URL=https://<this> of `npm run reindex`)',
        value: this.data.searchDomain.domainEndpoint,
      });
    if (this.data.searchSnapshotBucket)
      new CfnOutput(this, 'SearchSnapshotBucketName', {
        description: 'The embedded search snapshot (SEARCH_SNAPSHOT_BUCKET of `npm run reindex`)',
        value: this.data.searchSnapshotBucket.bucketName,
      });
    new CfnOutput(this, 'OriginVerifySecretArn', {
      description: 'The secret of CloudFront\'s x-origin-verify header (README, "Updates": rotation)',
      value: this.data.originVerifySecret.secretArn,
    });
    if (this.backup)
      new CfnOutput(this, 'BackupVaultName', { description: 'AWS Backup vault of the tables and the memory bucket', value: this.backup.vault.backupVaultName });
  }
}

type Reserved = (name: keyof typeof RECOMMENDED_RESERVED_CONCURRENCY | 'crawler' | 'checks', fallback?: number) => number | undefined;

/**
 * Reserved concurrency of one function: none unless the stage opts in (`'recommended'`, or an
 * object: the recommended set with its values over it); 0 leaves a function unreserved.
 */
function reservations(props: CatalogStackProps): Reserved {
  const chosen = props.reservedConcurrency;
  return (name, fallback) => {
    if (chosen === undefined || chosen === false) return undefined;
    const given = chosen === 'recommended' ? undefined : chosen[name];
    const n = given ?? (name === 'crawler' || name === 'checks' ? fallback : RECOMMENDED_RESERVED_CONCURRENCY[name]);
    if (n === undefined || n === 0) return undefined;
    if (!Number.isInteger(n) || n < 0) throw new Error(`reservedConcurrency.${name} must be a whole number >= 0, got ${n}`);
    return n;
  };
}

function geoRestriction(g: NonNullable<CatalogStackProps['geoRestriction']>): cloudfront.GeoRestriction {
  return 'allow' in g ? cloudfront.GeoRestriction.allowlist(...g.allow) : cloudfront.GeoRestriction.denylist(...g.deny);
}
