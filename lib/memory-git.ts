import * as path from 'node:path';
import { Duration } from 'aws-cdk-lib';
import * as cloudfront from 'aws-cdk-lib/aws-cloudfront';
import * as origins from 'aws-cdk-lib/aws-cloudfront-origins';
import type * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import type * as logs from 'aws-cdk-lib/aws-logs';
import type * as ssm from 'aws-cdk-lib/aws-ssm';
import { Construct } from 'constructs';
import { MEMORIES_PREFIX, VAULTS_PREFIX } from '../lambdas/memory-api/routes';
import { MEMORY_API_EXTERNALS } from './bundling-externals';
import type { CatalogData } from './catalog-data';
import { ORIGIN_VERIFY_HEADER, type Edge } from './edge';
import type { Identity } from './identity';
import { appFunction, type FunctionLogLevel, PRESIGNER_CHUNK } from './lambda-function';
import { grantExports, grantMemoryData, type MemoryApi } from './memory-api';
import { distributionSettings } from './settings-parameter';
import { grantTable } from './tables';

export interface MemoryGitProps {
  /** The memory REST API: its data and its function's environment, which this function shares. */
  readonly memory: MemoryApi;
  /** The rate-limit table, the cursor keys and the origin-verify secret. */
  readonly data: CatalogData;
  readonly auth: Identity;
  /** @default lambdas/memory-api/git-handler.ts */
  readonly entry?: string;
  /** A clone packs the memory in memory. @default 2048 */
  readonly memorySize?: number;
  /** CloudFront waits at most `originReadTimeout` for the first byte; called on its URL directly, a clone may take this long. @default Duration.minutes(5) */
  readonly timeout?: Duration;
  /** Largest clone or fetch answer and largest streamed export (MEMORY_GIT_MAX_RESPONSE_BYTES, MEMORY_EXPORT_STREAM_MAX_BYTES), under Lambda's 200 MB streamed response. @default 199229440 (190 MiB) */
  readonly maxResponseBytes?: number;
  /** How long CloudFront waits for the function's first byte (a pack is built before it is sent). At most 60 s without a quota increase. @default Duration.seconds(60) */
  readonly originReadTimeout?: Duration;
  /**
   * Seconds a push may take here (MEMORY_PUSH_SECONDS): its answer is sent once it has landed, so it
   * must come before CloudFront's origin read timeout, with a margin. @default 10 s under `originReadTimeout`
   */
  readonly pushSeconds?: number;
  /** Reserved concurrency: a floor for clones and pushes, and a ceiling on the 2 GB instances they may take. @default - unreserved */
  readonly reservedConcurrentExecutions?: number;
  /** @default RetentionDays.ONE_MONTH */
  readonly logRetention?: logs.RetentionDays;
  /** @default 'INFO' */
  readonly logLevel?: FunctionLogLevel;
}

const DEFAULT_ENTRY = path.join(__dirname, '..', 'lambdas', 'memory-api', 'git-handler.ts');

/** The distribution paths of the git remote: `<memory>.git/info/refs`, `…/git-upload-pack`, `…/git-receive-pack`. */
export const GIT_PATH_PATTERNS: readonly string[] = [`${MEMORIES_PREFIX}/*.git/*`, `${VAULTS_PREFIX}/*.git/*`];

/**
 * The exports (`GET /v1/memories/export`, `GET /v1/memories/{memory}/export`, and the alias's): a
 * whole memory, streamed by this function as it is made instead of buffered behind API Gateway.
 * `*` also matches a `/`: a note path ending in `/export` lands here too, and the same pipeline
 * answers it as the `/v1` function would.
 */
export const EXPORT_PATH_PATTERNS: readonly string[] = [MEMORIES_PREFIX, VAULTS_PREFIX].flatMap((p) => [`${p}/export`, `${p}/*/export`]);

/**
 * The git remote in AWS. API Gateway answers every `/v1` route through a buffered Lambda, whose
 * answer is at most 6 MB and 30 s: enough for most fetches, not for the clone of a large memory. This
 * function runs the same `/v1` pipeline with the memory API's environment, behind a function URL
 * in RESPONSE_STREAM mode (up to 200 MB), and CloudFront sends `/v1/memories/*.git/*` to it, and the
 * exports, which it streams as they are made (`EXPORT_PATH_PATTERNS`). Auth is
 * NONE on the URL, as for `/mcp`: the bearer token (git's Basic password) is checked in the function.
 * CloudFront adds the origin-verify header and the viewer-address function, so the rate limit keys
 * on the viewer's IP as it does behind API Gateway. The verifier's settings depend on the
 * distribution, which depends on this function's URL: like `MemoryMcp`, the function reads them from
 * a Parameter Store parameter it names by a fixed name (`MEMORY_SETTINGS_PARAMETER`), so no
 * dependency cycle forms.
 */
export class MemoryGit extends Construct {
  readonly fn: NodejsFunction;
  readonly role: iam.Role;
  readonly functionUrl: lambda.FunctionUrl;
  /** The verifier's settings (audience, public URL, Cognito client ids), read by the function at init and every 5 minutes. */
  readonly settings: ssm.StringParameter;
  private readonly props: MemoryGitProps;

  constructor(scope: Construct, id: string, props: MemoryGitProps) {
    super(scope, id);
    this.props = props;
    const { memory, data, auth } = props;
    const memorySize = props.memorySize ?? 2048;
    const verifier = auth.verifierEnvironment();
    const settings = distributionSettings(
      this,
      'Settings of the git remote function that depend on the distribution (audience, public URL, Cognito client ids, token tables), not credentials',
      verifier,
    );
    this.settings = settings.parameter;
    const settingsName = settings.name;
    const environment = Object.fromEntries(Object.entries(memory.environment).filter(([k]) => !(k in verifier)));
    ({ fn: this.fn, role: this.role } = appFunction(this, 'Function', {
      description: 'Git remote of the memories (smart HTTP, /v1/memories/<name>.git), streamed',
      roleDescription: 'Git remote function: memory objects in S3, the rev lock, rate-limit buckets, token verification',
      entry: props.entry ?? DEFAULT_ENTRY,
      bundling: { externalModules: [...MEMORY_API_EXTERNALS], commandHooks: PRESIGNER_CHUNK },
      memorySize,
      timeout: props.timeout ?? Duration.minutes(5),
      reservedConcurrentExecutions: props.reservedConcurrentExecutions,
      logRetention: props.logRetention,
      logLevel: props.logLevel,
      serviceName: 'memory-git',
      environment: {
        ...environment,
        MEMORY_SETTINGS_PARAMETER: settingsName,
        MEMORY_CACHE_MB: String(Math.max(16, Math.floor(memorySize / 4))),
        MEMORY_GIT_MAX_RESPONSE_BYTES: String(props.maxResponseBytes ?? 190 * 1024 * 1024),
        MEMORY_PUSH_SECONDS: String(props.pushSeconds ?? (props.originReadTimeout ?? Duration.seconds(60)).toSeconds() - 10),
        // Exports stream here (`EXPORT_PATH_PATTERNS`); one whose bound passes the streamed limit goes to S3 and a 302.
        MEMORY_EXPORT_DELIVERY: 'stream',
        MEMORY_EXPORT_STREAM_MAX_BYTES: String(props.maxResponseBytes ?? 190 * 1024 * 1024),
      },
    }));
    grantMemoryData(memory.table, memory.bucket, this.role);
    grantExports(memory.bucket, this.role);
    grantTable(data.rateLimitTable, this.role, ['dynamodb:UpdateItem', 'dynamodb:PutItem', 'dynamodb:GetItem']);
    auth.grantPersonalTokenUse(this.role);
    data.cursorKeysSecret.grantRead(this.role);
    data.originVerifySecret.grantRead(this.role);
    settings.grantRead(this.role);
    this.functionUrl = this.fn.addFunctionUrl({ authType: lambda.FunctionUrlAuthType.NONE, invokeMode: lambda.InvokeMode.RESPONSE_STREAM });
  }

  /**
   * Sends the git paths and the export paths of the distribution to the function URL. CloudFront
   * takes the first behaviour that matches, so call this before `/v1/*` is added.
   */
  addBehaviors(edge: Edge): void {
    const origin = new origins.FunctionUrlOrigin(this.functionUrl, {
      customHeaders: { [ORIGIN_VERIFY_HEADER]: this.props.data.originVerifySecret.secretValue.unsafeUnwrap() },
      readTimeout: this.props.originReadTimeout ?? Duration.seconds(60),
    });
    for (const pattern of [...GIT_PATH_PATTERNS, ...EXPORT_PATH_PATTERNS]) {
      edge.distribution.addBehavior(pattern, origin, {
        viewerProtocolPolicy: cloudfront.ViewerProtocolPolicy.HTTPS_ONLY,
        allowedMethods: cloudfront.AllowedMethods.ALLOW_ALL,
        cachedMethods: cloudfront.CachedMethods.CACHE_GET_HEAD,
        cachePolicy: cloudfront.CachePolicy.CACHING_DISABLED,
        originRequestPolicy: cloudfront.OriginRequestPolicy.ALL_VIEWER_EXCEPT_HOST_HEADER,
        // Packs, bundles and zips are compressed already.
        compress: false,
        functionAssociations: [{ function: edge.viewerAddressFunction, eventType: cloudfront.FunctionEventType.VIEWER_REQUEST }],
      });
    }
  }
}
