import { Duration, Lazy, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { EbsDeviceVolumeType } from 'aws-cdk-lib/aws-ec2';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as opensearch from 'aws-cdk-lib/aws-opensearchservice';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import { acknowledge, nagRef } from './nag';
import { CATALOG_TABLE, TRUST_TABLE } from '../lambdas/catalog-core/tables';
import { RATE_LIMIT_TABLE } from '../lambdas/shared/rate-limit/tables';
import { tableKeys } from './tables';

/**
 * Size and version of the OpenSearch domain (the default search engine). The domain holds derived
 * data only (`npm run reindex` rebuilds it from DynamoDB), so it is deleted with the stack and has
 * no fixed name. Sizes and what they cost: README, "Deployment" → "Idle cost".
 */
export interface CatalogSearchDomainOptions {
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
   * (zone awareness: every shard has a replica in the other zone, so a lost node or zone loses no
   * data and searches continue from the replica). 1 is the documented low-cost choice: half the
   * bill, and a lost node means search answers 503 until OpenSearch replaces it (the index is
   * rebuilt from DynamoDB by `npm run reindex` if it comes back empty). Neither is quorum-based
   * high availability without dedicated masters (`masterNodeCount: 3`).
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

/** The search engine: the OpenSearch domain, or the embedded engine over an S3 snapshot (no domain). */
export type SearchEngine = 'opensearch' | 'embedded';

export interface CatalogDataProps {
  /**
   * What happens to the tables, buckets and secrets when they leave the stack. With RETAIN the
   * tables also get deletion protection. `DESTROY` suits throwaway environments only (a non-empty
   * bucket still blocks deletion). The search domain and the search snapshot bucket hold derived
   * data and are always deleted with the stack.
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
  /**
   * `opensearch` (the default: a managed domain) or `embedded`, the small-catalog mode: no domain;
   * the crawler writes the embedded index as one snapshot object to a bucket of its own and every
   * catalog instance loads it (lambdas/catalog-core/search/s3-snapshot.ts).
   * @default 'opensearch'
   */
  readonly searchEngine?: SearchEngine;
  /** @default - see `CatalogSearchDomainOptions` (ignored by the embedded engine) */
  readonly search?: CatalogSearchDomainOptions;
  /**
   * Days that S3 server access logs and CloudFront access logs are kept in the access-log bucket.
   * @default 90
   */
  readonly accessLogRetentionDays?: number;
  /**
   * Days a health check stays in the trust table (its TTL, CHECK_RETENTION_DAYS; also how long a
   * breaking change stays in the site's feed). Uptime reads 30 days at most.
   * @default 90
   */
  readonly checkRetentionDays?: number;
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

/** The key of the embedded engine's snapshot object in the snapshot bucket (SEARCH_SNAPSHOT_KEY). */
export const SEARCH_SNAPSHOT_KEY = 'search/catalog-index.json.gz';

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
 * The catalog's stateful resources: the `catalog`, `trust` and `rate-limits` tables (DynamoDB is
 * the source of truth), the icons bucket, the query engine (the OpenSearch domain, or the embedded engine's
 * snapshot bucket), the access-log bucket, and the secrets for cursor signing and the CloudFront
 * origin header.
 */
export class CatalogData extends Construct {
  /** `catalog`: partition key `slug`, sort key `sk`. */
  readonly catalogTable: dynamodb.Table;
  /** `rate-limits`: partition key `pk`; items expire through TTL on `expiresAt`. */
  readonly rateLimitTable: dynamodb.Table;
  /**
   * The trust table (TRUST_TABLE): health checks and tool changes per server, `slug` + `sk`; checks
   * expire through TTL on `expiresAt` (CHECK_RETENTION_DAYS), changes are kept.
   */
  readonly trustTable: dynamodb.Table;
  readonly checkRetentionDays: number;
  /** Icons, write-once per slug. CloudFront maps `/api/icons/<slug>` to the key `api/icons/<slug>`. */
  readonly iconsBucket: s3.Bucket;
  /** Server access logs of the icons bucket (`s3/icons/`) and CloudFront access logs (`cloudfront/`). */
  readonly accessLogsBucket: s3.Bucket;
  readonly searchEngine: SearchEngine;
  /** The OpenSearch domain (`searchEngine: 'opensearch'`). */
  readonly searchDomain?: opensearch.Domain;
  /** Its size, for the alarms (free storage, burstable CPU credits). */
  readonly searchDomainSize?: { volumeGiB: number; dataNodes: number; burstable: boolean };
  /** The embedded engine's snapshot (`searchEngine: 'embedded'`): derived data, deleted with the stack. */
  readonly searchSnapshotBucket?: s3.Bucket;

  /** The domain's access policy: a statement per role granted through `grantSearch`. */
  private readonly searchAccessPolicy = new iam.PolicyDocument();
  /** Cursor-signing key ring, JSON `{"id":1,"secret":"<64 alphanumerics>"}` as generated. */
  readonly cursorKeysSecret: secretsmanager.Secret;
  /** The value CloudFront sends in `x-origin-verify` (a plain 48-character string). */
  readonly originVerifySecret: secretsmanager.Secret;

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

    // History that cannot be crawled again (past checks, past tool lists): kept like the catalog,
    // point-in-time recovery included. Not in AWS Backup (lib/backup.ts): checks expire after
    // the retention anyway, and PITR's 35 days cover a bad write (README, "Trust over time").
    this.checkRetentionDays = props.checkRetentionDays ?? 90;
    if (!Number.isInteger(this.checkRetentionDays) || this.checkRetentionDays < 30)
      throw new Error(`checkRetentionDays must be a whole number >= 30 (uptime reads 30 days), got ${this.checkRetentionDays}`);
    this.trustTable = new dynamodb.Table(this, 'TrustTable', {
      ...tableKeys(TRUST_TABLE),
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

    this.searchEngine = props.searchEngine ?? 'opensearch';
    if (this.searchEngine === 'opensearch') {
      const o = props.search ?? {};
      this.searchDomainSize = {
        volumeGiB: o.volumeSizeGiB ?? 10,
        dataNodes: o.instanceCount ?? 2,
        burstable: (o.instanceType ?? 't3.small.search').startsWith('t'),
      };
      this.searchDomain = this.createSearchDomain(props);
    } else {
      this.searchSnapshotBucket = new s3.Bucket(this, 'SearchSnapshotBucket', {
        ...PRIVATE_BUCKET,
        objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
        serverAccessLogsBucket: this.accessLogsBucket,
        serverAccessLogsPrefix: 's3/search/',
        // Derived data (rebuilt from DynamoDB by the next crawl or `npm run reindex`): no versions, gone with the stack.
        removalPolicy: RemovalPolicy.DESTROY,
        autoDeleteObjects: false,
        lifecycleRules: [{ id: 'debris', abortIncompleteMultipartUploadAfter: Duration.days(1) }],
      });
    }

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
      'CatalogStack attaches the secret\'s rotation function (lib/origin-secret-rotation.ts) on a 30-day schedule; a stage that sets originSecretRotation: false keeps the function without the schedule and rotates on demand with `aws secretsmanager rotate-secret` (README, "Updates").',
    );
  }

  /**
   * Lets a role query the search engine (`read`) or also write it (`readwrite`): for OpenSearch,
   * SigV4 data-plane actions on this domain's paths, in the role's identity policy and in the
   * domain's access policy (which names only granted roles); for the embedded engine, reading (and
   * replacing) the snapshot object.
   */
  grantSearch(role: iam.IRole, access: SearchAccess = 'read'): void {
    if (this.searchDomain) {
      const actions = access === 'readwrite' ? [...SEARCH_READ_ACTIONS, ...SEARCH_WRITE_ACTIONS] : SEARCH_READ_ACTIONS;
      role.addToPrincipalPolicy(new iam.PolicyStatement({ actions, resources: [`${this.searchDomain.domainArn}/*`] }));
      // The domain's own policy cannot name its ARN (CloudFormation names the domain; a GetAtt of
      // the resource being created would be circular): it names the paths of any domain of this
      // account, which in a domain's own policy means its own paths, and the granted role.
      const anyDomainPaths = Stack.of(this).formatArn({ service: 'es', resource: 'domain', resourceName: '*/*' });
      this.searchAccessPolicy.addStatements(
        new iam.PolicyStatement({ principals: [new iam.ArnPrincipal(role.roleArn)], actions, resources: [anyDomainPaths] }),
      );
      acknowledge(
        role,
        `AwsSolutions-IAM5[Resource::${nagRef(this.searchDomain, 'Arn')}/*]`,
        'OpenSearch data-plane permissions name request paths under the domain (indices, aliases, _search, _bulk); the index names are application data, so the grant covers the paths of this one domain only.',
      );
      return;
    }
    const bucket = this.searchSnapshotBucket as s3.Bucket;
    const actions = access === 'readwrite' ? ['s3:GetObject', 's3:PutObject'] : ['s3:GetObject'];
    role.addToPrincipalPolicy(new iam.PolicyStatement({ actions, resources: [bucket.arnForObjects(SEARCH_SNAPSHOT_KEY)] }));
    // A missing snapshot (before the first crawl) is a 404 rather than a 403.
    role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['s3:ListBucket'], resources: [bucket.bucketArn] }));
  }

  /** What the trust store reads (lambdas/catalog-core/config.ts): the table and the checks' retention. */
  trustEnvironment(): Record<string, string> {
    return { TRUST_TABLE: this.trustTable.tableName, CHECK_RETENTION_DAYS: String(this.checkRetentionDays) };
  }

  /** What the search adapters read: the domain and index, or the snapshot's bucket and key. */
  searchEnvironment(index = 'catalog'): Record<string, string> {
    if (this.searchDomain) {
      return { SEARCH_BACKEND: 'opensearch', OPENSEARCH_URL: `https://${this.searchDomain.domainEndpoint}`, OPENSEARCH_INDEX: index };
    }
    return { SEARCH_BACKEND: 'embedded', SEARCH_SNAPSHOT_BUCKET: (this.searchSnapshotBucket as s3.Bucket).bucketName, SEARCH_SNAPSHOT_KEY };
  }

  private createSearchDomain(props: CatalogDataProps): opensearch.Domain {
    const o = props.search ?? {};
    const instanceCount = o.instanceCount ?? 2;
    const instanceType = o.instanceType ?? 't3.small.search';
    const volumeGiB = o.volumeSizeGiB ?? 10;
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

    // No domainName: CloudFormation names it, so a redeploy after `cdk destroy` cannot collide with a
    // domain still being deleted, and two stages never share a name.
    const domain = new opensearch.Domain(this, 'SearchDomain', {
      version: o.version ?? opensearch.EngineVersion.OPENSEARCH_2_19,
      capacity: {
        dataNodes: instanceCount,
        dataNodeInstanceType: instanceType,
        masterNodes: masterNodeCount > 0 ? masterNodeCount : undefined,
        masterNodeInstanceType: masterNodeCount > 0 ? (o.masterNodeInstanceType ?? 'm7g.large.search') : undefined,
        multiAzWithStandbyEnabled: false,
      },
      zoneAwareness: zoneAware ? { enabled: true, availabilityZoneCount: 2 } : { enabled: false },
      ebs: { enabled: true, volumeSize: volumeGiB, volumeType: EbsDeviceVolumeType.GP3 },
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
      // Derived data: `npm run reindex` rebuilds it from DynamoDB, so it is not worth paying for after a destroy.
      removalPolicy: RemovalPolicy.DESTROY,
    });
    domain.node.addDependency(logsPolicy);
    // Written straight onto the domain (CDK's `accessPolicies` prop would add a custom resource and its Lambda).
    const cfnDomain = domain.node.defaultChild as opensearch.CfnDomain;
    cfnDomain.accessPolicies = Lazy.any({ produce: () => (this.searchAccessPolicy.isEmpty ? undefined : this.searchAccessPolicy) });

    acknowledge(
      domain,
      'AwsSolutions-OS1',
      'By design (DESIGN.md): the domain is outside a VPC so the Lambdas need no VPC and no NAT gateway; every request is SigV4-signed over HTTPS and the access policy names only the granted Lambda roles.',
    );
    acknowledge(
      domain,
      'AwsSolutions-OS3',
      'Access is by IAM principal, not by IP: Lambda has no fixed egress addresses, and the access policy admits only the SigV4-signed requests of the granted Lambda roles.',
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
        'A single data node (or another odd count) is the documented low-cost choice (search.instanceCount): the index is derived data that `npm run reindex` rebuilds from DynamoDB, the source of truth, and OpenSearch replaces a failed node; the default is two zone-aware nodes.',
      );
    }
    return domain;
  }
}
