/**
 * HTML built by construction: every value interpolated into `html\`…\`` is escaped unless it is
 * already `SafeHtml` (another template, or the sanitiser's output). Templates therefore cannot
 * forget an escape; the only ways to write raw markup are `html` itself and `trusted`, which is
 * used for the sanitised README and the JSON-LD block, each of which escapes by its own rules.
 */
export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

export type HtmlValue = SafeHtml | string | number | boolean | undefined | null | readonly HtmlValue[];

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ESCAPES[c] as string);
}

function render(v: HtmlValue): string {
  if (v === undefined || v === null || v === false || v === true) return '';
  if (v instanceof SafeHtml) return v.value;
  if (Array.isArray(v)) return v.map(render).join('');
  return escapeHtml(String(v));
}

export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): SafeHtml {
  let out = strings[0];
  for (let i = 0; i < values.length; i++) out += render(values[i]) + strings[i + 1];
  return new SafeHtml(out);
}

/** Markup that was produced by a sanitiser or serialiser with its own escaping rules. */
export function trusted(markup: string): SafeHtml {
  return new SafeHtml(markup);
}

/** JSON inside `<script type="application/ld+json">`: `<` escaped so no text can close the element. */
export function jsonScriptBody(value: unknown): SafeHtml {
  return new SafeHtml(
    JSON.stringify(value)
      .replace(/</g, '\\u003c')
      .replace(/\u2028/g, '\\u2028')
      .replace(/\u2029/g, '\\u2029'),
  );
}

/** XML text and attribute escaping (Atom, sitemap). */
export function escapeXml(s: string): string {
  // Characters XML 1.0 cannot carry at all are dropped rather than producing an ill-formed feed.
  return s.replace(/[^\u0009\u000a\u000d\u0020-\ud7ff\ue000-\ufffd\u{10000}-\u{10ffff}]/gu, '').replace(/[&<>"']/g, (c) => ESCAPES[c] as string);
}
