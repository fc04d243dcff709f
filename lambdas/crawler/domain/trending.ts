/**
 * Trending: stars gained over the last 7 days, from one star snapshot per server and UTC day
 * (kept in the crawl state, pruned to `STAR_HISTORY_DAYS`).
 *
 * Gain = stars on the latest snapshot at or before today − stars on the snapshot of exactly
 * 7 days earlier; when that day is missing (the history is younger, or a day was skipped) the
 * oldest snapshot inside the window stands in. No earlier snapshot → 0. Losses count as 0: an
 * unstarring wave is not "trending", and a negative rank would put it below servers with no history.
 */

export const TRENDING_WINDOW_DAYS = 7;
export const STAR_HISTORY_DAYS = 15;
const DAY_MS = 86_400_000;

export type StarHistory = Record<string, number>;

/** `YYYY-MM-DD` of an instant, in UTC. */
export function utcDay(d: Date): string {
  return d.toISOString().slice(0, 10);
}

export function addDays(day: string, n: number): string {
  return utcDay(new Date(Date.parse(`${day}T00:00:00.000Z`) + n * DAY_MS));
}

/** The history with today's snapshot set and days older than the retention dropped. */
export function withStarSnapshot(history: StarHistory | undefined, day: string, stars: number, keepDays = STAR_HISTORY_DAYS): StarHistory {
  const oldest = addDays(day, -(keepDays - 1));
  const out: StarHistory = {};
  for (const [d, n] of Object.entries(history ?? {})) if (d >= oldest && d <= day) out[d] = n;
  out[day] = stars;
  return out;
}

export function starsGained(history: StarHistory | undefined, day: string, windowDays = TRENDING_WINDOW_DAYS): number {
  if (!history) return 0;
  const days = Object.keys(history)
    .filter((d) => d <= day)
    .sort();
  if (days.length < 2) return 0;
  const current = history[days[days.length - 1]];
  const start = addDays(day, -windowDays);
  const base = days.find((d) => d >= start);
  if (base === undefined || base === days[days.length - 1]) return 0;
  return Math.max(0, current - history[base]);
}
