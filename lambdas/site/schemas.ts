import { CATEGORIES, SORTS, filterParams, intParam, MULTI_KEYS, SlugParamSchema } from '../catalog-core';
import * as z from 'zod';

/**
 * The pages' query parameters, written once with the catalog's own zod pieces: the same filters,
 * sorts, ranges and messages as `/api/mcps` and `/api/search`, so a URL that works on the API works
 * on the page and the other way round (page size aside: the site's is configuration). The site
 * also orders by `published` (the registry's time, "Newest in the registry"), which the API's
 * contract does not list.
 */

const page = intParam(1, Number.MAX_SAFE_INTEGER, 1, 'Page number, from 1.');

/** The filters form always sends its uptime box: left empty, it means no minimum (the API refuses an empty value). */
const pageFilters = { ...filterParams, uptimeMin: z.preprocess((v) => (v === '' ? undefined : v), filterParams.uptimeMin) };

export const ServersQuerySchema = z.object({
  page,
  ...pageFilters,
  sort: z.enum(SORTS, { error: `must be one of ${SORTS.join(', ')}` }).default('popularity'),
});

/** `q` may be absent or blank on the page (the search form); over 100 characters it is refused as on the API. */
export const SearchPageQuerySchema = z.object({
  q: z.string({ error: 'must be a string' }).trim().max(100, { error: 'must be at most 100 characters' }).default(''),
  page,
  ...pageFilters,
});

export const FeedQuerySchema = z.object({
  category: z.enum(CATEGORIES, { error: `must be one of the ${CATEGORIES.length} category labels: ${CATEGORIES.join(', ')}` }).optional(),
});

export const SitemapQuerySchema = z.object({
  /** Absent: the whole sitemap, or the index of its parts when it is split. */
  part: z
    .preprocess(
      (v) => (typeof v === 'string' && /^\d{1,4}$/.test(v) ? Number(v) : v),
      z
        .number({ error: 'must be an integer' })
        .int({ error: 'must be an integer' })
        .min(1, { error: 'must be at least 1' })
        .max(1000, { error: 'must be at most 1000' }),
    )
    .optional(),
});

export const AssetParamSchema = z.object({ file: z.string().regex(/^[a-z]+\.[0-9a-f]{10}\.(css|js|svg)$/, { error: 'is not an asset of this site' }) });

export { MULTI_KEYS, SlugParamSchema };
