/**
 * The value readers of the registry row normaliser (`normalise.ts`): upstream rows are untyped
 * JSON, and each field is read through one of these, never cast.
 */

/**
 * The schema's `format: uri` takes any scheme; what the catalog serves and the crawler fetches is
 * web URLs only. The scheme as a browser reads it (WHATWG parsing lower-cases it).
 */
export function nonWebScheme(url: string): string | undefined {
  try {
    const scheme = new URL(url).protocol;
    return scheme === 'http:' || scheme === 'https:' ? undefined : scheme;
  } catch {
    return 'unparseable:';
  }
}

export type Obj = Record<string, unknown>;

export function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

/** A non-empty trimmed string, else undefined. */
export function text(v: unknown): string | undefined {
  if (typeof v !== 'string') return undefined;
  const t = v.trim();
  return t === '' ? undefined : t;
}

export function bool(v: unknown): boolean | undefined {
  return typeof v === 'boolean' ? v : undefined;
}

/** First defined value among keys (camelCase first, then legacy spellings). */
export function pick(o: Obj, ...keys: string[]): unknown {
  for (const k of keys) if (o[k] !== undefined) return o[k];
  return undefined;
}

/** ISO 8601 with millisecond precision, so timestamps compare as strings (upstream sends µs). */
export function isoMillis(v: unknown): string | undefined {
  if (typeof v !== 'string' || v === '') return undefined;
  const t = Date.parse(v);
  return Number.isNaN(t) ? undefined : new Date(t).toISOString();
}

/** Cut to `max` code points, ending with an ellipsis. */
export function clipText(s: string, max: number): string {
  const chars = Array.from(s);
  return chars.length <= max
    ? s
    : `${chars
        .slice(0, max - 1)
        .join('')
        .trimEnd()}…`;
}
