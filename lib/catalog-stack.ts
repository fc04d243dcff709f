import { CfnOutput, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import type * as apigwv2 from 'aws-cdk-lib/aws-apigatewayv2';
import type { ICertificate } from 'aws-cdk-lib/aws-certificatemanager';
import type * as cloudfront from 'aws-cdk-lib/aws-cloudfront';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type { Construct } from 'constructs';
import type { RateTier } from '../lambdas/shared/config';
import { CatalogApi, type CatalogLogLevel } from './catalog-api';
import { CatalogData, type CatalogSearchDomainOptions } from './catalog-data';
import { CatalogEdge } from './catalog-edge';

export interface CatalogStackProps extends StackProps {
  /**
   * Removal policy of the stateful resources (tables, buckets, search domain, secrets).
   * @default RemovalPolicy.RETAIN
   */
  readonly removalPolicy?: RemovalPolicy;
  /**
   * Customer-managed KMS key for tables, secrets and the search domain.
   * @default - AWS-managed encryption
   */
  readonly encryptionKey?: kms.IKey;
  /** OpenSearch version and size. @default - 2 × t3.small.search, 10 GiB gp3, OpenSearch 2.19 */
  readonly search?: CatalogSearchDomainOptions;
  /** Registry feed brand (`io.<brand>.catalog/v0`). @default 'example' */
  readonly brand?: string;
  /** `CatalogMeta.url` template, e.g. `https://mcp.example.com/servers/{slug}`. @default - none (url omitted) */
  readonly siteUrlTemplate?: string;
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
  readonly api: CatalogApi;
  readonly edge: CatalogEdge;

  constructor(scope: Construct, id: string, props: CatalogStackProps = {}) {
    super(scope, id, {
      description: 'MCP catalog: DynamoDB, OpenSearch, S3 icons, HTTP API + Lambda, CloudFront',
      ...props,
    });

    this.data = new CatalogData(this, 'Data', {
      removalPolicy: props.removalPolicy ?? RemovalPolicy.RETAIN,
      encryptionKey: props.encryptionKey,
      search: props.search,
    });

    this.api = new CatalogApi(this, 'Api', {
      data: this.data,
      entry: props.catalogEntry,
      brand: props.brand,
      siteUrlTemplate: props.siteUrlTemplate,
      anonymousRate: props.anonymousRate,
      authenticatedRate: props.authenticatedRate,
      throttle: props.apiThrottle,
      memorySize: props.catalogMemorySize,
      logLevel: props.logLevel,
    });

    this.edge = new CatalogEdge(this, 'Edge', {
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

    new CfnOutput(this, 'DistributionDomainName', {
      description: 'CloudFront domain serving /api/* and the icons',
      value: this.edge.distribution.distributionDomainName,
    });
    new CfnOutput(this, 'ApiUrl', {
      description: 'HTTP API endpoint (origin of CloudFront; direct calls are not trusted for client IPs)',
      value: this.api.httpApi.apiEndpoint,
    });
  }
}
