import { summarizeChecks, type ChangeEntry, type FailureKind, type HealthCheck } from '../../lambdas/catalog-core';
import { mix32, Rng } from './rng';
import type { SyntheticServer } from './synthetic';

/**
 * Demo history for the local stack, so that `npm start` shows the chart, "Changes" and both feeds
 * on the first visit: for some hosted demo servers, 30 days of checks every `everyHours` (mostly up,
 * with an outage or a flaky stretch on some), and for some servers with tools a few changelog
 * entries consistent with their current tools (added ones are among them, removed ones are not),
 * breaking ones included. Deterministic in `(servers, seed)`; times end at `now`.
 */

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const KINDS: FailureKind[] = ['timeout', 'refused', 'http', 'tls', 'dns'];

export interface DemoHistory {
  checks: Array<{ slug: string; check: HealthCheck }>;
  changes: Array<{ slug: string; entry: ChangeEntry }>;
  /** The servers whose records get a `healthHistory` summary (and their health as of the last check). */
  slugs: string[];
}

export function generateHistory(servers: SyntheticServer[], opts: { now: number; seed?: number; max?: number; everyHours?: number }): DemoHistory {
  const max = opts.max ?? 30;
  // Every 8 hours: 90 checks a server, 2,700 items for the demo's 30 (every 3 hours, 7,200 items took
  // most of a loaded machine's start, where DynamoDB Local writes 25 items a call).
  const every = (opts.everyHours ?? 8) * HOUR;
  const out: DemoHistory = { checks: [], changes: [], slugs: [] };
  const hosted = servers.filter((s) => s.record.remotes.length > 0 && s.record.health !== undefined && !/[{}]/.test(s.record.remotes[0].url));
  for (const s of hosted.slice(0, max)) {
    const rng = new Rng(mix32((opts.seed ?? 1) ^ mix32(s.record.slug.length * 7919 + s.record.slug.charCodeAt(0))));
    const slug = s.record.slug;
    const base = rng.int(80, 600);
    // One server in three has an outage of a few hours to two days; one in five is flaky throughout.
    const outageStart = rng.chance(0.33) ? opts.now - rng.int(1, 28) * DAY : undefined;
    const outageEnd = outageStart === undefined ? undefined : outageStart + rng.int(3, 48) * HOUR;
    const flaky = rng.chance(0.2) ? 0.08 : 0.01;
    const stillDown = s.record.health?.live === false;
    const series: HealthCheck[] = [];
    for (let t = opts.now - 30 * DAY + every; t <= opts.now; t += every) {
      const inOutage = (outageStart !== undefined && t >= outageStart && t < (outageEnd as number)) || (stillDown && t > opts.now - 4 * every);
      const at = new Date(t).toISOString();
      if (inOutage || rng.chance(flaky)) {
        const kind = rng.pick(KINDS);
        series.push({ at, result: 'down', kind, ...(kind === 'http' && { status: 502 }) });
      } else {
        series.push({ at, result: s.record.health?.authRequired === true ? 'auth' : 'up', latencyMs: Math.round(base * (0.7 + rng.float() * 0.8)) });
      }
    }
    for (const check of series) out.checks.push({ slug, check });
    s.record.healthHistory = summarizeChecks(series, new Date(opts.now));
    // The record's last check is the history's last one.
    const last = series[series.length - 1];
    if (s.record.health && last) s.record.health = { ...s.record.health, checkedAt: last.at, live: last.result !== 'down' };
    out.slugs.push(slug);

    const tools = s.tools ?? [];
    if (tools.length >= 2 && rng.chance(0.7)) {
      const day = (n: number) => new Date(opts.now - n * DAY + rng.int(0, 23) * HOUR).toISOString();
      const added = tools[tools.length - 1].name;
      out.changes.push({
        slug,
        entry: { at: day(rng.int(15, 25)), kind: 'tools', breaking: false, changes: [{ kind: 'added', tool: added, breaking: false }] },
      });
      if (rng.chance(0.6)) {
        const gone = `${tools[0].name}_legacy`;
        out.changes.push({
          slug,
          entry: { at: day(rng.int(2, 12)), kind: 'tools', breaking: true, changes: [{ kind: 'removed', tool: gone, breaking: true }] },
        });
      }
      if (rng.chance(0.5)) {
        out.changes.push({
          slug,
          entry: {
            at: day(rng.int(1, 10)),
            kind: 'tools',
            breaking: true,
            changes: [{ kind: 'schema', tool: tools[0].name, breaking: true, reasons: ['required: a new required parameter'] }],
          },
        });
      }
      const [major, minor] = s.record.version.split('.').map((n) => Number.parseInt(n, 10));
      if (Number.isFinite(major) && Number.isFinite(minor) && minor > 0)
        out.changes.push({
          slug,
          entry: { at: day(rng.int(3, 20)), kind: 'version', breaking: false, version: { from: `${major}.${minor - 1}.0`, to: s.record.version } },
        });
    }
  }
  return out;
}
