import { extendZodWithOpenApi } from '@asteasolutions/zod-to-openapi';
import { ZodType } from 'zod';

/**
 * Adds `.openapi()` to zod's schemas, once for the whole bundle; a module whose schemas carry
 * OpenAPI metadata imports this first. The extension patches `ZodType.prototype` only, so that is
 * all it is given: handing it the `z` namespace (as `extendZodWithOpenApi(z)` does) uses the
 * namespace as a value, and the bundler must then keep every export of zod, its 170 KB of error
 * messages in 40 languages included, which each cold start compiles for nothing.
 */
extendZodWithOpenApi({ ZodType } as Parameters<typeof extendZodWithOpenApi>[0]);
