import * as path from 'node:path';
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { HttpMethod, HttpRoute, HttpRouteKey, type IHttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import type * as logs from 'aws-cdk-lib/aws-logs';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import { MEMORY_API, MEMORY_FN } from '../lambdas/memory-api/routes';
import { EXPORT_PREFIX } from '../lambdas/memory-api/config';
import { LIMIT_VARIABLES, type MemoryLimits } from '../lambdas/memory/config';
import { MEMORY_TABLE } from '../lambdas/memory/tables';
import { MEMORY_API_EXTERNALS } from './bundling-externals';
import type { Identity } from './identity';
import { grantTable, tableKeys } from './tables';
import { PRIVATE_BUCKET, type CatalogData } from './catalog-data';
import { addRoutesFromTable, type TableRoutes } from './http-routes';
import { appFunction, type FunctionLogLevel, PRESIGNER_CHUNK } from './lambda-function';
import { acknowledge, nagRef } from './nag';

export interface MemoryApiProps extends MemoryLimitProps {
  /** The deployment's HTTP API (the catalog's): the `/v1` routes are added to it. */
  readonly httpApi: IHttpApi;
  /** The shared rate-limit table, the cursor-key secret, the origin-verify secret, the access-log bucket. */
  readonly data: CatalogData;
  /** Token verification (Cognito JWTs, the OAuth front's opaque tokens). */
  readonly auth: Identity;
  /**
   * Removal policy of the memory bucket and the rev-lock table; RETAIN also turns on deletion protection.
   * @default RemovalPolicy.RETAIN
   */
  readonly removalPolicy?: RemovalPolicy;
  /** Customer-managed key for the rev-lock table. @default - AWS-managed encryption */
  readonly encryptionKey?: kms.IKey;
  /** The Lambda's entry file (must export `handler`). @default lambdas/memory-api/handler.ts */
  readonly entry?: string;
  /** Memory of the function in MB (the immutable-object cache takes a quarter). @default 1024 */
  readonly memorySize?: number;
  /** API Gateway gives up after 30 s whatever this is. @default Duration.seconds(25) */
  readonly timeout?: Duration;
  /** Requests per window per client IP (MEMORY_RATE_LIMIT). @default 60 (spec 2) */
  readonly rateLimit?: number;
  /** The rate-limit window in seconds (MEMORY_RATE_WINDOW_SECONDS). @default 60 (spec 2) */
  readonly rateWindowSeconds?: number;
  /**
   * Exports up to this size are answered inline; larger ones go to S3 under `exports/` with a 302
   * (MEMORY_EXPORT_INLINE_BYTES). Keep base64 of it under Lambda's 6 MB response limit.
   * @default 4194304 (4 MiB: 5.33 MiB after base64)
   */
  readonly exportInlineBytes?: number;
  /** Lifetime of the presigned URL of a large export (MEMORY_EXPORT_URL_SECONDS). @default 300 */
  readonly exportUrlSeconds?: number;
  /** How long large exports stay in the bucket. @default Duration.days(1) */
  readonly exportRetention?: Duration;
  /**
   * How long an overwritten or deleted object's previous version is kept in the (versioned) memory
   * bucket: the window in which the restore runbook can bring back an object a rev-table restore
   * points to (README, "Restore").
   * @default Duration.days(90)
   */
  readonly noncurrentVersionRetention?: Duration;
  /** Reserved concurrency of the /v1 function. @default - unreserved; `CatalogStack` reserves 50 */
  readonly reservedConcurrentExecutions?: number;
  /** @default RetentionDays.ONE_MONTH */
  readonly logRetention?: logs.RetentionDays;
  /** @default 'INFO' */
  readonly logLevel?: FunctionLogLevel;
}

const DEFAULT_ENTRY = path.join(__dirname, '..', 'lambdas', 'memory-api', 'handler.ts');

/** What `DynamoRevLock` does: item reads, the memory list (Query), conditional updates, and create/retire/restore transactions (Put + Update with conditions). */
const REV_LOCK_ACTIONS = ['dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:UpdateItem', 'dynamodb:PutItem', 'dynamodb:ConditionCheckItem'];

/**
 * The memory REST API (spec 2): the memory bucket (git objects, per-commit indexes, large exports),
 * the rev-lock table, the `/v1` Lambda (Node.js 24, arm64) and its routes on the deployment's HTTP
 * API, from the route table `MEMORY_API`, plus `ANY /v1/{proxy+}` and `ANY /v1` so unknown paths and
 * wrong verbs under `/v1` reach the function and get the `/v1` envelope (the `$default` route is
 * the catalog's). `bucket` and `table` are public so the MCP construct can be granted the same data
 * (`grantMemoryData`, `memoryDataEnvironment`).
 */
export class MemoryApi extends Construct {
  /** Private, encrypted, TLS only. `m/<id>/objects/…`, `m/<id>/index/…` (immutable), `exports/…` (a day). */
  readonly bucket: s3.Bucket;
  /** The rev lock: partition key `account`, sort key `name` (see `lambdas/memory/tables.ts`). */
  readonly table: dynamodb.Table;
  readonly fn: NodejsFunction;
  readonly role: iam.Role;
  readonly routes: TableRoutes;
  /** `ANY /v1/{proxy+}` and `ANY /v1`: the `/v1` catch-all. */
  readonly catchAllRoutes: HttpRoute[];
  /** The function's environment: the git remote's streaming function (`MemoryGit`) runs the same pipeline with it. */
  readonly environment: Readonly<Record<string, string>>;

  constructor(scope: Construct, id: string, props: MemoryApiProps) {
    super(scope, id);
    const { data, auth } = props;
    const removalPolicy = props.removalPolicy ?? RemovalPolicy.RETAIN;
    const retained = removalPolicy === RemovalPolicy.RETAIN;

    const exportRetention = props.exportRetention ?? Duration.days(1);
    this.bucket = new s3.Bucket(this, 'MemoryBucket', {
      ...PRIVATE_BUCKET,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
      // User data. Objects are content-addressed and written once, so versions cost nothing in normal
      // operation; they are what brings back an object that was overwritten or deleted by mistake
      // (the functions may not delete, see below), and AWS Backup of S3 requires them.
      versioned: true,
      serverAccessLogsBucket: data.accessLogsBucket,
      serverAccessLogsPrefix: 's3/memories/',
      lifecycleRules: [
        { id: 'expire-exports', prefix: EXPORT_PREFIX, expiration: exportRetention, noncurrentVersionExpiration: exportRetention },
        // Nothing current ever expires (history references every object); previous versions are
        // kept for the restore window, then removed, and the delete markers left behind with them.
        {
          id: 'noncurrent-versions',
          noncurrentVersionExpiration: props.noncurrentVersionRetention ?? Duration.days(90),
          abortIncompleteMultipartUploadAfter: Duration.days(1),
        },
        { id: 'expired-delete-markers', expiredObjectDeleteMarker: true },
      ],
      removalPolicy,
    });

    this.table = new dynamodb.Table(this, 'RevLockTable', {
      ...tableKeys(MEMORY_TABLE),
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      ...(props.encryptionKey
        ? { encryption: dynamodb.TableEncryption.CUSTOMER_MANAGED, encryptionKey: props.encryptionKey }
        : { encryption: dynamodb.TableEncryption.AWS_MANAGED }),
      deletionProtection: retained,
      removalPolicy,
    });

    const memorySize = props.memorySize ?? 1024;
    this.environment = {
      ...memoryDataEnvironment(this.table, this.bucket),
      MEMORY_CACHE_MB: String(Math.max(16, Math.floor(memorySize / 4))),
      ...memoryLimitsEnvironment(props),
      MEMORY_RATE_LIMIT: String(props.rateLimit ?? 60),
      MEMORY_RATE_WINDOW_SECONDS: String(props.rateWindowSeconds ?? 60),
      MEMORY_EXPORT_INLINE_BYTES: String(props.exportInlineBytes ?? 4 * 1024 * 1024),
      MEMORY_EXPORT_URL_SECONDS: String(props.exportUrlSeconds ?? 300),
      // Behind API Gateway an answer is buffered (6 MB): exports over the inline size go to S3 and a
      // 302. CloudFront sends the export paths to the git remote's streaming function instead (`MemoryGit`).
      MEMORY_EXPORT_DELIVERY: 'buffered',
      // A clone answered here (API Gateway, buffered) must fit Lambda's 6 MB once base64-encoded;
      // a larger one is told to use the streaming URL of the git remote (`MemoryGit`).
      MEMORY_GIT_MAX_RESPONSE_BYTES: String(4 * 1024 * 1024),
      RATE_LIMIT_TABLE: data.rateLimitTable.tableName,
      CURSOR_SECRET_ARN: data.cursorKeysSecret.secretArn,
      ORIGIN_VERIFY_SECRET_ARN: data.originVerifySecret.secretArn,
      ...auth.verifierEnvironment(),
    };
    ({ fn: this.fn, role: this.role } = appFunction(this, 'Function', {
      description: 'Memory REST API /v1 (routes of MEMORY_API plus the /v1 catch-all)',
      roleDescription: 'Memory REST API function: memory objects in S3, the rev lock, rate-limit buckets, token verification',
      entry: props.entry ?? DEFAULT_ENTRY,
      // The runtime's SDK serves the clients; the presigner of large exports is bundled, so the one
      // deployed is the version the tests ran and /v1 does not depend on the runtime shipping it.
      bundling: { externalModules: [...MEMORY_API_EXTERNALS], commandHooks: PRESIGNER_CHUNK },
      memorySize,
      timeout: props.timeout ?? Duration.seconds(25),
      reservedConcurrentExecutions: props.reservedConcurrentExecutions,
      logRetention: props.logRetention,
      logLevel: props.logLevel,
      serviceName: 'memory',
      environment: { ...this.environment },
    }));

    // Least privilege: the memory data, one bucket policy per request on the rate limiter, token
    // reads, and the two secrets.
    grantMemoryData(this.table, this.bucket, this.role);
    grantExports(this.bucket, this.role);

    // Rate-limit buckets (UpdateItem) and, under keys `idem:…`, Idempotency-Key records (claim, replay, release).
    grantTable(data.rateLimitTable, this.role, ['dynamodb:UpdateItem', 'dynamodb:PutItem', 'dynamodb:GetItem']);
    // Token reads, and the personal access tokens this function manages (`/v1/tokens`) and records the use of.
    auth.grantPersonalTokenManagement(this.role);
    data.cursorKeysSecret.grantRead(this.role);
    data.originVerifySecret.grantRead(this.role);

    // Routes from the table (no $default: the catalog's is the API's one), then the /v1 catch-all.
    this.routes = addRoutesFromTable(props.httpApi, MEMORY_API, { [MEMORY_FN]: this.fn }, { catchAll: false });
    const catchAllIntegration = new HttpLambdaIntegration('MemoryCatchAllIntegration', this.fn);
    this.catchAllRoutes = ['/v1/{proxy+}', '/v1'].map(
      (p, i) =>
        new HttpRoute(props.httpApi, i === 0 ? 'RouteMemoryCatchAll' : 'RouteMemoryRoot', {
          httpApi: props.httpApi,
          routeKey: HttpRouteKey.with(p, HttpMethod.ANY),
          integration: catchAllIntegration,
        }),
    );
    const reason =
      "The memory function verifies the bearer itself (Cognito JWTs with aws-jwt-verify, the OAuth front's opaque tokens in DynamoDB, which an API Gateway JWT authorizer cannot check), checks scopes and per-memory grants, and answers 401/403/503 in the /v1 envelope (spec 2).";
    for (const route of this.routes.routes.values()) acknowledge(route, 'AwsSolutions-APIG4', reason);
    for (const route of this.catchAllRoutes) acknowledge(route, 'AwsSolutions-APIG4', `${reason} The catch-all answers only 404, 405 and CORS preflights.`);
  }
}

/** The limit props of both functions that run the memory core (/v1 and MCP). */
export interface MemoryLimitProps {
  /** Active memories per account (MEMORY_MAX_PER_ACCOUNT). @default 20 */
  readonly maxMemoriesPerAccount?: number;
  /** Largest note, front matter included, in bytes (MEMORY_MAX_NOTE_BYTES). @default 1048576 */
  readonly maxNoteBytes?: number;
  /**
   * Any other limit of the memory core (page sizes, path and front matter caps, tag arguments,
   * query length, tombstones kept), each set as its variable of `LIMIT_VARIABLES`.
   * @default - the spec's values (`DEFAULT_LIMITS` in lambdas/memory/config.ts)
   */
  readonly limits?: Partial<MemoryLimits>;
}

/**
 * The variables of the limits a deployment sets; the core's defaults apply to the others. The two
 * named props are the same limits as `limits.maxMemoriesPerAccount` and `limits.maxNoteBytes` and
 * win over them, in both functions alike.
 */
export function memoryLimitsEnvironment(props: MemoryLimitProps = {}): Record<string, string> {
  const limits: Partial<MemoryLimits> = {
    ...props.limits,
    ...(props.maxMemoriesPerAccount !== undefined && { maxMemoriesPerAccount: props.maxMemoriesPerAccount }),
    ...(props.maxNoteBytes !== undefined && { maxNoteBytes: props.maxNoteBytes }),
  };
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(limits) as Array<[keyof MemoryLimits, number | undefined]>) {
    if (value === undefined) continue;
    if (!Number.isInteger(value) || value < 0) throw new Error(`limits.${key} must be a non-negative integer, got ${value}`);
    env[LIMIT_VARIABLES[key]] = String(value);
  }
  return env;
}

/** What `loadMemoryConfig()` reads to find the data, for every function that runs the memory core (/v1, /mcp). */
export function memoryDataEnvironment(table: dynamodb.ITable, bucket: s3.IBucket): Record<string, string> {
  return { MEMORY_TABLE: table.tableName, MEMORY_BUCKET: bucket.bucketName };
}

/** What a memory function may never do to the memory bucket, whatever else it is granted later. */
export const MEMORY_BUCKET_DENIED_ACTIONS = [
  's3:DeleteObject',
  's3:DeleteObjectVersion',
  's3:PutLifecycleConfiguration',
  's3:PutBucketVersioning',
  's3:PutBucketPolicy',
  's3:DeleteBucketPolicy',
  's3:PutObjectRetention',
  's3:BypassGovernanceRetention',
] as const;

/**
 * An explicit Deny in the role's own policy and in the bucket's policy: the functions that serve
 * memories put and get objects but never delete one, a version of one, or the rules that keep
 * versions (a retired memory or a deleted note is a new commit, never a deleted object).
 */
export function denyMemoryDeletes(bucket: s3.IBucket, grantee: iam.IRole): void {
  const statement = {
    effect: iam.Effect.DENY,
    actions: [...MEMORY_BUCKET_DENIED_ACTIONS],
    resources: [bucket.bucketArn, bucket.arnForObjects('*')],
  };
  grantee.addToPrincipalPolicy(new iam.PolicyStatement(statement));
  bucket.addToResourcePolicy(new iam.PolicyStatement({ ...statement, principals: [new iam.ArnPrincipal(grantee.roleArn)] }));
}

/**
 * Lets a role read and write memories through the core (the /v1 and MCP functions): the rev-lock
 * table, and objects and indexes under `m/` of the bucket (and its key, when it has one). ListBucket
 * makes a missing object a 404 rather than a 403, which the core relies on (an index is rebuilt when
 * it is missing).
 */
/**
 * Exports not streamed to their reader are written under `exports/` of the memory bucket (a
 * multipart upload while they are made, aborted when one fails) and read back through presigned
 * URLs signed with the function's role.
 */
export function grantExports(bucket: s3.IBucket, grantee: iam.IRole): void {
  grantee.addToPrincipalPolicy(
    new iam.PolicyStatement({ actions: ['s3:PutObject', 's3:GetObject', 's3:AbortMultipartUpload'], resources: [bucket.arnForObjects(`${EXPORT_PREFIX}*`)] }),
  );
  acknowledge(
    grantee,
    `AwsSolutions-IAM5[Resource::${nagRef(bucket, 'Arn')}/${EXPORT_PREFIX}*]`,
    'Large exports are written under exports/<random>/ of the memory bucket and read back through presigned URLs signed with this role; the grant covers that one prefix, which a lifecycle rule empties daily.',
  );
}

export function grantMemoryData(table: dynamodb.ITable, bucket: s3.IBucket, grantee: iam.IRole): void {
  grantTable(table, grantee, REV_LOCK_ACTIONS);
  denyMemoryDeletes(bucket, grantee);
  grantee.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['s3:GetObject', 's3:PutObject'], resources: [bucket.arnForObjects('m/*')] }));
  grantee.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['s3:ListBucket'], resources: [bucket.bucketArn] }));
  bucket.encryptionKey?.grantEncryptDecrypt(grantee);
  acknowledge(
    grantee,
    `AwsSolutions-IAM5[Resource::${nagRef(bucket, 'Arn')}/m/*]`,
    'Each memory is a git repository of content-addressed objects under m/<memory id>/; ids are data, so the grant covers the m/ prefix of the one memory bucket (objects are written once and never deleted).',
  );
}
