import fc from 'fast-check';
import { CommandError, fileView, humanSize, insertAt, listing, parseCommand, placeOf, replaceOnce } from '../../lambdas/memory-api/memory-tool-command';

/**
 * Claude's memory tool: the command parser (any input is a command or a `CommandError` in the
 * tool's words, quickly, never another exception) and the strings the tool's documentation gives
 * for each answer: the directory listing with sizes, the line-numbered view, the edit snippets and
 * the errors, character for character.
 */
test('parses each command as the tool emits it, ignoring parameters it does not know', () => {
  expect(parseCommand({ command: 'view', path: '/memories' })).toEqual({ command: 'view', path: '/memories' });
  expect(parseCommand({ command: 'view', path: '/memories/a.md', view_range: [1, -1] })).toEqual({
    command: 'view',
    path: '/memories/a.md',
    view_range: [1, -1],
  });
  expect(parseCommand({ command: 'create', path: '/memories/a.md', file_text: 'x', extra: 1 })).toEqual({
    command: 'create',
    path: '/memories/a.md',
    file_text: 'x',
  });
  expect(parseCommand({ command: 'str_replace', path: '/memories/a.md', old_str: 'a' })).toEqual({
    command: 'str_replace',
    path: '/memories/a.md',
    old_str: 'a',
    new_str: '',
  });
  expect(parseCommand({ command: 'insert', path: '/memories/a.md', insert_line: 0, insert_text: 'x' })).toMatchObject({ insert_line: 0 });
  expect(parseCommand({ command: 'delete', path: '/memories/a.md' })).toEqual({ command: 'delete', path: '/memories/a.md' });
  expect(parseCommand({ command: 'rename', old_path: '/memories/a.md', new_path: '/memories/b.md' })).toMatchObject({ command: 'rename' });
});

test.each([
  [null, 'Error: The memory tool input must be an object with a "command" parameter'],
  [{}, "Error: Unknown command of type undefined. The memory tool's commands are view, create, str_replace, insert, delete, rename"],
  [{ command: 'cat', path: '/memories' }, 'Error: Unknown command "cat". The memory tool\'s commands are view, create, str_replace, insert, delete, rename'],
  [{ command: 'view' }, 'Error: Missing required parameter `path` for command `view`'],
  [{ command: 'view', path: 7 }, 'Error: Parameter `path` of command `view` must be a string'],
  [
    { command: 'view', path: '/memories', view_range: [1] },
    'Error: Invalid `view_range` parameter: it should be a list of two integers, [start_line, end_line] (end_line -1 for the end of the file)',
  ],
  [
    { command: 'view', path: '/memories', view_range: [1.5, 2] },
    'Error: Invalid `view_range` parameter: it should be a list of two integers, [start_line, end_line] (end_line -1 for the end of the file)',
  ],
  [{ command: 'create', path: '/memories/a.md' }, 'Error: Missing required parameter `file_text` for command `create`'],
  [{ command: 'str_replace', path: '/memories/a.md', old_str: '' }, 'Error: Parameter `old_str` of command `str_replace` may not be empty'],
  [{ command: 'str_replace', path: '/memories/a.md', old_str: 'a', new_str: null }, 'Error: Parameter `new_str` of command `str_replace` must be a string'],
  [{ command: 'insert', path: '/memories/a.md', insert_text: 'x' }, 'Error: Missing required parameter `insert_line` for command `insert`'],
  [{ command: 'insert', path: '/memories/a.md', insert_line: '2', insert_text: 'x' }, 'Error: Parameter `insert_line` of command `insert` must be an integer'],
  [{ command: 'rename', old_path: '/memories/a.md' }, 'Error: Missing required parameter `new_path` for command `rename`'],
])('%j is refused: %s', (input, message) => {
  expect(() => parseCommand(input)).toThrow(new CommandError(message));
});

test('paths: /memories is the root, a .md name a note, anything else a folder; outside /memories or traversal refused', () => {
  expect(placeOf('/memories')).toEqual({ kind: 'root' });
  expect(placeOf('/memories/')).toEqual({ kind: 'root' });
  expect(placeOf('/memories/a/b.md')).toEqual({ kind: 'note', path: 'a/b.md' });
  expect(placeOf('/memories/a/b/')).toEqual({ kind: 'folder', folder: 'a/b' });
  for (const bad of ['/etc/passwd', 'memories/a.md', '/memoriesx/a.md', '/memories/../x.md', '/memories/a//b.md', '/memories/./a.md', '']) {
    expect(() => placeOf(bad)).toThrow(CommandError);
  }
  expect(() => placeOf('/memories/../secrets.md')).toThrow(
    'Error: The path /memories/../secrets.md is not a valid path: it may not contain empty, "." or ".." segments',
  );
  expect(() => placeOf('/tmp/a.md')).toThrow('Error: The path /tmp/a.md is not in /memories. Please provide a path that starts with /memories/');
});

test.each([
  [0, '0B'],
  [512, '512B'],
  [1024, '1.0K'],
  [1536, '1.5K'],
  [4096, '4.0K'],
  [5632, '5.5K'],
  [17 * 1024 + 1, '18K'],
  [1024 * 1024, '1.0M'],
  [1.2 * 1024 * 1024, '1.2M'],
  [1024 * 1024 - 1, '1.0M'],
])('%d bytes read %s', (bytes, text) => {
  expect(humanSize(bytes)).toBe(text);
});

test('the directory listing and the file view are the documented formats', () => {
  expect(
    listing(
      '/memories',
      4096 + 1536,
      [
        { path: '/memories/guidelines.md', size: 1536, folder: false },
        { path: '/memories/user', size: 4096, folder: true },
      ],
      0,
    ),
  ).toBe(
    "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n5.5K\t/memories\n1.5K\t/memories/guidelines.md\n4.0K\t/memories/user/",
  );
  expect(fileView('/memories/notes.md', 'Hello World\nThis is line two')).toBe(
    "Here's the content of /memories/notes.md with line numbers:\n     1\tHello World\n     2\tThis is line two",
  );
  expect(fileView('/memories/n.md', 'a\nb\nc\nd', [2, 3])).toBe("Here's the content of /memories/n.md with line numbers:\n     2\tb\n     3\tc");
  expect(fileView('/memories/n.md', 'a\nb\nc', [3, -1])).toBe("Here's the content of /memories/n.md with line numbers:\n     3\tc");
  expect(() => fileView('/memories/n.md', 'a\nb', [3, 4])).toThrow(
    'Error: Invalid `view_range` parameter: [3, 4]. It should be within the range of lines of the file: [1, 2] (end_line -1 for the end)',
  );
  expect(() => fileView('/memories/big.md', '\n'.repeat(999_999))).toThrow('File /memories/big.md exceeds maximum line limit of 999,999 lines.');
});

test('str_replace and insert: the documented results and errors', () => {
  expect(replaceOnce('/memories/p.md', 'a\nb\nFavorite color: blue\nc\nd\ne\n', 'Favorite color: blue', 'Favorite color: green')).toEqual({
    text: 'a\nb\nFavorite color: green\nc\nd\ne\n',
    result:
      'The memory file has been edited. Here is the snippet showing the change (with line numbers):\n     1\ta\n     2\tb\n     3\tFavorite color: green\n     4\tc\n     5\td',
  });
  expect(() => replaceOnce('/memories/p.md', 'x', 'blue', 'green')).toThrow(
    'No replacement was performed, old_str `blue` did not appear verbatim in /memories/p.md.',
  );
  expect(() => replaceOnce('/memories/p.md', 'blue\nx\nblue blue', 'blue', 'green')).toThrow(
    'No replacement was performed. Multiple occurrences of old_str `blue` in lines: 1, 3. Please ensure it is unique',
  );
  expect(insertAt('/memories/t.md', 'one\ntwo', 1, '- new\n')).toEqual({ text: 'one\n- new\ntwo', result: 'The file /memories/t.md has been edited.' });
  expect(insertAt('/memories/t.md', 'one', 0, 'top')).toMatchObject({ text: 'top\none' });
  expect(() => insertAt('/memories/t.md', 'one\ntwo', 3, 'x')).toThrow(
    'Error: Invalid `insert_line` parameter: 3. It should be within the range of lines of the file: [0, 2]',
  );
});

test('any input at all is a command or a clear CommandError, never another failure, and quickly', () => {
  const value = fc.oneof(fc.jsonValue(), fc.string({ unit: 'binary' }), fc.constant(undefined), fc.integer(), fc.double());
  const command = fc.oneof(fc.constantFrom('view', 'create', 'str_replace', 'insert', 'delete', 'rename', 'VIEW', ''), value);
  const input = fc.oneof(
    value,
    fc.record(
      {
        command,
        path: fc.oneof(fc.string({ unit: 'binary' }), fc.constantFrom('/memories', '/memories/a.md', '/memories/../a.md'), value),
        old_path: value,
        new_path: value,
        file_text: value,
        old_str: value,
        new_str: value,
        insert_line: fc.oneof(fc.integer(), value),
        insert_text: value,
        view_range: fc.oneof(fc.tuple(fc.integer(), fc.integer()), value),
      },
      { requiredKeys: [] },
    ),
  );
  fc.assert(
    fc.property(input, (v) => {
      try {
        const c = parseCommand(v);
        expect(typeof c.command).toBe('string');
        if ('path' in c) placeOf(c.path);
      } catch (err) {
        expect(err).toBeInstanceOf(CommandError);
        expect((err as Error).message).toMatch(/^(Error: |The path )/);
        expect((err as Error).message.length).toBeLessThan(400);
      }
    }),
    { numRuns: Number(process.env.FUZZ_RUNS ?? 2000), seed: 20261124 },
  );
});

test('a read-modify-write that keeps losing to other writers gives up as 503 contention, not as the client’s 409', async () => {
  const { runMemoryTool } = await import('../../lambdas/memory-api/memory-tool');
  const { MemoryError, staleRev } = await import('../../lambdas/memory/errors');
  let writes = 0;
  const service = {
    readNote: async () => ({ markdown: 'alpha\n', rev: 'a'.repeat(40) }),
    writeNote: async () => {
      writes++;
      throw staleRev('m', { head: 'b'.repeat(40) });
    },
  };
  const run = runMemoryTool(
    { command: 'str_replace', path: '/memories/a.md', old_str: 'alpha', new_str: 'beta' },
    { service: service as never, caller: { account: 'u' }, memory: 'm', canWrite: true },
  );
  await expect(run).rejects.toMatchObject({ code: 'UPSTREAM_UNAVAILABLE', reason: 'contention' });
  expect(writes).toBe(8);
  // With If-Match, the first stale answer is the client's: 409 at once.
  writes = 0;
  const guarded = runMemoryTool(
    { command: 'str_replace', path: '/memories/a.md', old_str: 'alpha', new_str: 'beta' },
    { service: service as never, caller: { account: 'u' }, memory: 'm', canWrite: true, expectedRev: 'a'.repeat(40) },
  );
  await expect(guarded).rejects.toBeInstanceOf(MemoryError);
  await expect(guarded).rejects.toMatchObject({ code: 'CONFLICT' });
  expect(writes).toBe(1);
});
