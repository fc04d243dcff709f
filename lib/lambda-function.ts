import * as path from 'node:path';
import { RemovalPolicy } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { LogLevel, NodejsFunction, OutputFormat, type BundlingOptions, type NodejsFunctionProps } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { BUNDLE_ALIASES, SDK_EXTERNALS } from './bundling-externals';
import { acknowledge } from './nag';

/** Log levels the Powertools logger of the handlers accepts (LOG_LEVEL). */
export type FunctionLogLevel = 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';

/**
 * What every function of a deployment shares, set once by the stack (`setFunctionDefaults`) and
 * read by `appFunction`, so a construct added later (a site function, a git remote) gets tracing,
 * metrics and its log retention without new props.
 */
export interface FunctionDefaults {
  /** EMF namespace of the application metrics (POWERTOOLS_METRICS_NAMESPACE). */
  readonly metricsNamespace?: string;
  /** X-Ray active tracing, with the AWS SDK clients captured. @default true */
  readonly tracing?: boolean;
  /** Retention of every function's log group. @default RetentionDays.ONE_MONTH */
  readonly logRetention?: logs.RetentionDays;
}

const DEFAULTS_KEY = 'mcp-catalog:function-defaults';

/** Sets the defaults of every `appFunction` under `scope` (call it before creating them). */
export function setFunctionDefaults(scope: Construct, defaults: FunctionDefaults): void {
  scope.node.setContext(DEFAULTS_KEY, defaults);
}

export function functionDefaults(scope: Construct): FunctionDefaults {
  return (scope.node.tryGetContext(DEFAULTS_KEY) as FunctionDefaults | undefined) ?? {};
}

const ROOT = path.join(__dirname, '..');
/** The X-Ray part of the observability module, bundled as its own file (see lambdas/shared/observability/tracing.ts). */
const XRAY_ENTRY = path.join(ROOT, 'lambdas', 'shared', 'observability', 'xray.ts');
const ESBUILD = path.join(ROOT, 'node_modules', '.bin', 'esbuild');

/**
 * Hooks that bundle `entry` as `outName` beside the function's `index.js`, for code the function
 * loads by a computed `require` on the rare request that needs it: it stays out of the function's
 * bundle (the 1 MB budget) and its module init.
 */
export function sideChunk(entry: string, outName: string, external: readonly string[] = ['@aws-sdk/*']): NonNullable<BundlingOptions['commandHooks']> {
  return {
    beforeBundling: () => [],
    beforeInstall: () => [],
    afterBundling: (_inputDir: string, outputDir: string) => [
      [
        JSON.stringify(ESBUILD),
        JSON.stringify(entry),
        '--bundle',
        '--minify',
        '--platform=node',
        '--format=cjs',
        '--target=node24',
        ...external.map((e) => `--external:'${e}'`),
        '--log-level=warning',
        `--outfile=${JSON.stringify(path.join(outputDir, outName))}`,
      ].join(' '),
    ],
  };
}

/**
 * Bundles `xray.js` beside the function's `index.js`: the X-Ray SDK (about 120 KB minified) stays
 * out of the function's own bundle and init, and is loaded by the first request of a traced instance.
 */
export const XRAY_CHUNK = sideChunk(XRAY_ENTRY, 'xray.js');

/**
 * Bundles `presigner.js` beside the memory functions' `index.js` (lambdas/memory-api/presigner.ts):
 * the S3 presigner with its signing code (about 160 KB), which only a large export uses.
 */
export const PRESIGNER_CHUNK = sideChunk(path.join(ROOT, 'lambdas', 'memory-api', 'presigner.ts'), 'presigner.js', ['@aws-sdk/client-*', '@aws-sdk/lib-*']);

/**
 * Bundles `ajv-validator.js` beside the `index.js` of a function that serves MCP with
 * `createToolServer` (lambdas/shared/mcp/server.ts, `lazyValidator`): Ajv, which the SDK's server
 * uses only for elicitation, loaded the first time a schema is asked for.
 */
export const AJV_CHUNK = sideChunk(path.join(ROOT, 'lambdas', 'shared', 'mcp', 'ajv-validator.ts'), 'ajv-validator.js');

/**
 * esbuild arguments that keep Ajv (about 135 KB with its formats) out of the `index.js` of a
 * function whose MCP servers all come from `createToolServer`: the SDK's server module imports it
 * for a default validator those servers never build (they take `lazyValidator`, whose Ajv is
 * `AJV_CHUNK`), so `ajv` and `ajv-formats` are bundled as a stand-in that throws if ever called.
 */
const AJV_ABSENT_MODULE = path.join(ROOT, 'lambdas', 'shared', 'mcp', 'ajv-absent.ts');
export const AJV_ABSENT: Record<string, string> = { '--alias:ajv': AJV_ABSENT_MODULE, '--alias:ajv-formats': AJV_ABSENT_MODULE };

type CommandHooks = NonNullable<BundlingOptions['commandHooks']>;

/** Both sets of hooks, in order. */
export function combineHooks(a: CommandHooks, b: CommandHooks): CommandHooks {
  return {
    beforeBundling: (i, o) => [...a.beforeBundling(i, o), ...b.beforeBundling(i, o)],
    beforeInstall: (i, o) => [...a.beforeInstall(i, o), ...b.beforeInstall(i, o)],
    afterBundling: (i, o) => [...a.afterBundling(i, o), ...b.afterBundling(i, o)],
  };
}

/** A function's own hooks (files beside its bundle) and the X-Ray chunk when traced. */
function withHooks(a: CommandHooks | undefined, b: CommandHooks | undefined): { commandHooks?: CommandHooks } {
  const hooks = a && b ? combineHooks(a, b) : (a ?? b);
  return hooks ? { commandHooks: hooks } : {};
}

/**
 * Bundling of every function: minified CommonJS for Node.js 24 with source maps (without the
 * sources, to keep the bundle small; NODE_OPTIONS=--enable-source-maps maps stack traces back).
 * The AWS SDK is left out (NodejsFunction's default for a Node.js 18+ runtime, spelled out in
 * bundling-externals.ts): the runtime provides it. A function may keep more of it in its bundle.
 * `BUNDLE_ALIASES` pick a package's ES module build where it saves module init (same file); a
 * function's own esbuild arguments are added to them.
 */
const BUNDLING: BundlingOptions = {
  externalModules: [...SDK_EXTERNALS],
  minify: true,
  sourceMap: true,
  sourcesContent: false,
  target: 'node24',
  format: OutputFormat.CJS,
  logLevel: LogLevel.WARNING,
  esbuildArgs: Object.fromEntries(Object.entries(BUNDLE_ALIASES).map(([name, file]) => [`--alias:${name}`, file])),
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
  /**
   * Who invokes the function, synchronously (request and response): a failed invocation is the
   * caller's error answer or retry, so a dead-letter queue or an on-failure destination of
   * asynchronous invocations has nothing to catch. `undefined` for a function invoked
   * asynchronously, which then needs a DLQ of its own (cdk-nag's Serverless pack says so).
   * @default 'API Gateway or a Lambda function URL'
   */
  readonly invokedBy?: string | undefined;
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
 * the runtime, source maps, X-Ray active tracing with the `xray.js` chunk, and LOG_LEVEL /
 * POWERTOOLS_* / NODE_OPTIONS in the environment (the caller's `environment` may override them);
 * tracing, the metrics namespace and the log retention come from `setFunctionDefaults`.
 *
 * Each function gets its own log group (`<id>Logs`: operational data, so it goes with the stack)
 * and its own role (`<id>Role`) with an inline policy to write to that one group, in place of
 * AWSLambdaBasicExecutionRole; the caller adds the function's own grants to `role`. The three are
 * created directly in `scope` (no wrapping construct), so their construct paths and logical ids are
 * those of hand-written `<id>Logs`, `<id>Role` and `<id>` siblings.
 */
export function appFunction(scope: Construct, id: string, props: AppFunctionProps): AppFunction {
  const { roleDescription, serviceName, logLevel, logRetention, environment, bundling, invokedBy, ...functionProps } = props;
  const defaults = functionDefaults(scope);
  const tracing = defaults.tracing ?? true;
  const logGroup = new logs.LogGroup(scope, `${id}Logs`, {
    retention: logRetention ?? defaults.logRetention ?? logs.RetentionDays.ONE_MONTH,
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
    tracing: tracing ? lambda.Tracing.ACTIVE : lambda.Tracing.DISABLED,
    environment: {
      LOG_LEVEL: logLevel ?? 'INFO',
      POWERTOOLS_SERVICE_NAME: serviceName,
      POWERTOOLS_TRACE_ENABLED: String(tracing),
      ...(defaults.metricsNamespace && { POWERTOOLS_METRICS_NAMESPACE: defaults.metricsNamespace }),
      NODE_OPTIONS: '--enable-source-maps',
      ...environment,
    },
    bundling: {
      ...BUNDLING,
      ...bundling,
      esbuildArgs: { ...BUNDLING.esbuildArgs, ...bundling?.esbuildArgs },
      ...withHooks(tracing ? XRAY_CHUNK : undefined, bundling?.commandHooks),
    },
  });
  const caller = 'invokedBy' in props ? invokedBy : 'API Gateway or a Lambda function URL';
  if (caller !== undefined) {
    const why = `Invoked synchronously by ${caller}: a failure is answered to the caller (an error response, or a retry it makes), so there is no asynchronous event for a dead-letter queue or an on-failure destination to keep.`;
    acknowledge(fn, 'Serverless-LambdaDLQ', why);
    acknowledge(fn, 'Serverless-LambdaAsyncFailureDestination', why);
  }
  if (!tracing) {
    acknowledge(
      fn,
      'Serverless-LambdaTracing',
      "The stage turned X-Ray off (tracing: false, a documented option: traces cost per segment and some organisations send none); the function's JSON logs carry the request id, its EMF metrics the latency per route, and its errors and throttles are alarmed.",
    );
  } else {
    acknowledge(
      role,
      'AwsSolutions-IAM5[Resource::*]',
      "X-Ray active tracing: xray:PutTraceSegments and xray:PutTelemetryRecords support no resource-level permissions, so Lambda's tracing grant names every resource; it is the statement CDK adds for Tracing.ACTIVE only.",
    );
  }
  return { fn, role, logGroup };
}
