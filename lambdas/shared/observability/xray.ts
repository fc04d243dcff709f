import { Tracer } from '@aws-lambda-powertools/tracer';

/**
 * The X-Ray side of tracing (Powertools Tracer over the X-Ray SDK). Never imported statically:
 * `tracing.ts` requires it only inside a Lambda with active tracing, and CDK bundles it into its own
 * file (`xray.js` beside the function's `index.js`), so its 120 KB and its load time stay out of
 * every function's bundle and init (README, "Observability").
 */
const tracer = new Tracer({ serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? 'mcp-catalog' });

export function captureClient<T>(client: T): T {
  return tracer.captureAWSv3Client(client);
}

export interface HandlerSegment {
  annotate(key: string, value: string | number | boolean): void;
  fail(err: unknown): void;
}

/**
 * Runs one invocation in a `## <name>` subsegment of the function's segment (Lambda creates the
 * segment; annotations are only allowed on subsegments), annotated with the cold start and the
 * service, so traces can be filtered by route and status.
 */
export async function inHandlerSegment<T>(name: string, run: (segment: HandlerSegment) => Promise<T>): Promise<T> {
  const parent = tracer.getSegment();
  if (parent === undefined) return run({ annotate: () => undefined, fail: () => undefined });
  const sub = parent.addNewSubsegment(`## ${name}`);
  tracer.setSegment(sub);
  tracer.annotateColdStart();
  tracer.addServiceNameAnnotation();
  try {
    return await run({
      annotate: (key, value) => tracer.putAnnotation(key, value),
      fail: (err) => tracer.addErrorAsMetadata(err instanceof Error ? err : new Error(String(err))),
    });
  } finally {
    sub.close();
    tracer.setSegment(parent);
  }
}

/** The trace id of the current invocation (also in every log line, as `xray_trace_id`). */
export function traceId(): string | undefined {
  return tracer.getRootXrayTraceId();
}
