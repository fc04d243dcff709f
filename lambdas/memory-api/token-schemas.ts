import { extendZodWithOpenApi } from '@asteasolutions/zod-to-openapi';
import * as z from 'zod';

/** The `/v1/tokens` part of the `/v1` contract (personal access tokens), re-exported by `schemas.ts`. */
extendZodWithOpenApi(z);

const iso = z.string().openapi({ format: 'date-time', description: 'ISO 8601' });

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

const scope = z.enum(['memory:read', 'memory:write']);

export const TokenSchema = z
  .strictObject({
    id: z.string().openapi({ description: 'Also the part of the token after `mcpm_pat_`: a leaked token names its entry.' }),
    name: z.string(),
    scopes: z.array(scope),
    memories: z.array(z.string()).optional().openapi({ description: 'Omitted: every memory of the account.' }),
    pathPrefix: z.string().optional().openapi({ description: 'Omitted: whole memories.' }),
    created: iso,
    expires: iso,
    lastUsed: iso.optional().openapi({ description: 'Omitted until first used; recorded at most once an hour.' }),
  })
  .openapi('PersonalToken', { description: 'A personal access token as listed: never its secret.' });

export const CreatedTokenSchema = TokenSchema.extend({
  token: z
    .string()
    .regex(/^mcpm_pat_[0-9A-Za-z]{12}_[0-9A-Za-z]{38}$/)
    .openapi({ description: 'The secret, shown this once (only its hash is kept): a bearer token, or the git password with any user name.' }),
}).openapi('CreatedPersonalToken');

export const TokenListSchema = z
  .strictObject({ tokens: z.array(TokenSchema).openapi({ description: 'Active tokens, newest first.' }) })
  .openapi('PersonalTokenList');

export const TokenRevokedSchema = z.strictObject({ id: z.string(), deleted: z.literal(true) }).openapi('PersonalTokenRevoked');
