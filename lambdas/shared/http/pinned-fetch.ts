import type { LookupAddress, LookupOptions } from 'node:dns';
import { lookup as dnsLookup } from 'node:dns/promises';
import * as http from 'node:http';
import * as https from 'node:https';
import { isIP } from 'node:net';
import { Readable } from 'node:stream';
import { privateAddress } from '../private-address';

/**
 * A fetch for URLs someone else chose (Client ID Metadata Documents, the icons and remote
 * endpoints in registry data): the host name is resolved once, the answer is checked, and the
 * connection goes to exactly the checked addresses. Checking with one lookup and then letting
 * `fetch` resolve again would let a host answer a public address to the check and an internal one
 * to the connect (DNS rebinding); the `lookup` hook of node:http closes that gap without a second
 * HTTP client library. A string or byte body at most, no redirects followed (the caller sees the
 * 3xx and decides), no connection reuse.
 */

/** The addresses a host name resolves to (the system resolver; tests inject one). */
export type HostResolver = (host: string) => Promise<string[]>;

export const systemResolver: HostResolver = async (host) => (await dnsLookup(host, { all: true, verbatim: true })).map((a) => a.address);

/** Why a host may not be connected to: it did not resolve, or one of its addresses is internal. */
export class AddressRefusedError extends Error {
  constructor(readonly why: 'unresolvable' | 'private') {
    super(why === 'private' ? 'the host resolves to a loopback or private address' : 'the host could not be resolved');
    this.name = 'AddressRefusedError';
  }
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;
export type LookupHook = (hostname: string, options: LookupOptions, callback: LookupCallback) => void;

/**
 * A `lookup` for node:net: resolves with `resolveHost`, refuses the host when any address is
 * internal (unless `allowPrivate`, for local development), and hands node:net the checked list.
 */
export function guardedLookup(resolveHost: HostResolver, allowPrivate: boolean): LookupHook {
  return (hostname, options, callback) => {
    const fail = (err: Error) => callback(err, '', 0);
    resolveHost(hostname).then(
      (addresses) => {
        if (addresses.length === 0) return fail(new AddressRefusedError('unresolvable'));
        if (!allowPrivate && addresses.some(privateAddress)) return fail(new AddressRefusedError('private'));
        const wanted = options.family === 4 || options.family === 6 ? options.family : undefined;
        const list = addresses
          .map((address) => ({ address, family: isIP(address) }))
          .filter((a) => a.family !== 0 && (wanted === undefined || a.family === wanted));
        if (list.length === 0) return fail(new AddressRefusedError('unresolvable'));
        // node:net asks for `all` when it races IPv4 and IPv6 (autoSelectFamily), a single address otherwise.
        if (options.all) callback(null, list);
        else callback(null, list[0].address, list[0].family);
      },
      () => fail(new AddressRefusedError('unresolvable')),
    );
  };
}

/** Statuses whose response has no body (the Response constructor refuses one). */
const NULL_BODY = new Set([101, 204, 205, 304]);

/** A `fetch`-shaped request over node:http(s) whose every connection resolves through `lookup`. */
export function pinnedFetch(lookup: LookupHook): (input: string, init?: RequestInit) => Promise<Response> {
  return (input, init) =>
    new Promise<Response>((resolve, reject) => {
      const url = new URL(input);
      const transport = url.protocol === 'https:' ? https : url.protocol === 'http:' ? http : undefined;
      if (!transport) return reject(new TypeError(`unsupported protocol ${url.protocol}`));
      const method = (init?.method ?? 'GET').toUpperCase();
      const body = init?.body ?? undefined;
      if (body !== undefined && typeof body !== 'string' && !(body instanceof Uint8Array)) {
        return reject(new TypeError('pinnedFetch sends a string or byte body only'));
      }
      const req = transport.request(
        url,
        { method, headers: Object.fromEntries(new Headers(init?.headers)), lookup, agent: false, ...(init?.signal && { signal: init.signal }) },
        (res) => {
          const status = res.statusCode ?? 0;
          if (status < 200 || status > 599) {
            res.destroy();
            return reject(new Error(`unexpected HTTP status ${status}`));
          }
          const headers = new Headers();
          for (const [name, value] of Object.entries(res.headers)) {
            for (const one of Array.isArray(value) ? value : value === undefined ? [] : [value]) headers.append(name, one);
          }
          const empty = NULL_BODY.has(status) || method === 'HEAD';
          if (empty) res.resume();
          const body = empty ? null : (Readable.toWeb(res) as ReadableStream<Uint8Array>);
          resolve(new Response(body, { status, statusText: res.statusMessage ?? '', headers }));
        },
      );
      req.on('error', reject);
      req.end(body);
    });
}
