import type { BenchSection } from './stats';

/**
 * Cost per million requests from measured CPU per request, at Lambda's arm64 price and the memory
 * sizes CDK configures (`lib/`), next to the per-request prices of what stands in front and behind.
 * Lambda bills each invocation's duration rounded up to the millisecond, at the configured memory;
 * a function gets CPU in proportion to its memory (one vCPU at 1,769 MB), so CPU time c takes about
 * c × 1,769 / MB of wall time below that size. One invocation per request (API Gateway → Lambda).
 */

/** The APIs' functions and their configured memory (MB), as `lib/` sets them by default. */
export const API_FUNCTIONS: ReadonlyArray<{ api: string; memoryMb: number }> = [
  { api: 'catalog reads (`/api`)', memoryMb: 1024 },
  { api: 'favorites (`/api/favorites`)', memoryMb: 512 },
  { api: 'memory REST (`/v1`)', memoryMb: 1024 },
  { api: 'memory MCP (`/mcp`)', memoryMb: 1024 },
  { api: 'git remote', memoryMb: 2048 },
  { api: 'OAuth', memoryMb: 512 },
  { api: 'site', memoryMb: 512 },
];

const FULL_VCPU_MB = 1769;

export async function lambdaCostPerMillion(cpuMs: number, memoryMb: number): Promise<{ billedMs: number; usd: number }> {
  const { PRICES } = await import('../idle-cost');
  const wallMs = (cpuMs * FULL_VCPU_MB) / Math.min(memoryMb, FULL_VCPU_MB);
  const billedMs = Math.max(1, Math.ceil(wallMs));
  const usd = ((1e6 * billedMs) / 1000) * (memoryMb / 1024) * PRICES.lambdaArmGbSecond + PRICES.lambdaRequestMillion;
  return { billedMs, usd };
}

/**
 * Rows: the catalog function at the CPU measured for each variant, the other APIs at the one-ms
 * floor (their CPU is not measured in this section), and the services in front and behind.
 */
export async function costRows(catalog: Array<{ label: string; cpuMs: number }>): Promise<BenchSection['rows']> {
  const { PRICES } = await import('../idle-cost');
  const usd = (v: number) => `$${v.toFixed(3)}`;
  const rows: BenchSection['rows'] = [];
  const [fn, ...others] = API_FUNCTIONS;
  const parts: string[] = [];
  for (const c of catalog) {
    const { billedMs, usd: cost } = await lambdaCostPerMillion(c.cpuMs, fn.memoryMb);
    parts.push(`${c.label}: ${usd(cost)} (CPU ${c.cpuMs.toFixed(3)} ms, billed ${billedMs} ms)`);
  }
  rows.push([`cost per million requests, ${fn.api} Lambda at ${fn.memoryMb} MB arm64, from the server CPU above`, parts.join('; '), '', 'informational']);
  const floors: string[] = [];
  for (const o of others) floors.push(`${o.api} ${o.memoryMb} MB ${usd((await lambdaCostPerMillion(0, o.memoryMb)).usd)}`);
  rows.push([
    "  the other APIs' Lambda per million at their sizes, at the 1 ms minimum (their CPU is not measured here)",
    floors.join('; '),
    '',
    'informational',
  ]);
  rows.push([
    '  next to, per million requests: API Gateway HTTP API / CloudFront HTTPS / DynamoDB lease takes of the catalog limiter (one write per 6 requests of a known caller; one per request when every request is a new caller)',
    `${usd(PRICES.httpApiMillion)} / ${usd(PRICES.cloudFrontHttpsMillion)} / ${usd(PRICES.writeMillion / 6)}–${usd(PRICES.writeMillion)}`,
    '',
    'informational',
  ]);
  return rows;
}
