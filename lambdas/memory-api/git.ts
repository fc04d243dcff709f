import { MAIN_REF, type PushCommand } from '../memory';
import type { MemoryRouteHandler } from './context';
import { ApiError } from './errors';
import { gitInfoRefsV2, gitUploadPackV2, wantsV2 } from './git-v2';
import {
  AGENT,
  bandSize,
  bodyHead,
  MAX_HAVES,
  MAX_WANTS,
  NO_SHALLOW,
  packAnswer,
  packets,
  RECEIVE_PACK,
  repoName,
  requestBody,
  result,
  serviceOf,
  SHA,
  UPLOAD_PACK,
} from './git-wire';
import { FLUSH, pkt, sideband, text } from './pkt-line';

/**
 * Each memory as a git remote, git's smart HTTP protocol (stateless RPC: every POST stands alone,
 * so any instance answers any request; fetches in v0 here and in v2 in `git-v2.ts`, pushes in v0): `GET …/info/refs?service=…` advertises the
 * head, `POST …/git-upload-pack` negotiates and sends the pack of a clone or fetch, `POST
 * …/git-receive-pack` takes a push. The repository URL is `/v1/memories/<name>.git` (the `.git` is
 * optional). Everything git-specific about HTTP is here; what a push may land and what a fetch sends
 * is the memory core's (`push.ts`, `fetch.ts`).
 */
const ZERO = '0'.repeat(40);
const UPLOAD_CAPS = `multi_ack_detailed side-band-64k side-band thin-pack ofs-delta no-progress allow-reachable-sha1-in-want symref=HEAD:${MAIN_REF} object-format=sha1 ${AGENT}`;
const RECEIVE_CAPS = `report-status side-band-64k quiet ofs-delta object-format=sha1 ${AGENT}`;

export { repoName, serviceOf } from './git-wire';

export const gitInfoRefs: MemoryRouteHandler = async (ctx, deps) => {
  const service = serviceOf(ctx.query);
  // A client that asks for protocol v2 (git 2.26 and later by default) gets it for fetches; pushes are v0 in every git.
  // The memory is looked up either way, so that a missing grant or memory is said here, where git shows it.
  const { head } = await deps.service.gitHead(ctx.caller, repoName(ctx));
  if (service === UPLOAD_PACK && wantsV2(ctx)) return gitInfoRefsV2();
  const caps = service === UPLOAD_PACK ? UPLOAD_CAPS : RECEIVE_CAPS;
  const refs: Buffer[] = [];
  if (!head) refs.push(pkt(`${ZERO} capabilities^{}\0${caps}\n`));
  else if (service === UPLOAD_PACK) refs.push(pkt(`${head} HEAD\0${caps}\n`), pkt(`${head} ${MAIN_REF}\n`));
  else refs.push(pkt(`${head} ${MAIN_REF}\0${caps}\n`));
  return result(service, 'advertisement', [pkt(`# service=${service}\n`), FLUSH, ...refs, FLUSH]);
};

export const gitUploadPack: MemoryRouteHandler = async (ctx, deps) => {
  const body = requestBody(ctx, deps.config.gitMaxRequestBytes);
  if (wantsV2(ctx)) return gitUploadPackV2(ctx, deps, body);
  const name = repoName(ctx);
  const wants: string[] = [];
  const haves: string[] = [];
  const caps = new Set<string>();
  let done = false;
  for (const p of packets(body).packets) {
    const line = text(p);
    const [verb, arg, ...rest] = line.split(' ');
    if (verb === 'want' && SHA.test(arg ?? '')) {
      wants.push(arg);
      if (wants.length === 1) for (const c of rest) caps.add(c);
    } else if (verb === 'have' && SHA.test(arg ?? '')) haves.push(arg);
    else if (line === 'done') done = true;
    else if (verb === 'shallow' || verb.startsWith('deepen') || verb === 'filter') return result(UPLOAD_PACK, 'result', [pkt(`ERR ${NO_SHALLOW}\n`)]);
    else if (p.kind === 'data') throw new ApiError('BAD_REQUEST', `unexpected line in an upload-pack request: ${line.slice(0, 80)}`);
  }
  if (wants.length === 0) return result(UPLOAD_PACK, 'result', [FLUSH]);
  if (wants.length > MAX_WANTS) return result(UPLOAD_PACK, 'result', [pkt(`ERR upload-pack: at most ${MAX_WANTS} wants per request\n`)]);
  // Each have costs a lookup or two; past the cap they are not acknowledged, which can only make the pack larger.
  haves.splice(MAX_HAVES);
  const detailed = caps.has('multi_ack_detailed');
  const multi = detailed || caps.has('multi_ack');

  if (!done) {
    // One round of negotiation: which of the client's commits we share, then NAK (end of round).
    const common = await deps.service.gitCommon(ctx.caller, name, haves);
    const out: Buffer[] = [];
    if (multi) {
      for (const c of common) out.push(pkt(`ACK ${c} ${detailed ? 'common' : 'continue'}\n`));
      // Sharing a commit is enough to cut a pack: tell the client to stop sending haves.
      if (detailed && common.length > 0) out.push(pkt(`ACK ${common[common.length - 1]} ready\n`));
      out.push(pkt('NAK\n'));
    } else out.push(common.length > 0 ? pkt(`ACK ${common[0]}\n`) : pkt('NAK\n'));
    return result(UPLOAD_PACK, 'result', out);
  }

  const common = haves.length > 0 ? await deps.service.gitCommon(ctx.caller, name, haves) : [];
  const band = bandSize(caps);
  return packAnswer(ctx, deps, name, wants, common, {
    head: [common.length > 0 ? pkt(`ACK ${common[common.length - 1]}\n`) : pkt('NAK\n')],
    band,
    progress: !caps.has('no-progress'),
    trailer: band ? [FLUSH] : [],
  });
};

export const gitReceivePack: MemoryRouteHandler = async (ctx, deps) => {
  const name = repoName(ctx);
  const max = deps.config.gitMaxPushBytes;
  const raw = ctx.event.body ?? '';
  const declared = ctx.event.isBase64Encoded ? Math.floor((raw.length * 3) / 4) : Buffer.byteLength(raw);
  if (declared > max + 4) {
    // Refused before the body is decoded, but answered the way the client asked (side band or not),
    // so that git prints the reason as a `remote:` line: its commands and capabilities are at the start.
    const { caps, commands } = pushCommands(bodyHead(ctx.event, 64 * 1024), true);
    const why = `this push sends about ${declared} bytes; a push may send at most ${max}: push fewer commits at a time (git push origin <older-commit>:main first)`;
    const refs = commands.length > 0 ? commands.map((c) => c.ref) : [MAIN_REF];
    return report(
      caps,
      'ok',
      refs.map((ref) => pkt(`ng ${ref} push too large\n`)),
      [`refused: ${why}`],
    );
  }
  const body = requestBody(ctx, max + 64 * 1024);
  const { caps, commands, offset, probe } = pushCommands(body, false);
  // A probe (git's check of the credentials before it streams a large push): nothing to do.
  if (probe) return result(RECEIVE_PACK, 'result', []);
  const pack = body.subarray(offset);
  const status: Buffer[] = [];
  const messages: string[] = [];
  let unpack = 'ok';
  for (const cmd of commands) {
    if (cmd.ref !== MAIN_REF || commands.length > 1) {
      status.push(pkt(`ng ${cmd.ref} ${cmd.ref === MAIN_REF ? 'push main alone' : 'only main can be pushed'}\n`));
      if (cmd.ref !== MAIN_REF) messages.push(`refused: ${cmd.ref}: a memory has one branch, main; push with git push origin HEAD:main`);
      continue;
    }
    const out = await deps.service.gitPush(ctx.caller, name, cmd, pack.length > 0 ? pack : undefined);
    if (out.ok) {
      status.push(pkt(`ok ${cmd.ref}\n`));
      if (out.commits > 0) messages.push(`memory "${name}" is at ${out.rev.slice(0, 12)} (${out.commits} commit${out.commits === 1 ? '' : 's'} landed)`);
    } else {
      if (out.unpackError) unpack = out.unpackError.replace(/\n/g, ' ');
      status.push(pkt(`ng ${cmd.ref} ${out.reason}\n`));
      messages.push(...out.messages.map((m) => `refused: ${m}`));
    }
  }
  return report(caps, unpack, status, messages);
};

/**
 * A push's commands and capabilities (the pkt-lines before the pack). `lenient`: `body` is only the
 * start of an oversize request, so a line cut off or malformed ends the list instead of failing.
 */
function pushCommands(body: Buffer, lenient: boolean): { caps: Set<string>; commands: PushCommand[]; offset: number; probe: boolean } {
  const caps = new Set<string>();
  const commands: PushCommand[] = [];
  let cmds: ReturnType<typeof packets>;
  try {
    cmds = packets(body, (p) => p.kind === 'flush');
  } catch (err) {
    if (!lenient) throw err;
    return { caps, commands, offset: 0, probe: false };
  }
  for (const p of cmds.packets) {
    if (p.kind !== 'data') continue;
    const [line, capText] = p.payload.toString('utf8').replace(/\n$/, '').split('\0');
    if (capText !== undefined) for (const c of capText.split(' ')) caps.add(c);
    const [oldRev, newRev, ref] = line.split(' ');
    if (!SHA.test(oldRev ?? '') || !SHA.test(newRev ?? '') || !ref) {
      if (lenient) break;
      throw new ApiError('BAD_REQUEST', `malformed push command: ${line.slice(0, 120)}`);
    }
    commands.push({ old: oldRev === ZERO ? null : oldRev, new: newRev === ZERO ? null : newRev, ref });
  }
  return { caps, commands, offset: cmds.offset, probe: cmds.packets.length <= 1 };
}

/** report-status (`unpack …`, one `ok`/`ng` per ref), with the messages on side band 2 when the client takes a side band. */
function report(caps: ReadonlySet<string>, unpack: string, status: Buffer[], messages: string[]) {
  const lines = [pkt(`unpack ${unpack}\n`), ...status, FLUSH];
  const band = bandSize(caps);
  if (!band) return result(RECEIVE_PACK, 'result', lines);
  const talk = caps.has('quiet') && messages.every((m) => !m.startsWith('refused')) ? [] : messages;
  return result(RECEIVE_PACK, 'result', [
    ...sideband(2, Buffer.from(talk.map((m) => `${m}\n`).join('')), band),
    ...sideband(1, Buffer.concat(lines), band),
    FLUSH,
  ]);
}
