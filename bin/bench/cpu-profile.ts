import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BenchSection } from './stats';

/**
 * Where a server's CPU went, by stage of the request pipeline, from the `.cpuprofile` files
 * `node --cpu-prof` wrote. A sample belongs to the stage of the innermost frame of its stack that
 * names one (so `JSON.stringify` called from the views is serialisation, and the AWS SDK called
 * from the limiter is rate limiting); a sample none names is "other".
 */

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
}

/** Stage by the frame's module (and a few functions); the first that matches wins, innermost frame first. */
const STAGES: Array<[string, (url: string, fn: string) => boolean]> = [
  ['headers (CORS, rate-limit headers)', (u, fn) => /catalog\/cors\.ts/.test(u) || fn === 'rateHeaders' || fn === 'describe'],
  ['logging', (u) => /shared\/logger|http\/request-log|powertools\/logger/.test(u)],
  ['metrics and tracing', (u) => /observability\/|powertools\/(metrics|tracer)|aws-xray/.test(u)],
  ['rate limit (limiter, its table calls, the AWS SDK)', (u) => /shared\/rate-limit\/|@aws-sdk|@smithy|fast-xml|bowser|uuid/.test(u)],
  ['auth (origin secret, caller tier, client address)', (u) => /http\/origin-guard|catalog\/callers|http\/client-ip|identity\//.test(u)],
  ['routing', (u) => /route-table|http\/resolve|catalog\/routes/.test(u)],
  ['response cache', (u) => /catalog\/response-cache/.test(u)],
  ['validation (query parsing, zod)', (u) => /http\/query\.ts|catalog\/schemas|\/zod\//.test(u)],
  ['query (the search index)', (u) => /catalog-core\/|first-in-order/.test(u)],
  ['serialisation (views, envelope, JSON)', (u) => /catalog\/views|catalog\/envelope|http\/respond|catalog\/endpoints\//.test(u)],
  ['pipeline and Lambda entry (middy, orchestration)', (u) => /http\/pipeline|@middy|catalog\/api\.ts|shared\/concurrency/.test(u)],
  ["HTTP adapter (event in, bytes out: API Gateway's part)", (u) => /local-stack\/server/.test(u)],
  // The socket system calls themselves (native frames without a script): V8's profiler samples wall
  // time, so a write that waits on the scheduler (the woken client taking the core) counts in full
  // here while `/proc` counts it only as far as it ran; kept apart so it does not pass for node's JS.
  [
    'socket system calls (writev, read: kernel time, wall time in the profile)',
    (u, fn) => u === '' && /^(writev|writeBuffer|writeUtf8String|writeLatin1String|readStart|readStop)$/.test(fn),
  ],
  // Node's own HTTP and socket code (what the bare server runs too); other node: modules (crypto, url) count for their caller.
  ['node:http, sockets, timers', (u) => /^node:(_http|net|stream|events|timers|internal\/(stream|streams|timers|process\/task_queues|http))/.test(u)],
  ['garbage collection', (_u, fn) => fn === '(garbage collector)'],
];

/** Samples per stage (idle left out) over every profile in `dir`. */
export function stageShares(dir: string): { total: number; byStage: Map<string, number>; topFunctions: Array<[string, number]> } {
  const byStage = new Map<string, number>();
  const self = new Map<string, number>();
  let total = 0;
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'))) {
    const p = JSON.parse(readFileSync(join(dir, file), 'utf8')) as Profile;
    const node = new Map(p.nodes.map((n) => [n.id, n]));
    const parent = new Map<number, number>();
    for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
    const stageOf = new Map<number, string>();
    const stage = (id: number): string => {
      const known = stageOf.get(id);
      if (known !== undefined) return known;
      const { url, functionName } = (node.get(id) as ProfileNode).callFrame;
      const hit = STAGES.find(([, test]) => test(url, functionName))?.[0];
      const up = parent.get(id);
      const s = hit ?? (up === undefined ? 'other (V8, program)' : stage(up));
      stageOf.set(id, s);
      return s;
    };
    for (const id of p.samples) {
      const { url, functionName } = (node.get(id) as ProfileNode).callFrame;
      if (functionName === '(idle)') continue;
      total += 1;
      const s = stage(id);
      byStage.set(s, (byStage.get(s) ?? 0) + 1);
      const fn = `${functionName || '(anonymous)'} ${url.replace(/^.*\/(node_modules|lambdas|bin)\//, '$1/')}`;
      self.set(fn, (self.get(fn) ?? 0) + 1);
    }
  }
  const topFunctions = [...self].sort((a, b) => b[1] - a[1]).slice(0, 25);
  return { total, byStage, topFunctions };
}

/** One row per stage: its share of the server's CPU and its ms per request (share × `cpuPerRequest`). */
export function stageRows(dir: string, cpuPerRequest: number, label: string, log?: (m: string) => void): BenchSection['rows'] {
  const { total, byStage, topFunctions } = stageShares(dir);
  if (log) for (const [fn, n] of topFunctions) log(`  ${((100 * n) / total).toFixed(1)}% ${fn}`);
  const parts = [...byStage]
    .sort((a, b) => b[1] - a[1])
    .map(([s, n]) => `${s} ${((100 * n) / total).toFixed(0)}% (${((cpuPerRequest * n) / total).toFixed(4)} ms)`);
  return [[`where the server's CPU goes, ${label} (profiled run: ${cpuPerRequest.toFixed(3)} ms per request)`, parts.join('; '), '', 'informational']];
}
