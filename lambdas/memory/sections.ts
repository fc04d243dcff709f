import { badRequest, MemoryError } from './errors';
import { atxHeading, inlineToPlain, linesWithFences } from './markdown';

/**
 * Parts of a note's body (pure functions): its headings and the sections they open, addresses of
 * sections (`Plans > June`), line ranges (`10-40`), so that a reader takes only what it needs.
 *
 * Headings are CommonMark's top-level ones: ATX (`## Plans`) and setext (a paragraph underlined
 * with `===` or `---`, which may span several lines); nothing inside fenced or indented code, block
 * quotes or list items is a heading. A section runs from its heading to the line before the next
 * heading of the same or a higher level (so it holds its subsections), or to the end of the body.
 *
 * Lines are the body's (the note after its front matter), numbered from 1; a final line break ends
 * the last line rather than starting an empty one.
 */
export interface Heading {
  /** 1-6. */
  level: number;
  /** The heading's text as plain text (markup removed, whitespace collapsed). */
  text: string;
  /** `text` lower-cased: what addresses are compared with. */
  key: string;
  /** First and last line of the heading itself (a setext heading spans its paragraph and underline), 1-based. */
  line: number;
  /** Last line of its section, 1-based. */
  end: number;
}

const ATX_OPEN = /^ {0,3}(#{1,6})(?=[ \t]|$)/;
const SETEXT = /^ {0,3}(=+|-+)[ \t]*$/;
const THEMATIC = /^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/;
const FENCE = /^ {0,3}(?:`{3,}|~{3,})/;
/** A list item's marker and the spaces after it (a block quote's `>` is handled apart). */
const ITEM = /^( {0,3})([-*+]|(\d{1,9})[.)])([ \t]*)/;
const QUOTE = /^ {0,3}> ?/;

const plain = (s: string): string => inlineToPlain(s.replace(/\s+/g, ' ')).replace(/\s+/g, ' ').trim();

/** Leading spaces, a tab counting to the next multiple of four. */
function indentOf(line: string): number {
  let n = 0;
  for (const c of line) {
    if (c === ' ') n++;
    else if (c === '\t') n += 4 - (n % 4);
    else break;
  }
  return n;
}

/** A list item's marker (followed by a space, or alone on its line), or null. */
function itemMarker(line: string): RegExpExecArray | null {
  const m = ITEM.exec(line);
  return m && (m[4] !== '' || m[0].length === line.length) ? m : null;
}

/** Whether a container's content line leaves an open paragraph (so the lines after it may continue it lazily). */
function leavesParagraph(content: string): boolean {
  for (let rest = content; ; ) {
    if (rest.trim() === '' || ATX_OPEN.test(rest) || THEMATIC.test(rest) || FENCE.test(rest) || indentOf(rest) >= 4) return false;
    const item = itemMarker(rest);
    const quote = QUOTE.exec(rest);
    if (item) rest = rest.slice(item[0].length);
    else if (quote) rest = rest.slice(quote[0].length);
    else return true;
  }
}

/** Where each line starts in `body`, and how many lines it has. */
export function lineStarts(body: string): { starts: number[]; total: number } {
  const starts = [0];
  for (let i = body.indexOf('\n'); i >= 0; i = body.indexOf('\n', i + 1)) starts.push(i + 1);
  // A final line break ends the last line; an empty body has no line.
  const total = body.length === 0 ? 0 : body.endsWith('\n') ? starts.length - 1 : starts.length;
  return { starts, total };
}

/**
 * The top-level headings of a body, in order, each with the extent of its section. A line scanner
 * after CommonMark's block rules as far as headings need them: paragraphs (a setext underline turns
 * the open one into a heading), fenced and indented code, thematic breaks, and list items and
 * block quotes (whose lines, lazy continuations included, hold no top-level heading). The unit
 * tests check it against a CommonMark parser on generated notes.
 */
export function parseHeadings(body: string): Heading[] {
  const found: Array<{ level: number; raw: string; line: number }> = [];
  const lines: string[] = [];
  // The open top-level paragraph's first line (0-based), or -1.
  let para = -1;
  // The list item or block quote the lines belong to, and whether its last block is an open paragraph.
  let container: { item: boolean; indent: number } | undefined;
  let lazy = false;
  let n = -1;
  for (const { line, code } of linesWithFences(body)) {
    lines.push(line);
    n++;
    const indent = indentOf(line);
    if (line.trim() === '') {
      para = -1;
      lazy = false;
      if (container && !container.item) container = undefined;
      continue;
    }
    if (code) {
      // A fence outside the container ends it; its lines are code either way.
      if (container && !(container.item && indent >= container.indent)) container = undefined;
      para = -1;
      lazy = false;
      continue;
    }
    if (container) {
      const inItem = container.item && indent >= container.indent;
      const quoted = !container.item && QUOTE.test(line);
      if (inItem || quoted) {
        const content = inItem ? line.slice(container.indent) : line.replace(QUOTE, '');
        // An underline under the container's paragraph makes it a heading (of the container, not the note).
        lazy = lazy && SETEXT.test(content) ? false : leavesParagraph(content);
        continue;
      }
      // A lazy continuation line: paragraph text that starts no block of its own.
      if (lazy && !ATX_OPEN.test(line) && !THEMATIC.test(line) && !FENCE.test(line) && !itemMarker(line) && !QUOTE.test(line)) continue;
      container = undefined;
      lazy = false;
    }
    if (ATX_OPEN.test(line)) {
      found.push({ level: (ATX_OPEN.exec(line) as RegExpExecArray)[1].length, raw: atxHeading(line) ?? '', line: n + 1 });
      para = -1;
      continue;
    }
    const setext = SETEXT.exec(line);
    if (setext && para >= 0) {
      found.push({ level: setext[1][0] === '=' ? 1 : 2, raw: lines.slice(para, n).join(' '), line: para + 1 });
      para = -1;
      continue;
    }
    if (para === -1 && indent >= 4) continue; // indented code
    if (THEMATIC.test(line)) {
      para = -1;
      continue;
    }
    const item = itemMarker(line);
    if (item) {
      const empty = item[0].length === line.trimEnd().length;
      // An empty item, or an ordered one not starting at 1, cannot interrupt a paragraph: it continues it.
      if (para >= 0 && (empty || (item[3] !== undefined && Number(item[3]) !== 1))) continue;
      const spaces = indentOf(line.slice(item[1].length + item[2].length).replace(/\S[\s\S]*$/, ''));
      const width = item[1].length + item[2].length + (empty || spaces > 4 ? 1 : spaces);
      container = { item: true, indent: width };
      lazy = !empty && leavesParagraph(line.slice(item[0].length));
      para = -1;
      continue;
    }
    if (QUOTE.test(line)) {
      container = { item: false, indent: 0 };
      lazy = leavesParagraph(line.replace(QUOTE, ''));
      para = -1;
      continue;
    }
    if (para === -1) para = n;
  }
  const { total } = lineStarts(body);
  return found.map((h, k) => {
    let next = k + 1;
    while (next < found.length && found[next].level > h.level) next++;
    const end = next < found.length ? found[next].line - 1 : total;
    const text = plain(h.raw);
    return { level: h.level, text, key: text.toLowerCase(), line: h.line, end: Math.max(h.line, end) };
  });
}

const norm = (s: string): string => plain(s).toLowerCase();

const LEVEL = /^(#{1,6})[ \t]+(.*)$/;
const INDEX = /^(.*?)[ \t]*#(\d{1,6})$/;
const MAX_ADDRESS = 1000;

/** Headings matching one segment of an address, in document order, among `pool`. */
function matchSegment(seg: string, pool: readonly number[], headings: readonly Heading[]): number[] {
  const m = LEVEL.exec(seg.trim());
  const level = m ? m[1].length : undefined;
  const text = m ? m[2] : seg;
  const like = (t: string) => {
    const key = norm(t);
    return pool.filter((k) => (level === undefined || headings[k].level === level) && headings[k].key === key);
  };
  const exact = like(text);
  if (exact.length > 0) return exact;
  // `June#2`: the second of them (only when no heading is called `June#2` itself).
  const idx = INDEX.exec(text.trim());
  if (!idx) return [];
  const pick = like(idx[1])[Number(idx[2]) - 1];
  return pick === undefined ? [] : [pick];
}

/** The headings inside the sections of `parents` (at any depth below them), in order. */
function inside(parents: readonly number[], headings: readonly Heading[]): number[] {
  const out = new Set<number>();
  // A section's headings follow it, up to its end: every one of them is deeper.
  for (const p of parents) for (let k = p + 1; k < headings.length && headings[k].line <= headings[p].end; k++) out.add(k);
  return [...out].sort((a, b) => a - b);
}

/**
 * The heading an address names, or undefined. An address is a heading's text (`June`), optionally
 * with its level (`### June`), or a path of them from an enclosing heading down (`Plans > June`,
 * `## Plans > ### June`; each step at any depth below the previous one). Text is compared as plain
 * text, case-insensitively. A repeated heading is the first one in the note unless the address
 * ends in `#N`: `June#2` is the second `June` (in the section named before it, if any). The whole
 * address is first tried as one heading's text, so a heading containing `>` or ending in `#2` is
 * still found by its own text.
 */
export function findSection(headings: readonly Heading[], address: string): number | undefined {
  const all = headings.map((_, k) => k);
  const whole = matchSegment(address, all, headings);
  if (whole.length > 0) return whole[0];
  const segs = address.split('>');
  if (segs.length < 2) return undefined;
  let current = all;
  for (const [i, seg] of segs.entries()) {
    current = matchSegment(seg, i === 0 ? all : inside(current, headings), headings);
    if (current.length === 0) return undefined;
  }
  return current[0];
}

/**
 * The shortest address that names heading `k` (what search results and partial reads report, and
 * what `section` takes back): its own text when that is the first such heading, else with enclosing
 * headings' texts before it, else `text#N`.
 */
export function sectionAddress(headings: readonly Heading[], k: number): string {
  const chain: number[] = [k];
  for (let j = k - 1; j >= 0; j--) {
    if (headings[j].level < headings[chain[0]].level && headings[k].line <= headings[j].end) chain.unshift(j);
  }
  for (let len = 1; len <= chain.length; len++) {
    const texts = chain.slice(-len).map((c) => headings[c].text);
    if (texts.some((t) => t === '' || t.includes('>'))) break;
    const address = texts.join(' > ');
    if (findSection(headings, address) === k) return address;
  }
  const same = headings.filter((h, j) => j <= k && h.key === headings[k].key).length;
  return `${headings[k].text}#${same}`;
}

/** The heading whose section holds body line `line` most closely (its deepest one), if any. */
export function headingAt(headings: readonly Heading[], line: number): number | undefined {
  let best: number | undefined;
  headings.forEach((h, k) => {
    if (h.line <= line && line <= h.end) best = k;
  });
  return best;
}

/** A `lines` argument: `10-40`, `10` or `10-` (to the end), 1-based and inclusive. */
export function parseLineRange(raw: string): { from: number; to: number } {
  const m = /^(\d{1,9})(?:(-)(\d{1,9})?)?$/.exec(raw.trim());
  const bad = () =>
    badRequest('invalid_argument', `lines must be a range of body lines such as "10-40", "10" or "10-" (from 1), not "${raw.slice(0, 40)}"`, 'lines');
  if (!m) throw bad();
  const from = Number(m[1]);
  const to = m[2] === undefined ? from : m[3] === undefined ? Number.MAX_SAFE_INTEGER : Number(m[3]);
  if (from < 1) throw bad();
  if (to < from) throw badRequest('invalid_argument', `lines "${raw}" ends before it starts`, 'lines');
  return { from, to };
}

export interface PartQuery {
  /** A section address (see `findSection`). */
  section?: string;
  /** A line range (see `parseLineRange`). */
  lines?: string;
  /** Only the front matter. */
  frontmatterOnly?: boolean;
}

/** What a partial read returned: which part of the body, of how many lines. */
export interface NotePart {
  /** The section's address (as `sectionAddress` writes it). */
  section?: string;
  /** The body lines returned, 1-based and inclusive. */
  lines?: [number, number];
  frontmatterOnly?: true;
  /** Lines of the whole body. */
  of: number;
}

/** Checks a part query's shape: at most one of its three, each of the right type. */
export function checkPartQuery(q: PartQuery): void {
  const given = (['section', 'lines', 'frontmatterOnly'] as const).filter((k) => q[k] !== undefined && q[k] !== false);
  if (given.length > 1) throw badRequest('invalid_argument', `give one of section, lines and frontmatterOnly, not ${given.join(' and ')}`, given[1]);
  if (q.section !== undefined) {
    if (typeof q.section !== 'string' || q.section.trim() === '')
      throw badRequest('invalid_argument', 'section must be the text of a heading, e.g. "Plans > June"', 'section');
    if (q.section.length > MAX_ADDRESS) throw badRequest('invalid_argument', `section is longer than ${MAX_ADDRESS} characters`, 'section');
  }
  if (q.lines !== undefined) {
    if (typeof q.lines !== 'string') throw badRequest('invalid_argument', 'lines must be a string such as "10-40"', 'lines');
    parseLineRange(q.lines);
  }
  if (q.frontmatterOnly !== undefined && typeof q.frontmatterOnly !== 'boolean')
    throw badRequest('invalid_argument', 'frontmatterOnly must be a boolean', 'frontmatterOnly');
}

const MAX_LISTED = 20;

/**
 * The part of `body` a query asks for, with what it is. `path` names the note in messages. A
 * section that does not exist is NOT_FOUND naming the headings there are (up to 20); a range that
 * starts past the last line is BAD_REQUEST; one that ends past it is cut there.
 */
export function selectPart(body: string, q: PartQuery, path: string): { text: string; part: NotePart } | undefined {
  checkPartQuery(q);
  const { starts, total } = lineStarts(body);
  const slice = (from: number, to: number): string => body.slice(starts[from - 1] ?? body.length, to >= total ? body.length : starts[to]);
  if (q.frontmatterOnly) return { text: '', part: { frontmatterOnly: true, of: total } };
  if (q.lines !== undefined) {
    const { from, to } = parseLineRange(q.lines);
    if (from > total) {
      throw badRequest(
        'invalid_argument',
        `lines "${q.lines}" start past the end of the body of "${path}", which has ${total} line${total === 1 ? '' : 's'}`,
        'lines',
      );
    }
    const last = Math.min(to, total);
    return { text: slice(from, last), part: { lines: [from, last], of: total } };
  }
  if (q.section !== undefined) {
    const headings = parseHeadings(body);
    const k = findSection(headings, q.section);
    if (k === undefined) throw sectionNotFound(q.section, path, headings);
    const h = headings[k];
    return { text: slice(h.line, h.end), part: { section: sectionAddress(headings, k), lines: [h.line, h.end], of: total } };
  }
  return undefined;
}

function sectionNotFound(address: string, path: string, headings: readonly Heading[]): MemoryError {
  const shown = headings.slice(0, MAX_LISTED).map((h) => `${'#'.repeat(h.level)} ${h.text}`);
  const more = headings.length > MAX_LISTED ? ` and ${headings.length - MAX_LISTED} more` : '';
  const list = headings.length === 0 ? 'it has no headings' : `its headings are: ${shown.join(', ')}${more}`;
  return new MemoryError('NOT_FOUND', 'section_not_found', `section "${address.slice(0, 200)}" does not exist in note "${path}"; ${list}`, {
    field: 'section',
  });
}
