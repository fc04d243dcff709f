import * as z from 'zod';
import '../shared/zod-openapi';

/** The `/v1/tokens` requests of the `/v1` contract (personal access tokens), re-exported by `schemas.ts`; their responses are in `response-schemas.ts`. */

export const CreateTokenBody = z
  .object({
    name: z.string({ error: 'is required and must be a string' }).openapi({ description: 'What the token is for: 1-100 characters.', example: 'laptop git' }),
    scopes: z.array(z.string({ error: 'must be strings' }), { error: 'is required and must be an array' }).openapi({
      description: '`["memory:read"]` (read-only) or `["memory:read", "memory:write"]` (read-write); at most what the signed-in token holds.',
      example: ['memory:read', 'memory:write'],
    }),
    memories: z
      .array(z.string({ error: 'must be strings' }), { error: 'must be an array' })
      .optional()
      .openapi({
        description:
          "Memory names the token reaches (1-100), among the sign-in's; omitted: the sign-in's grant (every memory of the account, unless it is limited).",
      }),
    pathPrefix: z.string({ error: 'must be a string' }).optional().openapi({
      description:
        'A folder (e.g. `projects/alpha`): the token reaches only the notes inside it (subfolders included) in each memory; it may then not export, use git, retire or restore memories, nor move with updateLinks, and reads history and diffs of one note at a time.',
      example: 'projects/alpha',
    }),
    expiresInDays: z
      .number({ error: 'must be a number' })
      .int({ error: 'must be an integer' })
      .optional()
      .openapi({ minimum: 1, maximum: 366, default: 90, description: 'Lifetime in days (AUTH_PAT_DEFAULT_DAYS, at most AUTH_PAT_MAX_DAYS).' }),
  })
  .openapi('CreateTokenRequest');

export const TokenParams = z.object({ id: z.string().openapi({ description: 'The token id (12 letters and digits), as listed.', example: 'k3J9aQ2mZx0B' }) });
