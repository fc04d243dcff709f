import { createHash } from 'node:crypto';
import { clientIp } from '../shared/http/client-ip';
import { createPipeline, lambdaEntry, type ApiPolicy, type Operation, type Pipeline, type Problem } from '../shared/http/pipeline';
import { ValidationError } from '../shared/http/query';
import { toResult } from '../shared/http/respond';
import { header, type HttpResult } from '../shared/http/types';
import type { SiteConfig } from './config';
import type { SiteDeps } from './deps';
import { SITE_ENDPOINTS } from './endpoints';
import { SiteError } from './errors';
import { errorPage } from './render/pages';
import { SITE_ROUTES } from './routes';

/**
 * The site (the pages people read) on the one request pipeline: its route table (`routes.ts`), its
 * pages (`endpoints/`) and this policy. Its envelope is HTML: every problem and error is a page
 * with the status and the catalog's stable code. Pages are the same for every reader, so they
 * carry no per-caller headers and CloudFront may cache them; a strict Content-Security-Policy (no
 * inline script or style) and the usual hardening headers go on every response.
 */

/** Immutable or tiny answers that cost nothing: not worth a limiter round trip. */
const UNLIMITED = new Set(['asset', 'oauthClientMetadata', 'robots']);

/**
 * The CSP: scripts, styles, fetches and forms only from the site itself, images also from https
 * (README images and badges live on other hosts), nothing framed, no `<base>` rewrite, no plugins.
 * JSON-LD blocks are data, not script, so they need no exception.
 */
export function contentSecurityPolicy(config: Pick<SiteConfig, 'publicUrl'>): string {
  const https = config.publicUrl.startsWith('https://');
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' https:",
    "connect-src 'self'",
    "form-action 'self'",
    "base-uri 'none'",
    "frame-ancestors 'none'",
    "manifest-src 'self'",
    ...(https ? ['upgrade-insecure-requests'] : []),
  ].join('; ');
}

export function securityHeaders(config: Pick<SiteConfig, 'publicUrl'>): Record<string, string> {
  return {
    'content-security-policy': contentSecurityPolicy(config),
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'strict-origin-when-cross-origin',
    'x-frame-options': 'DENY',
    'cross-origin-opener-policy': 'same-origin',
    'permissions-policy': 'camera=(), microphone=(), geolocation=(), payment=(), usb=()',
    ...(config.publicUrl.startsWith('https://') && { 'strict-transport-security': 'max-age=31536000; includeSubDomains' }),
  };
}

/** Errors a reader can cause (a bad link, a removed server) are the same for everyone a minute later; outages are not cached. */
function errorCacheControl(status: number): string {
  return status === 400 || status === 404 || status === 405 ? 'public, max-age=60, s-maxage=60' : 'no-store';
}

export function errorResult(config: SiteConfig, err: SiteError, status = err.status): HttpResult {
  return {
    statusCode: status,
    headers: { 'content-type': 'text/html; charset=utf-8', 'cache-control': errorCacheControl(status), ...err.headers },
    body: errorPage(config, err),
  };
}

function siteProblem(config: SiteConfig, problem: Problem): HttpResult {
  switch (problem.kind) {
    case 'not_found':
      return errorResult(config, new SiteError('NOT_FOUND', 'Page not found', 'There is no page at this address.'));
    case 'method_not_allowed':
      return errorResult(
        config,
        new SiteError(
          'METHOD_NOT_ALLOWED',
          'Method not allowed',
          `${problem.method} is not allowed here; pages are read with ${problem.allowed.join(', ')}.`,
          [],
          {
            allow: problem.allowed.join(', '),
          },
        ),
      );
    case 'rate_limited':
      return errorResult(
        config,
        new SiteError('RATE_LIMITED', 'Too many requests', `Slow down a little: try again in ${problem.retryAfterSeconds} seconds.`, [], {
          'retry-after': String(problem.retryAfterSeconds),
        }),
      );
    case 'too_large':
      return errorResult(
        config,
        new SiteError('INVALID_QUERY', 'Request too large', `Requests to these pages carry no body; this one was over ${problem.maxBytes} bytes.`),
        413,
      );
    case 'starting':
      return errorResult(
        config,
        new SiteError('UNAVAILABLE', 'Starting up', 'The catalog is starting or a dependency is unavailable; try again in a moment.', [], {
          'retry-after': '1',
        }),
      );
    case 'forbidden_origin':
      return errorResult(config, new SiteError('FORBIDDEN', 'Forbidden', 'These pages are served through the public URL only.'));
    case 'internal':
      return errorResult(config, new SiteError('INTERNAL_ERROR', 'Something went wrong', 'The page could not be shown. Try again in a moment.'));
  }
}

function siteError(config: SiteConfig, err: unknown): HttpResult | undefined {
  if (err instanceof SiteError) return errorResult(config, err);
  if (err instanceof ValidationError)
    return errorResult(config, new SiteError('INVALID_QUERY', 'Invalid address', 'Some parameters of this address are not valid.', err.details));
  return undefined;
}

/**
 * A weak ETag on every 200, and 304 when the browser (or CloudFront revalidating) already holds
 * that body: a page that did not change between crawls costs no transfer.
 */
function conditional(op: Operation<SiteDeps>): Operation<SiteDeps> {
  return async (ctx) => {
    const res = await op(ctx);
    const result = 'statusCode' in res ? res : toResult(res);
    if (result.statusCode !== 200 || typeof result.body !== 'string') return result;
    const etag = `W/"${createHash('sha256').update(result.body).digest('base64url').slice(0, 22)}"`;
    result.headers.etag = etag;
    const inm = header(ctx.event, 'if-none-match');
    if (inm?.split(',').some((t) => t.trim() === etag || t.trim() === '*')) {
      return { statusCode: 304, headers: { etag, 'cache-control': result.headers['cache-control'] ?? 'no-cache' }, body: '' };
    }
    return result;
  };
}

const OPERATIONS: Record<string, Operation<SiteDeps>> = Object.fromEntries(Object.entries(SITE_ENDPOINTS).map(([id, op]) => [id, conditional(op)]));

/** The site's policy for the shared pipeline; the configuration words its pages (site name, canonical URLs). */
export function sitePolicy(config: SiteConfig): ApiPolicy<SiteDeps> {
  return {
    name: 'site',
    fn: 'site',
    routes: SITE_ROUTES,
    originSecret: (deps) => deps.originSecret,
    operations: OPERATIONS,
    limit: {
      limiter: (deps) => deps.limiter,
      bucket: ({ event, deps, resolution }) => {
        if (resolution.kind === 'route' && UNLIMITED.has(resolution.route.operationId)) return undefined;
        const { rate, burst } = deps.config.rate;
        return { key: `ip:${clientIp(event, deps.originSecret())}`, policy: { name: 'site', ratePerSecond: rate, burst } };
      },
      // Pages only read: rendering runs while the limiter decides, and a denial replaces the page.
      timing: 'concurrent',
      // No per-caller headers: pages are cached at the edge and shared between readers.
      headers: () => ({}),
    },
    // Pages are not a cross-origin API: a preflight learns the verbs and nothing more (no CORS headers).
    preflight: (allowed) => ({ statusCode: 204, headers: { allow: [...allowed, 'OPTIONS'].join(', ') }, body: '' }),
    problem: (problem) => siteProblem(config, problem),
    // Anything else is unexpected: the pipeline logs it and answers the `internal` problem.
    error: (err) => siteError(config, err),
    headers: () => securityHeaders(config),
  };
}

/**
 * HEAD is GET without the body (RFC 9110 §9.3.2), so link checkers and crawlers probing a page get
 * its status and headers. The route table names GET only; a HEAD request is answered as its GET.
 */
function withHead(pipeline: Pipeline<SiteDeps>): Pipeline<SiteDeps> {
  return async (event, deps, requestId) => {
    if (event.requestContext.http.method.toUpperCase() !== 'HEAD') return pipeline(event, deps, requestId);
    const asGet = {
      ...event,
      routeKey: '$default',
      requestContext: { ...event.requestContext, routeKey: '$default', http: { ...event.requestContext.http, method: 'GET' } },
    };
    const res = await pipeline(asGet, deps, requestId);
    return { ...res, body: '', isBase64Encoded: false };
  };
}

export function createSiteDispatcher(config: SiteConfig): Pipeline<SiteDeps> {
  return withHead(createPipeline(sitePolicy(config)));
}

/** The Lambda entry (and the local server's function `site`). */
export function createSiteHandler(config: SiteConfig, getDeps: () => Promise<SiteDeps>) {
  return lambdaEntry(sitePolicy(config), getDeps, createSiteDispatcher(config));
}
