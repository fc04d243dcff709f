import * as path from 'node:path';
import { DockerImage, Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import type { ICertificate } from 'aws-cdk-lib/aws-certificatemanager';
import * as cloudfront from 'aws-cdk-lib/aws-cloudfront';
import * as origins from 'aws-cdk-lib/aws-cloudfront-origins';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { buildSync } from 'esbuild';
import { Construct } from 'constructs';
import { ORIGIN_VERIFY_HEADER } from '../lambdas/shared/http/origin-guard';
import { acknowledge } from './nag';

/** Header CloudFront adds to every origin request of the APIs and /mcp; its value is the origin-verify secret. */
export { ORIGIN_VERIFY_HEADER };

/** Request header the viewer-request function sets to the viewer's IP, overwriting what a client sent. */
export const VIEWER_ADDRESS_HEADER = 'x-viewer-address';

/** Path pattern of the icons behaviour; the S3 key of an icon is the path without its leading `/`. */
export const ICONS_PATH_PATTERN = '/api/icons/*';

export interface EdgeProps {
  /** Domain name of the API origin, e.g. `CatalogApi.originDomainName` (`<id>.execute-api.<region>.amazonaws.com`). */
  readonly apiOriginDomainName: string;
  /** Bucket holding the icons under `api/icons/<slug>`; read through origin access control. */
  readonly iconsBucket: s3.IBucket;
  /** Secret whose value CloudFront sends in `x-origin-verify`, so the API trusts CloudFront-Viewer-Address. */
  readonly originVerifySecret: secretsmanager.ISecret;
  /** Bucket for CloudFront standard access logs (ACLs enabled), written under `cloudfront/`. */
  readonly accessLogsBucket: s3.IBucket;
  /**
   * Seconds the edge may cache catalog API responses (GET/HEAD), keyed by path, query string and
   * Authorization. 0 disables caching: the rate-limit headers are per caller, so a cached response
   * would carry someone else's (DESIGN). Favour a few seconds at most.
   * @default 0
   */
  readonly edgeCacheSeconds?: number;
  /**
   * How long the edge keeps an icon (icons are immutable per slug).
   * @default Duration.days(365)
   */
  readonly iconCacheDuration?: Duration;
  /**
   * Runtime of the Lambda@Edge function. Lambda@Edge supports x86_64 only and adopts new runtimes
   * later than Lambda itself.
   * @default Runtime.NODEJS_22_X
   */
  readonly edgeRuntime?: lambda.Runtime;
  /** @default PriceClass.PRICE_CLASS_ALL */
  readonly priceClass?: cloudfront.PriceClass;
  /**
   * Alternate domain names; require `certificate`.
   * @default - the distribution's `*.cloudfront.net` name only
   */
  readonly domainNames?: string[];
  /**
   * ACM certificate in us-east-1 for `domainNames`; with it, viewers need TLS 1.2 (TLSv1.2_2021).
   * @default - the default CloudFront certificate
   */
  readonly certificate?: ICertificate;
  /**
   * ARN of a WAFv2 web ACL (scope CLOUDFRONT, us-east-1) to attach.
   * @default - no web ACL
   */
  readonly webAclArn?: string;
  /**
   * Countries the distribution serves or refuses.
   * @default - no restriction: the catalog is public worldwide
   */
  readonly geoRestriction?: cloudfront.GeoRestriction;
  /**
   * The us-east-1 stack the Lambda@Edge function goes into when this stack is in another region
   * (the deployment's edge stack, see lib/deployment.ts).
   * @default - a stack CDK names `<stack id>-edge-functions`
   */
  readonly edgeStack?: Stack;
  /**
   * Name of the Lambda@Edge function's log group, the same in every region it runs in (a custom
   * name keeps Lambda@Edge from prefixing `us-east-1.`, so one name covers every replica's group).
   * @default - `/mcp-catalog/<stack name>/icon-not-found`
   */
  readonly edgeLogGroupName?: string;
  /** Retention of that log group (in us-east-1; the replicas' groups get it from the retention sweep). @default RetentionDays.ONE_MONTH */
  readonly edgeLogRetention?: logs.RetentionDays;
}

/**
 * The single CloudFront distribution: the catalog API (default behaviour, uncached by default) and
 * the icons from S3 (`/api/icons/*`, through origin access control, cached for a year), where a
 * Lambda@Edge origin-response function turns S3's 403/404 into the API's 404 envelope. Every API
 * behaviour runs a CloudFront Function on viewer request that sets `x-viewer-address` to the viewer's
 * IP. Later APIs add their behaviours with `addApiBehavior`.
 */
export class Edge extends Construct {
  readonly distribution: cloudfront.Distribution;
  readonly iconNotFoundFunction: cloudfront.experimental.EdgeFunction;
  /** Its log group in us-east-1; the same name holds its logs in every other region. */
  readonly edgeLogGroup: logs.LogGroup;
  /** Viewer-request function of every API behaviour: sets `x-viewer-address` to the viewer's IP. */
  readonly viewerAddressFunction: cloudfront.Function;
  /** Cache policy of API behaviours (CachingDisabled unless `edgeCacheSeconds` > 0). */
  readonly apiCachePolicy: cloudfront.ICachePolicy;

  private readonly originVerifySecret: secretsmanager.ISecret;

  constructor(scope: Construct, id: string, props: EdgeProps) {
    super(scope, id);
    this.originVerifySecret = props.originVerifySecret;
    const edgeCacheSeconds = props.edgeCacheSeconds ?? 0;
    if (!Number.isInteger(edgeCacheSeconds) || edgeCacheSeconds < 0) {
      throw new Error(`edgeCacheSeconds must be a whole number of seconds >= 0, got ${edgeCacheSeconds}`);
    }

    this.apiCachePolicy =
      edgeCacheSeconds === 0
        ? cloudfront.CachePolicy.CACHING_DISABLED
        : new cloudfront.CachePolicy(this, 'ApiCachePolicy', {
            comment: `Catalog API: ${edgeCacheSeconds}s, keyed by path, query string and Authorization`,
            minTtl: Duration.seconds(0),
            defaultTtl: Duration.seconds(edgeCacheSeconds),
            maxTtl: Duration.seconds(edgeCacheSeconds),
            // Authorization must be in the key: a caller's tier and favorites must not leak to another.
            headerBehavior: cloudfront.CacheHeaderBehavior.allowList('Authorization'),
            queryStringBehavior: cloudfront.CacheQueryStringBehavior.all(),
            cookieBehavior: cloudfront.CacheCookieBehavior.none(),
            enableAcceptEncodingGzip: true,
            enableAcceptEncodingBrotli: true,
          });

    const iconCache = props.iconCacheDuration ?? Duration.days(365);
    const iconsCachePolicy = new cloudfront.CachePolicy(this, 'IconsCachePolicy', {
      comment: 'Icons: immutable per slug, cached for a year; nothing but the path in the key',
      // minTtl 0 so the 404 envelope's `cache-control: no-store` is honoured.
      minTtl: Duration.seconds(0),
      defaultTtl: iconCache,
      maxTtl: iconCache,
      headerBehavior: cloudfront.CacheHeaderBehavior.none(),
      queryStringBehavior: cloudfront.CacheQueryStringBehavior.none(),
      cookieBehavior: cloudfront.CacheCookieBehavior.none(),
      enableAcceptEncodingGzip: true,
      enableAcceptEncodingBrotli: true,
    });

    const iconsHeaders = new cloudfront.ResponseHeadersPolicy(this, 'IconsResponseHeaders', {
      comment: 'Icons: readable from any origin, immutable in browsers too',
      corsBehavior: {
        accessControlAllowOrigins: ['*'],
        accessControlAllowMethods: ['GET', 'HEAD'],
        accessControlAllowHeaders: ['*'],
        accessControlAllowCredentials: false,
        originOverride: true,
      },
      customHeadersBehavior: {
        customHeaders: [
          // Added only when the response has none, so the 404's `no-store` stays.
          { header: 'Cache-Control', value: `public, max-age=${iconCache.toSeconds()}, immutable`, override: false },
        ],
      },
      securityHeadersBehavior: { contentTypeOptions: { override: true } },
    });

    // The function lives in us-east-1: in this stack when it is there, else in the edge stack.
    const here = Stack.of(this);
    const edgeStackId = props.edgeStack?.node.id ?? `${here.node.id}-edge-functions`;
    const functionStack = here.region === 'us-east-1' ? here : (props.edgeStack ?? usEast1Stack(here, edgeStackId));
    this.edgeLogGroup = new logs.LogGroup(
      functionStack === here ? this : functionStack,
      functionStack === here ? 'IconNotFoundLogs' : `${here.node.id}IconNotFoundLogs`,
      {
        logGroupName: props.edgeLogGroupName ?? `/mcp-catalog/${here.stackName}/icon-not-found`,
        retention: props.edgeLogRetention ?? logs.RetentionDays.ONE_MONTH,
        removalPolicy: RemovalPolicy.DESTROY,
      },
    );
    this.iconNotFoundFunction = new cloudfront.experimental.EdgeFunction(this, 'IconNotFound', {
      description: 'Origin response of /api/icons/*: S3 403/404 becomes the catalog 404 envelope',
      runtime: props.edgeRuntime ?? lambda.Runtime.NODEJS_22_X,
      handler: 'index.handler',
      code: edgeCode('icon-not-found.ts', props.edgeRuntime ?? lambda.Runtime.NODEJS_22_X),
      memorySize: 128,
      timeout: Duration.seconds(5),
      logGroup: this.edgeLogGroup,
      // The us-east-1 stack the function goes into when this stack is in another region.
      stackId: edgeStackId,
    });

    this.viewerAddressFunction = new cloudfront.Function(this, 'ViewerAddress', {
      comment: `API behaviours, viewer request: ${VIEWER_ADDRESS_HEADER} = viewer IP, overwriting the client's`,
      runtime: cloudfront.FunctionRuntime.JS_2_0,
      code: cloudfront.FunctionCode.fromFile({ filePath: path.join(__dirname, '..', 'lambdas', 'edge', 'viewer-address.js') }),
    });

    this.distribution = new cloudfront.Distribution(this, 'Distribution', {
      comment: 'MCP catalog: API (default behaviour) and icons from S3 (/api/icons/*)',
      defaultBehavior: this.apiBehavior(props.apiOriginDomainName),
      additionalBehaviors: {
        [ICONS_PATH_PATTERN]: {
          origin: origins.S3BucketOrigin.withOriginAccessControl(props.iconsBucket),
          viewerProtocolPolicy: cloudfront.ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
          allowedMethods: cloudfront.AllowedMethods.ALLOW_GET_HEAD,
          cachedMethods: cloudfront.CachedMethods.CACHE_GET_HEAD,
          cachePolicy: iconsCachePolicy,
          responseHeadersPolicy: iconsHeaders,
          compress: true,
          edgeLambdas: [
            {
              functionVersion: this.iconNotFoundFunction.currentVersion,
              eventType: cloudfront.LambdaEdgeEventType.ORIGIN_RESPONSE,
            },
          ],
        },
      },
      httpVersion: cloudfront.HttpVersion.HTTP2_AND_3,
      enableIpv6: true,
      priceClass: props.priceClass ?? cloudfront.PriceClass.PRICE_CLASS_ALL,
      domainNames: props.domainNames,
      certificate: props.certificate,
      // Only meaningful with a certificate: the default one is fixed at TLSv1 (see CFR4 below).
      minimumProtocolVersion: props.certificate ? cloudfront.SecurityPolicyProtocol.TLS_V1_2_2021 : undefined,
      webAclId: props.webAclArn,
      geoRestriction: props.geoRestriction,
      enableLogging: true,
      logBucket: props.accessLogsBucket,
      logFilePrefix: 'cloudfront/',
    });

    this.acknowledgeFindings(props);
  }

  /**
   * Routes a path pattern (e.g. `/v1/*`) to another API origin with the same settings as the catalog
   * API: HTTPS only, the origin-verify header, all viewer headers but Host, the API cache policy, and
   * the viewer-request function that sets `x-viewer-address`. A cache policy of its own replaces the
   * API's (the site's pages are cached at the edge).
   */
  addApiBehavior(pathPattern: string, originDomainName: string, cachePolicy?: cloudfront.ICachePolicy): void {
    this.distribution.addBehavior(pathPattern, this.apiOrigin(originDomainName), { ...this.apiBehaviorOptions(), ...(cachePolicy && { cachePolicy }) });
  }

  /**
   * Routes a path pattern (e.g. `/mcp`) to a Lambda function URL: HTTPS only, every verb (MCP
   * clients POST), never cached, all viewer headers but Host (a function URL answers only on its own
   * host name) so Authorization, Origin and MCP-Protocol-Version reach the function, and the
   * origin-verify header the function requires.
   */
  addFunctionUrlBehavior(pathPattern: string, functionUrl: lambda.IFunctionUrl): void {
    const origin = new origins.FunctionUrlOrigin(functionUrl, {
      // The function checks it (403 without it): the URL answers only through the distribution.
      customHeaders: { [ORIGIN_VERIFY_HEADER]: this.originVerifySecret.secretValue.unsafeUnwrap() },
    });
    this.distribution.addBehavior(pathPattern, origin, {
      viewerProtocolPolicy: cloudfront.ViewerProtocolPolicy.HTTPS_ONLY,
      allowedMethods: cloudfront.AllowedMethods.ALLOW_ALL,
      cachedMethods: cloudfront.CachedMethods.CACHE_GET_HEAD,
      cachePolicy: cloudfront.CachePolicy.CACHING_DISABLED,
      originRequestPolicy: cloudfront.OriginRequestPolicy.ALL_VIEWER_EXCEPT_HOST_HEADER,
      compress: true,
    });
  }

  private apiBehavior(originDomainName: string): cloudfront.BehaviorOptions {
    return { origin: this.apiOrigin(originDomainName), ...this.apiBehaviorOptions() };
  }

  private apiOrigin(domainName: string): cloudfront.IOrigin {
    return new origins.HttpOrigin(domainName, {
      protocolPolicy: cloudfront.OriginProtocolPolicy.HTTPS_ONLY,
      originSslProtocols: [cloudfront.OriginSslPolicy.TLS_V1_2],
      // Resolved by CloudFormation at deploy time (a dynamic reference), never written into the template.
      customHeaders: { [ORIGIN_VERIFY_HEADER]: this.originVerifySecret.secretValue.unsafeUnwrap() },
    });
  }

  private apiBehaviorOptions(): cloudfront.AddBehaviorOptions {
    return {
      viewerProtocolPolicy: cloudfront.ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
      allowedMethods: cloudfront.AllowedMethods.ALLOW_ALL,
      cachedMethods: cloudfront.CachedMethods.CACHE_GET_HEAD,
      cachePolicy: this.apiCachePolicy,
      // All query strings, cookies and viewer headers except Host (API Gateway routes on its own host
      // name), Authorization included while caching is off. The policy is not documented to include
      // CloudFront-Viewer-Address (and a custom policy can add it only by forwarding Host too), so
      // the client IP the rate limiter keys on comes from the viewer-request function below.
      originRequestPolicy: cloudfront.OriginRequestPolicy.ALL_VIEWER_EXCEPT_HOST_HEADER,
      compress: true,
      functionAssociations: [{ function: this.viewerAddressFunction, eventType: cloudfront.FunctionEventType.VIEWER_REQUEST }],
    };
  }

  private acknowledgeFindings(props: EdgeProps): void {
    const distribution = this.distribution;
    if (!props.geoRestriction) {
      acknowledge(
        distribution,
        'AwsSolutions-CFR1',
        'The MCP catalog is a public directory meant for readers worldwide; there is no jurisdiction to exclude. Pass geoRestriction to restrict it.',
      );
    }
    if (!props.webAclArn) {
      acknowledge(
        distribution,
        'AwsSolutions-CFR2',
        "The deployer turned the web ACL off (waf: false): abuse control is then the application's per-IP and per-user GCRA rate limits and the API stage throttle; the default deployment attaches a WAF web ACL with a per-IP rate rule and the AWS common and known-bad-inputs groups.",
      );
    }
    if (!props.certificate) {
      acknowledge(
        distribution,
        'AwsSolutions-CFR4',
        'Without a custom domain the distribution uses the default *.cloudfront.net certificate, whose security policy CloudFront fixes at TLSv1; pass domainNames and certificate to enforce TLSv1.2_2021.',
      );
    }

    // Lambda@Edge (in us-east-1; outside it, CDK's cross-region reader adds no finding of its own).
    const edge = this.iconNotFoundFunction;
    const edgeRole = edge.lambda.role;
    if (edgeRole) {
      acknowledge(
        edgeRole,
        'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
        'Lambda@Edge writes its logs to /aws/lambda/us-east-1.<name> in whichever region serves the request, so a policy scoped to one log group ARN cannot work; the managed policy grants only log group/stream creation and PutLogEvents.',
      );
    }
    const edgeRuntime = props.edgeRuntime ?? lambda.Runtime.NODEJS_22_X;
    if (edgeRuntime.name !== lambda.Runtime.NODEJS_24_X.name) {
      const why = `Lambda@Edge adopts runtimes later than Lambda; ${edgeRuntime.name} is the newest Node.js runtime this function is known to deploy on at the edge (raise edgeRuntime when Lambda@Edge accepts nodejs24.x).`;
      acknowledge(edge.lambda, 'AwsSolutions-L1', why);
      acknowledge(edge.lambda, 'Serverless-LambdaLatestVersion', why);
    }
    acknowledge(
      edge.lambda,
      'Serverless-LambdaTracing',
      'Lambda@Edge does not support X-Ray active tracing; the function only rewrites an S3 403/404 into the JSON 404 and its logs are in the log group of every region it runs in.',
    );
    const sync =
      'CloudFront invokes Lambda@Edge synchronously on the origin response (a failure is a 5xx to the viewer, counted in the CloudFront 5xx alarm); Lambda@Edge supports neither dead-letter queues nor destinations.';
    acknowledge(edge.lambda, 'Serverless-LambdaDLQ', sync);
    acknowledge(edge.lambda, 'Serverless-LambdaAsyncFailureDestination', sync);
  }
}

/**
 * The us-east-1 stack of that id beside `stack` (the one EdgeFunction would create: it looks the id
 * up first), created here so the function's log group can be placed in it too.
 */
export function usEast1Stack(stack: Stack, id: string): Stack {
  const parent = stack.node.scope;
  if (!parent) throw new Error('a stack outside us-east-1 needs a parent for its edge stack');
  const found = parent.node.tryFindChild(id);
  if (found instanceof Stack) return found;
  return new Stack(parent, id, {
    env: { region: 'us-east-1', account: stack.account },
    tags: stack.tags.tagValues(),
    // It hands the stack that made it references (the web ACL, a certificate) across regions.
    crossRegionReferences: true,
    description: `${stack.node.id}: what CloudFront needs in us-east-1 (Lambda@Edge, WAF web ACL, certificate)`,
  });
}

/** Bundles one self-contained Lambda@Edge handler with the local esbuild (no Docker). */
function edgeCode(file: string, runtime: lambda.Runtime): lambda.Code {
  const dir = path.join(__dirname, '..', 'lambdas', 'edge');
  const target = runtime.name.replace(/^nodejs(\d+).*$/, 'node$1');
  return lambda.Code.fromAsset(dir, {
    bundling: {
      // Only used if local bundling declined, which it never does: synth runs without Docker.
      image: DockerImage.fromRegistry('public.ecr.aws/sam/build-nodejs22.x'),
      local: {
        tryBundle(outputDir: string): boolean {
          buildSync({
            entryPoints: [path.join(dir, file)],
            outfile: path.join(outputDir, 'index.js'),
            bundle: true,
            platform: 'node',
            format: 'cjs',
            target,
            minify: true,
            legalComments: 'none',
            logLevel: 'warning',
          });
          return true;
        },
      },
    },
  });
}
