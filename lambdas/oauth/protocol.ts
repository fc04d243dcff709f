import { parseRawQuery } from '../shared/http/query';
import { header, type HttpEvent, type HttpResult } from '../shared/http/types';

/** Request and response plumbing of the front: form bodies, cookies, OAuth error JSON, HTML, redirects. */

export class BodyTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`body exceeds ${limit} bytes`);
    this.name = 'BodyTooLargeError';
  }
}

/** The raw body as text (API Gateway base64-encodes bodies it does not consider text). */
export function bodyText(event: HttpEvent, maxBytes: number): string {
  if (event.body === undefined || event.body === '') return '';
  const buf = event.isBase64Encoded ? Buffer.from(event.body, 'base64') : Buffer.from(event.body, 'utf8');
  if (buf.length > maxBytes) throw new BodyTooLargeError(maxBytes);
  return buf.toString('utf8');
}

/**
 * Parameters of a query string or an `application/x-www-form-urlencoded` body. RFC 6749 §3.1:
 * a parameter sent twice is an error, so values stay lists until `single` takes one.
 */
export type Params = Map<string, string[]>;

export function queryParams(event: HttpEvent): Params {
  return parseRawQuery(event.rawQueryString);
}

export function formParams(event: HttpEvent, maxBytes: number): Params {
  return parseRawQuery(bodyText(event, maxBytes));
}

export function isForm(event: HttpEvent): boolean {
  return /^application\/x-www-form-urlencoded\s*(;|$)/i.test(header(event, 'content-type') ?? '');
}

export type Single = { ok: true; value?: string } | { ok: false; duplicate: string };

/** The one value of `name` (empty counts as absent), or which parameter was repeated. */
export function single(params: Params, name: string): Single {
  const values = params.get(name);
  if (!values) return { ok: true };
  if (values.length > 1) return { ok: false, duplicate: name };
  return { ok: true, value: values[0] === '' ? undefined : values[0] };
}

/** Several single-valued parameters at once; the first repeated one wins the error. */
export function singles<K extends string>(
  params: Params,
  names: readonly K[],
): { ok: true; values: Partial<Record<K, string>> } | { ok: false; duplicate: string } {
  const values: Partial<Record<K, string>> = {};
  for (const n of names) {
    const s = single(params, n);
    if (!s.ok) return s;
    if (s.value !== undefined) values[n] = s.value;
  }
  return { ok: true, values };
}

export function readCookie(event: HttpEvent, name: string): string | undefined {
  const pairs = event.cookies ?? (header(event, 'cookie') ?? '').split(/;\s*/);
  for (const p of pairs) {
    const eq = p.indexOf('=');
    if (eq > 0 && p.slice(0, eq).trim() === name) return p.slice(eq + 1).trim();
  }
  return undefined;
}

const NO_STORE = { 'cache-control': 'no-store', pragma: 'no-cache' };

/** Open CORS on the endpoints browser-based MCP clients fetch (no cookies, no credentials). */
export const CORS_HEADERS: Record<string, string> = {
  'access-control-allow-origin': '*',
  'access-control-expose-headers': 'WWW-Authenticate, Retry-After',
};

export function preflight(allowed: string[]): HttpResult {
  return {
    statusCode: 204,
    headers: {
      ...CORS_HEADERS,
      'access-control-allow-methods': [...allowed, 'OPTIONS'].join(', '),
      // The MCP SDK sends MCP-Protocol-Version on its discovery requests.
      'access-control-allow-headers': 'Authorization, Content-Type, MCP-Protocol-Version',
      'access-control-max-age': '86400',
    },
    body: '',
  };
}

export function jsonResult(status: number, body: unknown, headers: Record<string, string> = {}): HttpResult {
  return { statusCode: status, headers: { 'content-type': 'application/json; charset=utf-8', ...NO_STORE, ...headers }, body: JSON.stringify(body) };
}

/** RFC 6749 §5.2 / RFC 7591 §3.2.2 / RFC 7009 error body. */
export function oauthError(status: number, error: string, description: string, headers: Record<string, string> = {}): HttpResult {
  return jsonResult(status, { error, error_description: description }, headers);
}

/** Pages may not be framed (clickjacking of the consent), cached, or leak the URL (it holds `state`). */
const PAGE_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  ...NO_STORE,
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  // No form-action: browsers apply it to the redirect after the consent POST, which leaves for the client.
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'",
};

export function htmlResult(status: number, html: string, cookies?: string[]): HttpResult {
  return { statusCode: status, headers: { ...PAGE_HEADERS }, body: html, ...(cookies?.length && { cookies }) };
}

export function redirectResult(location: string, cookies?: string[]): HttpResult {
  return { statusCode: 302, headers: { location, ...NO_STORE, 'referrer-policy': 'no-referrer' }, body: '', ...(cookies?.length && { cookies }) };
}

/** `base` with `params` appended to its query (RFC 6749 §4.1.2: keep the redirect URI's own query). */
export function withQuery(base: string, params: Record<string, string | undefined>): string {
  const u = new URL(base);
  for (const [k, v] of Object.entries(params)) if (v !== undefined) u.searchParams.append(k, v);
  return u.toString();
}
