import { Duration, Lazy, Names, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { EbsDeviceVolumeType } from 'aws-cdk-lib/aws-ec2';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as opensearch from 'aws-cdk-lib/aws-opensearchservice';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import { acknowledge, nagFlatten } from './nag';
import { CATALOG_TABLE } from '../lambdas/catalog/tables';
import { RATE_LIMIT_TABLE } from '../lambdas/shared/rate-limit/tables';
import { tableKeys } from './tables';

/** Size and version of the OpenSearch domain. */
export interface CatalogSearchDomainOptions {
  /**
   * Name of the domain (3-28 characters: lower-case letters, digits, hyphens). The access policy
   * names the domain's own ARN, which CloudFormation cannot take from the domain it is creating, so
   * the name is fixed at synth time; change it to replace the domain.
   * @default - derived from the construct path and a hash, e.g. `mcpcatalog-data-1a2b3c4d`
   */
  readonly domainName?: string;
  /**
   * Engine version.
   * @default EngineVersion.OPENSEARCH_2_19
   */
  readonly version?: opensearch.EngineVersion;
  /**
   * Data node instance type. T3 types support encryption at rest and node-to-node encryption but
   * not Multi-AZ with standby.
   * @default 't3.small.search'
   */
  readonly instanceType?: string;
  /**
   * Number of data nodes. An even count of 2 or more spreads them over two availability zones
   * (zone awareness); an odd count keeps them in one.
   * @default 2
   */
  readonly instanceCount?: number;
  /**
   * EBS (gp3) volume per data node, in GiB. The catalog (about 10,000 documents with README text)
   * needs well under 1 GiB; 10 is the gp3 floor that leaves room for reindexing.
   * @default 10
   */
  readonly volumeSizeGiB?: number;
  /**
   * Dedicated master nodes (0, 3 or 5). Recommended once the domain grows past a handful of nodes.
   * @default 0
   */
  readonly masterNodeCount?: number;
  /**
   * Instance type of the dedicated master nodes, when there are any.
   * @default 'm7g.large.search'
   */
  readonly masterNodeInstanceType?: string;
}

export interface CatalogDataProps {
  /**
   * What happens to the tables, buckets, search domain and secrets when they leave the stack.
   * With RETAIN the tables also get deletion protection.
   * `DESTROY` suits throwaway environments only (a non-empty bucket still blocks deletion).
   * @default RemovalPolicy.RETAIN
   */
  readonly removalPolicy?: RemovalPolicy;
  /**
   * Customer-managed KMS key for the tables, the secrets and the search domain's encryption at rest.
   * The icons bucket stays on S3-managed keys either way (its objects are public through CloudFront,
   * and SSE-KMS would need CloudFront's origin access control in the key policy).
   * @default - AWS-owned/AWS-managed keys (DynamoDB `AWS_MANAGED`, `aws/secretsmanager`, `aws/es`)
   */
  readonly encryptionKey?: kms.IKey;
  /** @default - see `CatalogSearchDomainOptions` */
  readonly search?: CatalogSearchDomainOptions;
  /**
   * Days that S3 server access logs and CloudFront access logs are kept in the access-log bucket.
   * @default 90
   */
  readonly accessLogRetentionDays?: number;
  /**
   * Retention of the search domain's slow and application logs (deleted with the stack).
   * @default RetentionDays.ONE_MONTH
   */
  readonly searchLogRetention?: logs.RetentionDays;
}

/** What a principal may do on the search domain. */
export type SearchAccess = 'read' | 'readwrite';

const SEARCH_READ_ACTIONS = ['es:ESHttpGet', 'es:ESHttpHead', 'es:ESHttpPost'];
const SEARCH_WRITE_ACTIONS = ['es:ESHttpPut', 'es:ESHttpDelete', 'es:ESHttpPatch'];

/**
 * What every bucket of the deployment has: no public access, encryption at rest, TLS 1.2+ only
 * (the bucket policy refuses plain HTTP). One definition, so a new bucket cannot miss one of them.
 */
export const PRIVATE_BUCKET = {
  blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
  encryption: s3.BucketEncryption.S3_MANAGED,
  enforceSSL: true,
  minimumTLSVersion: 1.2,
} as const satisfies s3.BucketProps;

/**
 * The catalog's stateful resources: the `catalog` and `rate-limits` tables (DynamoDB is the source
 * of truth), the icons bucket, the OpenSearch domain (the query engine), the access-log bucket, and
 * the secrets for cursor signing and the CloudFront origin header.
 */
export class CatalogData extends Construct {
  /** `catalog`: partition key `slug`, sort key `sk`. */
  readonly catalogTable: dynamodb.Table;
  /** `rate-limits`: partition key `pk`; items expire through TTL on `expiresAt`. */
  readonly rateLimitTable: dynamodb.Table;
  /** Icons, write-once per slug. CloudFront maps `/api/icons/<slug>` to the key `api/icons/<slug>`. */
  readonly iconsBucket: s3.Bucket;
  /** Server access logs of the icons bucket (`s3/icons/`) and CloudFront access logs (`cloudfront/`). */
  readonly accessLogsBucket: s3.Bucket;
  readonly searchDomain: opensearch.Domain;
  /** Cursor-signing key ring, JSON `{"id":1,"secret":"<64 alphanumerics>"}` as generated. */
  readonly cursorKeysSecret: secretsmanager.Secret;
  /** The value CloudFront sends in `x-origin-verify` (a plain 48-character string). */
  readonly originVerifySecret: secretsmanager.Secret;

  /** Name of the search domain, known at synth time (see `CatalogSearchDomainOptions.domainName`). */
  readonly searchDomainName: string;

  private readonly searchAccessPolicy = new iam.PolicyDocument();

  constructor(scope: Construct, id: string, props: CatalogDataProps = {}) {
    super(scope, id);
    const removalPolicy = props.removalPolicy ?? RemovalPolicy.RETAIN;
    const retained = removalPolicy === RemovalPolicy.RETAIN;
    const key = props.encryptionKey;
    const tableEncryption = key
      ? { encryption: dynamodb.TableEncryption.CUSTOMER_MANAGED, encryptionKey: key }
      : { encryption: dynamodb.TableEncryption.AWS_MANAGED };

    this.catalogTable = new dynamodb.Table(this, 'CatalogTable', {
      ...tableKeys(CATALOG_TABLE),
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      ...tableEncryption,
      deletionProtection: retained,
      removalPolicy,
    });

    this.rateLimitTable = new dynamodb.Table(this, 'RateLimitTable', {
      ...tableKeys(RATE_LIMIT_TABLE),
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      ...tableEncryption,
      deletionProtection: retained,
      removalPolicy,
    });

    this.accessLogsBucket = new s3.Bucket(this, 'AccessLogsBucket', {
      ...PRIVATE_BUCKET,
      // CloudFront standard logs are delivered through a bucket ACL grant; S3 server access logs use
      // the bucket policy CDK adds. BUCKET_OWNER_PREFERRED keeps ACLs usable and objects ours.
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_PREFERRED,
      lifecycleRules: [{ expiration: Duration.days(props.accessLogRetentionDays ?? 90) }],
      removalPolicy,
    });
    acknowledge(
      this.accessLogsBucket,
      'AwsSolutions-S1',
      'This is the access-log bucket itself: logging its own accesses into itself would log every log delivery, and another bucket would only move the question.',
    );

    this.iconsBucket = new s3.Bucket(this, 'IconsBucket', {
      ...PRIVATE_BUCKET,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
      // Icons are immutable per slug (stored once, never replaced) and the crawler can fetch any of
      // them again from upstream: versioning would only keep copies of objects that never change.
      versioned: false,
      serverAccessLogsBucket: this.accessLogsBucket,
      serverAccessLogsPrefix: 's3/icons/',
      removalPolicy,
    });

    this.searchDomainName = props.search?.domainName ?? defaultDomainName(this);
    if (!/^[a-z][a-z0-9-]{2,27}$/.test(this.searchDomainName)) {
      throw new Error(`search.domainName must be 3-28 lower-case letters, digits or hyphens, starting with a letter: "${this.searchDomainName}"`);
    }
    this.searchDomain = this.createSearchDomain(props, removalPolicy);

    this.cursorKeysSecret = new secretsmanager.Secret(this, 'CursorKeysSecret', {
      description: 'HMAC key ring that signs catalog cursors: {"id":1,"secret":"..."} (rotation writes {"current","previous"})',
      encryptionKey: key,
      generateSecretString: {
        secretStringTemplate: JSON.stringify({ id: 1 }),
        generateStringKey: 'secret',
        // Alphanumerics only: valid base64 text, 64 characters = 48 bytes of key.
        excludePunctuation: true,
        includeSpace: false,
        passwordLength: 64,
      },
      removalPolicy,
    });
    acknowledge(
      this.cursorKeysSecret,
      'AwsSolutions-SMG4',
      'Cursor keys rotate by writing a new key ring {current, previous} so cursors in flight stay valid; Secrets Manager rotation would need a rotation function that keeps the previous key, which is not built yet (rotation is a documented manual step).',
    );

    this.originVerifySecret = new secretsmanager.Secret(this, 'OriginVerifySecret', {
      description: 'Value of the x-origin-verify header CloudFront adds to API origin requests',
      encryptionKey: key,
      generateSecretString: { excludePunctuation: true, includeSpace: false, passwordLength: 48 },
      removalPolicy,
    });
    acknowledge(
      this.originVerifySecret,
      'AwsSolutions-SMG4',
      'CloudFront receives this value as a custom origin header at deploy time; an automatic rotation would make the API stop trusting CloudFront-Viewer-Address until the next deploy. It rotates by regenerating the value and redeploying.',
    );
  }

  /**
   * Lets a role query (`read`: GET, HEAD, POST for `_search`) or also index (`readwrite`) the search
   * domain: an identity policy on the role and a statement naming the role in the domain's access
   * policy, so the domain accepts SigV4 requests from granted roles only. A role from another stack
   * makes this stack depend on that one (its ARN is in the access policy).
   */
  grantSearch(role: iam.IRole, access: SearchAccess = 'read'): iam.Grant {
    const actions = access === 'readwrite' ? [...SEARCH_READ_ACTIONS, ...SEARCH_WRITE_ACTIONS] : SEARCH_READ_ACTIONS;
    // Built from the name, not from the domain's Arn attribute: the domain's own access policy
    // refers to it, and a GetAtt of the resource being created would be a circular dependency.
    const domainArn = Stack.of(this).formatArn({
      service: 'es',
      resource: 'domain',
      resourceName: this.searchDomainName,
    });
    const resourceArns = [`${domainArn}/*`];
    this.searchAccessPolicy.addStatements(new iam.PolicyStatement({ principals: [new iam.ArnPrincipal(role.roleArn)], actions, resources: resourceArns }));
    acknowledge(
      role,
      `AwsSolutions-IAM5[Resource::${nagFlatten(this, domainArn)}/*]`,
      'OpenSearch data-plane permissions name request paths under the domain (indices, aliases, _search, _bulk); the index names are application data, so the grant covers the paths of this one domain only.',
    );
    return iam.Grant.addToPrincipal({ grantee: role, actions, resourceArns });
  }

  private createSearchDomain(props: CatalogDataProps, removalPolicy: RemovalPolicy): opensearch.Domain {
    const o = props.search ?? {};
    const instanceCount = o.instanceCount ?? 2;
    const masterNodeCount = o.masterNodeCount ?? 0;
    const zoneAware = instanceCount >= 2 && instanceCount % 2 === 0;
    const retention = props.searchLogRetention ?? logs.RetentionDays.ONE_MONTH;
    const logGroup = (name: string): logs.LogGroup => new logs.LogGroup(this, `Search${name}Logs`, { retention, removalPolicy: RemovalPolicy.DESTROY });
    const slowSearch = logGroup('SlowSearch');
    const slowIndex = logGroup('SlowIndex');
    const app = logGroup('App');

    // One resource policy for the three log groups, in place of the custom resource CDK would add.
    const logsPolicy = new logs.ResourcePolicy(this, 'SearchLogsResourcePolicy', {
      policyStatements: [
        new iam.PolicyStatement({
          principals: [new iam.ServicePrincipal('es.amazonaws.com')],
          actions: ['logs:CreateLogStream', 'logs:PutLogEvents'],
          resources: [slowSearch.logGroupArn, slowIndex.logGroupArn, app.logGroupArn],
        }),
      ],
    });

    const domain = new opensearch.Domain(this, 'SearchDomain', {
      domainName: this.searchDomainName,
      version: o.version ?? opensearch.EngineVersion.OPENSEARCH_2_19,
      capacity: {
        dataNodes: instanceCount,
        dataNodeInstanceType: o.instanceType ?? 't3.small.search',
        masterNodes: masterNodeCount > 0 ? masterNodeCount : undefined,
        masterNodeInstanceType: masterNodeCount > 0 ? (o.masterNodeInstanceType ?? 'm7g.large.search') : undefined,
        multiAzWithStandbyEnabled: false,
      },
      zoneAwareness: zoneAware ? { enabled: true, availabilityZoneCount: 2 } : { enabled: false },
      ebs: { enabled: true, volumeSize: o.volumeSizeGiB ?? 10, volumeType: EbsDeviceVolumeType.GP3 },
      enforceHttps: true,
      tlsSecurityPolicy: opensearch.TLSSecurityPolicy.TLS_1_2,
      nodeToNodeEncryption: true,
      encryptionAtRest: { enabled: true, kmsKey: props.encryptionKey },
      logging: {
        slowSearchLogEnabled: true,
        slowSearchLogGroup: slowSearch,
        slowIndexLogEnabled: true,
        slowIndexLogGroup: slowIndex,
        appLogEnabled: true,
        appLogGroup: app,
      },
      suppressLogsResourcePolicy: true,
      enableVersionUpgrade: true,
      removalPolicy,
    });
    domain.node.addDependency(logsPolicy);

    // The access policy is the list of roles granted through grantSearch(), written straight onto the
    // domain (CDK's `accessPolicies` prop would add a custom resource and its Lambda).
    const cfnDomain = domain.node.defaultChild as opensearch.CfnDomain;
    cfnDomain.accessPolicies = Lazy.any({
      produce: () => (this.searchAccessPolicy.isEmpty ? undefined : this.searchAccessPolicy),
    });

    acknowledge(
      domain,
      'AwsSolutions-OS1',
      'By design (DESIGN.md): the domain is outside a VPC so the Lambdas need no VPC and no NAT gateway; every request is SigV4-signed over HTTPS and the access policy names only the granted Lambda roles.',
    );
    acknowledge(
      domain,
      'AwsSolutions-OS3',
      'Access is by IAM principal, not by IP: Lambda has no fixed egress addresses, and the access policy admits only the SigV4-signed requests of the granted roles.',
    );
    if (masterNodeCount === 0) {
      acknowledge(
        domain,
        'AwsSolutions-OS4',
        'The default domain is two small data nodes for a catalog of about 10,000 documents, where three dedicated masters would triple the cost; set search.masterNodeCount (3) when the domain grows.',
      );
    }
    if (!zoneAware) {
      acknowledge(
        domain,
        'AwsSolutions-OS7',
        'An odd data node count was chosen explicitly (search.instanceCount), which OpenSearch cannot spread evenly across zones; the catalog can be reindexed from DynamoDB, the source of truth.',
      );
    }
    return domain;
  }
}

/** A valid, stable OpenSearch domain name from the construct path: `mcpcatalog-data-<hash>`. */
function defaultDomainName(scope: Construct): string {
  const unique = Names.uniqueResourceName(scope, { maxLength: 28, separator: '-' }).toLowerCase();
  const name = unique.replace(/[^a-z0-9-]/g, '');
  return /^[a-z]/.test(name) ? name : `d${name}`.slice(0, 28);
}
