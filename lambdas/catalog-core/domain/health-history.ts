/**
 * Health over time: what one live check of a hosted server found, and what a window of checks
 * says (uptime, latency, the last failure, a run of failures). Pure: the check round, the demo
 * generator and the tests compute the same numbers from the same series.
 *
 * - A check is `up` (it answered and listed its tools), `auth` (it answered 401/403: it is there,
 *   the caller needs credentials) or `down` (with a failure kind). `auth` counts as up: the
 *   server is reachable, which is all a public check can know.
 * - Uptime of a window is up checks / all checks in the window, a percentage with one decimal
 *   (3 down of 10 → 70); null when the window holds no check.
 * - Latency p50 / p95 over the answered checks of the longest window, nearest-rank percentiles.
 * - A server is **down** when its last `DOWN_AFTER` checks (default 3) all failed: lists mark it,
 *   one failed check is a blip.
 */

export const CHECK_RESULTS = ['up', 'auth', 'down'] as const;
export type CheckResult = (typeof CHECK_RESULTS)[number];

/** Why a check failed, coarse enough to compare across servers. */
export const FAILURE_KINDS = ['timeout', 'refused', 'dns', 'tls', 'http', 'protocol', 'blocked', 'other'] as const;
export type FailureKind = (typeof FAILURE_KINDS)[number];

export interface HealthCheck {
  /** When the check finished (ISO 8601). */
  at: string;
  result: CheckResult;
  /** Only on `down`. */
  kind?: FailureKind;
  /** HTTP status of a failed answer, when there was one. */
  status?: number;
  /** Time to an answer (initialize + tools/list), milliseconds; omitted when nothing answered. */
  latencyMs?: number;
  toolCount?: number;
}

/** The windows the API and the page show, by their query names. */
export const HEALTH_WINDOWS = { '24h': 86_400_000, '7d': 7 * 86_400_000, '30d': 30 * 86_400_000 } as const;
export type HealthWindow = keyof typeof HEALTH_WINDOWS;
export const LONGEST_WINDOW_MS = HEALTH_WINDOWS['30d'];
export const DOWN_AFTER = 3;

export interface HealthSummary {
  /** Percent with one decimal, per window; null when the window holds no check. */
  uptime: { '24h': number | null; '7d': number | null; '30d': number | null };
  /** Over the answered checks of the last 30 days. */
  latencyMs?: { p50: number; p95: number };
  lastFailure?: { at: string; kind: FailureKind };
  /** Failed checks since the last answered one (0 when the last check answered). */
  consecutiveFailures: number;
  /** The last `DOWN_AFTER` checks all failed. */
  down: boolean;
  /** Checks in the last 30 days. */
  checks: number;
  lastCheckedAt?: string;
}

export function isUp(c: Pick<HealthCheck, 'result'>): boolean {
  return c.result !== 'down';
}

/** Uptime of a set of checks: percent with one decimal, null for none. */
export function uptimePercent(checks: readonly Pick<HealthCheck, 'result'>[]): number | null {
  if (checks.length === 0) return null;
  const up = checks.filter(isUp).length;
  return Math.round((up / checks.length) * 1000) / 10;
}

/** Nearest-rank percentile of sorted values (p in 0..100). */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) throw new Error('percentile of nothing');
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(rank, sorted.length) - 1];
}

/** The summary of a server's checks (any order) as of `now`. */
export function summarizeChecks(checks: readonly HealthCheck[], now: Date, downAfter = DOWN_AFTER): HealthSummary {
  const nowMs = now.getTime();
  const ordered = [...checks].filter((c) => Date.parse(c.at) <= nowMs).sort((a, b) => a.at.localeCompare(b.at));
  const within = (ms: number) => ordered.filter((c) => nowMs - Date.parse(c.at) < ms);
  const month = within(LONGEST_WINDOW_MS);
  let consecutiveFailures = 0;
  for (let i = ordered.length - 1; i >= 0 && !isUp(ordered[i]); i--) consecutiveFailures++;
  const lastDown = [...month].reverse().find((c) => !isUp(c));
  const latencies = month
    .filter(isUp)
    .map((c) => c.latencyMs)
    .filter((v): v is number => v !== undefined)
    .sort((a, b) => a - b);
  return {
    uptime: { '24h': uptimePercent(within(HEALTH_WINDOWS['24h'])), '7d': uptimePercent(within(HEALTH_WINDOWS['7d'])), '30d': uptimePercent(month) },
    ...(latencies.length > 0 && { latencyMs: { p50: percentile(latencies, 50), p95: percentile(latencies, 95) } }),
    ...(lastDown && { lastFailure: { at: lastDown.at, kind: lastDown.kind ?? 'other' } }),
    consecutiveFailures,
    down: ordered.length >= downAfter && consecutiveFailures >= downAfter,
    checks: month.length,
    ...(ordered.length > 0 && { lastCheckedAt: ordered[ordered.length - 1].at }),
  };
}

/**
 * The kind of a failure from what the checker saw: its HTTP status, or the error's text (the
 * HTTP client's and the MCP SDK's messages; see the crawler's health adapter).
 */
export function failureKindOf(reason: string, status?: number): FailureKind {
  if (status !== undefined) return 'http';
  const r = reason.toLowerCase();
  if (/timeout|timed out|aborted/.test(r)) return 'timeout';
  if (/econnrefused|refused|econnreset|socket hang up|reset/.test(r)) return 'refused';
  if (/enotfound|eai_again|getaddrinfo|dns/.test(r)) return 'dns';
  if (/certificate|tls|ssl|self.signed/.test(r)) return 'tls';
  if (/private|blocked|not allowed|circuit/.test(r)) return 'blocked';
  if (/^http \d{3}/.test(r)) return 'http';
  if (/json|protocol|mcp error|invalid|unexpected/.test(r)) return 'protocol';
  return 'other';
}
