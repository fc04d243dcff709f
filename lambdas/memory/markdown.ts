import { parseDocument, stringify } from 'yaml';
import type { MemoryLimits } from './config';
import { badRequest } from './errors';
import { baseName } from './paths';

/**
 * Notes as stored: optional YAML front matter between `---` fences, then the markdown body. The
 * stored text is what `Accept: text/markdown` returns byte for byte; the JSON view is derived from it.
 * YAML is parsed with the `yaml` package's core schema only (no custom tags, no JS evaluation), with
 * caps on size, aliases and depth.
 */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
export type FrontMatter = { [key: string]: JsonValue };

type FmLimits = Pick<MemoryLimits, 'maxFrontmatterBytes' | 'maxFrontmatterAliases' | 'maxFrontmatterDepth'>;

export interface SplitNote {
  /** The YAML between the fences, or null when the note has no front matter. */
  yaml: string | null;
  /** Everything up to and including the closing fence's line break (empty without front matter). */
  head: string;
  body: string;
}

const OPEN_FENCE = /^---[ \t]*\r?\n/;
const CLOSE_FENCE = /^(?:---|\.\.\.)[ \t]*$/;

/** True when `text` begins with a front-matter fence line (`---`). */
export function startsWithFence(text: string): boolean {
  return OPEN_FENCE.test(text) || /^---[ \t]*$/.test(text);
}

/** Splits stored text; returns null when a front-matter fence is opened and never closed. */
export function trySplit(text: string): SplitNote | null {
  const open = OPEN_FENCE.exec(text);
  if (!open) return { yaml: null, head: '', body: text };
  let pos = open[0].length;
  while (pos <= text.length) {
    const nl = text.indexOf('\n', pos);
    const end = nl < 0 ? text.length : nl;
    const line = text.slice(pos, end).replace(/\r$/, '');
    if (CLOSE_FENCE.test(line)) {
      const after = nl < 0 ? text.length : nl + 1;
      return { yaml: text.slice(open[0].length, pos), head: text.slice(0, after), body: text.slice(after) };
    }
    if (nl < 0) break;
    pos = nl + 1;
  }
  return null;
}

function checkJson(value: unknown, depth: number, limits: FmLimits, where: string): JsonValue {
  if (depth > limits.maxFrontmatterDepth) {
    throw badRequest('invalid_frontmatter', `front matter is nested deeper than ${limits.maxFrontmatterDepth} levels`, 'frontmatter');
  }
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw badRequest('invalid_frontmatter', `front matter ${where} is not a finite number`, 'frontmatter');
    return value;
  }
  if (Array.isArray(value)) return value.map((v, i) => checkJson(v, depth + 1, limits, `${where}[${i}]`));
  if (typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    const out: { [key: string]: JsonValue } = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      // Refused so that no merge or spread downstream can ever touch an object prototype.
      if (k === '__proto__') throw badRequest('invalid_frontmatter', 'front matter may not use the key __proto__', 'frontmatter');
      out[k] = checkJson(v, depth + 1, limits, where ? `${where}.${k}` : k);
    }
    return out;
  }
  throw badRequest('invalid_frontmatter', `front matter ${where || 'value'} is not plain JSON data`, 'frontmatter');
}

/** Validates a front-matter object given as JSON (a plain object of JSON values). */
export function validateFrontMatter(value: unknown, limits: FmLimits): FrontMatter {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw badRequest('invalid_frontmatter', 'frontmatter must be an object', 'frontmatter');
  }
  return checkJson(value, 0, limits, '') as FrontMatter;
}

/**
 * An upper bound of how deeply `yaml` nests, read from its text before any parsing: the YAML parser
 * recurses once per level, and about a thousand levels (2 KB of `[` or `- `) overflow its stack.
 * Per line: the indentation levels in force, the compact collections the line opens (its leading
 * `- ` and `? ` indicators, and one for a `key: `), and the flow brackets open at any point (carried
 * over lines). Quoted text and comments are skipped. It may overestimate, never underestimate.
 */
export function yamlNestingBound(yaml: string): number {
  let flow = 0;
  let max = 0;
  const indents: number[] = [];
  for (const line of yaml.split('\n')) {
    const indent = line.length - line.trimStart().length;
    const content = line.slice(indent);
    if (content === '' || content.startsWith('#')) continue;
    while (indents.length > 0 && indents[indents.length - 1] >= indent) indents.pop();
    indents.push(indent);
    const leading = /^(?:[-?](?: +|$))*/.exec(content)?.[0] ?? '';
    let compact = leading.replace(/ /g, '').length;
    let quote: string | undefined;
    let key = false;
    for (let i = leading.length; i < content.length; i++) {
      const c = content[i];
      if (quote) {
        if (c === quote) quote = undefined;
        else if (c === '\\' && quote === '"') i++;
        continue;
      }
      if (c === '"' || c === "'") quote = c;
      else if (c === '[' || c === '{') flow++;
      else if (c === ']' || c === '}') flow = Math.max(0, flow - 1);
      else if (c === ':' && (content[i + 1] === ' ' || i + 1 === content.length)) key = true;
      else if (c === '#' && content[i - 1] === ' ') break;
      max = Math.max(max, indents.length + compact + flow + 1);
    }
    compact += key ? 1 : 0;
    max = Math.max(max, indents.length + compact + flow);
  }
  return max;
}

/** Parses the YAML of a front-matter block. Strict: any error, warning or non-mapping is BAD_REQUEST. */
export function parseFrontMatterYaml(yaml: string, limits: FmLimits): FrontMatter {
  if (Buffer.byteLength(yaml, 'utf8') > limits.maxFrontmatterBytes) {
    throw badRequest('invalid_frontmatter', `front matter is larger than ${limits.maxFrontmatterBytes} bytes`, 'frontmatter');
  }
  // Generous against the text (the bound overestimates); the exact depth is checked on the value.
  if (yamlNestingBound(yaml) > 4 * limits.maxFrontmatterDepth + 8) {
    throw badRequest('invalid_frontmatter', `front matter is nested deeper than ${limits.maxFrontmatterDepth} levels`, 'frontmatter');
  }
  const doc = parseDocument(yaml, { schema: 'core', uniqueKeys: true, prettyErrors: false, logLevel: 'silent', strict: true });
  if (doc.errors.length > 0) throw badRequest('invalid_frontmatter', `front matter is not valid YAML: ${firstLine(doc.errors[0].message)}`, 'frontmatter');
  if (doc.warnings.length > 0) {
    throw badRequest('invalid_frontmatter', `front matter uses unsupported YAML: ${firstLine(doc.warnings[0].message)}`, 'frontmatter');
  }
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: limits.maxFrontmatterAliases });
  } catch (err) {
    throw badRequest('invalid_frontmatter', `front matter is not acceptable YAML: ${firstLine((err as Error).message)}`, 'frontmatter');
  }
  if (value === null || value === undefined) return {};
  return validateFrontMatter(value, limits);
}

function firstLine(s: string): string {
  return s.split('\n')[0].slice(0, 200);
}

/** Strictly parses stored or raw markdown into front matter and body (writes). */
export function parseNoteStrict(text: string, limits: FmLimits): { frontmatter: FrontMatter; split: SplitNote } {
  const split = trySplit(text);
  if (!split) throw badRequest('invalid_frontmatter', 'front matter is opened with --- but never closed', 'body');
  const frontmatter = split.yaml === null ? {} : parseFrontMatterYaml(split.yaml, limits);
  return { frontmatter, split };
}

/**
 * Leniently parses stored text (reads): a note that arrived through git with broken front matter is
 * still readable, its whole text as the body.
 */
export function parseNoteLenient(text: string, limits: FmLimits): { frontmatter: FrontMatter; body: string } {
  try {
    const { frontmatter, split } = parseNoteStrict(text, limits);
    return { frontmatter, body: split.body };
  } catch {
    return { frontmatter: {}, body: text };
  }
}

/** The stored text of a note given as JSON. Without front matter keys there is no fence at all. */
export function composeNote(frontmatter: FrontMatter, body: string): string {
  if (Object.keys(frontmatter).length === 0) return body;
  // lineWidth 0: long values are never folded, so what a caller wrote stays on one line (and a
  // credential cannot hide from the scanner by being folded across lines).
  const yaml = stringify(frontmatter, { schema: 'core', lineWidth: 0, minContentWidth: 0 });
  return `---\n${yaml}---\n${body}`;
}

/** Iterates the lines of markdown, telling whether each is inside a fenced code block (or is a fence). */
export function* linesWithFences(body: string): Generator<{ line: string; code: boolean }> {
  let fence: { char: string; len: number } | null = null;
  for (const raw of body.split('\n')) {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    const m = /^ {0,3}(`{3,}|~{3,})(.*)$/.exec(line);
    if (fence) {
      if (m && m[1][0] === fence.char && m[1].length >= fence.len && m[2].trim() === '') fence = null;
      yield { line, code: true };
      continue;
    }
    if (m && !(m[1][0] === '`' && m[2].includes('`'))) {
      fence = { char: m[1][0], len: m[1].length };
      yield { line, code: true };
      continue;
    }
    yield { line, code: false };
  }
}

/**
 * Blanks out inline code spans (`x`, ``x``) so nothing inside them counts as a tag. A span closes
 * at the next backtick run of the same length; a scan per run length keeps this linear on hostile
 * input (a backtracking pattern is quadratic on long runs of backticks).
 */
export function withoutCodeSpans(line: string): string {
  if (!line.includes('`')) return line;
  const runs = [...line.matchAll(/`+/g)].map((m) => ({ start: m.index as number, len: m[0].length }));
  const byLength = new Map<number, number[]>();
  runs.forEach((r, i) => {
    const list = byLength.get(r.len);
    if (list) list.push(i);
    else byLength.set(r.len, [i]);
  });
  const cursor = new Map<number, number>();
  const chars = line.split('');
  for (let i = 0; i < runs.length; ) {
    const list = byLength.get(runs[i].len) as number[];
    let p = cursor.get(runs[i].len) ?? 0;
    while (p < list.length && list[p] <= i) p++;
    cursor.set(runs[i].len, p);
    if (p >= list.length) {
      i++;
      continue;
    }
    const close = runs[list[p]];
    for (let c = runs[i].start; c < close.start + close.len; c++) chars[c] = ' ';
    i = list[p] + 1;
  }
  return chars.join('');
}

/** Markdown is read only this far into a line for titles and excerpts, which are short anyway. */
const MAX_INLINE_CHARS = 1000;

/**
 * Inline markdown to plain text (links, images, emphasis, code ticks, HTML tags). Every quantifier
 * is bounded and the input capped: notes are user content, and unbounded patterns over a long line
 * of brackets would take quadratic time.
 */
export function inlineToPlain(s: string): string {
  return s
    .slice(0, MAX_INLINE_CHARS)
    .replace(/!\[([^\]\n]{0,300})\]\([^)\n]{0,300}\)/g, '$1')
    .replace(/\[\[([^\]|\n]{1,300})(?:\|([^\]\n]{1,300}))?\]\]/g, (_m, target: string, alias?: string) => alias ?? target)
    .replace(/\[([^\]\n]{0,300})\]\([^)\n]{0,300}\)/g, '$1')
    .replace(/<\/?[A-Za-z][^>\n]{0,200}>/g, '')
    .replace(/`+/g, '')
    .replace(/(\*\*|__|~~)(?=\S)([^\n]{0,300}?\S)\1/g, '$2')
    .replace(/(^|[^\w*])[*_](?=\S)([^*_\n]{0,300}?\S)[*_](?!\w)/g, '$1$2');
}

const MAX_TITLE = 200;

/**
 * The text of an ATX heading line (`## Text ##`), or null. Parsed by hand: the obvious pattern with
 * a lazy body and optional closing hashes backtracks quadratically on long runs of spaces.
 */
export function atxHeading(line: string): string | null {
  const open = /^ {0,3}#{1,6}(?=[ \t]|$)/.exec(line);
  if (!open) return null;
  let text = line.slice(open[0].length).trim();
  let end = text.length;
  while (end > 0 && text[end - 1] === '#') end--;
  if (end === 0) return '';
  if (end < text.length && (text[end - 1] === ' ' || text[end - 1] === '\t')) text = text.slice(0, end).trimEnd();
  return text;
}

/** The first heading's text as a title, or null when the body has no heading. */
export function headingTitle(body: string): string | null {
  for (const { line, code } of linesWithFences(body)) {
    if (code) continue;
    const heading = atxHeading(line);
    if (heading) {
      const text = inlineToPlain(heading.replace(/\s+/g, ' ')).trim();
      if (text) return text.slice(0, MAX_TITLE);
    }
  }
  return null;
}

/** The first heading's text, else the file name without `.md`. */
export function extractTitle(body: string, path: string): string {
  return headingTitle(body) ?? baseName(path).slice(0, -3);
}

/** Inline tag: `#` at the start or after whitespace, then [A-Za-z0-9_/-]+, not all digits. */
const INLINE_TAG = /(?<=^|\s)#([A-Za-z0-9_/-]+)/g;
const MAX_TAGS = 100;
const MAX_TAG_CHARS = 100;

function frontMatterTags(fm: FrontMatter): string[] {
  const raw = fm.tags;
  const items: string[] = [];
  if (typeof raw === 'string') items.push(...raw.split(/[,\s]+/));
  else if (Array.isArray(raw)) {
    for (const v of raw) if (typeof v === 'string' || typeof v === 'number') items.push(String(v));
  }
  return items.map((t) => t.trim().replace(/^#/, '')).filter((t) => t.length > 0 && t.length <= MAX_TAG_CHARS);
}

/** Tags of a note: front matter `tags` first, then inline `#tags` outside code spans and fences. */
export function extractTags(fm: FrontMatter, body: string): string[] {
  const seen = new Set<string>(frontMatterTags(fm));
  for (const { line, code } of linesWithFences(body)) {
    if (seen.size >= MAX_TAGS) break;
    if (code || !line.includes('#')) continue;
    for (const m of withoutCodeSpans(line).matchAll(INLINE_TAG)) {
      const tag = m[1];
      if (/^\d+$/.test(tag) || tag.length > MAX_TAG_CHARS) continue;
      seen.add(tag);
    }
  }
  return [...seen].slice(0, MAX_TAGS);
}

const EXCERPT_CHARS = 200;

/** A plain-text preview of the body: the title heading, code blocks and markup left out. */
export function makeExcerpt(body: string): string {
  const parts: string[] = [];
  let length = 0;
  let first = true;
  for (const { line, code } of linesWithFences(body)) {
    if (length > EXCERPT_CHARS * 2) break;
    if (code) continue;
    const trimmed = line.trim();
    if (trimmed === '') continue;
    // The leading heading is the title, shown beside the excerpt already.
    if (first && atxHeading(line) !== null) {
      first = false;
      continue;
    }
    first = false;
    if (/^([-*_])(\s*\1){2,}$/.test(trimmed) || /^\|?[\s:-]+\|[\s|:-]*$/.test(trimmed)) continue;
    const text = inlineToPlain(
      trimmed
        .replace(/^#{1,6}\s+/, '')
        .replace(/^(>\s*)+/, '')
        .replace(/^([-*+]|\d+[.)])\s+(\[[ xX]\]\s+)?/, '')
        .replace(/\|/g, ' '),
    ).trim();
    if (text) {
      parts.push(text);
      length += text.length + 1;
    }
  }
  const plain = parts.join(' ').replace(/\s+/g, ' ').trim();
  if (plain.length <= EXCERPT_CHARS) return plain;
  const cut = plain.slice(0, EXCERPT_CHARS);
  const space = cut.lastIndexOf(' ');
  return `${(space > EXCERPT_CHARS / 2 ? cut.slice(0, space) : cut).trimEnd()}…`;
}

/** Everything the index keeps about a note, derived from its stored text. */
export interface NoteMeta {
  title: string;
  tags: string[];
  excerpt: string;
  size: number;
}

export function describeNote(text: string, path: string, limits: FmLimits): NoteMeta {
  const { frontmatter, body } = parseNoteLenient(text, limits);
  return {
    title: extractTitle(body, path),
    tags: extractTags(frontmatter, body),
    excerpt: makeExcerpt(body),
    size: Buffer.byteLength(text, 'utf8'),
  };
}
