import { spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../bin/local-stack/backends';
import { ROOT, spawnStack, stopStack, until } from '../support/stack-process';

/**
 * The README's "Try:" block, run as pasted against a scratch stack: `localhost:3000` becomes the
 * scratch port, `npm` runs in the repository with the stack's DATA_DIR and PORT, and `curl` fails on
 * any status outside 2xx (`-f`) so that an error body can never pass for an answer.
 */
const dataDir = mkdtempSync(join(tmpdir(), 'readme-'));
const work = mkdtempSync(join(tmpdir(), 'readme-cwd-'));
let server: ChildProcess | undefined;
let port = 0;
let log = '';

function tryBlock(): string {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const at = readme.indexOf('Try:\n\n```sh\n');
  if (at < 0) throw new Error('README has no "Try:" block');
  const start = readme.indexOf('\n', readme.indexOf('```sh', at)) + 1;
  return readme.slice(start, readme.indexOf('\n```', start));
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

test("the README's Try block works as pasted, every command", () => {
  const block = tryBlock().replaceAll('localhost:3000', `127.0.0.1:${port}`);
  expect(block).toMatch(/npm run -s token/);
  const prelude = [
    'set -euo pipefail',
    `export DATA_DIR='${dataDir}' PORT='${port}'`,
    `npm() { (cd '${ROOT}' && command npm "$@"); }`,
    'curl() { command curl -sS -f --max-time 30 "$@"; echo; }',
  ].join('\n');
  const run = spawnSync('bash', ['-c', `${prelude}\n${block}`], { cwd: work, encoding: 'utf8', timeout: 120000 });
  if (run.status !== 0) throw new Error(`README block failed (${run.status})\n${run.stdout}\n${run.stderr}`);
  expect(run.stdout).toMatch(/"success":true/);
  expect(run.stdout).toMatch(/today\.md/);
}, 150000);
