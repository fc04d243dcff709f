import { HistorySchema, MemoryToolResultSchema, NoteSchema } from '../../lambdas/memory-api/response-schemas';
import { body, errorCode, startMemoryStack, type MemoryStack } from './memory-api-harness';

/**
 * `POST /v1/memories/{m}/memory-tool` on the local stack: every command of Claude's memory tool and
 * every error its documentation gives, answered with the documented strings, each write one commit
 * of the memory (readable over /v1 and git), If-Match, scopes, retries, racing commands, HTTP-level
 * refusals, and a second user who reaches nothing.
 */
let h: MemoryStack;
const ROOT_HEADER = "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:";

beforeAll(async () => {
  h = await startMemoryStack({ MEMORY_RATE_LIMIT: '100000' });
}, 180000);
afterAll(() => h?.close());

type Answer = { status: number; content: string; is_error: boolean; etag: string | null };

async function tool(
  input: unknown,
  o: { memory?: string; sub?: string; headers?: Record<string, string>; token?: Record<string, string> } = {},
): Promise<Answer> {
  const res = await h.fetch(`/v1/memories/${o.memory ?? 'claude'}/memory-tool`, {
    method: 'POST',
    headers: { ...(o.token ?? h.bearer(o.sub ?? 'alice')), 'content-type': 'application/json', ...o.headers },
    body: JSON.stringify(input),
  });
  if (res.status !== 200) throw new Error(`${res.status}: ${await res.text()}`);
  const out = await body(res, MemoryToolResultSchema);
  return { status: res.status, ...out, etag: res.headers.get('etag') };
}

const ok = async (input: unknown, o?: Parameters<typeof tool>[1]): Promise<string> => {
  const a = await tool(input, o);
  if (a.is_error) throw new Error(`tool error: ${a.content}`);
  return a.content;
};
const fails = async (input: unknown, o?: Parameters<typeof tool>[1]): Promise<string> => {
  const a = await tool(input, o);
  if (!a.is_error) throw new Error(`no tool error: ${a.content}`);
  return a.content;
};

async function note(path: string, memory = 'claude'): Promise<string> {
  const res = await h.fetch(`/v1/memories/${memory}/notes/${path}`, { headers: { ...h.bearer('alice'), accept: 'text/markdown' } });
  return res.status === 200 ? res.text() : `(${res.status})`;
}

async function commits(memory = 'claude'): Promise<Array<{ message: string }>> {
  return (await body(await h.fetch(`/v1/memories/${memory}/history?limit=100`, { headers: h.bearer('alice') }), HistorySchema)).commits;
}

describe('view', () => {
  it('lists an empty /memories (the memory is created by the first write, not before)', async () => {
    const a = await tool({ command: 'view', path: '/memories' });
    expect(a).toEqual({ status: 200, content: `${ROOT_HEADER}\n0B\t/memories`, is_error: false, etag: null });
    expect((await h.fetch('/v1/memories/claude', { headers: h.bearer('alice') })).status).toBe(404);
  });

  it('lists files and directories up to 2 levels deep with their sizes, hidden items left out; shows a file with line numbers', async () => {
    expect(await ok({ command: 'create', path: '/memories/preferences.md', file_text: '# Preferences\n\n- Language: TypeScript\n' })).toBe(
      'File created successfully at: /memories/preferences.md',
    );
    await ok({ command: 'create', path: '/memories/projects/acme/decisions.md', file_text: 'Use Postgres.\n' });
    await ok({ command: 'create', path: '/memories/projects/acme/deep/detail.md', file_text: 'x'.repeat(2000) });
    await ok({ command: 'create', path: '/memories/.hidden.md', file_text: 'hidden' });
    const a = await tool({ command: 'view', path: '/memories' });
    expect(a.content).toBe(
      [
        ROOT_HEADER,
        '2.1K\t/memories', // 38 + 14 + 2000 + 6 bytes
        '38B\t/memories/preferences.md',
        '2.0K\t/memories/projects/',
        '2.0K\t/memories/projects/acme/',
      ].join('\n'),
    );
    expect(a.etag).toMatch(/^"[0-9a-f]{40}"$/);
    expect(await ok({ command: 'view', path: '/memories/projects/' })).toBe(
      [
        "Here're the files and directories up to 2 levels deep in /memories/projects, excluding hidden items and node_modules:",
        '2.0K\t/memories/projects',
        '2.0K\t/memories/projects/acme/',
        '14B\t/memories/projects/acme/decisions.md',
        '2.0K\t/memories/projects/acme/deep/',
      ].join('\n'),
    );
    expect(await ok({ command: 'view', path: '/memories/preferences.md' })).toBe(
      "Here's the content of /memories/preferences.md with line numbers:\n     1\t# Preferences\n     2\t\n     3\t- Language: TypeScript\n     4\t",
    );
    expect(await ok({ command: 'view', path: '/memories/preferences.md', view_range: [3, -1] })).toBe(
      "Here's the content of /memories/preferences.md with line numbers:\n     3\t- Language: TypeScript\n     4\t",
    );
  });

  it.each([
    [{ command: 'view', path: '/memories/nope.md' }, 'The path /memories/nope.md does not exist. Please provide a valid path.'],
    [{ command: 'view', path: '/memories/nowhere' }, 'The path /memories/nowhere does not exist. Please provide a valid path.'],
    [{ command: 'view', path: '/memories/notes.txt' }, 'The path /memories/notes.txt does not exist. Please provide a valid path.'],
    [{ command: 'view', path: '/etc/passwd' }, 'Error: The path /etc/passwd is not in /memories. Please provide a path that starts with /memories/'],
    [{ command: 'view', path: '/memories/../x.md' }, 'Error: The path /memories/../x.md is not a valid path: it may not contain empty, "." or ".." segments'],
    [
      { command: 'view', path: '/memories/preferences.md', view_range: [9, 10] },
      'Error: Invalid `view_range` parameter: [9, 10]. It should be within the range of lines of the file: [1, 4] (end_line -1 for the end)',
    ],
  ])('%j is the error %s', async (input, message) => {
    expect(await fails(input)).toBe(message);
  });
});

describe('create', () => {
  it.each([
    ['an existing note', { command: 'create', path: '/memories/preferences.md', file_text: 'again' }, 'Error: File /memories/preferences.md already exists'],
    [
      'a name not ending in .md',
      { command: 'create', path: '/memories/notes.txt', file_text: 'x' },
      'Error: Cannot create /memories/notes.txt: this memory stores markdown notes only, whose names end in .md (e.g. /memories/notes.md)',
    ],
    [
      'the root',
      { command: 'create', path: '/memories', file_text: 'x' },
      'Error: Cannot create /memories: this memory stores markdown notes only, whose names end in .md (e.g. /memories/notes.md)',
    ],
    [
      'a credential',
      { command: 'create', path: '/memories/keys.md', file_text: 'aws_access_key_id = AKIAIOSFODNN7EXAMPLE\n' },
      /^Error: File \/memories\/keys\.md was not created: .*line 1 looks like an AWS access key ID \(aws-access-key-id\)/,
    ],
    [
      'broken front matter',
      { command: 'create', path: '/memories/fm.md', file_text: '---\na: [\n---\nbody' },
      /^Error: File \/memories\/fm\.md was not created: front matter is not valid YAML/,
    ],
    [
      'a .git folder',
      { command: 'create', path: '/memories/.git/x.md', file_text: 'x' },
      /^Error: File \/memories\/\.git\/x\.md was not created: path segment "\.git" names the git directory/,
    ],
    [
      'a note over 1 MiB',
      { command: 'create', path: '/memories/big.md', file_text: 'x'.repeat(1024 * 1024 + 1) },
      /^Error: File \/memories\/big\.md was not created: .*1048576 bytes/,
    ],
    ['no file_text', { command: 'create', path: '/memories/a.md' }, 'Error: Missing required parameter `file_text` for command `create`'],
  ])("%s is the documented (or the note rules') error, and nothing is written", async (_what, input, message) => {
    const before = (await commits()).length;
    const content = await fails(input);
    if (typeof message === 'string') expect(content).toBe(message);
    else expect(content).toMatch(message);
    expect((await commits()).length).toBe(before);
  });

  it('writes one commit per create, the file exactly as sent', async () => {
    expect(await note('preferences.md')).toBe('# Preferences\n\n- Language: TypeScript\n');
    expect((await commits()).map((c) => c.message).slice(-2)).toEqual(['Create projects/acme/decisions.md', 'Create preferences.md']);
  });
});

describe('str_replace and insert', () => {
  it('str_replace answers the edited snippet; insert confirms; each one commit', async () => {
    const before = (await commits()).length;
    expect(await ok({ command: 'str_replace', path: '/memories/preferences.md', old_str: 'TypeScript', new_str: 'TypeScript (strict)' })).toBe(
      'The memory file has been edited. Here is the snippet showing the change (with line numbers):\n     1\t# Preferences\n     2\t\n     3\t- Language: TypeScript (strict)\n     4\t',
    );
    expect(await ok({ command: 'insert', path: '/memories/preferences.md', insert_line: 3, insert_text: '- Editor: vim\n' })).toBe(
      'The file /memories/preferences.md has been edited.',
    );
    expect(await note('preferences.md')).toBe('# Preferences\n\n- Language: TypeScript (strict)\n- Editor: vim\n');
    expect((await commits()).length).toBe(before + 2);
  });

  it.each([
    [
      { command: 'str_replace', path: '/memories/nope.md', old_str: 'a', new_str: 'b' },
      'Error: The path /memories/nope.md does not exist. Please provide a valid path.',
    ],
    [
      { command: 'str_replace', path: '/memories/projects', old_str: 'a', new_str: 'b' },
      'Error: The path /memories/projects does not exist. Please provide a valid path.',
    ],
    [
      { command: 'str_replace', path: '/memories/preferences.md', old_str: 'Python', new_str: 'b' },
      'No replacement was performed, old_str `Python` did not appear verbatim in /memories/preferences.md.',
    ],
    [
      { command: 'str_replace', path: '/memories/preferences.md', old_str: '- ', new_str: '* ' },
      'No replacement was performed. Multiple occurrences of old_str `- ` in lines: 3, 4. Please ensure it is unique',
    ],
    [
      { command: 'str_replace', path: '/memories/preferences.md', old_str: 'vim', new_str: 'password = hunter2hunter2' },
      /^Error: The file \/memories\/preferences\.md was not edited: content refused: line 4 looks like a password/,
    ],
    [{ command: 'insert', path: '/memories/nope.md', insert_line: 0, insert_text: 'x' }, 'Error: The path /memories/nope.md does not exist'],
    [{ command: 'insert', path: '/memories/projects', insert_line: 0, insert_text: 'x' }, 'Error: The path /memories/projects does not exist'],
    [
      { command: 'insert', path: '/memories/preferences.md', insert_line: 9, insert_text: 'x' },
      'Error: Invalid `insert_line` parameter: 9. It should be within the range of lines of the file: [0, 5]',
    ],
    [{ command: 'insert', path: '/memories/preferences.md', insert_line: -1, insert_text: 'x' }, /^Error: Invalid `insert_line` parameter: -1\./],
  ])('%j is the error %s, and nothing is written', async (input, message) => {
    const before = await note('preferences.md');
    const content = await fails(input);
    if (typeof message === 'string') expect(content).toBe(message);
    else expect(content).toMatch(message);
    expect(await note('preferences.md')).toBe(before);
  });

  it('two edits racing on one note both land: each is made against the note as it is when it lands', async () => {
    await ok({ command: 'create', path: '/memories/race.md', file_text: 'alpha\nbeta\n' });
    const answers = await Promise.all([
      tool({ command: 'str_replace', path: '/memories/race.md', old_str: 'alpha', new_str: 'ALPHA' }),
      tool({ command: 'str_replace', path: '/memories/race.md', old_str: 'beta', new_str: 'BETA' }),
      tool({ command: 'insert', path: '/memories/race.md', insert_line: 0, insert_text: 'top' }),
    ]);
    expect(answers.map((a) => a.is_error)).toEqual([false, false, false]);
    expect(await note('race.md')).toBe('top\nALPHA\nBETA\n');
    const creates = await Promise.all([1, 2].map((i) => tool({ command: 'create', path: '/memories/once.md', file_text: `${i}` })));
    expect(creates.map((a) => a.content).sort()).toEqual(['Error: File /memories/once.md already exists', 'File created successfully at: /memories/once.md']);
  });
});

describe('delete and rename', () => {
  it('rename moves a note (git sees a rename) and a directory; delete removes a note and a directory, each soft', async () => {
    expect(await ok({ command: 'rename', old_path: '/memories/race.md', new_path: '/memories/archive/race.md' })).toBe(
      'Successfully renamed /memories/race.md to /memories/archive/race.md',
    );
    expect(await note('archive/race.md')).toBe('top\nALPHA\nBETA\n');
    await ok({ command: 'create', path: '/memories/projects/acme/more.md', file_text: 'more' });
    expect(await ok({ command: 'rename', old_path: '/memories/projects', new_path: '/memories/work' })).toBe(
      'Successfully renamed /memories/projects to /memories/work',
    );
    expect(await note('work/acme/decisions.md')).toBe('Use Postgres.\n');
    expect(await note('projects/acme/decisions.md')).toBe('(404)');
    expect(await ok({ command: 'delete', path: '/memories/once.md' })).toBe('Successfully deleted /memories/once.md');
    expect(await ok({ command: 'delete', path: '/memories/work/acme' })).toBe('Successfully deleted /memories/work/acme');
    expect(await fails({ command: 'view', path: '/memories/work' })).toBe('The path /memories/work does not exist. Please provide a valid path.');
    // Soft: the /v1 restore brings a deleted note back.
    const restored = await h.fetch('/v1/memories/claude/restore', {
      method: 'POST',
      headers: { ...h.bearer('alice'), 'content-type': 'application/json' },
      body: '{"path":"once.md"}',
    });
    expect(restored.status).toBe(200);
  });

  it.each([
    [{ command: 'delete', path: '/memories/nope.md' }, 'Error: The path /memories/nope.md does not exist'],
    [{ command: 'delete', path: '/memories/nowhere' }, 'Error: The path /memories/nowhere does not exist'],
    [{ command: 'delete', path: '/memories' }, 'Error: Cannot delete the /memories directory itself'],
    [{ command: 'rename', old_path: '/memories/nope.md', new_path: '/memories/x.md' }, 'Error: The path /memories/nope.md does not exist'],
    [
      { command: 'rename', old_path: '/memories/once.md', new_path: '/memories/preferences.md' },
      'Error: The destination /memories/preferences.md already exists',
    ],
    [{ command: 'rename', old_path: '/memories/once.md', new_path: '/memories/once.md' }, 'Error: The destination /memories/once.md already exists'],
    [
      { command: 'rename', old_path: '/memories/once.md', new_path: '/memories/once.txt' },
      'Error: Cannot rename /memories/once.md to /memories/once.txt: this memory stores markdown notes only, whose names end in .md (e.g. /memories/once.md)',
    ],
    [
      { command: 'rename', old_path: '/memories/archive', new_path: '/memories/archive/inner' },
      'Error: Cannot rename /memories/archive into itself (/memories/archive/inner)',
    ],
    [
      { command: 'rename', old_path: '/memories/archive', new_path: '/memories/x.md' },
      "Error: Cannot rename the directory /memories/archive to /memories/x.md: a directory's name may not end in .md",
    ],
    [{ command: 'rename', old_path: '/memories', new_path: '/memories/x' }, 'Error: Cannot rename the /memories directory itself'],
    [
      { command: 'unlink', path: '/memories/x.md' },
      'Error: Unknown command "unlink". The memory tool\'s commands are view, create, str_replace, insert, delete, rename',
    ],
  ])('%j is the error %s', async (input, message) => {
    const before = (await commits()).length;
    expect(await fails(input)).toBe(message);
    expect((await commits()).length).toBe(before);
  });
});

describe('HTTP', () => {
  it('ETag is the rev after the command; If-Match makes a write expect it (409 when stale, nothing written)', async () => {
    const { etag } = await tool({ command: 'view', path: '/memories' });
    const stale = await h.fetch('/v1/memories/claude/memory-tool', {
      method: 'POST',
      headers: { ...h.bearer('alice'), 'content-type': 'application/json', 'if-match': '"0000000000000000000000000000000000000000"' },
      body: JSON.stringify({ command: 'create', path: '/memories/guarded.md', file_text: 'x' }),
    });
    expect(stale.status).toBe(409);
    expect(await note('guarded.md')).toBe('(404)');
    const fresh = await tool({ command: 'create', path: '/memories/guarded.md', file_text: 'x' }, { headers: { 'if-match': etag as string } });
    expect(fresh.is_error).toBe(false);
    expect(fresh.etag).not.toBe(etag);
    expect((await body(await h.fetch('/v1/memories/claude/notes/guarded.md', { headers: h.bearer('alice') }), NoteSchema)).rev).toBe(
      JSON.parse(fresh.etag as string),
    );
  });

  it('a retry with the same Idempotency-Key gets the first answer and writes nothing again', async () => {
    const send = () =>
      h.fetch('/v1/memories/claude/memory-tool', {
        method: 'POST',
        headers: { ...h.bearer('alice'), 'content-type': 'application/json', 'idempotency-key': 'tool-retry-1' },
        body: JSON.stringify({ command: 'insert', path: '/memories/guarded.md', insert_line: 1, insert_text: 'once' }),
      });
    const first = await send();
    const again = await send();
    expect(await again.json()).toEqual(await first.json());
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await note('guarded.md')).toBe('x\nonce');
  });

  it('view needs memory:read, every other command memory:write', async () => {
    const reader = { authorization: `Bearer ${h.token('alice', { scope: 'memory:read' })}` };
    expect((await tool({ command: 'view', path: '/memories' }, { token: reader })).is_error).toBe(false);
    const res = await h.fetch('/v1/memories/claude/memory-tool', {
      method: 'POST',
      headers: { ...reader, 'content-type': 'application/json' },
      body: JSON.stringify({ command: 'delete', path: '/memories/guarded.md' }),
    });
    expect(res.status).toBe(403);
    expect(((await res.json()) as { error: { message: string } }).error.message).toBe("The memory tool's delete command needs the memory:write scope");
    const writer = { authorization: `Bearer ${h.token('alice', { scope: 'memory:write' })}` };
    expect((await h.fetch('/v1/memories/claude/memory-tool', { method: 'POST', headers: writer, body: '{"command":"view","path":"/memories"}' })).status).toBe(
      403,
    );
  });

  it.each([
    ['', 'application/json'],
    ['not json', 'application/json'],
    ['[{"command":"view"}]', 'application/json'],
    ['"view"', 'application/json'],
    ['{"command":"view","path":"/memories"}', 'text/plain'],
  ])('a body %j (%s) is 400', async (payload, type) => {
    const res = await h.fetch('/v1/memories/claude/memory-tool', { method: 'POST', headers: { ...h.bearer('alice'), 'content-type': type }, body: payload });
    expect(await errorCode(res)).toBe('BAD_REQUEST');
  });

  it('another user reaches none of it: the same URL is their own memory; a narrower grant is 403; a bad name 400', async () => {
    const before = await tool({ command: 'view', path: '/memories' });
    expect((await tool({ command: 'view', path: '/memories' }, { sub: 'mallory' })).content).toBe(`${ROOT_HEADER}\n0B\t/memories`);
    expect(await fails({ command: 'view', path: '/memories/preferences.md' }, { sub: 'mallory' })).toBe(
      'The path /memories/preferences.md does not exist. Please provide a valid path.',
    );
    await ok({ command: 'create', path: '/memories/mine.md', file_text: 'mallory was here' }, { sub: 'mallory' });
    expect(await tool({ command: 'view', path: '/memories' })).toEqual(before);
    const narrow = h.bearer('alice', { memories: ['other'] });
    const res = await h.fetch('/v1/memories/claude/memory-tool', {
      method: 'POST',
      headers: { ...narrow, 'content-type': 'application/json' },
      body: '{"command":"view","path":"/memories"}',
    });
    expect(await errorCode(res)).toBe('FORBIDDEN');
    const bad = await h.fetch('/v1/memories/Claude/memory-tool', {
      method: 'POST',
      headers: { ...h.bearer('alice'), 'content-type': 'application/json' },
      body: '{"command":"view","path":"/memories"}',
    });
    expect(await errorCode(bad)).toBe('BAD_REQUEST');
  });
});
