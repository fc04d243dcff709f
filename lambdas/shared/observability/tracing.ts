import type { HandlerSegment } from './xray';

/**
 * Tracing, where it has somewhere to go: inside a Lambda function with active X-Ray tracing (CDK
 * sets `POWERTOOLS_TRACE_ENABLED=true` on every function it traces; Lambda sets
 * `AWS_EXECUTION_ENV`). Everywhere else (the local stack, tests, CLIs) these are no-ops and the
 * X-Ray SDK is never loaded.
 */
type XrayModule = typeof import('./xray');

let xrayModule: XrayModule | null | undefined;

export function tracingEnabled(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.POWERTOOLS_TRACE_ENABLED === 'true' && Boolean(env.AWS_EXECUTION_ENV);
}

function xray(): XrayModule | null {
  if (xrayModule !== undefined) return xrayModule;
  if (!tracingEnabled()) {
    xrayModule = null;
    return xrayModule;
  }
  // A computed specifier, so esbuild leaves the module out of the function's bundle: CDK builds it
  // as `xray.js` beside `index.js` (lib/lambda-function.ts), which this require finds at run time;
  // from source (tests) it finds `xray.ts`.
  const specifier = ['.', 'xray'].join('/');
  xrayModule = require(specifier) as XrayModule;
  return xrayModule;
}

/** Forgets the loaded module and reads the environment again (tests). */
export function resetTracing(): void {
  xrayModule = undefined;
}

/** An AWS SDK v3 client whose calls become X-Ray subsegments (the client itself when not tracing). */
export function traced<T>(client: T): T {
  const x = xray();
  return x ? x.captureClient(client) : client;
}

const NO_SEGMENT: HandlerSegment = { annotate: () => undefined, fail: () => undefined };

/** Runs an invocation inside its own annotated subsegment when tracing, as it is otherwise. */
export function inHandlerSegment<T>(name: string, run: (segment: HandlerSegment) => Promise<T>): Promise<T> {
  const x = xray();
  return x ? x.inHandlerSegment(name, run) : run(NO_SEGMENT);
}

export type { HandlerSegment };
