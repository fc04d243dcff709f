/**
 * Metrics and logs of the request pipeline as a deployed function emits them: EMF lines on stdout
 * (Powertools Metrics, which CloudWatch turns into metrics), one per request with its route, and the
 * function's events (429s, auth failures, conflicts…) flushed at the end of the invocation. Locally
 * (no namespace) nothing is emitted.
 */
import { lambdaEntry, type ApiPolicy } from '../../lambdas/shared/http/pipeline';
import { logger } from '../../lambdas/shared/logger';
import type { HttpEvent, HttpResult } from '../../lambdas/shared/http/types';
import { EVENT_METRICS } from '../../lambdas/shared/observability/metric-names';
import { countMetric, flushMetrics, type MetricsSink, recordRequest, useMetricsSink } from '../../lambdas/shared/observability/metrics';
import { traced, tracingEnabled } from '../../lambdas/shared/observability/tracing';
import { apiEvent } from '../support/auth-harness';

interface Emf {
  _aws: { CloudWatchMetrics: Array<{ Namespace: string; Dimensions: string[][]; Metrics: Array<{ Name: string; Unit: string }> }> };
  [key: string]: unknown;
}

/** Runs `fn` with stdout captured, returning the EMF documents written (other lines are ignored). */
async function captureEmf(fn: () => unknown): Promise<Emf[]> {
  const lines: string[] = [];
  const write = process.stdout.write.bind(process.stdout);
  const spy = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array, ...rest: unknown[]) => {
    const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
    if (text.includes('"_aws"')) lines.push(...text.split('\n').filter((l) => l.includes('"_aws"')));
    else return write(chunk as string, ...(rest as []));
    return true;
  });
  try {
    await fn();
  } finally {
    spy.mockRestore();
  }
  return lines.map((l) => JSON.parse(l) as Emf);
}

function event(path: string, headers: Record<string, string> = {}): HttpEvent {
  return apiEvent('GET', path, { headers, routeKey: `GET ${path}`, requestId: 'req-123' });
}

const problem = (status: number): HttpResult => ({ statusCode: status, headers: {}, body: JSON.stringify({ status }) });

/** A tiny API on the shared pipeline: `ok` answers 200, `boom` throws (a 500), `denied` is always over its limit. */
function testPolicy(): ApiPolicy<{ secret?: () => string | undefined }> {
  return {
    name: 'test',
    fn: 'test',
    routes: [
      { method: 'GET', path: '/ok', operationId: 'ok', fn: 'test' },
      { method: 'GET', path: '/boom', operationId: 'boom', fn: 'test' },
      { method: 'GET', path: '/denied', operationId: 'denied', fn: 'test' },
    ],
    operations: {
      ok: async () => ({ kind: 'json', body: { ok: true } }),
      boom: async () => {
        throw new Error('boom');
      },
      denied: async () => ({ kind: 'json', body: {} }),
    },
    limit: {
      limiter: () => ({ consume: async () => ({ allowed: false, limit: 1, remaining: 0, resetSeconds: 1, retryAfterSeconds: 7 }) }),
      bucket: ({ resolution }) =>
        resolution.kind === 'route' && resolution.route.operationId === 'denied' ? { key: 'k', policy: { name: 't', ratePerSecond: 1, burst: 1 } } : undefined,
      timing: 'first',
      headers: () => ({}),
    },
    preflight: () => problem(204),
    problem: (p) => problem(p.kind === 'rate_limited' ? 429 : p.kind === 'not_found' ? 404 : p.kind === 'forbidden_origin' ? 403 : 500),
    error: () => undefined,
    originSecret: (deps) => deps.secret,
  };
}

describe('EMF through Powertools, when a namespace is set (every deployed function)', () => {
  const saved = { ns: process.env.POWERTOOLS_METRICS_NAMESPACE, svc: process.env.POWERTOOLS_SERVICE_NAME };
  beforeEach(() => {
    process.env.POWERTOOLS_METRICS_NAMESPACE = 'McpCatalog/test';
    process.env.POWERTOOLS_SERVICE_NAME = 'catalog';
    useMetricsSink(undefined);
  });
  afterEach(() => {
    for (const [k, v] of [
      ['POWERTOOLS_METRICS_NAMESPACE', saved.ns],
      ['POWERTOOLS_SERVICE_NAME', saved.svc],
    ] as const) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    useMetricsSink(undefined);
  });

  it('a request is one line with its route: latency always, a fault on a 5xx, a client error on a 4xx but 429', async () => {
    const handler = lambdaEntry(testPolicy(), async () => ({}));
    const ok = await captureEmf(() => handler(event('/ok'), {} as never));
    expect(ok).toHaveLength(1);
    const [line] = ok;
    expect(line._aws.CloudWatchMetrics[0].Namespace).toBe('McpCatalog/test');
    expect(line._aws.CloudWatchMetrics[0].Dimensions).toEqual([['service', 'route']]);
    expect(line._aws.CloudWatchMetrics[0].Metrics.map((m) => m.Name)).toEqual(['Latency']);
    expect(line).toMatchObject({ service: 'catalog', route: 'ok', Latency: expect.any(Number) });

    const boom = await captureEmf(() => handler(event('/boom'), {} as never));
    expect(boom[0]).toMatchObject({ route: 'boom', Faults: 1 });

    const missing = await captureEmf(() => handler(event('/nowhere'), {} as never));
    expect(missing[0]).toMatchObject({ route: 'error', ClientErrors: 1 });
    expect(missing[0].Faults).toBeUndefined();
  });

  it("the function's events go out once, at the end of the invocation, with the service dimension only", async () => {
    const handler = lambdaEntry(testPolicy(), async () => ({}));
    const lines = await captureEmf(() => handler(event('/denied'), {} as never));
    const request = lines.find((l) => l.route === 'denied');
    expect(request).toBeDefined();
    expect(request?.ClientErrors).toBeUndefined(); // a 429 is counted as RateLimited, not as a client error
    const events = lines.filter((l) => l.route === undefined);
    expect(events).toHaveLength(1);
    expect(events[0]._aws.CloudWatchMetrics[0].Dimensions).toEqual([['service']]);
    expect(events[0]).toMatchObject({ RateLimited: 1 });
  });

  it('a request refused for want of the origin header is a 403 counted as OriginRefused, with the route "forbidden"', async () => {
    const handler = lambdaEntry(testPolicy(), async () => ({ secret: () => 'the-secret' }));
    let out: HttpResult | undefined;
    const lines = await captureEmf(async () => {
      out = (await handler(event('/ok'), {} as never)) as HttpResult;
    });
    expect(out?.statusCode).toBe(403);
    expect(lines.find((l) => l.route === 'forbidden')).toMatchObject({ ClientErrors: 1 });
    expect(lines.find((l) => l.route === undefined)).toMatchObject({ OriginRefused: 1 });
    const served = await captureEmf(async () => {
      out = (await handler(event('/ok', { 'x-origin-verify': 'the-secret' }), {} as never)) as HttpResult;
    });
    expect(out?.statusCode).toBe(200);
    expect(served.map((l) => l.route)).toEqual(['ok']);
  });

  it('several events of one invocation add up in one line; a quiet invocation writes nothing more', async () => {
    const lines = await captureEmf(() => {
      countMetric(EVENT_METRICS.authFailures);
      countMetric(EVENT_METRICS.authFailures);
      countMetric(EVENT_METRICS.rebaseRetries);
      flushMetrics();
      flushMetrics();
    });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ AuthFailures: [1, 1], RebaseRetries: 1 });
  });
});

describe('logs', () => {
  it("every line of an invocation carries the request id and the X-Ray trace id of Lambda's environment", async () => {
    const traceId = '1-5759e988-bd862e3fe1be46a994272793';
    const saved = process.env._X_AMZN_TRACE_ID;
    process.env._X_AMZN_TRACE_ID = `Root=${traceId};Parent=53995c3f42cd8ad8;Sampled=1`;
    const level = logger.getLevelName();
    logger.setLogLevel('WARN');
    const lines: string[] = [];
    const capture = (chunk: string | Uint8Array): boolean => {
      lines.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
      return true;
    };
    // Powertools writes WARN and ERROR to stderr, the rest to stdout.
    const spies = [jest.spyOn(process.stdout, 'write').mockImplementation(capture), jest.spyOn(process.stderr, 'write').mockImplementation(capture)];
    try {
      const handler = lambdaEntry(testPolicy(), async () => ({ secret: () => 'the-secret' }));
      await handler(event('/ok'), {} as never);
      // A line written outside an invocation no longer carries it.
      logger.warn('between invocations');
    } finally {
      for (const spy of spies) spy.mockRestore();
      logger.setLogLevel(level as 'INFO');
      if (saved === undefined) delete process.env._X_AMZN_TRACE_ID;
      else process.env._X_AMZN_TRACE_ID = saved;
    }
    const logs = lines
      .flatMap((l) => l.split('\n'))
      .filter((l) => l.startsWith('{') && !l.includes('"_aws"'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const refused = logs.find((l) => l.message === 'request without the CloudFront origin header refused');
    expect(refused).toMatchObject({ requestId: 'req-123', xray_trace_id: expect.stringContaining(traceId), level: 'WARN' });
    expect(JSON.stringify(refused)).not.toContain('the-secret');
    expect(logs.find((l) => l.message === 'between invocations')?.requestId).toBeUndefined();
  });
});

describe('without a namespace (the local stack, tests, CLIs)', () => {
  it('emits nothing and loads nothing', async () => {
    delete process.env.POWERTOOLS_METRICS_NAMESPACE;
    useMetricsSink(undefined);
    const lines = await captureEmf(() => {
      recordRequest('ok', 500, 1);
      countMetric(EVENT_METRICS.authFailures);
      flushMetrics();
    });
    expect(lines).toEqual([]);
  });

  it('tracing is off and clients are returned untouched', () => {
    expect(tracingEnabled({ POWERTOOLS_TRACE_ENABLED: 'true' })).toBe(false);
    expect(tracingEnabled({ AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs24.x' })).toBe(false);
    expect(tracingEnabled({ AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs24.x', POWERTOOLS_TRACE_ENABLED: 'true' })).toBe(true);
    const client = { send: () => undefined };
    expect(traced(client)).toBe(client);
  });
});

describe('a recording sink sees what the domain counts', () => {
  it('an auth failure, a stale If-Match and a refused credential are each counted where they happen', async () => {
    const counted: string[] = [];
    const sink: MetricsSink = { count: (name) => counted.push(name), request: () => undefined, flush: () => undefined };
    useMetricsSink(sink);
    try {
      const { staleRev } = await import('../../lambdas/memory/errors');
      staleRev('m', { head: 'abc' });
      const { checkStored } = await import('../../lambdas/memory/content');
      const { DEFAULT_LIMITS } = await import('../../lambdas/memory/config');
      expect(() => checkStored('# note\nAKIAIOSFODNN7EXAMPLE wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n', 'a.md', DEFAULT_LIMITS)).toThrow(/refused/);
      const { BearerTokenVerifier } = await import('../../lambdas/identity/verifier');
      const verifier = new BearerTokenVerifier({} as never, undefined);
      await expect(verifier.verify(undefined)).rejects.toMatchObject({ name: 'AuthError', reason: 'missing' });
      await expect(verifier.verify('Bearer mcpat_x')).rejects.toMatchObject({ name: 'AuthError', reason: 'unknown-token' });
      expect(counted).toEqual([EVENT_METRICS.ifMatchConflicts, EVENT_METRICS.credentialRefusals, EVENT_METRICS.authFailures]);
    } finally {
      useMetricsSink(undefined);
    }
  });
});
