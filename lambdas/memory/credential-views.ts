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

/** The text with invisible characters removed and compatibility forms folded (NFKC); undefined when that changes nothing. */
export function readable(text: string): string | undefined {
  let out = text.replace(INVISIBLE, '');
  if (COMPATIBILITY.test(out)) out = out.normalize('NFKC');
  return out === text ? undefined : out;
}

const lines = (text: string): string[] => text.split('\n').map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l));

const TOKEN_END = /[A-Za-z0-9_+/=-]{4,}$/;
const TOKEN_START = /^[A-Za-z0-9_+/=-]{4,}/;

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
  const flush = (): void => {
    if (parts.length > 1) out.push({ text: parts.join(''), line: first + 1 });
    parts = [];
  };
  for (let i = 0; i < all.length; i++) {
    // The tail only: an anchored run at the end of a long line would be tried from every position.
    const end = i > 0 ? TOKEN_END.exec(all[i - 1].trimEnd().slice(-128))?.[0] : undefined;
    const start = TOKEN_START.exec(all[i].trimStart())?.[0];
    if (end && start && /[\d_-]/.test(end + start)) {
      if (parts.length === 0) {
        first = i - 1;
        parts.push(all[i - 1].trimEnd());
      }
      parts.push(all[i].trim());
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

const BASE64_RUN = /(?<![A-Za-z0-9+/=_-])[A-Za-z0-9+/_-]{16,}={0,2}(?![A-Za-z0-9+/=_-])/g;
const HEX_RUN = /(?:(?:\\x|0x|%)?[0-9a-fA-F]{2}[ :,]?){8,}/g;
const PERCENT = /%[0-9A-Fa-f]{2}/;
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
  for (const m of line.matchAll(BASE64_RUN)) {
    const run = m[0];
    if (/^[0-9a-fA-F]+$/.test(run) || /^[A-Za-z]+$/.test(run)) continue;
    const text = printableText(Buffer.from(run, 'base64'));
    if (text) out.push(text);
  }
  for (const m of line.matchAll(HEX_RUN)) {
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
