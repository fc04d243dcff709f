/**
 * A zod mirror of the official server.json schema 2025-12-11 (`ServerDetail`, draft-07), used to
 * validate normalised rows at runtime without shipping a JSON-Schema engine in the Lambda.
 *
 * It is kept honest by a differential test (`test/unit/crawler-normalise.test.ts`): for every row
 * of the registry sample, this schema and ajv with the official file must agree.
 *
 * Two draft-07 details matter: string lengths count code points (not UTF-16 units), and objects
 * allow additional properties unless the schema says otherwise, so these objects are `loose`.
 */

import * as z from 'zod';

/** Code points, as JSON Schema counts string length. */
export function codePointLength(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

/** `format: uri` as ajv-formats checks it: an absolute URI (scheme, no whitespace). */
export function isUri(s: string): boolean {
  if (!/^[a-z][a-z0-9+.-]*:[^\s]*$/i.test(s)) return false;
  try {
    new URL(s);
    return true;
  } catch {
    return false;
  }
}

const uri = z.string().refine(isUri, 'must be an absolute URI');
const HTTP_URL = /^https?:\/\/[^\s]+$/;

const input = z.looseObject({
  description: z.string().optional(),
  isRequired: z.boolean().optional(),
  format: z.enum(['string', 'number', 'boolean', 'filepath']).optional(),
  value: z.string().optional(),
  isSecret: z.boolean().optional(),
  default: z.string().optional(),
  placeholder: z.string().optional(),
  choices: z.array(z.string()).optional(),
});

const inputWithVariables = input.extend({ variables: z.record(z.string(), input).optional() });

const keyValueInput = inputWithVariables.extend({ name: z.string() });

const positionalArgument = inputWithVariables
  .extend({ type: z.literal('positional'), valueHint: z.string().optional(), isRepeated: z.boolean().optional() })
  .refine((a) => a.valueHint !== undefined || a.value !== undefined, 'a positional argument needs valueHint or value');

const namedArgument = inputWithVariables.extend({
  type: z.literal('named'),
  name: z.string(),
  isRepeated: z.boolean().optional(),
});

const argument = z.union([positionalArgument, namedArgument]);

const stdioTransport = z.looseObject({ type: z.literal('stdio') });
const streamableHttpTransport = z.looseObject({
  type: z.literal('streamable-http'),
  url: z.string().regex(HTTP_URL),
  headers: z.array(keyValueInput).optional(),
});
const sseTransport = z.looseObject({
  type: z.literal('sse'),
  url: z.string().regex(HTTP_URL),
  headers: z.array(keyValueInput).optional(),
});

const packageSchema = z.looseObject({
  registryType: z.string(),
  registryBaseUrl: uri.optional(),
  identifier: z.string(),
  version: z
    .string()
    .min(1)
    .refine((v) => v !== 'latest', 'must be a specific version, not "latest"')
    .optional(),
  fileSha256: z
    .string()
    .regex(/^[a-f0-9]{64}$/)
    .optional(),
  runtimeHint: z.string().optional(),
  transport: z.union([stdioTransport, streamableHttpTransport, sseTransport]),
  runtimeArguments: z.array(argument).optional(),
  packageArguments: z.array(argument).optional(),
  environmentVariables: z.array(keyValueInput).optional(),
});

const remoteSchema = z.union([streamableHttpTransport, sseTransport]).and(z.looseObject({ variables: z.record(z.string(), input).optional() }));

const repositorySchema = z.looseObject({
  url: uri,
  source: z.string(),
  id: z.string().optional(),
  subfolder: z.string().optional(),
});

const iconSchema = z.looseObject({
  src: uri.refine((s) => codePointLength(s) <= 255, 'at most 255 characters'),
  mimeType: z.enum(['image/png', 'image/jpeg', 'image/jpg', 'image/svg+xml', 'image/webp']).optional(),
  sizes: z.array(z.string().regex(/^(\d+x\d+|any)$/)).optional(),
  theme: z.enum(['light', 'dark']).optional(),
});

const boundedText = (min: number, max: number) =>
  z.string().refine((s) => {
    const n = codePointLength(s);
    return n >= min && n <= max;
  }, `must be ${min}-${max} characters`);

export const serverDetailSchema = z.looseObject({
  $schema: uri.optional(),
  name: z
    .string()
    .regex(/^[a-zA-Z0-9.-]+\/[a-zA-Z0-9._-]+$/)
    .refine((s) => s.length >= 3 && s.length <= 200, 'must be 3-200 characters'),
  description: boundedText(1, 100),
  title: boundedText(1, 100).optional(),
  version: z.string().refine((s) => codePointLength(s) <= 255, 'at most 255 characters'),
  websiteUrl: uri.optional(),
  repository: repositorySchema.optional(),
  packages: z.array(packageSchema).optional(),
  remotes: z.array(remoteSchema).optional(),
  icons: z.array(iconSchema).optional(),
  _meta: z.looseObject({}).optional(),
});

/** Validation issues as short `path: message` lines (empty when valid). */
export function serverJsonIssues(doc: unknown): string[] {
  const out = serverDetailSchema.safeParse(doc);
  if (out.success) return [];
  return out.error.issues.map((i) => `${i.path.length ? i.path.join('.') : '(root)'}: ${i.message}`);
}
