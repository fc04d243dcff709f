import * as path from 'node:path';
import { Duration } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import type * as logs from 'aws-cdk-lib/aws-logs';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import type * as ssm from 'aws-cdk-lib/aws-ssm';
import { Construct } from 'constructs';
import { grantTable } from './tables';
import { AJV_ABSENT, AJV_CHUNK, appFunction, type FunctionLogLevel } from './lambda-function';
import { distributionSettings } from './settings-parameter';
import { grantMemoryData, memoryDataEnvironment, memoryLimitsEnvironment, type MemoryLimitProps } from './memory-api';

/** What the function needs from the auth context: the verifier's settings, reads of opaque tokens, and the use of personal access tokens. */
export interface McpAuth {
  verifierEnvironment(): Record<string, string>;
  grantPersonalTokenUse(grantee: iam.IGrantable): void;
}

/** The memory limits (`MemoryLimitProps`) are the REST API's: the stack passes the same values to both. */
export interface MemoryMcpProps extends MemoryLimitProps {
  /** The memory core's rev-lock table (`MemoryApi.table`). */
  readonly table: dynamodb.ITable;
  /** The memory core's object bucket (`MemoryApi.bucket`): git objects and indexes under `m/`. */
  readonly bucket: s3.IBucket;
  /** The shared rate-limit table (`CatalogData.rateLimitTable`): one bucket per user, policy `mcp`. */
  readonly rateLimitTable: dynamodb.ITable;
  /** The cursor key ring (`CatalogData.cursorKeysSecret`): search cursors are signed with it. */
  readonly cursorKeysSecret: secretsmanager.ISecret;
  /**
   * CloudFront's origin header secret (`CatalogData.originVerifySecret`): the function URL refuses
   * a request without it (403), so `/mcp` answers only through the distribution.
   * @default - none: the function URL answers anyone (tests of the construct alone)
   */
  readonly originVerifySecret?: secretsmanager.ISecret;
  /** Token verification (`Identity`). */
  readonly auth: McpAuth;
  /** The Lambda's entry file (must export `handler`). @default lambdas/mcp/handler.ts */
  readonly entry?: string;
  /** Memory in MB (the immutable-object cache takes a quarter). @default 1024 */
  readonly memorySize?: number;
  /** @default Duration.seconds(25) (CloudFront's origin read timeout is 30 s) */
  readonly timeout?: Duration;
  /** A ceiling on what the function may cost. @default - unreserved */
  readonly reservedConcurrentExecutions?: number;
  /** Tool calls per minute per user (MCP_RATE_PER_MINUTE). @default 120 */
  readonly ratePerMinute?: number;
  /** Entries per folder in memory__list (MCP_LIST_MAX_ENTRIES). @default 100 (spec 3) */
  readonly listMaxEntries?: number;
  /**
   * Browser origins allowed to call `/mcp` (MCP_ALLOWED_ORIGINS), e.g. `['https://app.example.com']`.
   * Native MCP clients send no Origin and always pass; any other browser origin is 403. With
   * origins, the function URL also answers their CORS preflights.
   * @default - none: browsers may not call the endpoint
   */
  readonly allowedOrigins?: string[];
  /** @default RetentionDays.ONE_MONTH */
  readonly logRetention?: logs.RetentionDays;
  /** @default 'INFO' */
  readonly logLevel?: FunctionLogLevel;
}

const DEFAULT_ENTRY = path.join(__dirname, '..', 'lambdas', 'mcp', 'handler.ts');

/** Request headers MCP clients send from browsers, and response headers they must read. */
export const MCP_CORS_ALLOWED_HEADERS = ['Authorization', 'Content-Type', 'Accept', 'MCP-Protocol-Version', 'Mcp-Session-Id', 'Last-Event-ID'];
export const MCP_CORS_EXPOSED_HEADERS = ['WWW-Authenticate', 'Mcp-Session-Id', 'Retry-After'];

/**
 * The MCP endpoint (spec 3): one Lambda (Node.js 24, arm64) behind a function URL with auth type
 * NONE, since bearer tokens are checked in the function (DECISIONS: CloudFront origin access
 * control cannot sign client POST bodies), served at `/mcp` of the distribution
 * (`Edge.addFunctionUrlBehavior`). It shares the memory core's table and bucket with the REST
 * API and the rate-limit table with every API, with only the actions the core and the limiter use.
 */
export class MemoryMcp extends Construct {
  readonly fn: NodejsFunction;
  readonly role: iam.Role;
  readonly functionUrl: lambda.FunctionUrl;
  /**
   * The verifier's settings (audience, PUBLIC_URL, Cognito client ids, token tables), read by the
   * function at initialisation (and again every MCP_SETTINGS_REFRESH_SECONDS, since a deploy that
   * changes only them leaves the function as it is) instead of from its environment. By default PUBLIC_URL is the
   * distribution's own domain, and the distribution's `/mcp` origin is this function's URL: with the
   * settings in the environment, function → distribution → function URL → function would be a
   * dependency cycle. The function and its policy name the Parameter Store parameter by a fixed
   * name, never by reference, so the parameter (which references the distribution) is not a
   * dependency of either.
   */
  readonly settings: ssm.StringParameter;

  constructor(scope: Construct, id: string, props: MemoryMcpProps) {
    super(scope, id);
    const origins = props.allowedOrigins ?? [];
    const settings = distributionSettings(
      this,
      'Settings of the MCP function that depend on the distribution (audience, public URL, Cognito client ids, token tables), not credentials',
      props.auth.verifierEnvironment(),
    );
    this.settings = settings.parameter;
    const settingsName = settings.name;
    const environment: Record<string, string> = {
      MCP_SETTINGS_PARAMETER: settingsName,
      ...memoryDataEnvironment(props.table, props.bucket),
      RATE_LIMIT_TABLE: props.rateLimitTable.tableName,
      CURSOR_SECRET_ARN: props.cursorKeysSecret.secretArn,
      ...(props.originVerifySecret && { ORIGIN_VERIFY_SECRET_ARN: props.originVerifySecret.secretArn }),
      MCP_RATE_PER_MINUTE: String(props.ratePerMinute ?? 120),
      MCP_LIST_MAX_ENTRIES: String(props.listMaxEntries ?? 100),
      ...memoryLimitsEnvironment(props),
    };
    if (origins.length) environment.MCP_ALLOWED_ORIGINS = origins.join(',');

    ({ fn: this.fn, role: this.role } = appFunction(this, 'Function', {
      description: 'MCP memory tools (POST /mcp, Streamable HTTP, stateless)',
      roleDescription: 'MCP function: verifies bearer tokens, reads and writes memories, takes rate-limit tokens',
      entry: props.entry ?? DEFAULT_ENTRY,
      memorySize: props.memorySize ?? 1024,
      timeout: props.timeout ?? Duration.seconds(25),
      reservedConcurrentExecutions: props.reservedConcurrentExecutions,
      logRetention: props.logRetention,
      logLevel: props.logLevel,
      serviceName: 'mcp',
      environment,
      // The SDK's Ajv stays out of index.js (ajv-validator.js beside it, loaded if a schema is ever asked for).
      bundling: { esbuildArgs: AJV_ABSENT, commandHooks: AJV_CHUNK },
    }));

    this.functionUrl = this.fn.addFunctionUrl({
      authType: lambda.FunctionUrlAuthType.NONE,
      invokeMode: lambda.InvokeMode.BUFFERED,
      // Browsers only: the function enforces the same allow-list (403 for any other Origin).
      cors: origins.length
        ? {
            allowedOrigins: origins,
            allowedMethods: [lambda.HttpMethod.POST],
            allowedHeaders: MCP_CORS_ALLOWED_HEADERS,
            exposedHeaders: MCP_CORS_EXPOSED_HEADERS,
            maxAge: Duration.days(1),
          }
        : undefined,
    });

    // Least privilege: the rev lock (items, the account's list, conditional writes and transactions),
    // objects and indexes under m/ of the bucket, one conditional update per lease on the limiter,
    // the cursor keys, and reads of the opaque-token table.
    grantMemoryData(props.table, props.bucket, this.role);
    // Rate-limit buckets (UpdateItem) and, under keys `idem:…`, the write tools' idempotencyKey records.
    grantTable(props.rateLimitTable, this.role, ['dynamodb:UpdateItem', 'dynamodb:PutItem', 'dynamodb:GetItem']);
    props.cursorKeysSecret.grantRead(this.role);
    props.originVerifySecret?.grantRead(this.role);
    props.auth.grantPersonalTokenUse(this.role);
    settings.grantRead(this.role);
  }
}
