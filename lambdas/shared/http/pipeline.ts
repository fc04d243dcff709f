import middy from '@middy/core';
import { randomUUID } from 'node:crypto';
import { logger } from '../logger';
import { EVENT_METRICS } from '../observability/metric-names';
import { countMetric, flushMetrics, recordRequest } from '../observability/metrics';
import { inHandlerSegment } from '../observability/tracing';
import { failOpen } from '../rate-limit/fail-open';
import { ORIGIN_VERIFY_HEADER, type OriginSecretGetter, originAdmits } from './origin-guard';
import type { RateDecision, RateLimiter, RatePolicy } from '../rate-limit/rate-limiter';
import { parseRawQuery } from './query';
import { logRequest } from './request-log';
import { routeResolver, type Resolution } from './resolve';
import { toResult } from './respond';
import type { RouteDef } from './route-table';
import { header, type HandlerResponse, type HttpEvent, type HttpResult, type LambdaContext } from './types';

/**
 * The one request pipeline of every API (catalog, favorites, `/v1`, MCP, OAuth). In order:
 *
 *   resolve the route → CloudFront's origin header (403 without it, when a secret is configured)
 *   → screen (MCP's Origin) → CORS preflight → verify the token while the rate limiter decides →
 *   429 → 404/405 → 401/503 → authorize (scopes) → validate and run the operation → map errors →
 *   response headers (CORS, rate limit) → observers (access log, request metrics).
 *
 * Each API is its route table plus an `ApiPolicy`: how it words problems and errors (its
 * envelope and codes), which bucket a request spends from and when, whether a token is needed.
 * This layer speaks no API's error codes: problems are neutral kinds the policy words.
 */

/** What went wrong around an operation, in no API's vocabulary. */
export type Problem =
  | { kind: 'not_found' }
  | { kind: 'method_not_allowed'; method: string; allowed: string[] }
  | { kind: 'rate_limited'; retryAfterSeconds: number }
  /** A bug: a misrouted request, or an error no mapping knows (already logged). */
  | { kind: 'internal' }
  /** The function's dependencies could not be built (a secret or table unreachable); retry shortly. */
  | { kind: 'starting' }
  /** The body is over the payload limit in front of the function (API Gateway's 10 MB; the local server's cap). */
  | { kind: 'too_large'; maxBytes: number }
  /** The request reached the origin without CloudFront's secret header (someone found the origin's own host name). */
  | { kind: 'forbidden_origin' };

/** What an operation sees of its request. */
export interface RequestContext<D, P = unknown> {
  event: HttpEvent;
  deps: D;
  requestId: string;
  route: RouteDef;
  /** Path parameters, decoded exactly once (by API Gateway, or by the local server's matcher). */
  params: Record<string, string>;
  /** Raw query, key → values in order (see `parseRawQuery`). */
  query: Map<string, string[]>;
  /** The verified caller, when the policy verifies tokens and the token was good. */
  principal?: P;
}

/** An endpoint: a full result, or a body the pipeline serialises (`toResult`). */
export type Operation<D, P = unknown> = (ctx: RequestContext<D, P>) => Promise<HttpResult | HandlerResponse>;

export interface Bucket {
  key: string;
  policy: RatePolicy;
  /** Tokens this request takes (an MCP batch takes one per JSON-RPC request); 1 by default. */
  cost?: number;
}

export interface LimitRule<D, P = unknown> {
  /** The shared limiter; `undefined` leaves the API unlimited (tests of other concerns). */
  limiter(deps: D): RateLimiter | undefined;
  /**
   * The bucket a request spends from, or `undefined` when it is not limited. `principal` is given
   * when `afterVerification` is set (a bucket keyed by user).
   */
  bucket(req: { event: HttpEvent; deps: D; resolution: Resolution; principal?: P }): Bucket | undefined | Promise<Bucket | undefined>;
  /**
   * `concurrent`: the operation runs while the limiter decides (side-effect-free reads; a denial
   * replaces its answer). `first`: the decision comes before the operation (writes).
   */
  timing: 'concurrent' | 'first';
  /** Wait for the token's verification to pick the bucket. */
  afterVerification?: boolean;
  /** The API's rate-limit headers (X-RateLimit-* or IETF draft-7 RateLimit). */
  headers(decision: RateDecision, policy: RatePolicy, deps: D): Record<string, string>;
}

export interface ApiPolicy<D, P = unknown> {
  /** For logs and observers. */
  name: string;
  /** The function in the route table this pipeline serves. */
  fn: string;
  /** The API's whole route table (other functions' routes included, so `Allow` is complete). */
  routes: readonly RouteDef[];
  /** Verbs of a preflight on a path the table does not know (the catalog answers GET under `/api`). */
  preflightFallback?: string[];
  /** operationId → operation. */
  operations: Readonly<Record<string, Operation<D, P>>>;
  /**
   * Token verification (the `Authorization` header in, the caller out, or a typed failure thrown).
   * `required`: a failure is answered through `error`; `optional`: a bad token is no principal.
   */
  auth?: { mode: 'required' | 'optional'; verify: (deps: D, authorization: string | undefined, route: RouteDef) => Promise<P> };
  limit?: LimitRule<D, P>;
  /** Checks before anything else (MCP's Origin and protocol version); a result ends the request. */
  screen?(event: HttpEvent, resolution: Resolution, deps: D): HttpResult | undefined;
  /** After authentication, before the operation: throws the API's error (a missing scope). */
  authorize?(ctx: RequestContext<D, P>): void;
  preflight(allowed: string[], event: HttpEvent): HttpResult;
  /** The API's wording of a neutral problem. */
  problem(problem: Problem, event: HttpEvent, operationId?: string): HttpResult;
  /** The API's answer to an error it knows (its own, the core's, the verifier's); `undefined` = unexpected. */
  error(err: unknown, at: { event: HttpEvent; deps: D; requestId: string; operationId?: string }): HttpResult | undefined;
  /** Headers on every response of the API (CORS, deprecation of an alias); `deps` is missing when they failed to build. */
  headers?(event: HttpEvent, deps: D | undefined): Record<string, string>;
  /**
   * CloudFront's origin secret: with one, a request without the matching `x-origin-verify` header
   * is the `forbidden_origin` problem before anything else runs. Undefined (the local stack): no check.
   */
  originSecret?(deps: D): OriginSecretGetter | undefined;
}

/** Sees every answered request: the access log, and the seam for traces and metrics. */
export interface RequestObserver {
  observe(o: { api: string; requestId: string; event: HttpEvent; route: string; status: number; startedMs: number; decision?: RateDecision }): void;
}

export const accessLog: RequestObserver = {
  observe: (o) => logRequest(o.requestId, o.event, o.route, o.status, o.startedMs),
};

/** Latency per route, and a fault or client error when the status is one (EMF; off outside AWS), and 429s. */
export const requestMetrics: RequestObserver = {
  observe: (o) => {
    recordRequest(o.route, o.status, performance.now() - o.startedMs);
    if (o.decision && !o.decision.allowed) countMetric(EVENT_METRICS.rateLimited);
  },
};

/** The observers every pipeline has unless it is given others. */
export const DEFAULT_OBSERVERS: readonly RequestObserver[] = [accessLog, requestMetrics];

export type Pipeline<D> = (event: HttpEvent, deps: D, requestId: string) => Promise<HttpResult>;

type Verified<P> = { principal: P } | { failure: unknown };

export function createPipeline<D, P>(policy: ApiPolicy<D, P>, observers: readonly RequestObserver[] = DEFAULT_OBSERVERS): Pipeline<D> {
  const resolve = routeResolver(policy.routes, policy.fn, policy.preflightFallback);

  const unexpected = (err: unknown, event: HttpEvent, deps: D, requestId: string, operationId?: string): HttpResult => {
    const known = policy.error(err, { event, deps, requestId, operationId });
    if (known) return known;
    logger.error('unhandled error', { requestId, api: policy.name, operationId, err: describeError(err) });
    return policy.problem({ kind: 'internal' }, event, operationId);
  };

  const run = async (ctx: RequestContext<D, P>): Promise<HttpResult> => {
    const operation = policy.operations[ctx.route.operationId];
    try {
      if (!operation) throw new Error(`no operation ${ctx.route.operationId} in ${policy.name}`);
      policy.authorize?.(ctx);
      const res = await operation(ctx);
      return 'statusCode' in res ? res : toResult(res);
    } catch (err) {
      return unexpected(err, ctx.event, ctx.deps, ctx.requestId, ctx.route.operationId);
    }
  };

  // The steps below take the request's state (`Exchange`) as an argument rather than closing over
  // it: closures made per request were a measurable share of a cached read's CPU.

  const principalOf = async (x: Exchange<D, P>): Promise<P | undefined> => {
    const v = x.verified && (await x.verified);
    return v && 'principal' in v ? v.principal : undefined;
  };

  const decide = async (x: Exchange<D, P>): Promise<RateDecision | undefined> => {
    const limit = policy.limit;
    if (!limit) return undefined;
    return failOpen(x.requestId, async () => {
      const principal = limit.afterVerification ? await principalOf(x) : undefined;
      const limiter = limit.limiter(x.deps);
      const bucket = limiter && (await limit.bucket({ event: x.event, deps: x.deps, resolution: x.resolution, principal }));
      x.bucket = bucket;
      return limiter && bucket ? limiter.consume(bucket.key, bucket.policy, bucket.cost ?? 1) : undefined;
    });
  };

  const denied = (x: Exchange<D, P>, d: RateDecision | undefined): HttpResult | undefined =>
    d && !d.allowed ? policy.problem({ kind: 'rate_limited', retryAfterSeconds: d.retryAfterSeconds }, x.event) : undefined;

  const proceed = async (x: Exchange<D, P>): Promise<HttpResult> => {
    const { resolution, event, deps, requestId } = x;
    if (resolution.kind === 'not_found') return policy.problem({ kind: 'not_found' }, event);
    if (resolution.kind === 'method_not_allowed')
      return policy.problem({ kind: 'method_not_allowed', method: resolution.method, allowed: resolution.allowed }, event);
    if (resolution.kind === 'misrouted') {
      logger.error(`route of another function reached the ${policy.fn} function`, {
        requestId,
        route: resolution.route.operationId,
        fn: resolution.route.fn,
      });
      return policy.problem({ kind: 'internal' }, event);
    }
    if (resolution.kind !== 'route') throw new Error('unreachable');
    const v = x.verified && (await x.verified);
    if (v && 'failure' in v && policy.auth?.mode === 'required') return unexpected(v.failure, event, deps, requestId, resolution.route.operationId);
    const principal = v && 'principal' in v ? v.principal : undefined;
    return run(new OperationContext<D, P>(event, deps, requestId, resolution.route, resolution.params, principal));
  };

  const answer = async (x: Exchange<D, P>): Promise<HttpResult> => {
    const { resolution, event, deps } = x;
    if (resolution.kind === 'preflight') return policy.preflight(resolution.allowed, event);
    const auth = policy.auth;
    if (auth && resolution.kind === 'route') {
      x.verified = auth.verify(deps, header(event, 'authorization'), resolution.route).then(
        (principal) => ({ principal }),
        (failure: unknown) => ({ failure }),
      );
    }
    if (policy.limit?.timing === 'concurrent') {
      const [d, result] = await Promise.all([decide(x), proceed(x)]);
      x.decision = d;
      return denied(x, d) ?? result;
    }
    x.decision = await decide(x);
    return denied(x, x.decision) ?? (await proceed(x));
  };

  return async (event, deps, requestId) => {
    const startedMs = performance.now();
    const resolution = resolve(event);
    let label = resolution.kind === 'route' ? resolution.route.operationId : resolution.kind === 'preflight' ? 'preflight' : 'error';
    const x: Exchange<D, P> = { event, deps, requestId, resolution, verified: undefined, decision: undefined, bucket: undefined };
    let out: HttpResult;
    try {
      const secret = policy.originSecret?.(deps);
      if (secret && !(await originAdmits(secret, header(event, ORIGIN_VERIFY_HEADER)))) {
        label = 'forbidden';
        countMetric(EVENT_METRICS.originRefused);
        // Never the header's value: a near miss would still be half a secret in the logs.
        logger.warn('request without the CloudFront origin header refused', { requestId, api: policy.name, sourceIp: event.requestContext?.http?.sourceIp });
        out = policy.problem({ kind: 'forbidden_origin' }, event);
      } else {
        out = policy.screen?.(event, resolution, deps) ?? (await answer(x));
      }
    } catch (err) {
      out = unexpected(err, event, deps, requestId);
    }
    // A new object, filled by assignment: an operation's headers may be shared (a cached answer's
    // are), and spreading three objects into one literal cost more than the rest of a cached read.
    const headers: Record<string, string> = Object.assign({}, out.headers);
    const { decision, bucket } = x;
    if (decision && bucket && policy.limit) Object.assign(headers, policy.limit.headers(decision, bucket.policy, deps));
    if (policy.headers) Object.assign(headers, policy.headers(event, deps));
    out.headers = headers;
    for (const o of observers) o.observe({ api: policy.name, requestId, event, route: label, status: out.statusCode, startedMs, decision });
    return out;
  };
}

/** One request's state as it goes through the steps of a pipeline. */
interface Exchange<D, P> {
  readonly event: HttpEvent;
  readonly deps: D;
  readonly requestId: string;
  readonly resolution: Resolution;
  /** The token's verification, started with the request when the API verifies tokens. */
  verified: Promise<Verified<P>> | undefined;
  decision: RateDecision | undefined;
  bucket: Bucket | undefined;
}

/**
 * What an operation sees: a class, so the lazily parsed query is a getter on the prototype instead
 * of a closure made per request. Spreading it (`{ ...ctx }`) copies its fields but not `query`:
 * a context built from it names `query` itself (`memory-api/api.ts`).
 */
class OperationContext<D, P> implements RequestContext<D, P> {
  private parsed: Map<string, string[]> | undefined;

  constructor(
    readonly event: HttpEvent,
    readonly deps: D,
    readonly requestId: string,
    readonly route: RouteDef,
    readonly params: Record<string, string>,
    readonly principal?: P,
  ) {}

  /** Parsed on first use: an answer from a response cache never reads it. */
  get query(): Map<string, string[]> {
    this.parsed ??= parseRawQuery(this.event.rawQueryString);
    return this.parsed;
  }
}

function describeError(err: unknown): unknown {
  return err instanceof Error ? { name: err.name, message: err.message, stack: err.stack } : String(err);
}

/**
 * Whether the logger writes at all, read once as the access log reads it (`request-log.ts`): the
 * level is set by the environment at start-up, and asking the logger reads the environment again
 * (measured: 4 µs of a cached read's CPU when asked per request).
 */
const LOGGING = logger.getLevelName() !== 'SILENT';

/**
 * The Lambda entry of an API: middy around its pipeline. The request id is API Gateway's, else
 * Lambda's; it is on every log line of the invocation (with the X-Ray trace id, which the logger
 * adds), and the invocation runs in an annotated X-Ray subsegment when tracing. Dependencies are
 * built once per instance by `getDeps`; a failed build is the policy's `starting` problem, and the
 * next request tries again. Metrics are published when the invocation ends.
 */
export function lambdaEntry<D, P>(policy: ApiPolicy<D, P>, getDeps: () => Promise<D>, pipeline: Pipeline<D> = createPipeline(policy)) {
  return middy<HttpEvent, HttpResult, Error, LambdaContext>().handler(async (event, context) => {
    const requestId = event.requestContext?.requestId ?? context?.awsRequestId ?? randomUUID();
    // One invocation at a time per Lambda instance, so a key on the shared logger belongs to this request.
    // Not when nothing is written (appending reads the environment: 3% of a cached read's CPU).
    if (LOGGING) logger.appendKeys({ requestId });
    try {
      return await inHandlerSegment(policy.name, async (segment) => {
        let deps: D;
        try {
          deps = await getDeps();
        } catch (err) {
          logger.error(`${policy.name} initialisation failed`, { requestId, err: err instanceof Error ? err.message : String(err) });
          segment.fail(err);
          const failed = policy.problem({ kind: 'starting' }, event);
          return { ...failed, headers: { ...failed.headers, ...policy.headers?.(event, undefined) } };
        }
        const out = await pipeline(event, deps, requestId);
        segment.annotate('route', event.routeKey ?? event.rawPath);
        segment.annotate('status', out.statusCode);
        return out;
      });
    } finally {
      if (LOGGING) logger.removeKeys(['requestId']);
      flushMetrics();
    }
  });
}

/** Operations from handlers written as `(ctx, deps)` (the context minus nothing, deps apart for readability). */
export function operationsOf<D, P, C = RequestContext<D, P>>(
  handlers: Readonly<Record<string, (ctx: C, deps: D) => Promise<HttpResult | HandlerResponse>>>,
  context: (ctx: RequestContext<D, P>) => C = (ctx) => ctx as unknown as C,
): Record<string, Operation<D, P>> {
  const out: Record<string, Operation<D, P>> = {};
  for (const [id, h] of Object.entries(handlers)) out[id] = (ctx) => h(context(ctx), ctx.deps);
  return out;
}

/** The context of an operation behind `auth: required`: the pipeline has verified its caller. */
export function withPrincipal<D, P>(ctx: RequestContext<D, P>): RequestContext<D, P> & { principal: P } {
  if (ctx.principal === undefined) throw new Error(`operation ${ctx.route.operationId} needs a verified caller`);
  return ctx as RequestContext<D, P> & { principal: P };
}
