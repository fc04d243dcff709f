/**
 * Claude's memory tool (`memory_20250818`): its commands as the tool emits them (the `input` of a
 * `tool_use` block), parsed into typed values, and the strings its documentation says a handler
 * returns. Pure functions, so the parser can be fuzzed and the formats checked without storage;
 * `memory-tool.ts` runs the commands against the memory core.
 */
export type MemoryCommand =
  | { command: 'view'; path: string; view_range?: [number, number] }
  | { command: 'create'; path: string; file_text: string }
  | { command: 'str_replace'; path: string; old_str: string; new_str: string }
  | { command: 'insert'; path: string; insert_line: number; insert_text: string }
  | { command: 'delete'; path: string }
  | { command: 'rename'; old_path: string; new_path: string };

export const COMMANDS = ['view', 'create', 'str_replace', 'insert', 'delete', 'rename'] as const;

/** A command the tool could not have meant: the message is the tool result (an error Claude reads). */
export class CommandError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CommandError';
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Longest path taken before any other rule (the core's own limit is 1,024 bytes below `/memories/`). */
const MAX_PATH_CHARS = 4096;

/**
 * One command, checked for shape only: the command name, and each of its parameters present and of
 * its type (unknown parameters are ignored, as a tool's future fields would be). `new_str` may be
 * omitted (it deletes `old_str`). Anything else is a `CommandError` in the tool's own words.
 */
export function parseCommand(input: unknown): MemoryCommand {
  if (!isObject(input)) throw new CommandError('Error: The memory tool input must be an object with a "command" parameter');
  const command = input.command;
  if (typeof command !== 'string' || !(COMMANDS as readonly string[]).includes(command)) {
    const shown = typeof command === 'string' ? `"${command.slice(0, 40)}"` : `of type ${command === null ? 'null' : typeof command}`;
    throw new CommandError(`Error: Unknown command ${shown}. The memory tool's commands are ${COMMANDS.join(', ')}`);
  }
  const str = (name: string, optional = false): string | undefined => {
    const v = input[name];
    if (v === undefined && optional) return undefined;
    if (v === undefined) throw new CommandError(`Error: Missing required parameter \`${name}\` for command \`${command}\``);
    if (typeof v !== 'string') throw new CommandError(`Error: Parameter \`${name}\` of command \`${command}\` must be a string`);
    return v;
  };
  const path = (name: string): string => {
    const v = str(name) as string;
    if (v.length > MAX_PATH_CHARS) throw new CommandError(`Error: Parameter \`${name}\` is longer than ${MAX_PATH_CHARS} characters`);
    return v;
  };
  switch (command) {
    case 'view': {
      const range = input.view_range;
      if (range === undefined || range === null) return { command, path: path('path') };
      if (!Array.isArray(range) || range.length !== 2 || !range.every((n) => Number.isSafeInteger(n))) {
        throw new CommandError(
          'Error: Invalid `view_range` parameter: it should be a list of two integers, [start_line, end_line] (end_line -1 for the end of the file)',
        );
      }
      return { command, path: path('path'), view_range: [range[0] as number, range[1] as number] };
    }
    case 'create':
      return { command, path: path('path'), file_text: str('file_text') as string };
    case 'str_replace': {
      const old_str = str('old_str') as string;
      if (old_str === '') throw new CommandError('Error: Parameter `old_str` of command `str_replace` may not be empty');
      return { command, path: path('path'), old_str, new_str: str('new_str', true) ?? '' };
    }
    case 'insert': {
      const line = input.insert_line;
      if (line === undefined) throw new CommandError('Error: Missing required parameter `insert_line` for command `insert`');
      if (!Number.isSafeInteger(line)) throw new CommandError('Error: Parameter `insert_line` of command `insert` must be an integer');
      return { command, path: path('path'), insert_line: line as number, insert_text: str('insert_text') as string };
    }
    case 'delete':
      return { command, path: path('path') };
    case 'rename':
      return { command, old_path: path('old_path'), new_path: path('new_path') };
  }
  throw new CommandError('Error: Unknown command');
}

export const ROOT = '/memories';

/** Where a tool path lies in the memory: its root, a folder, or a note (a path ending in `.md`). */
export type Place = { kind: 'root' } | { kind: 'folder'; folder: string } | { kind: 'note'; path: string };

/**
 * A tool path (`/memories/…`) as a place in the memory, or a `CommandError`: a path outside
 * `/memories`, or with an empty, `.` or `..` segment (traversal), is refused before the core's own
 * path rules (which refuse backslashes, control characters, `.git`, over-long paths, …) are asked.
 */
export function placeOf(raw: string): Place {
  const path = raw.length > 1 && raw.endsWith('/') ? raw.slice(0, -1) : raw;
  if (path === ROOT) return { kind: 'root' };
  if (!path.startsWith(`${ROOT}/`)) throw new CommandError(`Error: The path ${raw} is not in ${ROOT}. Please provide a path that starts with ${ROOT}/`);
  const rel = path.slice(ROOT.length + 1);
  if (rel.split('/').some((s) => s === '' || s === '.' || s === '..')) {
    throw new CommandError(`Error: The path ${raw} is not a valid path: it may not contain empty, "." or ".." segments`);
  }
  return rel.endsWith('.md') ? { kind: 'note', path: rel } : { kind: 'folder', folder: rel };
}

/** The tool path of a note or folder of the memory. */
export const toolPath = (rel: string): string => (rel === '' ? ROOT : `${ROOT}/${rel}`);

/**
 * A size as `du -h` writes it: bytes below 1 KiB (`512B`), then one decimal below ten (`1.5K`,
 * `4.0K`) and whole numbers above (`17K`), always rounded up, in K, M and G.
 */
export function humanSize(bytes: number): string {
  if (bytes < 1024) return `${bytes}B`;
  let value = bytes;
  let unit = '';
  for (const u of ['K', 'M', 'G']) {
    value /= 1024;
    unit = u;
    if (Math.ceil(value * 10) / 10 < 1024 || u === 'G') break;
  }
  const tenth = Math.ceil(value * 10) / 10;
  return tenth < 10 ? `${tenth.toFixed(1)}${unit}` : `${Math.ceil(value)}${unit}`;
}

/** The documented directory listing: a header, then `{size}\t{path}` for the directory and each entry. */
export function listing(path: string, size: number, entries: ReadonlyArray<{ path: string; size: number; folder: boolean }>, more: number): string {
  const lines = [
    `Here're the files and directories up to 2 levels deep in ${path}, excluding hidden items and node_modules:`,
    `${humanSize(size)}\t${path}`,
    ...entries.map((e) => `${humanSize(e.size)}\t${e.path}${e.folder ? '/' : ''}`),
  ];
  if (more > 0) lines.push(`(${more} more entries not shown: view a subdirectory to see them)`);
  return lines.join('\n');
}

/** The most lines a file view shows (the documented limit). */
export const MAX_LINES = 999_999;

/** Lines numbered as the documentation shows them: six characters, right-aligned, then a tab. */
export function numbered(lines: readonly string[], first: number): string {
  return lines.map((l, i) => `${String(first + i).padStart(6, ' ')}\t${l}`).join('\n');
}

/** The documented file view (`view_range` 1-indexed, `-1` for the end), or a `CommandError`. */
export function fileView(path: string, text: string, range?: [number, number]): string {
  const lines = text.split('\n');
  if (lines.length > MAX_LINES) throw new CommandError(`File ${path} exceeds maximum line limit of 999,999 lines.`);
  let from = 1;
  let to = lines.length;
  if (range) {
    const [start, end] = range;
    if (start < 1 || start > lines.length || (end !== -1 && end < start)) {
      throw new CommandError(
        `Error: Invalid \`view_range\` parameter: [${start}, ${end}]. It should be within the range of lines of the file: [1, ${lines.length}] (end_line -1 for the end)`,
      );
    }
    from = start;
    to = end === -1 ? lines.length : Math.min(end, lines.length);
  }
  return `Here's the content of ${path} with line numbers:\n${numbered(lines.slice(from - 1, to), from)}`;
}

/** Where `needle` occurs in `text` (overlapping occurrences too). */
export function occurrences(text: string, needle: string): number[] {
  const at: number[] = [];
  for (let i = text.indexOf(needle); i >= 0; i = text.indexOf(needle, i + 1)) at.push(i);
  return at;
}

/** The 1-based line of an offset. */
export function lineOf(text: string, offset: number): number {
  let line = 1;
  for (let i = text.indexOf('\n'); i >= 0 && i < offset; i = text.indexOf('\n', i + 1)) line++;
  return line;
}

/** str_replace on a whole file, with the documented results and errors. */
export function replaceOnce(path: string, text: string, oldStr: string, newStr: string): { text: string; result: string } {
  const at = occurrences(text, oldStr);
  if (at.length === 0) throw new CommandError(`No replacement was performed, old_str \`${oldStr}\` did not appear verbatim in ${path}.`);
  if (at.length > 1) {
    const lines = [...new Set(at.map((o) => lineOf(text, o)))];
    throw new CommandError(
      `No replacement was performed. Multiple occurrences of old_str \`${oldStr}\` in lines: ${lines.join(', ')}. Please ensure it is unique`,
    );
  }
  const next = text.slice(0, at[0]) + newStr + text.slice(at[0] + oldStr.length);
  const all = next.split('\n');
  const first = lineOf(next, at[0]);
  const last = first + newStr.split('\n').length - 1;
  const from = Math.max(1, first - 2);
  const to = Math.min(all.length, last + 2);
  const snippet = numbered(all.slice(from - 1, to), from);
  return { text: next, result: `The memory file has been edited. Here is the snippet showing the change (with line numbers):\n${snippet}` };
}

/** insert, with the documented results and errors: `insert_text` (one final line break dropped) goes after line `insert_line` (0: the top). */
export function insertAt(path: string, text: string, line: number, insertText: string): { text: string; result: string } {
  const lines = text.split('\n');
  if (line < 0 || line > lines.length) {
    throw new CommandError(`Error: Invalid \`insert_line\` parameter: ${line}. It should be within the range of lines of the file: [0, ${lines.length}]`);
  }
  lines.splice(line, 0, insertText.replace(/\n$/, ''));
  return { text: lines.join('\n'), result: `The file ${path} has been edited.` };
}
