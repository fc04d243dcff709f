import { RemovalPolicy } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { LogLevel, NodejsFunction, OutputFormat, type BundlingOptions, type NodejsFunctionProps } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { SDK_EXTERNALS } from './bundling-externals';

/** Log levels the Powertools logger of the handlers accepts (LOG_LEVEL). */
export type FunctionLogLevel = 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';

/**
 * Bundling of every function: minified CommonJS for Node.js 24 with source maps (without the
 * sources, to keep the bundle small; NODE_OPTIONS=--enable-source-maps maps stack traces back).
 * The AWS SDK is left out (NodejsFunction's default for a Node.js 18+ runtime, spelled out in
 * bundling-externals.ts): the runtime provides it. A function may keep more of it in its bundle.
 */
const BUNDLING: BundlingOptions = {
  externalModules: [...SDK_EXTERNALS],
  minify: true,
  sourceMap: true,
  sourcesContent: false,
  target: 'node24',
  format: OutputFormat.CJS,
  logLevel: LogLevel.WARNING,
  // Local esbuild only: synth must work on machines without Docker.
  forceDockerBundling: false,
};

export interface AppFunctionProps
  extends Omit<NodejsFunctionProps, 'entry' | 'handler' | 'runtime' | 'architecture' | 'role' | 'logGroup' | 'logRetention' | 'bundling'> {
  /** The handler's entry file; it must export `handler`. */
  readonly entry: string;
  /** Description of the function's own role (what the function may do). */
  readonly roleDescription: string;
  /** POWERTOOLS_SERVICE_NAME of the structured logs. */
  readonly serviceName: string;
  /** LOG_LEVEL. @default 'INFO' */
  readonly logLevel?: FunctionLogLevel;
  /** Retention of the function's log group. @default RetentionDays.ONE_MONTH */
  readonly logRetention?: logs.RetentionDays;
  /** More bundling options (external modules, esbuild arguments); they override the defaults. */
  readonly bundling?: BundlingOptions;
}

export interface AppFunction {
  readonly fn: NodejsFunction;
  readonly role: iam.Role;
  readonly logGroup: logs.LogGroup;
}

/**
 * A Lambda function of this app, with the defaults every one of them shares so they are written
 * once: Node.js 24 on arm64 (cheaper per GB-second than x86_64 and what the sharp layer is built
 * for), bundled with the local esbuild (synth works on machines without Docker), the AWS SDK from
 * the runtime, source maps, and LOG_LEVEL / POWERTOOLS_SERVICE_NAME / NODE_OPTIONS in the
 * environment (the caller's `environment` may override them).
 *
 * Each function gets its own log group (`<id>Logs`: operational data, so it goes with the stack)
 * and its own role (`<id>Role`) with an inline policy to write to that one group, in place of
 * AWSLambdaBasicExecutionRole; the caller adds the function's own grants to `role`. The three are
 * created directly in `scope` (no wrapping construct), so their construct paths and logical ids are
 * those of hand-written `<id>Logs`, `<id>Role` and `<id>` siblings.
 */
export function appFunction(scope: Construct, id: string, props: AppFunctionProps): AppFunction {
  const { roleDescription, serviceName, logLevel, logRetention, environment, bundling, ...functionProps } = props;
  const logGroup = new logs.LogGroup(scope, `${id}Logs`, {
    retention: logRetention ?? logs.RetentionDays.ONE_MONTH,
    removalPolicy: RemovalPolicy.DESTROY,
  });
  const role = new iam.Role(scope, `${id}Role`, {
    assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
    description: roleDescription,
  });
  logGroup.grantWrite(role);
  const fn = new NodejsFunction(scope, id, {
    handler: 'handler',
    runtime: lambda.Runtime.NODEJS_24_X,
    architecture: lambda.Architecture.ARM_64,
    ...functionProps,
    role,
    logGroup,
    environment: {
      LOG_LEVEL: logLevel ?? 'INFO',
      POWERTOOLS_SERVICE_NAME: serviceName,
      NODE_OPTIONS: '--enable-source-maps',
      ...environment,
    },
    bundling: { ...BUNDLING, ...bundling },
  });
  return { fn, role, logGroup };
}
