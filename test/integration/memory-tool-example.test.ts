import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HistorySchema } from '../../lambdas/memory-api/response-schemas';
import { ROOT } from '../support/stack-process';
import { body, startMemoryStack, type MemoryStack } from './memory-api-harness';

/**
 * The README's TypeScript example of an application using Claude's memory tool, run as written
 * (`tsx`, its own process) with its handler pointed at this service, against a fake Messages API on
 * loopback that replays a recorded conversation (`test/fixtures/memory-tool/conversation.json`):
 * each turn's tool calls as the API returned them, and for each the tool result the application
 * must send back, compared character for character before the next turn is given. Tests never
 * reach the real API.
 */
interface Turn {
  content: Array<{ type: string; id?: string; name?: string; input?: unknown; text?: string }>;
  stop_reason: string;
  results?: Array<{ content: string; is_error: boolean }>;
}
const conversation = JSON.parse(readFileSync(join(ROOT, 'test/fixtures/memory-tool/conversation.json'), 'utf8')) as { prompt: string; turns: Turn[] };

let h: MemoryStack;
let api: Server;
let apiUrl = '';
const work = mkdtempSync(join(tmpdir(), 'memory-agent-'));
/** Why the fake API refused a request (the example then fails with it). */
const refusals: string[] = [];
let served = 0;

/** The README's first `ts` block after its "Claude's memory tool" heading. */
function example(): string {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf("## Claude's memory tool"));
  const block = /```ts\n([\s\S]*?)\n```/.exec(section);
  if (!block) throw new Error("no ts block in the README's memory tool section");
  return block[1];
}

async function json(req: IncomingMessage): Promise<Record<string, unknown>> {
  let text = '';
  for await (const chunk of req) text += chunk;
  return JSON.parse(text) as Record<string, unknown>;
}

/** What the request must carry for turn `n`: the tool results of turn `n - 1`, exactly, in order. */
function check(req: IncomingMessage, payload: Record<string, unknown>, n: number): string | undefined {
  if (req.url !== '/v1/messages' || req.method !== 'POST') return `unexpected ${req.method} ${req.url}`;
  if (req.headers['x-api-key'] !== 'test-key' || req.headers['anthropic-version'] !== '2023-06-01') return 'missing API headers';
  const tools = payload.tools as Array<{ type: string; name: string }>;
  if (!tools?.some((t) => t.type === 'memory_20250818' && t.name === 'memory')) return 'the memory tool is not declared';
  const messages = payload.messages as Array<{ role: string; content: unknown }>;
  if (messages.length !== 2 * n + 1) return `expected ${2 * n + 1} messages, got ${messages.length}`;
  if (n === 0) return messages[0].content === conversation.prompt ? undefined : 'not the prompt';
  const prev = conversation.turns[n - 1];
  const uses = prev.content.filter((b) => b.type === 'tool_use');
  const sent = messages[2 * n].content as Array<Record<string, unknown>>;
  const expected = uses.map((u, i) => ({ type: 'tool_result', tool_use_id: u.id, ...prev.results?.[i] }));
  const a = JSON.stringify(sent);
  const b = JSON.stringify(expected);
  return a === b ? undefined : `turn ${n}: the tool results differ\n  sent:     ${a}\n  expected: ${b}`;
}

beforeAll(async () => {
  h = await startMemoryStack({ MEMORY_RATE_LIMIT: '100000' });
  api = createServer((req, res) => {
    void json(req).then((payload) => {
      const n = served++;
      const why = n < conversation.turns.length ? check(req, payload, n) : 'the conversation is over';
      if (why) {
        refusals.push(why);
        res
          .writeHead(400, { 'content-type': 'application/json' })
          .end(JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', message: why } }));
        return;
      }
      const { results: _results, ...turn } = conversation.turns[n];
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ id: `msg_replay_${n}`, type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', ...turn }));
    });
  });
  await new Promise<void>((r) => api.listen(0, '127.0.0.1', r));
  apiUrl = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
}, 180000);
afterAll(async () => {
  await new Promise<void>((r) => api?.close(() => r()));
  rmSync(work, { recursive: true, force: true });
  await h?.close();
});

function runExample(env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const file = join(work, 'memory-agent.mts');
  writeFileSync(file, example());
  return new Promise((resolve) => {
    const child = spawn(join(ROOT, 'node_modules', '.bin', 'tsx'), [file, conversation.prompt], { cwd: work, env: { ...process.env, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

test("the README's application keeps Claude's memory here: every recorded tool call answered as recorded", async () => {
  const run = await runExample({
    ANTHROPIC_BASE_URL: apiUrl,
    ANTHROPIC_API_KEY: 'test-key',
    MEMORY_URL: `${h.url}/v1/memories/claude`,
    MEMORY_TOKEN: h.token('alice'),
  });
  expect(refusals).toEqual([]);
  expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
  expect(run.stdout.trim()).toBe("Noted: you like TypeScript, in strict mode, and edit with Neovim. I'll remember it.");
  expect(served).toBe(conversation.turns.length);
  // The memory holds what Claude wrote, as a note with its history.
  const note = await h.fetch('/v1/memories/claude/notes/user/preferences.md', { headers: { ...h.bearer('alice'), accept: 'text/markdown' } });
  expect(await note.text()).toBe('User preferences:\n- Favorite language: TypeScript (strict mode)\n- Editor: Neovim\n');
  const { commits } = await body(await h.fetch('/v1/memories/claude/history', { headers: h.bearer('alice') }), HistorySchema);
  expect(commits.map((c) => c.message)).toEqual([
    'Move user_preferences.md to user/preferences.md',
    'Update user_preferences.md',
    'Update user_preferences.md',
    'Create user_preferences.md',
  ]);
}, 120000);
