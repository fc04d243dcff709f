import { isUtf8 } from 'node:buffer';

/**
 * The other ways a credential can be written in a note, as texts the credential rules can scan
 * (`credentials.ts`). A token hidden behind an invisible character, wrapped over two lines, named on
 * the line before its value, or encoded (base64, hex, `%XX`, `&#NN;`, `\xNN`) is the same credential
 * to whoever reads the note, so each view rewrites the text the way a reader (or a decoder) would.
 * Each view keeps, for every line it yields, the line of the original text it came from, so that a
 * finding still names the line of the note. Views are built only when the text holds what they undo.
 */
export interface ViewLine {
  text: string;
  /** 1-based line of the original text. */
  line: number;
}

/**
 * Code points that show as nothing: format characters (zero-width space and joiners, soft hyphen,
 * word joiner, BOM, bidi controls, tag characters), the combining grapheme joiner, Mongolian
 * variation selectors and the Hangul fillers.
 */
const INVISIBLE = /\p{Cf}|\u034F|[\u115F\u1160\u17B4\u17B5\u3164\uFFA0]|\u180B|\u180C|\u180D|\u180E|\u180F/gu;
/** Fullwidth and other compatibility forms NFKC folds into ASCII (`ＡＫＩＡ` is `AKIA`). */
const COMPATIBILITY = /[\u00A0-\u00BF\u2000-\u2BFF\u3000-\u303F\uFE30-\uFFEF]/;

const INVISIBLE_ONE = new RegExp(INVISIBLE.source, 'u');

/**
 * The text with invisible characters removed and compatibility forms folded (NFKC), and the lines
 * that changed (only those need scanning again); undefined when nothing changes.
 */
export function readable(text: string): { text: string; changed: ViewLine[] } | undefined {
  if (!INVISIBLE_ONE.test(text) && !COMPATIBILITY.test(text)) return undefined;
  const changed: ViewLine[] = [];
  const out = text.split('\n').map((line, i) => {
    let seen = line.replace(INVISIBLE, '');
    if (COMPATIBILITY.test(seen)) seen = seen.normalize('NFKC');
    if (seen !== line) changed.push({ text: seen, line: i + 1 });
    return seen;
  });
  return changed.length > 0 ? { text: out.join('\n'), changed } : undefined;
}

const lines = (text: string): string[] => text.split('\n').map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l));

const TOKEN_START = /^[A-Za-z0-9_+/=-]{4,}/;
const MAX_JOINED = 1024;

/** `A-Z a-z 0-9 _ + / = -` by code unit (a regex per character would dominate the scan of long texts). */
function isTokenChar(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 || c === 43 || c === 47 || c === 61 || c === 45;
}

/** The run of token characters that ends `line` (ignoring trailing spaces), read backwards: no regex tried from every position. */
function tokenEnd(line: string): string {
  let end = line.length;
  while (end > 0 && (line[end - 1] === ' ' || line[end - 1] === '\t' || line[end - 1] === '\r')) end--;
  let start = end;
  while (start > 0 && end - start < 128 && isTokenChar(line.charCodeAt(start - 1))) start--;
  return line.slice(start, end);
}

/**
 * Lines wrapped inside a token, joined back: a line ending in four or more token characters and a
 * next line starting with four or more, one of the two parts with a digit, `_` or `-` (prose words
 * do not join). Only the joined lines (the others are scanned as they are); undefined when none.
 */
export function unwrapped(text: string): ViewLine[] | undefined {
  const all = lines(text);
  const out: ViewLine[] = [];
  let parts: string[] = [];
  let first = 0;
  let length = 0;
  const flush = (): void => {
    if (parts.length > 1) out.push({ text: parts.join(''), line: first + 1 });
    parts = [];
    length = 0;
  };
  for (let i = 0; i < all.length; i++) {
    const tail = i > 0 ? tokenEnd(all[i - 1]) : '';
    const end = tail.length >= 4 ? tail : undefined;
    const start = TOKEN_START.exec(all[i].trimStart())?.[0];
    if (end && start && /[\d_-]/.test(end + start)) {
      // A joined run is cut at MAX_JOINED characters and the next starts again at its last line:
      // a token wrapped over a few lines is whole in one of them, and nothing joins a whole file.
      if (length > MAX_JOINED) {
        flush();
      }
      if (parts.length === 0) {
        first = i - 1;
        parts.push(all[i - 1].trimEnd());
        length = parts[0].length;
      }
      parts.push(all[i].trim());
      length += all[i].length;
      continue;
    }
    flush();
  }
  flush();
  return out.length > 0 ? out : undefined;
}

/** A line naming a secret with its value to follow (`AWS secret access key:`, `**Password**`, `api_key =`). */
const LABEL =
  /^[\s>*_#|`-]*((?:[A-Za-z0-9]+[ _.-]){0,4}(?:password|passwd|passphrase|pwd|secret(?:[ _-]access)?(?:[ _-]key)?|api[ _-]?key|apikey|access[ _-]?token|auth[ _-]?token|private[ _-]?key|client[ _-]?secret))[\s*_`]*[:=]?[\s*_`]*$/i;
const FENCE = /^\s*(```|~~~)/;

/**
 * A secret named on one line and given on the next non-empty one (outside a code fence's own line):
 * the pair as one `key: value` line, as the rules read an assignment. Only a value of one token.
 */
export function labelled(text: string): ViewLine[] | undefined {
  const all = lines(text);
  const out: ViewLine[] = [];
  for (let i = 0; i < all.length; i++) {
    const m = LABEL.exec(all[i]);
    if (!m) continue;
    let j = i + 1;
    while (j < all.length && (all[j].trim() === '' || FENCE.test(all[j])) && j - i <= 3) j++;
    const value = all[j]
      ?.trim()
      .replace(/^[>*_`"'-]+\s*|[*_`"',;]+$/g, '')
      .trim();
    if (!value || /\s/.test(value) || value.length < 6) continue;
    out.push({
      text: `${m[1]
        .trim()
        .replace(/[ .-]+/g, '_')
        .toLowerCase()}: ${value}`,
      line: i + 1,
    });
  }
  return out.length > 0 ? out : undefined;
}

const isHex = (c: number): boolean => (c >= 48 && c <= 57) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102);

/**
 * Whether anything a decoder below acts on is in `line` (a run of 16 token characters, `%XX`, an
 * entity, a `\x`/`\u` escape, `0x`): one pass by code unit, since most lines hold none.
 */
function decodable(line: string): boolean {
  let run = 0;
  for (let i = 0; i < line.length; i++) {
    const c = line.charCodeAt(i);
    if (isTokenChar(c) && c !== 61) {
      if (++run >= 16) return true;
    } else run = 0;
    if (c === 37 && isHex(line.charCodeAt(i + 1)) && isHex(line.charCodeAt(i + 2))) return true;
    if (c === 38) {
      const semi = line.indexOf(';', i);
      if (semi > i + 1 && semi - i <= 10) return true;
    }
    if (c === 92 && (line[i + 1] === 'x' || line[i + 1] === 'u')) return true;
  }
  return false;
}

/** Maximal runs of base64 or base64url characters (16 or more), with up to two `=` of padding, by code unit. */
function base64Runs(line: string): string[] {
  const out: string[] = [];
  let i = 0;
  while (i < line.length) {
    if (!isTokenChar(line.charCodeAt(i)) || line[i] === '=') {
      i++;
      continue;
    }
    let j = i;
    while (j < line.length && isTokenChar(line.charCodeAt(j)) && line[j] !== '=') j++;
    let k = j;
    while (k < line.length && k - j < 2 && line[k] === '=') k++;
    if (j - i >= 16) out.push(line.slice(i, k));
    i = k;
  }
  return out;
}

/**
 * Whether a base64 run can encode ASCII text: each group of four characters starts with a byte
 * below 0x80, so its first character is one of `A-Z a-f` (values 0-31). Random runs (hashes,
 * images, identifiers) fail within a few groups, before anything is decoded.
 */
function mayBeText(run: string): boolean {
  for (let i = 0; i < run.length && i < 96; i += 4) {
    const c = run.charCodeAt(i);
    if (!((c >= 65 && c <= 90) || (c >= 97 && c <= 102))) return false;
  }
  return true;
}

/** At least 90% of a decoded text must be printable for it to be read as text (random bytes are not). */
function printableText(bytes: Buffer): string | undefined {
  if (bytes.length < 8) return undefined;
  // Random bytes are rarely UTF-8: checked without decoding (a failed strict decode throws, which is slow).
  if (!isUtf8(bytes)) return undefined;
  const text = bytes.toString('utf8');
  const bad = text.match(UNPRINTABLE)?.length ?? 0;
  return bad <= text.length / 10 ? text : undefined;
}

const UNPRINTABLE = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F\p{Cn}\uFFFD]/gu;

const HEX_RUN = /(?:(?:\\x|0x|%)?[0-9a-fA-F]{2}[ :,]?){8,}/g;
const PERCENT = /%[0-9A-Fa-f]{2}/;
const LONG_RUN = /[A-Za-z0-9+/_-]{16}/;
const BARE_HEX = /[0-9a-fA-F]{16}/;
const ESCAPED_HEX = /(?:\\x|0x|%)[0-9a-fA-F]{2}|[0-9a-fA-F]{2}[ :,][0-9a-fA-F]{2}[ :,][0-9a-fA-F]{2}/;
const ENTITY = /&(?:#\d{1,7}|#x[0-9a-f]{1,6}|[a-z]{2,8});/i;
const ESCAPE = /\\(?:x[0-9a-f]{2}|u[0-9a-f]{4}|u\{[0-9a-f]{1,6}\})/i;

const NAMED: Record<string, string> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
  nbsp: ' ',
  equals: '=',
  colon: ':',
  sol: '/',
  period: '.',
  lowbar: '_',
  hyphen: '-',
  dash: '-',
  plus: '+',
  num: '#',
  commat: '@',
  excl: '!',
  percnt: '%',
  dollar: '$',
  lpar: '(',
  rpar: ')',
  semi: ';',
  comma: ',',
};

const fromCodePoint = (n: number): string => (n >= 0 && n <= 0x10ffff ? String.fromCodePoint(n) : '');

/** Runs of `%XX` decoded as UTF-8 bytes (latin1 when they are not UTF-8). */
function percentDecoded(line: string): string {
  return line.replace(/(?:%[0-9A-Fa-f]{2})+/g, (run) => {
    const bytes = Buffer.from(run.replace(/%/g, ''), 'hex');
    return bytes.toString(isUtf8(bytes) ? 'utf8' : 'latin1');
  });
}

/**
 * Texts decoded from encodings found in one line: base64 and hex runs that decode to text, the line
 * with its `%XX`, HTML entities and `\x`/`\u` escapes decoded. The caller scans each as a note of
 * its own (and decodes once more: an encoding inside an encoding).
 */
export function decodedTexts(line: string): string[] {
  const out: string[] = [];
  if (!decodable(line)) return out;
  // Most lines hold no run long enough to decode: one test each instead of a search from every position.
  const runs = LONG_RUN.test(line);
  for (const run of runs ? base64Runs(line) : []) {
    if (!mayBeText(run) || /^[0-9a-fA-F]+$/.test(run) || /^[A-Za-z]+$/.test(run)) continue;
    const text = printableText(Buffer.from(run, 'base64'));
    if (text) out.push(text);
  }
  for (const m of (runs && BARE_HEX.test(line)) || ESCAPED_HEX.test(line) ? line.matchAll(HEX_RUN) : []) {
    const hex = m[0].replace(/\\x|0x|[%: ,]/g, '');
    if (hex.length % 2 !== 0) continue;
    const text = printableText(Buffer.from(hex, 'hex'));
    if (text) out.push(text);
  }
  if (PERCENT.test(line)) out.push(percentDecoded(line));
  if (ENTITY.test(line)) {
    out.push(
      line.replace(/&(#\d{1,7}|#x[0-9a-f]{1,6}|[a-z]{2,8});/gi, (all, e: string) =>
        e[0] !== '#' ? (NAMED[e.toLowerCase()] ?? all) : fromCodePoint(e[1] === 'x' || e[1] === 'X' ? Number.parseInt(e.slice(2), 16) : Number(e.slice(1))),
      ),
    );
  }
  if (ESCAPE.test(line)) {
    out.push(
      line.replace(/\\x([0-9a-f]{2})|\\u([0-9a-f]{4})|\\u\{([0-9a-f]{1,6})\}/gi, (_all, x?: string, u?: string, cp?: string) =>
        fromCodePoint(Number.parseInt((x ?? u ?? cp) as string, 16)),
      ),
    );
  }
  return out;
}
