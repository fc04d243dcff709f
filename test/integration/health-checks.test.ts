import type { ChangeEntry } from '../../lambdas/catalog-core';
import { loadCrawlerConfig } from '../../lambdas/crawler/config';
import { runCheckRound } from '../../lambdas/crawler/checks';
import { createChecker } from '../../lambdas/crawler/check-wiring';
import { startTestCatalog, type TestCatalog } from '../support/catalog-harness';
import { startSwitchableMcp, type FakeTool, type SwitchableMcp } from '../support/crawler-fakes';
import { docOf, makeRecord } from '../support/records';

const HOUR = 3_600_000;
const TOOLS: FakeTool[] = [
  { name: 'get_forecast', description: 'Get the weather forecast for a city', inputSchema: { type: 'object', properties: { city: { type: 'string' } } } },
];

/**
 * The check round against a loopback MCP server that goes down and comes back between checks: the
 * history lands in the trust table, the summary on the record, both on the API.
 */
describe('health checks over time', () => {
  let catalog: TestCatalog;
  let fake: SwitchableMcp;
  let clockMs = Date.now() - 10 * HOUR;

  beforeAll(async () => {
    catalog = await startTestCatalog();
    fake = await startSwitchableMcp(TOOLS);
    const hosted = makeRecord('weather', { remotes: [{ type: 'streamable-http', url: fake.url }] });
    const templated = makeRecord('templated', { remotes: [{ type: 'streamable-http', url: 'https://{tenant}.example.com/mcp' }] });
    const local = makeRecord('local-only');
    await catalog.deps.store.put([{ record: hosted }, { record: templated }, { record: local }]);
    await catalog.deps.index.upsert([docOf({ record: hosted }), docOf({ record: templated }), docOf({ record: local })]);
  });
  afterAll(async () => {
    await fake?.close();
    await catalog?.close();
  });

  const round = async () => {
    const { deps } = createChecker(loadCrawlerConfig({ CRAWLER_ALLOW_PRIVATE_HOSTS: 'true' }), {
      store: catalog.deps.store,
      index: catalog.deps.index,
      trust: catalog.deps.trust,
      clock: { now: () => new Date(clockMs) },
    });
    const report = await runCheckRound(deps);
    clockMs += HOUR;
    return report;
  };

  it('a server down for three checks of ten shows 70% uptime with the right last failure', async () => {
    const states: Array<SwitchableMcp['state']> = ['up', 'up', 'down', 'refusing', 'up', 'up', 'down', 'up', 'up', 'up'];
    const times: string[] = [];
    for (const s of states) {
      fake.state = s;
      times.push(new Date(clockMs).toISOString());
      const report = await round();
      // Only the hosted server with a plain URL is checked: the templated one is skipped, the local one never listed.
      expect(report).toMatchObject({ total: 2, checked: 1, skipped: 1, up: s === 'up' ? 1 : 0, down: s === 'up' ? 0 : 1 });
    }
    const detail = (await (await catalog.get('/api/mcps/weather')).json()) as { data: { health: { live: boolean; history: Record<string, unknown> } } };
    expect(detail.data.health.live).toBe(true);
    expect(detail.data.health.history).toMatchObject({
      uptime: { '24h': 70, '7d': 70, '30d': 70 },
      lastFailure: { at: times[6], kind: 'http' },
      consecutiveFailures: 0,
      down: false,
      checks: 10,
    });
    const series = (await (await catalog.get('/api/mcps/weather/health?window=24h')).json()) as {
      data: { window: string; summary: { uptime: Record<string, number> }; checks: Array<{ at: string; result: string; kind?: string }> };
    };
    expect(series.data.window).toBe('24h');
    expect(series.data.checks.map((c) => c.at)).toEqual(times);
    expect(series.data.checks.map((c) => c.result)).toEqual(states.map((s) => (s === 'up' ? 'up' : 'down')));
    expect(series.data.checks[3].kind).toBe('refused');
    expect(series.data.summary.uptime['24h']).toBe(70);
  });

  it('three failed checks in a row mark the server down on lists; one good check clears it', async () => {
    fake.state = 'down';
    for (let i = 0; i < 3; i++) await round();
    const list = (await (await catalog.get('/api/mcps?type=remote&sort=name')).json()) as { data: Array<{ slug: string; down?: true; uptime?: number }> };
    const weather = list.data.find((s) => s.slug === 'weather');
    expect(weather).toMatchObject({ down: true, uptime: 53.8 }); // 7 up of 13
    fake.state = 'up';
    await round();
    const again = (await (await catalog.get('/api/mcps?type=remote&sort=name')).json()) as { data: Array<{ slug: string; down?: true }> };
    expect(again.data.find((s) => s.slug === 'weather')?.down).toBeUndefined();
  });

  it('a tool removed between two checks is a breaking change on /changes, newest first, paged', async () => {
    fake.state = 'up';
    fake.tools = [
      ...TOOLS,
      { name: 'get_alerts', description: 'Weather alerts for a US state', inputSchema: { type: 'object', properties: { state: { type: 'string' } } } },
    ];
    await round();
    fake.tools = [fake.tools[1]]; // get_forecast removed
    const removedAt = new Date(clockMs).toISOString();
    await round();
    await round(); // unchanged: no entry
    const first = (await (await catalog.get('/api/mcps/weather/changes?limit=1')).json()) as {
      data: Array<{ at: string; kind: string; breaking: boolean; changes: Array<{ kind: string; tool: string; breaking: boolean }> }>;
      meta: { nextCursor?: string };
    };
    expect(first.data).toEqual([{ at: removedAt, kind: 'tools', breaking: true, changes: [{ kind: 'removed', tool: 'get_forecast', breaking: true }] }]);
    expect(first.meta.nextCursor).toEqual(expect.any(String));
    const second = (await (await catalog.get(`/api/mcps/weather/changes?limit=1&cursor=${first.meta.nextCursor}`)).json()) as typeof first;
    expect(second.data).toEqual([
      expect.objectContaining({ kind: 'tools', breaking: false, changes: [{ kind: 'added', tool: 'get_alerts', breaking: false }] }),
    ]);
    expect(second.meta.nextCursor).toBeUndefined();
    // A cursor of another server's changelog is refused.
    const foreign = await catalog.get(`/api/mcps/local-only/changes?cursor=${first.meta.nextCursor}`);
    expect(foreign.status).toBe(400);
    const feed = await catalog.deps.trust.recentBreaking(10);
    expect(feed).toEqual([{ slug: 'weather', entry: first.data[0] }]);
    const detail = (await (await catalog.get('/api/mcps/weather')).json()) as {
      data: {
        tools: Array<{ name: string }>;
        toolCount: number;
        grades: { descriptions: string };
        toolDescriptions: { grade: string; findings: Array<{ rule: string }> };
      };
    };
    expect(detail.data.tools.map((t) => t.name)).toEqual(['get_alerts']);
    expect(detail.data.toolCount).toBe(1);
    // The description grade of the captured tools, with its findings (no annotations, an undescribed parameter).
    expect(detail.data.grades.descriptions).toBe(detail.data.toolDescriptions.grade);
    expect(detail.data.toolDescriptions.findings.map((f) => f.rule)).toEqual(['parameter-undescribed', 'required-unset', 'annotations-missing']);
  });

  it('answers 404 for an unknown slug, 400 for an unknown window, an empty series for an unchecked server', async () => {
    expect((await catalog.get('/api/mcps/nope/health')).status).toBe(404);
    const bad = await catalog.get('/api/mcps/weather/health?window=1y');
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { code: string } }).error.code).toBe('INVALID_QUERY');
    const empty = (await (await catalog.get('/api/mcps/local-only/health')).json()) as {
      data: { checks: unknown[]; summary: { uptime: Record<string, null> } };
    };
    expect(empty.data.checks).toEqual([]);
    expect(empty.data.summary.uptime['7d']).toBeNull();
  });
  it("a server's history leaves with it: its checks, its changelog and its entries in the breaking-changes feed; another server's stay", async () => {
    const trust = catalog.deps.trust;
    const other: ChangeEntry = {
      at: new Date(clockMs).toISOString(),
      kind: 'tools',
      breaking: true,
      changes: [{ kind: 'removed', tool: 'x', breaking: true }],
    };
    await trust.putChanges([{ slug: 'local-only', entry: other }]);
    expect((await trust.recentBreaking(10)).map((b) => b.slug).sort()).toEqual(['local-only', 'weather']);
    expect((await trust.checks('weather', '1970-01-01T00:00:00.000Z')).length).toBeGreaterThan(0);
    await trust.deleteAll('weather');
    expect(await trust.checks('weather', '1970-01-01T00:00:00.000Z')).toEqual([]);
    expect((await trust.changes('weather', { limit: 10 })).items).toEqual([]);
    expect(await trust.recentBreaking(10)).toEqual([{ slug: 'local-only', entry: other }]);
  });
  it("/health says down as the checker decided it, with the checker's down-after (CHECK_DOWN_AFTER), not the default of 3", async () => {
    fake.state = 'down';
    const { deps } = createChecker(loadCrawlerConfig({ CRAWLER_ALLOW_PRIVATE_HOSTS: 'true' }), {
      store: catalog.deps.store,
      index: catalog.deps.index,
      trust: catalog.deps.trust,
      // The real time: the rounds above ran on a clock ahead of it, and /health summarises as of now (their history is gone with deleteAll above).
      clock: { now: () => new Date() },
      settings: { downAfter: 1 },
    });
    await runCheckRound(deps);
    const list = (await (await catalog.get('/api/mcps?type=remote&sort=name')).json()) as { data: Array<{ slug: string; down?: true }> };
    expect(list.data.find((s) => s.slug === 'weather')?.down).toBe(true);
    const health = (await (await catalog.get('/api/mcps/weather/health?window=24h')).json()) as {
      data: { summary: { down: boolean; consecutiveFailures: number } };
    };
    expect(health.data.summary.consecutiveFailures).toBeGreaterThanOrEqual(1);
    expect(health.data.summary.down).toBe(true);
    fake.state = 'up';
  });
});
