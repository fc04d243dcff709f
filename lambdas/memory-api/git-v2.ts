import { MAIN_REF } from '../memory';
import { header, type HandlerResponse } from '../shared/http/types';
import type { MemoryCtx } from './context';
import type { MemoryApiDeps } from './deps';
import { ApiError } from './errors';
import { AGENT, MAX_HAVES, MAX_WANTS, NO_SHALLOW, packAnswer, packets, repoName, result, SHA, UPLOAD_PACK } from './git-wire';
import { FLUSH, pkt, text, type Packet } from './pkt-line';

/**
 * git's protocol v2 for fetches (gitprotocol-v2): what git 2.26 and later ask for by default. Two
 * commands: `ls-refs` (with `unborn`, so the clone of an empty memory starts on `main` rather than
 * on the client's default branch) and `fetch` (acknowledgments, then the packfile section, always
 * on side band 1). The negotiation is the same as v0's (`git.ts`): the commits of the history the
 * client shares are acknowledged and the first one makes the server ready to cut the pack.
 */
const DELIM = Buffer.from('0001', 'latin1');

export function wantsV2(ctx: MemoryCtx): boolean {
  return /(^|:)version=2(:|$)/.test(header(ctx.event, 'git-protocol') ?? '');
}

export function gitInfoRefsV2(): HandlerResponse {
  const caps = ['version 2', AGENT, 'ls-refs=unborn', 'fetch', 'object-format=sha1'];
  return result(UPLOAD_PACK, 'advertisement', [pkt(`# service=${UPLOAD_PACK}\n`), FLUSH, ...caps.map((c) => pkt(`${c}\n`)), FLUSH]);
}

export async function gitUploadPackV2(ctx: MemoryCtx, deps: MemoryApiDeps, body: Buffer): Promise<HandlerResponse> {
  const all = packets(body).packets;
  const command = all[0]?.kind === 'data' ? text(all[0]) : '';
  // Capabilities follow the command up to the delimiter; the arguments follow it.
  const delim = all.findIndex((p) => p.kind === 'delim');
  const args = (delim < 0 ? [] : all.slice(delim + 1)).filter((p): p is Extract<Packet, { kind: 'data' }> => p.kind === 'data').map(text);
  if (command === 'command=ls-refs') return lsRefs(ctx, deps, args);
  if (command === 'command=fetch') return fetch(ctx, deps, args);
  throw new ApiError('BAD_REQUEST', `unknown protocol v2 command: ${command.slice(0, 80) || '(none)'}`);
}

async function lsRefs(ctx: MemoryCtx, deps: MemoryApiDeps, args: string[]): Promise<HandlerResponse> {
  const { head } = await deps.service.gitHead(ctx.caller, repoName(ctx));
  const prefixes = args.filter((a) => a.startsWith('ref-prefix ')).map((a) => a.slice('ref-prefix '.length));
  const wanted = (ref: string) => prefixes.length === 0 || prefixes.some((p) => ref.startsWith(p));
  const symrefs = args.includes('symrefs');
  const lines: Buffer[] = [];
  if (head) {
    if (wanted('HEAD')) lines.push(pkt(`${head} HEAD${symrefs ? ` symref-target:${MAIN_REF}` : ''}\n`));
    if (wanted(MAIN_REF)) lines.push(pkt(`${head} ${MAIN_REF}\n`));
  } else if (args.includes('unborn') && wanted('HEAD')) {
    lines.push(pkt(`unborn HEAD${symrefs ? ` symref-target:${MAIN_REF}` : ''}\n`));
  }
  return result(UPLOAD_PACK, 'result', [...lines, FLUSH]);
}

async function fetch(ctx: MemoryCtx, deps: MemoryApiDeps, args: string[]): Promise<HandlerResponse> {
  const name = repoName(ctx);
  const wants: string[] = [];
  const haves: string[] = [];
  let done = false;
  for (const a of args) {
    const [verb, arg] = a.split(' ');
    if (verb === 'want' && SHA.test(arg ?? '')) wants.push(arg);
    else if (verb === 'have' && SHA.test(arg ?? '')) haves.push(arg);
    else if (a === 'done') done = true;
    else if (verb === 'shallow' || verb.startsWith('deepen') || verb === 'filter' || verb === 'want-ref') {
      return result(UPLOAD_PACK, 'result', [pkt(`ERR ${NO_SHALLOW}\n`)]);
    }
  }
  if (wants.length === 0) return result(UPLOAD_PACK, 'result', [FLUSH]);
  if (wants.length > MAX_WANTS) return result(UPLOAD_PACK, 'result', [pkt(`ERR upload-pack: at most ${MAX_WANTS} wants per request\n`)]);
  haves.splice(MAX_HAVES);
  const common = haves.length > 0 ? await deps.service.gitCommon(ctx.caller, name, haves) : [];
  const pack = { band: 65515, progress: !args.includes('no-progress'), trailer: [FLUSH] };
  if (done) return packAnswer(ctx, deps, name, wants, common, { ...pack, head: [pkt('packfile\n')] });
  const acks = [pkt('acknowledgments\n'), ...(common.length === 0 ? [pkt('NAK\n')] : common.map((c) => pkt(`ACK ${c}\n`)))];
  // No shared commit yet: the client sends more haves in its next request.
  if (common.length === 0) return result(UPLOAD_PACK, 'result', [...acks, FLUSH]);
  // A shared commit is enough to cut the pack: "ready", and the packfile in the same answer.
  return packAnswer(ctx, deps, name, wants, common, { ...pack, head: [...acks, pkt('ready\n'), DELIM, pkt('packfile\n')] });
}
