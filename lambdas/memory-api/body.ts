import type { z } from 'zod';
import { header, type HttpEvent } from '../shared/http/types';
import { badRequest } from './errors';

/**
 * Request bodies of `/v1`. API Gateway hands textual bodies over as strings and others base64;
 * both become bytes here, checked against the request cap before anything is parsed, decoded as
 * strict UTF-8 (an invalid byte is 400, never a silently replaced character in a stored note).
 *
 * A content type we do not take is 400 BAD_REQUEST, not 415: spec 2's error table has no 415 and
 * clients switch on `{ error.code }`, so one code for every malformed request keeps them simple.
 */
export interface MediaType {
  /** Lower-cased `type/subtype`. */
  type: string;
  charset?: string;
}

export function mediaType(event: HttpEvent): MediaType | undefined {
  const raw = header(event, 'content-type');
  if (raw === undefined || raw.trim() === '') return undefined;
  const [type, ...params] = raw.split(';');
  let charset: string | undefined;
  for (const p of params) {
    const eq = p.indexOf('=');
    if (eq > 0 && p.slice(0, eq).trim().toLowerCase() === 'charset')
      charset = p
        .slice(eq + 1)
        .trim()
        .replace(/^"|"$/g, '')
        .toLowerCase();
  }
  return { type: type.trim().toLowerCase(), charset };
}

export const isJson = (m: MediaType | undefined): boolean =>
  m === undefined || m.type === 'application/json' || /^application\/[a-z0-9.+-]+\+json$/.test(m.type);
export const isMarkdown = (m: MediaType | undefined): boolean => m !== undefined && (m.type === 'text/markdown' || m.type === 'text/x-markdown');

/** The body as bytes (empty when there is none), refused past `maxBytes`. */
export function bodyBytes(event: HttpEvent, maxBytes: number): Buffer {
  const raw = event.body;
  if (raw === undefined || raw === null || raw === '') return Buffer.alloc(0);
  // Base64 is 4/3 of the bytes: a body far over the cap is refused before it is decoded.
  if (event.isBase64Encoded ? raw.length > Math.ceil(maxBytes / 3) * 4 + 4 : raw.length > maxBytes) tooLarge(maxBytes);
  const bytes = event.isBase64Encoded ? Buffer.from(raw, 'base64') : Buffer.from(raw, 'utf8');
  if (bytes.length > maxBytes) tooLarge(maxBytes);
  return bytes;
}

function tooLarge(maxBytes: number): never {
  throw badRequest(`The request body is larger than ${maxBytes} bytes`);
}

const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Strict UTF-8 text of a body; any other declared charset is refused. */
export function utf8Text(bytes: Buffer, media: MediaType | undefined): string {
  if (media?.charset !== undefined && media.charset !== 'utf-8' && media.charset !== 'utf8') {
    throw badRequest(`charset ${media.charset} is not supported; send UTF-8`);
  }
  try {
    return UTF8.decode(bytes);
  } catch {
    throw badRequest('The request body is not valid UTF-8');
  }
}

/**
 * A JSON object body validated by `schema`. `required: false` reads an absent body as `{}`.
 * Content type: `application/json` (or `+json`), or none at all (read as JSON).
 */
export function jsonBody<S extends z.ZodType>(event: HttpEvent, schema: S, maxBytes: number, opts: { required: boolean }): z.output<S> {
  const media = mediaType(event);
  const bytes = bodyBytes(event, maxBytes);
  let value: unknown = {};
  if (bytes.length === 0) {
    if (opts.required) throw badRequest('A JSON body is required');
  } else {
    if (!isJson(media)) throw badRequest(`Content-Type must be application/json, got ${media?.type ?? 'none'}`);
    value = parseJson(utf8Text(bytes, media));
  }
  return validate(schema, value);
}

export function parseJson(text: string): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw badRequest('The request body is not valid JSON');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw badRequest('The request body must be a JSON object');
  return value;
}

export function validate<S extends z.ZodType>(schema: S, value: unknown): z.output<S> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const field = issue?.path.length ? issue.path.map(String).join('.') : 'body';
  throw badRequest(`${field}: ${issue?.message ?? 'is invalid'}`);
}
