/**
 * The crawler's outbound HTTP: bounded concurrency per host, per-request timeouts, a size cap on
 * bodies, retries with exponential backoff and jitter on 408/429/5xx and dropped connections
 * (honouring `Retry-After`), and a per-host circuit breaker so that an unreachable host (no
 * network, DNS failure, a dead service) fails fast after a few attempts instead of costing a
 * timeout per server.
 *
 * For URLs taken from registry data (icons, avatars, remotes: `untrusted`), no request may reach a
 * private, loopback or link-local address unless `allowPrivateHosts` is set (local fakes): a
 * published server.json must not point the crawler at internal endpoints. IP literals are refused
 * up front; a host name is resolved once and the connection pinned to the checked addresses
 * (`pinnedFetch`), so a name that resolves to 127.0.0.1, or answers differently to a second lookup,
 * gets nowhere; redirects are followed by hand, each hop checked the same way. The configured base
 * URLs (registry, GitHub, npm, PyPI) are the operator's and are not restricted.
 */

import { readCappedBody } from '../../shared/http/capped-body';
import { AddressRefusedError, guardedLookup, pinnedFetch, systemResolver, type HostResolver } from '../../shared/http/pinned-fetch';
import { privateAddress } from '../../shared/private-address';

export type HttpErrorKind = 'timeout' | 'network' | 'dns' | 'too_large' | 'circuit_open' | 'blocked_host' | 'bad_url';

export class HttpError extends Error {
  constructor(
    readonly kind: HttpErrorKind,
    message: string,
    readonly url: string,
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

export interface HttpClientOptions {
  timeoutMs: number;
  /** Retries after the first attempt. */
  retries: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** A Retry-After longer than this is not waited for: the response is returned as is. */
  maxRetryAfterMs: number;
  perHostConcurrency: number;
  /** Consecutive connection failures that open a host's breaker. */
  breakerThreshold: number;
  breakerCooldownMs: number;
  /** Default body cap. */
  maxBytes: number;
  userAgent: string;
  allowPrivateHosts: boolean;
  fetchImpl: typeof fetch;
  /** How untrusted host names are resolved before the pinned connection (tests inject one). */
  resolveHost: HostResolver;
  sleep: (ms: number) => Promise<void>;
  random: () => number;
  now: () => number;
}

export interface HttpRequestOptions {
  method?: 'GET' | 'POST' | 'HEAD';
  headers?: Record<string, string>;
  body?: string;
  timeoutMs?: number;
  maxBytes?: number;
  retries?: number;
  /** The URL comes from registry data: apply the private-address guard. */
  untrusted?: boolean;
}

export interface HttpResponse {
  status: number;
  headers: Headers;
  body: Uint8Array;
  url: string;
}

export interface HttpStats {
  requests: number;
  retries: number;
  byHost: Record<string, number>;
}

const RETRY_STATUS = new Set([408, 429, 500, 502, 503, 504]);
const DNS_CODES = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_NONAME']);
/**
 * Failures that say "this host cannot be reached" and feed the breaker. A reset of a reused
 * keep-alive connection (ECONNRESET, UND_ERR_SOCKET) says nothing about the host: it is retried
 * but not held against it.
 */
const UNREACHABLE_CODES = new Set([...DNS_CODES, 'ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'EHOSTDOWN', 'UND_ERR_CONNECT_TIMEOUT']);

const defaultSleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export const DEFAULT_HTTP_OPTIONS: HttpClientOptions = {
  timeoutMs: 10_000,
  retries: 3,
  baseDelayMs: 250,
  maxDelayMs: 8_000,
  maxRetryAfterMs: 60_000,
  perHostConcurrency: 4,
  breakerThreshold: 5,
  breakerCooldownMs: 60_000,
  maxBytes: 5 * 1024 * 1024,
  userAgent: 'mcp-catalog-crawler/0.1 (+https://github.com/modelcontextprotocol/registry)',
  allowPrivateHosts: false,
  fetchImpl: (input, init) => fetch(input, init),
  resolveHost: systemResolver,
  sleep: defaultSleep,
  random: Math.random,
  now: Date.now,
};

/** A counting semaphore per key. */
export class KeyedLimiter {
  private readonly active = new Map<string, number>();
  private readonly waiting = new Map<string, Array<() => void>>();

  constructor(private readonly limit: number) {}

  async run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    await this.acquire(key);
    try {
      return await fn();
    } finally {
      this.release(key);
    }
  }

  private acquire(key: string): Promise<void> {
    const n = this.active.get(key) ?? 0;
    if (n < this.limit) {
      this.active.set(key, n + 1);
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const q = this.waiting.get(key) ?? [];
      q.push(resolve);
      this.waiting.set(key, q);
    });
  }

  private release(key: string): void {
    const next = this.waiting.get(key)?.shift();
    if (next) {
      next(); // the slot passes straight to the next waiter
      return;
    }
    const n = (this.active.get(key) ?? 1) - 1;
    if (n <= 0) this.active.delete(key);
    else this.active.set(key, n);
  }
}

/** Retry-After as milliseconds (delta-seconds or an HTTP date), undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null, now: number): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  const v = value.trim();
  if (/^\d+$/.test(v)) return Number(v) * 1000;
  const t = Date.parse(v);
  return Number.isNaN(t) ? undefined : Math.max(0, t - now);
}

function isPrivateAddress(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h.endsWith('.localhost') || privateAddress(h);
}

function errorCode(err: unknown): string | undefined {
  for (let e: unknown = err, depth = 0; e !== null && typeof e === 'object' && depth < 4; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

function isTimeout(err: unknown): boolean {
  const name = (err as { name?: unknown } | null)?.name;
  return name === 'TimeoutError' || name === 'AbortError' || errorCode(err) === 'UND_ERR_CONNECT_TIMEOUT';
}

export class HttpClient {
  readonly options: HttpClientOptions;
  private readonly limiter: KeyedLimiter;
  private readonly failures = new Map<string, number>();
  private readonly openUntil = new Map<string, number>();
  private readonly counters: HttpStats = { requests: 0, retries: 0, byHost: {} };
  private readonly pinned: (input: string, init?: RequestInit) => Promise<Response>;

  constructor(options: Partial<HttpClientOptions> = {}) {
    this.options = { ...DEFAULT_HTTP_OPTIONS, ...options };
    this.limiter = new KeyedLimiter(this.options.perHostConcurrency);
    this.pinned = pinnedFetch(guardedLookup(this.options.resolveHost, this.options.allowPrivateHosts));
  }

  /**
   * A `fetch` for a URL from registry data (the MCP checks of remotes): every hop's address
   * checked and pinned, redirects followed by hand (at most 5), each hop through `checkUrl`.
   */
  readonly untrustedFetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    let url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    for (let hop = 0; ; hop++) {
      this.checkUrl(url, true);
      let res: Response;
      try {
        res = await this.pinned(url, { ...init, redirect: 'manual' });
      } catch (err) {
        if (err instanceof AddressRefusedError) {
          throw new HttpError(err.why === 'private' ? 'blocked_host' : 'dns', `${new URL(url).hostname}: ${err.message}`, url);
        }
        throw err;
      }
      const location = res.headers.get('location');
      if (res.status < 300 || res.status > 399 || location === null || hop === 5) return res;
      await res.body?.cancel();
      url = new URL(location, url).href;
      // A 303 (and a 301/302 after POST, as browsers do) turns into a GET without the body.
      if (res.status === 303 || ((res.status === 301 || res.status === 302) && init?.method === 'POST')) init = { ...init, method: 'GET', body: undefined };
    }
  };

  get stats(): HttpStats {
    return { requests: this.counters.requests, retries: this.counters.retries, byHost: { ...this.counters.byHost } };
  }

  /** Runs `fn` within the host's concurrency budget (for clients that do their own I/O, e.g. MCP). */
  withHost<T>(url: string, fn: () => Promise<T>): Promise<T> {
    return this.limiter.run(this.hostOf(url), fn);
  }

  /** Throws unless the URL may be fetched (scheme, open breaker, private-address guard if untrusted). */
  checkUrl(url: string, untrusted = false): URL {
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      throw new HttpError('bad_url', `not a URL: ${url}`, url);
    }
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new HttpError('bad_url', `unsupported scheme ${u.protocol}`, url);
    if (untrusted && !this.options.allowPrivateHosts && isPrivateAddress(u.hostname)) {
      throw new HttpError('blocked_host', `refusing private address ${u.hostname}`, url);
    }
    const until = this.openUntil.get(u.host);
    if (until !== undefined && until > this.options.now()) {
      throw new HttpError('circuit_open', `${u.host} is unreachable (failing fast after repeated connection failures)`, url);
    }
    return u;
  }

  /** Records a connection-level outcome for the host's breaker (also used by the MCP checker). */
  noteConnection(url: string, ok: boolean): void {
    const host = this.hostOf(url);
    if (ok) {
      this.failures.delete(host);
      this.openUntil.delete(host);
      return;
    }
    const n = (this.failures.get(host) ?? 0) + 1;
    this.failures.set(host, n);
    if (n >= this.options.breakerThreshold) this.openUntil.set(host, this.options.now() + this.options.breakerCooldownMs);
  }

  /**
   * Performs the request with retries. Any HTTP status is returned (after retries for the
   * retryable ones); connection problems, timeouts and oversize bodies throw `HttpError`.
   */
  async request(url: string, o: HttpRequestOptions = {}): Promise<HttpResponse> {
    const retries = o.retries ?? this.options.retries;
    for (let attempt = 0; ; attempt++) {
      this.checkUrl(url, o.untrusted === true);
      let res: HttpResponse;
      try {
        res = await this.limiter.run(this.hostOf(url), () => this.once(url, o));
      } catch (err) {
        if (!(err instanceof HttpError)) throw err;
        const retryable = err.kind === 'timeout' || err.kind === 'network';
        if (!retryable || attempt >= retries) throw err;
        await this.backoff(attempt, undefined);
        continue;
      }
      if (!RETRY_STATUS.has(res.status) || attempt >= retries) return res;
      const retryAfter = parseRetryAfter(res.headers.get('retry-after'), this.options.now());
      if (retryAfter !== undefined && retryAfter > this.options.maxRetryAfterMs) return res;
      await this.backoff(attempt, retryAfter);
    }
  }

  private async backoff(attempt: number, retryAfterMs: number | undefined): Promise<void> {
    this.counters.retries++;
    const ceiling = Math.min(this.options.maxDelayMs, this.options.baseDelayMs * 2 ** attempt);
    // "Equal jitter": at least half the exponential step, so retries never bunch at zero.
    const jittered = ceiling / 2 + this.options.random() * (ceiling / 2);
    await this.options.sleep(Math.max(jittered, retryAfterMs ?? 0));
  }

  private hostOf(url: string): string {
    try {
      return new URL(url).host;
    } catch {
      return url;
    }
  }

  private async once(url: string, o: HttpRequestOptions): Promise<HttpResponse> {
    const host = this.hostOf(url);
    this.counters.requests++;
    this.counters.byHost[host] = (this.counters.byHost[host] ?? 0) + 1;
    const maxBytes = o.maxBytes ?? this.options.maxBytes;
    const signal = AbortSignal.timeout(o.timeoutMs ?? this.options.timeoutMs);
    let res: Response;
    try {
      const send = o.untrusted === true ? this.untrustedFetch : this.options.fetchImpl;
      res = await send(url, {
        method: o.method ?? 'GET',
        headers: { 'user-agent': this.options.userAgent, ...o.headers },
        ...(o.body !== undefined && { body: o.body }),
        signal,
        redirect: 'follow',
      });
    } catch (err) {
      if (err instanceof HttpError) throw err;
      const code = errorCode(err);
      if (isTimeout(err) || (code !== undefined && UNREACHABLE_CODES.has(code))) this.noteConnection(url, false);
      if (isTimeout(err)) throw new HttpError('timeout', `timed out: ${url}`, url);
      if (code !== undefined && DNS_CODES.has(code)) throw new HttpError('dns', `cannot resolve ${host} (${code})`, url);
      throw new HttpError('network', `connection to ${host} failed${code ? ` (${code})` : ''}`, url);
    }
    this.noteConnection(url, true);
    try {
      const body = await readCappedBody(res, maxBytes);
      if (!body) {
        const declared = res.headers.get('content-length');
        throw new HttpError('too_large', `${url} is over the ${maxBytes}-byte cap${declared !== null ? ` (Content-Length ${declared})` : ''}`, url);
      }
      return { status: res.status, headers: res.headers, body, url: res.url || url };
    } catch (err) {
      if (err instanceof HttpError) throw err;
      if (isTimeout(err)) throw new HttpError('timeout', `timed out reading ${url}`, url);
      throw new HttpError('network', `reading ${url} failed: ${err instanceof Error ? err.message : String(err)}`, url);
    }
  }
}

/** The body as text (UTF-8, BOM dropped). */
export function bodyText(res: HttpResponse): string {
  return new TextDecoder('utf-8', { ignoreBOM: false }).decode(res.body);
}

/** The body as JSON (`unknown`: callers narrow it). */
export function bodyJson(res: HttpResponse): unknown {
  return JSON.parse(bodyText(res));
}

/** A short, loggable description of any failure. */
export function describeError(err: unknown): string {
  if (err instanceof HttpError) return `${err.kind}: ${err.message}`;
  return err instanceof Error ? err.message : String(err);
}
