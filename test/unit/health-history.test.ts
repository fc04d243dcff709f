import { failureKindOf, percentile, summarizeChecks, uptimePercent, type HealthCheck } from '../../lambdas/catalog-core';

const HOUR = 3_600_000;
const NOW = new Date('2026-03-01T12:00:00.000Z');
const at = (hoursAgo: number) => new Date(NOW.getTime() - hoursAgo * HOUR).toISOString();

/** Ten hourly checks, oldest first; checks 3, 4 and 7 (1-based) failed. Computed by hand below. */
const SERIES: HealthCheck[] = [
  { at: at(9.5), result: 'up', latencyMs: 120 },
  { at: at(8.5), result: 'up', latencyMs: 80 },
  { at: at(7.5), result: 'down', kind: 'timeout' },
  { at: at(6.5), result: 'down', kind: 'refused' },
  { at: at(5.5), result: 'auth', latencyMs: 40 },
  { at: at(4.5), result: 'up', latencyMs: 100 },
  { at: at(3.5), result: 'down', kind: 'http', status: 503 },
  { at: at(2.5), result: 'up', latencyMs: 300 },
  { at: at(1.5), result: 'up', latencyMs: 60 },
  { at: at(0.5), result: 'up', latencyMs: 90 },
];

describe('health history arithmetic', () => {
  it('3 down of 10 is 70% uptime, with the last failure the 7th check (http)', () => {
    const s = summarizeChecks([...SERIES].reverse(), NOW);
    expect(s.uptime).toEqual({ '24h': 70, '7d': 70, '30d': 70 });
    expect(s.lastFailure).toEqual({ at: SERIES[6].at, kind: 'http' });
    expect(s.consecutiveFailures).toBe(0);
    expect(s.down).toBe(false);
    expect(s.checks).toBe(10);
    expect(s.lastCheckedAt).toBe(SERIES[9].at);
    // Answered latencies sorted: 40 60 80 90 100 120 300 → p50 is the 4th (90), p95 the 7th (300).
    expect(s.latencyMs).toEqual({ p50: 90, p95: 300 });
  });

  it('windows count only their checks; an empty window is null, not 0 or 100', () => {
    const old: HealthCheck[] = [
      { at: at(24 * 3), result: 'down', kind: 'dns' },
      { at: at(24 * 3 + 1), result: 'up' },
      { at: at(24 * 20), result: 'up' },
      { at: at(24 * 40), result: 'down', kind: 'dns' }, // beyond 30 days: not counted
    ];
    const s = summarizeChecks(old, NOW);
    expect(s.uptime).toEqual({ '24h': null, '7d': 50, '30d': 66.7 });
    expect(s.lastFailure).toEqual({ at: at(72), kind: 'dns' });
    expect(summarizeChecks([], NOW).uptime).toEqual({ '24h': null, '7d': null, '30d': null });
  });

  it('marks a server down after three failed checks in a row, not after two', () => {
    const two = [...SERIES, { at: at(0.2), result: 'down', kind: 'timeout' } as HealthCheck, { at: at(0.1), result: 'down', kind: 'timeout' } as HealthCheck];
    expect(summarizeChecks(two, NOW)).toMatchObject({ consecutiveFailures: 2, down: false });
    const three = [...two, { at: at(0.05), result: 'down', kind: 'refused' } as HealthCheck];
    expect(summarizeChecks(three, NOW)).toMatchObject({ consecutiveFailures: 3, down: true, lastFailure: { kind: 'refused' } });
    // Back up: no longer down.
    expect(summarizeChecks([...three, { at: at(0.01), result: 'up' }], NOW)).toMatchObject({ consecutiveFailures: 0, down: false });
  });

  it('rounds to one decimal, and ignores checks after now', () => {
    expect(uptimePercent([{ result: 'up' }, { result: 'up' }, { result: 'down' }])).toBe(66.7);
    expect(summarizeChecks([{ at: new Date(NOW.getTime() + HOUR).toISOString(), result: 'down' }], NOW).checks).toBe(0);
    expect(percentile([5], 95)).toBe(5);
  });

  it('names failure kinds from what the checker saw', () => {
    expect(failureKindOf('HTTP 503', 503)).toBe('http');
    expect(failureKindOf('timeout: no answer within 5000 ms')).toBe('timeout');
    expect(failureKindOf('fetch failed: connect ECONNREFUSED 127.0.0.1:1')).toBe('refused');
    expect(failureKindOf('getaddrinfo ENOTFOUND x.invalid')).toBe('dns');
    expect(failureKindOf('something odd')).toBe('other');
  });
});
