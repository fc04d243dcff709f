import { gunzipSync } from 'node:zlib';
import { MemoryError } from '../memory';
import { header, type HandlerResponse } from '../shared/http/types';
import { bodyBytes } from './body';
import type { MemoryCtx } from './context';
import type { MemoryApiDeps } from './deps';
import { ApiError } from './errors';
import { pkt, PktError, readPackets, sideband, type Packet } from './pkt-line';

/** What both protocol versions of the git remote share: bodies, framing, answers, the pack. */
export const UPLOAD_PACK = 'git-upload-pack';
export const RECEIVE_PACK = 'git-receive-pack';
export const AGENT = 'agent=memory-git/1';
export const SHA = /^[0-9a-f]{40}$/;
/** A memory has one branch: a client wants one commit; a stateless round re-sends its common haves and at most a few hundred new ones. */
export const MAX_WANTS = 64;
export const MAX_HAVES = 512;
export const NO_SHALLOW = 'shallow and partial clones are not supported; clone the whole memory';

/** git's own HTTP server sends these, so that no proxy caches an advertisement or a pack. */
const NO_CACHE = { 'cache-control': 'no-cache, max-age=0, must-revalidate', pragma: 'no-cache', expires: 'Fri, 01 Jan 1980 00:00:00 GMT' };

/** The memory a git URL names: `work.git` or `work`. */
export function repoName(ctx: MemoryCtx): string {
  const raw = ctx.params.memory ?? '';
  return raw.endsWith('.git') ? raw.slice(0, -4) : raw;
}

/** Which service `info/refs` is asked for; the dumb protocol (no `service`) is not served. */
export function serviceOf(query: Map<string, string[]>): typeof UPLOAD_PACK | typeof RECEIVE_PACK {
  const s = query.get('service');
  if (s?.length === 1 && (s[0] === UPLOAD_PACK || s[0] === RECEIVE_PACK)) return s[0];
  throw new ApiError('BAD_REQUEST', 'only git smart HTTP is served: info/refs needs ?service=git-upload-pack or ?service=git-receive-pack');
}

export const result = (service: string, kind: 'advertisement' | 'result', parts: Buffer[]): HandlerResponse => ({
  kind: 'binary',
  body: Buffer.concat(parts),
  contentType: `application/x-${service}-${kind}`,
  headers: NO_CACHE,
});

/** The request body as bytes: at most `max`, inflated when git sent it gzipped (it does for long negotiations). */
export function requestBody(ctx: MemoryCtx, max: number): Buffer {
  const raw = bodyBytes(ctx.event, max);
  if ((header(ctx.event, 'content-encoding') ?? '').trim().toLowerCase() !== 'gzip') return raw;
  try {
    return gunzipSync(raw, { maxOutputLength: max });
  } catch {
    throw new ApiError('BAD_REQUEST', `the gzipped request body is corrupt or inflates past ${max} bytes`);
  }
}

/** The first `bytes` of a request body (however large it is), without decoding the rest. */
export function bodyHead(event: MemoryCtx['event'], bytes: number): Buffer {
  const raw = event.body ?? '';
  return event.isBase64Encoded ? Buffer.from(raw.slice(0, Math.ceil(bytes / 3) * 4), 'base64') : Buffer.from(raw.slice(0, bytes), 'utf8');
}

export function packets(body: Buffer, stop?: (p: Packet) => boolean): { packets: Packet[]; offset: number } {
  try {
    return readPackets(body, stop);
  } catch (err) {
    if (err instanceof PktError) throw new ApiError('BAD_REQUEST', `malformed git request: ${err.message}`);
    throw err;
  }
}

/** The side-band packet size a client asked for (65515 with side-band-64k, 995 with side-band, 0 without). */
export function bandSize(caps: ReadonlySet<string>): number {
  return caps.has('side-band-64k') ? 65515 : caps.has('side-band') ? 995 : 0;
}

/**
 * The pack of a clone or fetch, as side-band packets (or raw, without side band) after `head` (the
 * NAK/ACK of v0, the section header of v2); an `ERR` line for a want outside the history, and, for
 * a pack larger than this endpoint may answer, a fatal message on band 3 saying where to clone.
 */
export async function packAnswer(
  ctx: MemoryCtx,
  deps: MemoryApiDeps,
  name: string,
  wants: readonly string[],
  common: readonly string[],
  opts: { head: Buffer[]; band: number; progress: boolean; trailer: Buffer[] },
): Promise<HandlerResponse> {
  let packed: Awaited<ReturnType<MemoryApiDeps['service']['gitPack']>>;
  try {
    packed = await deps.service.gitPack(ctx.caller, name, wants, common);
  } catch (err) {
    if (err instanceof MemoryError && err.reason === 'invalid_rev') return result(UPLOAD_PACK, 'result', [pkt(`ERR upload-pack: ${err.message}\n`)]);
    throw err;
  }
  const { head, band } = opts;
  if (packed.pack.length > deps.config.gitMaxResponseBytes) {
    const why = `memory "${name}" packs into ${packed.pack.length} bytes, more than this endpoint answers (${deps.config.gitMaxResponseBytes}); clone the <PUBLIC_URL>/v1/memories/${name}.git URL, which streams\n`;
    return result(UPLOAD_PACK, 'result', [...head, ...(band ? sideband(3, Buffer.from(why), band) : [pkt(`ERR ${why}`)])]);
  }
  const progress = band && opts.progress ? sideband(2, Buffer.from(`memory: ${packed.commits} commits, ${packed.objects} objects\n`), band) : [];
  return result(UPLOAD_PACK, 'result', [...head, ...progress, ...sideband(1, packed.pack, band), ...opts.trailer]);
}
