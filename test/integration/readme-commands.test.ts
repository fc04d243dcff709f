import { spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../bin/local-stack/backends';
import { ROOT, spawnStack, stopStack, until } from '../support/stack-process';

/**
 * Every shell block of the README that talks to the local stack (the "Try:" block, the /v1, MCP and
 * favorites examples), run as pasted and in the README's order against a scratch stack:
 * `localhost:3000` becomes the scratch port, `npm` runs in the repository with the stack's DATA_DIR
 * and PORT, `curl` fails on any status outside 2xx (`-f`) so that an error body can never pass
 * for an answer, and `git` runs with a home of its own (the README's `git config --global` and
 * credential helper write there, not into the user's). The quick start's own two commands are what CI runs; the deployment block needs AWS.
 */
const dataDir = mkdtempSync(join(tmpdir(), 'readme-'));
const work = mkdtempSync(join(tmpdir(), 'readme-cwd-'));
let server: ChildProcess | undefined;
let port = 0;
let log = '';

/** The README's `sh`/`bash` blocks that reach the local stack, in document order. */
function localBlocks(): string[] {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  return [...readme.matchAll(/```(?:sh|bash)\n([\s\S]*?)\n```/g)].map((m) => m[1]).filter((b) => b.includes('localhost:3000') && !b.includes('npm ci'));
}

beforeAll(async () => {
  port = await freePort();
  server = spawnStack(dataDir, port, (text) => {
    log += text;
  });
  await until(
    'the stack',
    async () => ((await fetch(`http://127.0.0.1:${port}/healthz`)).status === 200 ? true : undefined),
    120000,
    () => log,
  );
}, 150000);

afterAll(async () => {
  rmSync(work, { recursive: true, force: true });
  await stopStack(server);
  rmSync(dataDir, { recursive: true, force: true });
}, 30000);

test("the README's shell blocks work as pasted, every command, in order", () => {
  const blocks = localBlocks();
  // The Try block, the /v1 and MCP examples and the favorites example at least.
  expect(blocks.length).toBeGreaterThanOrEqual(4);
  expect(blocks[0]).toMatch(/npm run -s token/);
  const script = blocks.join('\n').replaceAll('localhost:3000', `127.0.0.1:${port}`);
  const prelude = [
    'set -euo pipefail',
    `export DATA_DIR='${dataDir}' PORT='${port}'`,
    `npm() { (cd '${ROOT}' && command npm "$@"); }`,
    'curl() { command curl -sS -f --max-time 30 "$@"; echo; }',
    `git() { HOME='${work}' GIT_CONFIG_GLOBAL='${work}/.gitconfig' GIT_CONFIG_NOSYSTEM=1 GIT_TERMINAL_PROMPT=0 command git "$@"; }`,
  ].join('\n');
  const run = spawnSync('bash', ['-c', `${prelude}\n${script}`], { cwd: work, encoding: 'utf8', timeout: 120000 });
  if (run.status !== 0) throw new Error(`README block failed (${run.status})\n${run.stdout}\n${run.stderr}`);
  expect(run.stdout).toMatch(/"success":true/);
  expect(run.stdout).toMatch(/today\.md/);
  // The MCP write answered a tool result, not an error, and the favorites example pinned and listed its server.
  expect(run.stdout).toMatch(/"structuredContent":\{"path":"ideas\/today\.md"/);
  expect(run.stdout).toMatch(/"data":\{"slug":"ai-abstergo-mcp-time"\}/);
  expect(run.stdout).toMatch(/"slug":"ai-abstergo-mcp-time"[\s\S]*"slug":"ai-abstergo-mcp-time"/);
  // Personal access tokens: listed without the secret, the note pushed through the credential helper read back with the token, then refused once revoked.
  expect(run.stdout).toMatch(/"tokens":\[\{"id":"[0-9A-Za-z]{12}","name":"laptop git"/);
  expect(run.stdout).not.toMatch(/"token":"mcpm_pat_/);
  expect(run.stdout).toMatch(/"title":"Tomorrow","frontmatter":\{\},"body":"# Tomorrow\\n\\nWritten in my editor, pushed with a personal token\./);
  expect(run.stdout).toMatch(/\{"id":"[0-9A-Za-z]{12}","deleted":true\}\nrefused: the token was revoked/);
}, 150000);
