import * as z from 'zod';
import '../shared/zod-openapi';
import { ValidationError } from '../shared/http/query';
import type { CatalogFilters } from './domain/ports';
import { CATEGORIES, REGISTRY_TYPES } from './domain/types';

/**
 * The catalog's query vocabulary, written once for every surface that reads it (the JSON API, the
 * site's pages, the MCP tools): the filters, the slug, a paging integer, with the same ranges and
 * messages everywhere, so a URL that works on the API works on a page. The zod pieces carry their
 * OpenAPI descriptions (the API's `/openapi.json` is generated from them).
 */
const INT = /^[+-]?\d+$/;

/** A query integer: digits only (no `1.5`, `1e3`, ` 5`), then range-checked, with plain messages. */
export function intParam(min: number, max: number, def: number, description: string) {
  return z
    .preprocess(
      (v) => (typeof v === 'string' && INT.test(v) ? Number(v) : v),
      z
        .number({ error: 'must be an integer' })
        .int({ error: 'must be an integer' })
        .min(min, { error: `must be at least ${min}` })
        .max(max, { error: `must be at most ${max}` }),
    )
    .default(def)
    .openapi({ type: 'integer', minimum: min, maximum: max, default: def, description });
}

const MULTI_NOTE =
  'Several values may be given as repeated parameters (`?{p}=a&{p}=b`) or as a comma-separated list (`?{p}=a,b`); values of one parameter OR-combine, different parameters AND-combine.';

function multi<T extends z.ZodType>(item: T, name: string, description: string) {
  return z
    .array(item)
    .min(1)
    .max(20, { error: 'at most 20 values' })
    .optional()
    .openapi({
      description: `${description} ${MULTI_NOTE.replaceAll('{p}', name)}`,
      param: { style: 'form', explode: true },
    });
}

const typeItem = z.enum(REGISTRY_TYPES, { error: `must be one of ${REGISTRY_TYPES.join(', ')}` });
const categoryItem = z.enum(CATEGORIES, { error: `must be one of the ${CATEGORIES.length} category labels: ${CATEGORIES.join(', ')}` });
const freeItem = (what: string) =>
  z
    .string()
    .trim()
    .min(1, { error: `${what} values must not be empty` })
    .max(80, { error: `${what} values must be at most 80 characters` });

const DECIMAL = /^\d{1,3}(\.\d+)?$/;

/** `uptimeMin`: a plain decimal percent (`99`, `99.5`), no sign or exponent. */
const uptimeMin = z
  .preprocess(
    (v) => (typeof v === 'string' && DECIMAL.test(v) ? Number(v) : v),
    z.number({ error: 'must be a number from 0 to 100' }).min(0, { error: 'must be at least 0' }).max(100, { error: 'must be at most 100' }),
  )
  .optional()
  .openapi({
    type: 'number',
    minimum: 0,
    maximum: 100,
    description: 'Only servers whose 30-day uptime (the `uptime` field) is at least this percent; servers without check history are left out.',
  });

/** `up`: `true` leaves out servers marked down; `false` (as absent) does not filter. */
const up = z
  .enum(['true', 'false'], { error: 'must be true or false' })
  .optional()
  .transform((v) => (v === undefined ? undefined : v === 'true'))
  .openapi({
    type: 'string',
    enum: ['true', 'false'],
    description: '`true`: leave out servers marked `down` (their last checks all failed); servers without check history stay. `false` does not filter.',
  });

export const filterParams = {
  type: multi(typeItem, 'type', 'Package registry type; `remote` means the server has at least one hosted endpoint.'),
  category: multi(categoryItem, 'category', 'Category label (exact).'),
  language: multi(freeItem('language'), 'language', 'Exact GitHub language; an unknown value matches nothing.'),
  license: multi(freeItem('license'), 'license', 'GitHub license name or SPDX id; an unknown value matches nothing.'),
  uptimeMin,
  up,
};

export const MULTI_KEYS = ['type', 'category', 'language', 'license'] as const;

export const SlugParamSchema = z.object({
  slug: z
    .string()
    .trim()
    .min(1, { error: 'must not be empty' })
    .max(200, { error: 'must be at most 200 characters' })
    .openapi({ description: 'Catalog identifier, 1-200 characters.' }),
});

/** The slug of a path (`/api/mcps/{slug}`, `/servers/{slug}`), trimmed; a `ValidationError` on field `slug` otherwise. */
export function validateSlug(params: Record<string, string>): { slug: string } {
  const parsed = SlugParamSchema.safeParse(params);
  if (!parsed.success) throw new ValidationError(parsed.error.issues.map((i) => ({ field: 'slug', message: i.message })));
  return parsed.data;
}

/** The filters of a validated query, without the keys it left out. */
export function filtersOf(q: CatalogFilters): CatalogFilters {
  return {
    ...(q.type && { type: q.type }),
    ...(q.category && { category: q.category }),
    ...(q.language && { language: q.language }),
    ...(q.license && { license: q.license }),
    ...(q.uptimeMin !== undefined && { uptimeMin: q.uptimeMin }),
    ...(q.up === true && { up: true }),
  };
}
