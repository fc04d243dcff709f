import type { Metrics } from '@aws-lambda-powertools/metrics';
import { type EventMetric, REQUEST_METRICS } from './metric-names';

/**
 * Application metrics as CloudWatch embedded metric format (EMF) lines, through Powertools Metrics:
 * CloudWatch turns each line of the function's log into data points, with no API call on the
 * request path. On only where CDK sets `POWERTOOLS_METRICS_NAMESPACE` (every deployed function);
 * the local stack and the CLIs emit nothing.
 *
 * Two kinds, kept apart because EMF gives one set of dimensions per line:
 * - per request (dimensions `service`, `route`): latency, and a fault or client error when there is
 *   one; published as one line at the end of the request;
 * - events of the function (dimension `service`): rate-limit denials, auth failures, conflicts,
 *   crawl counts…, buffered and published by `flushMetrics()` at the end of the invocation.
 *
 * A metric is only published when it happens, so an idle deployment stores none (CloudWatch bills a
 * custom metric for the hours it receives data).
 */

export type MetricUnitName = 'Count' | 'Milliseconds' | 'Seconds';

export interface MetricsSink {
  /** An event of the function, buffered until `flush`. */
  count(name: EventMetric, value: number, unit: MetricUnitName): void;
  /** One request's metrics with its route, published at once. */
  request(route: string, metrics: ReadonlyArray<readonly [name: string, unit: MetricUnitName, value: number]>): void;
  flush(): void;
}

const NO_METRICS: MetricsSink = { count: () => undefined, request: () => undefined, flush: () => undefined };

let sink: MetricsSink | undefined;

function current(): MetricsSink {
  if (sink !== undefined) return sink;
  const namespace = process.env.POWERTOOLS_METRICS_NAMESPACE;
  sink = namespace ? powertoolsSink(namespace, process.env.POWERTOOLS_SERVICE_NAME ?? 'mcp-catalog') : NO_METRICS;
  return sink;
}

/** Replaces the sink (tests); `undefined` goes back to the environment's choice on the next metric. */
export function useMetricsSink(next: MetricsSink | undefined): void {
  sink = next;
}

/** Counts an event of this function (published at the end of the invocation). */
export function countMetric(name: EventMetric, value = 1, unit: MetricUnitName = 'Count'): void {
  if (!Number.isFinite(value)) return;
  current().count(name, value, unit);
}

/** Publishes the buffered events; the Lambda entries call it once per invocation. */
export function flushMetrics(): void {
  current().flush();
}

/** The per-request line: latency always, and the kind of failure when the status is one. */
export function recordRequest(route: string, status: number, latencyMs: number): void {
  const metrics: Array<readonly [string, MetricUnitName, number]> = [[REQUEST_METRICS.latency, 'Milliseconds', Math.round(latencyMs * 100) / 100]];
  if (status >= 500) metrics.push([REQUEST_METRICS.faults, 'Count', 1]);
  else if (status >= 400 && status !== 429) metrics.push([REQUEST_METRICS.clientErrors, 'Count', 1]);
  current().request(route, metrics);
}

/**
 * The Powertools-backed sink. The package is required here, on the first metric, not at module
 * load: a function pays for it on its first request, and code that never emits never loads it.
 */
export function powertoolsSink(namespace: string, serviceName: string): MetricsSink {
  const { Metrics: MetricsClass, MetricUnit } = require('@aws-lambda-powertools/metrics') as typeof import('@aws-lambda-powertools/metrics');
  const make = (): Metrics => new MetricsClass({ namespace, serviceName });
  const events = make();
  const requests = make();
  return {
    count: (name, value, unit) => {
      events.addMetric(name, MetricUnit[unit], value);
    },
    request: (route, list) => {
      requests.addDimension('route', route);
      for (const [name, unit, value] of list) requests.addMetric(name, MetricUnit[unit], value);
      requests.publishStoredMetrics();
    },
    flush: () => {
      // Publishing nothing would log Powertools' "no metrics" warning on every quiet invocation.
      if (events.hasStoredMetrics()) events.publishStoredMetrics();
    },
  };
}
