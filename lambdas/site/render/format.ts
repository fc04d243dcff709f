/** Numbers and dates as a reader wants them, computed on the server so pages need no script. */

export function compactNumber(n: number): string {
  if (n < 1000) return String(n);
  if (n < 10_000) return `${(n / 1000).toFixed(1).replace(/\.0$/, '')}k`;
  if (n < 1_000_000) return `${Math.round(n / 1000)}k`;
  return `${(n / 1_000_000).toFixed(1).replace(/\.0$/, '')}M`;
}

export function fullNumber(n: number): string {
  return n.toLocaleString('en-US');
}

/** `3 days ago` relative to `now`; the exact instant goes in the `<time datetime>` beside it. */
export function relativeTime(iso: string, now: number): string {
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return iso;
  const s = Math.round((now - t) / 1000);
  if (s < 0) return 'just now';
  const units: Array<[number, string]> = [
    [365 * 86400, 'year'],
    [30 * 86400, 'month'],
    [7 * 86400, 'week'],
    [86400, 'day'],
    [3600, 'hour'],
    [60, 'minute'],
  ];
  for (const [size, name] of units) {
    if (s >= size) {
      const n = Math.floor(s / size);
      return `${n} ${name}${n === 1 ? '' : 's'} ago`;
    }
  }
  return 'just now';
}

/** `2026-11-01` (UTC). */
export function isoDate(iso: string): string {
  return iso.slice(0, 10);
}

export function plural(n: number, one: string, many = `${one}s`): string {
  return `${fullNumber(n)} ${n === 1 ? one : many}`;
}
