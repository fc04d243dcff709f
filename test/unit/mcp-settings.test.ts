import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mcpDepsSource } from '../../lambdas/mcp/wiring';

/**
 * The MCP function reads deploy-time settings (audience, app clients) from a Parameter Store
 * parameter, because they depend on the distribution. A deploy that changes them does not touch
 * the function, so warm instances must notice on their own. The parameter read is the seam here
 * (the read itself, against a loopback Parameter Store, is test/unit/settings-parameter.test.ts);
 * everything built from it is the real wiring. Nothing here connects anywhere: building clients and
 * verifiers opens no connection.
 */
const dir = mkdtempSync(join(tmpdir(), 'mcp-settings-'));
const keysFile = join(dir, 'keys.json');
writeFileSync(keysFile, JSON.stringify({ current: { id: 1, secret: randomBytes(32).toString('base64') } }));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const baseEnv = {
  AUTH_MODE: 'local',
  MEMORY_TABLE: 'memories',
  MEMORY_BUCKET: 'memories',
  CURSOR_KEYS_FILE: keysFile,
  MCP_SETTINGS_PARAMETER: '/stack/mcp/settings',
};
const settings = (audience: string) => JSON.stringify({ AUTH_AUDIENCE: audience, PUBLIC_URL: audience.replace(/\/mcp$/, '') });

function harness(initial: string) {
  let value: string | Error = initial;
  let reads = 0;
  let now = 1_000_000;
  const readSettings = async () => {
    reads++;
    if (value instanceof Error) throw value;
    return value;
  };
  const get = mcpDepsSource(baseEnv, { readSettings, refreshMs: 60_000, clock: () => now });
  return {
    get,
    set: (v: string | Error) => (value = v),
    advance: (ms: number) => (now += ms),
    reads: () => reads,
    /** The background re-read a request started, however long a loaded machine takes for it. */
    settle: () => get.refreshed(),
  };
}

it('builds from the parameter on first use and reads it again only after the interval', async () => {
  const h = harness(settings('https://a.example/mcp'));
  const first = await h.get();
  expect(first.audience).toBe('https://a.example/mcp');
  await h.get();
  await h.get();
  expect(h.reads()).toBe(1);
  h.advance(60_000);
  await h.get();
  await h.settle();
  expect(h.reads()).toBe(2);
  // Unchanged settings: the very same dependencies, nothing rebuilt.
  expect(await h.get()).toBe(first);
});

it('rebuilds the verifier when a deploy changed the settings, over the same memory runtime', async () => {
  const h = harness(settings('https://a.example/mcp'));
  const before = await h.get();
  h.set(settings('https://mcp.example.com/mcp'));
  h.advance(60_000);
  // The request that notices still answers with what it has; the change lands for the next ones.
  expect(await h.get()).toBe(before);
  await h.settle();
  const after = await h.get();
  expect(after.audience).toBe('https://mcp.example.com/mcp');
  expect(after.verifier).not.toBe(before.verifier);
  expect(after.memory).toBe(before.memory);
});

it('keeps the settings in use when a re-read fails, and tries again after another interval', async () => {
  const h = harness(settings('https://a.example/mcp'));
  const before = await h.get();
  h.set(new Error('ThrottlingException'));
  h.advance(60_000);
  await h.get();
  await h.settle();
  expect(await h.get()).toBe(before);
  expect(h.reads()).toBe(2);
  h.set(settings('https://b.example/mcp'));
  h.advance(30_000);
  await h.get();
  await h.settle();
  expect(h.reads()).toBe(2);
  h.advance(30_000);
  await h.get();
  await h.settle();
  expect((await h.get()).audience).toBe('https://b.example/mcp');
});

it('fails a request whose first read fails, and the next request tries again', async () => {
  const h = harness(settings('https://a.example/mcp'));
  h.set(new Error('AccessDenied'));
  await expect(h.get()).rejects.toThrow('AccessDenied');
  h.set(settings('https://a.example/mcp'));
  expect((await h.get()).audience).toBe('https://a.example/mcp');
});

it('refuses settings that are not a JSON object of strings', async () => {
  await expect(harness('{"AUTH_AUDIENCE": 1}').get()).rejects.toThrow(/^\/stack\/mcp\/settings: the settings parameter must be a JSON object of strings$/);
});
