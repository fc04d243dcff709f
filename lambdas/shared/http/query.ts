import type { z } from 'zod';

export interface FieldIssue {
  field: string;
  message: string;
}

/** A query or body that failed validation, field by field; each API words it in its envelope (always a 400). */
export class ValidationError extends Error {
  readonly status = 400;

  constructor(
    readonly details: FieldIssue[],
    message = 'One or more parameters are invalid',
  ) {
    super(message);
    this.name = 'ValidationError';
  }
}

/**
 * Query strings are parsed from `rawQueryString`, because API Gateway's `queryStringParameters`
 * joins repeated keys with commas and would hide a single-valued parameter given twice.
 * Multi-valued keys accept repeats and comma lists alike (DECISIONS); single-valued keys given
 * twice are 400; unknown keys are ignored.
 */
export function parseRawQuery(raw: string | undefined): Map<string, string[]> {
  const out = new Map<string, string[]>();
  if (!raw) return out;
  for (const part of raw.split('&')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    const k = decodeComponent(eq < 0 ? part : part.slice(0, eq));
    const v = eq < 0 ? '' : decodeComponent(part.slice(eq + 1));
    const list = out.get(k);
    if (list) list.push(v);
    else out.set(k, [v]);
  }
  return out;
}

function decodeComponent(s: string): string {
  const plus = s.replace(/\+/g, ' ');
  try {
    return decodeURIComponent(plus);
  } catch {
    // A malformed escape is kept literally; the schema then judges the value.
    return plus;
  }
}

export interface QueryShape {
  /** Keys that take several values (repeated or comma-separated). */
  multi: readonly string[];
}

/** Validates a parsed query against a zod object schema; throws a `ValidationError` with per-field details. */
export function validateQuery<S extends z.ZodType>(schema: S, shape: QueryShape, raw: Map<string, string[]>): z.output<S> {
  const input: Record<string, string | string[]> = {};
  const issues: FieldIssue[] = [];
  const known = knownKeys(schema);
  for (const [key, values] of raw) {
    if (known && !known.has(key)) continue;
    if (shape.multi.includes(key)) {
      input[key] = values.flatMap((v) => v.split(',')).map((v) => v.trim());
    } else if (values.length > 1) {
      issues.push({ field: key, message: 'must be given at most once' });
    } else {
      input[key] = values[0];
    }
  }
  const parsed = schema.safeParse(input);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      const field = issue.path.length ? String(issue.path[0]) : 'query';
      if (!issues.some((i) => i.field === field)) issues.push({ field, message: issue.message });
    }
  }
  if (issues.length || !parsed.success) throw new ValidationError(issues);
  return parsed.data;
}

function knownKeys(schema: z.ZodType): Set<string> | undefined {
  const shape = (schema as unknown as { shape?: Record<string, unknown> }).shape;
  return shape ? new Set(Object.keys(shape)) : undefined;
}
