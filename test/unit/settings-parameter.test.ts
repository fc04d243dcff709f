/**
 * The settings parameter as the MCP function and the git remote read it in AWS: the sources'
 * default reader (no seam), the real SSM client of lambdas/shared/settings-parameter.ts, sent by
 * `AWS_ENDPOINT_URL_SSM` to the loopback fake of Parameter Store (test/support/aws-fake.ts,
 * SSM's JSON 1.1, signature scope checked). The refresh semantics over an injected reader are
 * test/unit/mcp-settings.test.ts and memory-git-lambda.test.ts; here, that the parameter the
 * variable names is what they read, that a missing one fails the first request only, and that a
 * throttled read is retried.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mcpDepsSource } from '../../lambdas/mcp/wiring';
import type { MemoryApiDeps } from '../../lambdas/memory-api/deps';
import { type Built, settingsDepsSource } from '../../lambdas/memory-api/settings';
import { type AwsFake, emptyRegion, type FakeRegion, startAwsFake } from '../support/aws-fake';

const REGION = 'eu-west-1';
const MCP = '/prod-McpCatalog/prodMcpCatalogMcpEAABC895/settings';
const GIT = '/prod-McpCatalog/prodMcpCatalogMemoryGit8C9801FD/settings';

const dir = mkdtempSync(join(tmpdir(), 'settings-parameter-'));
const keysFile = join(dir, 'keys.json');
writeFileSync(keysFile, JSON.stringify({ current: { id: 1, secret: randomBytes(32).toString('base64') } }));

let fake: AwsFake;
let region: FakeRegion;
const saved = { ...process.env };

beforeAll(async () => {
  fake = await startAwsFake({ [REGION]: emptyRegion() });
  region = fake.regions[REGION];
  // What Lambda gives a function: credentials in the environment; the endpoint is the test's.
  Object.assign(process.env, { AWS_ENDPOINT_URL_SSM: fake.endpoint(REGION), AWS_ACCESS_KEY_ID: 'AKIDFAKE', AWS_SECRET_ACCESS_KEY: 'fake' });
});
afterAll(async () => {
  process.env = saved;
  await fake.close();
  rmSync(dir, { recursive: true, force: true });
});
beforeEach(() => {
  region.parameters = {};
  region.throttleParameterReads = 0;
  fake.calls.length = 0;
});

const put = (name: string, settings: Record<string, string>) => {
  const version = (region.parameters?.[name]?.version ?? 0) + 1;
  region.parameters = { ...region.parameters, [name]: { value: JSON.stringify(settings), version } };
};
const audience = (host: string) => ({ AUTH_AUDIENCE: `https://${host}/mcp`, PUBLIC_URL: `https://${host}` });

function mcpSource(now: { t: number }) {
  const env = {
    AWS_REGION: REGION,
    AUTH_MODE: 'local',
    MEMORY_TABLE: 'memories',
    MEMORY_BUCKET: 'memories',
    CURSOR_KEYS_FILE: keysFile,
    MCP_SETTINGS_PARAMETER: MCP,
  };
  return mcpDepsSource(env, { refreshMs: 300_000, clock: () => now.t });
}

describe('the MCP function', () => {
  it('reads the parameter MCP_SETTINGS_PARAMETER names at init, and again after the interval when a deploy rewrote it', async () => {
    put(MCP, audience('d111.cloudfront.net'));
    const now = { t: 0 };
    const get = mcpSource(now);
    const first = await get();
    expect(first.audience).toBe('https://d111.cloudfront.net/mcp');
    await get();
    expect(fake.calls).toEqual([`${REGION} SSM.GetParameter`]);
    put(MCP, audience('mcp.example.com'));
    now.t = 300_000;
    expect(await get()).toBe(first);
    await get.refreshed();
    const after = await get();
    expect(after.audience).toBe('https://mcp.example.com/mcp');
    expect(after.memory).toBe(first.memory);
    expect(fake.calls).toHaveLength(2);
  });

  it('a parameter not there yet (a deploy still creating it) fails the first request only: the next one reads it', async () => {
    const get = mcpSource({ t: 0 });
    await expect(get()).rejects.toMatchObject({ name: 'ParameterNotFound' });
    put(MCP, audience('d111.cloudfront.net'));
    expect((await get()).audience).toBe('https://d111.cloudfront.net/mcp');
  });

  it('a read refused for throughput (a burst of cold starts) is retried: 4 attempts, one more than the SDK default', async () => {
    put(MCP, audience('d111.cloudfront.net'));
    region.throttleParameterReads = 3;
    expect((await mcpSource({ t: 0 })()).audience).toBe('https://d111.cloudfront.net/mcp');
    expect(fake.calls).toHaveLength(4);
  });
});

describe('the git remote', () => {
  it('reads the parameter MEMORY_SETTINGS_PARAMETER names, merged over its environment, and again after the interval', async () => {
    put(GIT, { ...audience('d111.cloudfront.net'), AUTH_MODE: 'cognito' });
    const now = { t: 0 };
    const builds: Array<Record<string, string | undefined>> = [];
    let rebuilt: () => void = () => undefined;
    const second = new Promise<void>((resolve) => (rebuilt = resolve));
    const get = settingsDepsSource(
      { AWS_REGION: REGION, MEMORY_SETTINGS_PARAMETER: GIT, MEMORY_TABLE: 'memories', AUTH_MODE: 'local' },
      {
        refreshMs: 300_000,
        clock: () => now.t,
        build: async (env, rt) => {
          if (builds.push(env) === 2) rebuilt();
          return { deps: {} as MemoryApiDeps, runtime: (rt ?? {}) as Built['runtime'] };
        },
      },
    );
    await get();
    expect(builds[0]).toMatchObject({ MEMORY_TABLE: 'memories', AUTH_MODE: 'cognito', AUTH_AUDIENCE: 'https://d111.cloudfront.net/mcp' });
    put(GIT, { ...audience('mcp.example.com'), AUTH_MODE: 'cognito' });
    now.t = 300_000;
    await get();
    // The background re-read and rebuild that request started.
    await second;
    expect(builds[1].AUTH_AUDIENCE).toBe('https://mcp.example.com/mcp');
    expect(fake.calls).toEqual([`${REGION} SSM.GetParameter`, `${REGION} SSM.GetParameter`]);
  });
});
