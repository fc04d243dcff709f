// Named imports, not the `z` namespace (see lambdas/mcp/schemas.ts: the namespace keeps every locale in the bundle).
import { array, boolean, enum as zEnum, number, object, record, string, strictObject, unknown, type infer as Infer } from 'zod';
import { CATEGORIES, INSTALL_CLIENTS, REGISTRY_TYPES } from '../../catalog-core';
import { errorOutput as errorOutputOf } from '../../shared/mcp/tool-error';
import { ORG_WINDOW } from './org';

/**
 * The catalog tools' argument and result schemas: they validate the arguments (messages name the
 * argument), type the tools, and are the JSON Schemas of `tools/list`. Descriptions are written for
 * the agent that reads them. The vocabularies (categories, registry types, clients) are the core's,
 * the same as on `/api/mcps` and the site.
 */

/** Longest `query` (the JSON API's `q` takes as many). */
export const QUERY_MAX = 100;
/** Most servers per `search_servers` page. */
export const LIMIT_MAX = 50;

const categoryArg = zEnum(CATEGORIES, { error: `category must be one of the ${CATEGORIES.length} labels of list_categories: ${CATEGORIES.join(', ')}` });
const typeArg = zEnum(REGISTRY_TYPES, { error: `type must be one of ${REGISTRY_TYPES.join(', ')}` });

/** `search_servers`. A strict object: an unknown argument is `invalid_argument`, never ignored. */
export const searchInput = strictObject({
  query: string()
    .trim()
    .min(1, 'query may not be empty')
    .max(QUERY_MAX, `query must be at most ${QUERY_MAX} characters`)
    .describe(
      `What the server should do, in a few words (e.g. "postgres", "weather forecast", "github issues"): full text over names, titles, descriptions, tool names and descriptions and READMEs, ranked by relevance. At most ${QUERY_MAX} characters.`,
    ),
  category: categoryArg.optional().describe('Only servers of this category (exact label; list_categories gives them with counts).'),
  type: typeArg.optional().describe('Only servers installable this way: a package registry (npm, pypi, oci, mcpb, nuget), or "remote" for a hosted endpoint.'),
  remoteOnly: boolean().optional().describe('Only servers with a hosted endpoint (nothing to install or run locally); the same as type "remote".'),
  orgOnly: boolean()
    .optional()
    .describe(
      `Only servers your organisation's allow-list allows (each hit says the version it pins, if any), among the first ${ORG_WINDOW} ranked matches of the query. An error on a deployment without an allow-list.`,
    ),
  limit: number()
    .int('limit must be an integer')
    .min(1, `limit must be from 1 to ${LIMIT_MAX}`)
    .max(LIMIT_MAX, `limit must be from 1 to ${LIMIT_MAX}`)
    .default(10)
    .describe(`Servers per page, 1-${LIMIT_MAX} (10).`),
  cursor: string()
    .min(1, 'cursor may not be empty')
    .max(200, 'cursor is not a cursor of search_servers')
    .optional()
    .describe('The nextCursor of the previous page, verbatim, with the same query and filters, for the next page.'),
});

const ref = {
  slug: string()
    .trim()
    .min(1, 'slug may not be empty')
    .max(200, 'slug must be at most 200 characters')
    .optional()
    .describe('The catalog slug of the server, as search_servers returns it (e.g. "io-github-acme-weather").'),
  name: string()
    .trim()
    .min(1, 'name may not be empty')
    .max(200, 'name must be at most 200 characters')
    .optional()
    .describe('Or its registry name, exactly as published (e.g. "io.github.acme/weather"). Give slug or name, not both.'),
};

export const getServerInput = strictObject(ref);

export const installInput = strictObject({
  ...ref,
  client: zEnum(INSTALL_CLIENTS, {
    error: (issue) => (issue.input === undefined ? 'client is required' : `client must be one of ${INSTALL_CLIENTS.join(', ')}`),
  }).describe(
    'The MCP client to configure: claude-desktop, claude-code, vscode, cursor, or generic (any client: URL, transport and headers of a hosted endpoint).',
  ),
});

export const listCategoriesInput = strictObject({});

// Results ---------------------------------------------------------------------------------------

const grade = zEnum(['A', 'B', 'C', 'D', 'F']).nullable();

const serverSummary = {
  slug: string(),
  name: string().describe('The registry name.'),
  title: string().optional(),
  description: string(),
  categories: array(string()),
  transports: array(string()).describe('How a client talks to it: stdio (a local process), streamable-http, sse.'),
  registryTypes: array(string()).describe('Where it is published: npm, pypi, oci, mcpb, nuget, and remote for a hosted endpoint.'),
  grades: object({ license: grade, maintenance: grade, quality: string() }).describe('License and maintenance grades, A (best) to F; null when unknown.'),
  status: zEnum(['active', 'deprecated']),
  live: boolean().nullable().describe("Whether its hosted endpoint answered the catalog's last check; null when it has none or was not checked."),
  toolCount: number().optional(),
  stars: number().optional(),
  isOfficial: boolean(),
  url: string().optional().describe("The server's page on this catalog's site."),
  allowedInOrg: boolean().optional().describe("Whether the organisation's allow-list allows it; absent when this deployment has no allow-list."),
  pinnedVersion: string().optional().describe('The version the allow-list pins it to: install that one.'),
};

const serverHit = object(serverSummary);

export const searchOutput = object({
  query: string(),
  total: number().int().describe('Servers that match, over all pages (orgOnly: the allowed ones among the first `ranked` matches).'),
  ranked: number()
    .int()
    .optional()
    .describe(`orgOnly: how many of the query's ranked matches the allow-list was applied to (the first ${ORG_WINDOW} at most).`),
  servers: array(serverHit),
  nextCursor: string().optional().describe('Pass as cursor, with the same arguments, for the next page; absent on the last page.'),
});

export const getServerOutput = object({
  ...serverSummary,
  version: string(),
  websiteUrl: string().optional(),
  repositoryUrl: string().optional(),
  health: object({ live: boolean(), checkedAt: string(), authRequired: boolean().optional(), toolCount: number().optional() }).optional(),
  downloads: number().optional(),
  language: string().optional(),
  license: string().optional(),
  updatedAt: string(),
  publishedAt: string().optional(),
  packages: array(
    object({ registryType: string(), identifier: string(), version: string().optional(), transport: string(), runtimeHint: string().optional() }),
  ),
  remotes: array(object({ type: string(), url: string().describe('A template: {names} are values the user supplies (install_server says which).') })),
  tools: array(object({ name: string(), description: string().optional(), inputSchema: record(string(), unknown()).optional() })).describe(
    'The tools the catalog captured from the server (empty when it could not list them).',
  ),
  install: array(object({ id: string(), title: string(), kind: zEnum(['package', 'remote', 'bundle']) })).describe(
    'The ways to install it; install_server gives the configuration for a client.',
  ),
  readme: object({ path: string(), text: string(), truncated: boolean() }).optional(),
});

const snippet = object({ where: string().describe('Where it goes: a file, "Terminal", or the client\'s settings.'), language: string(), text: string() });

const inputNote = object({
  kind: zEnum(['env', 'argument', 'header', 'variable']),
  name: string(),
  required: boolean(),
  secret: boolean().describe('A credential: ask the user for it, never write it into a shared file.'),
  description: string().optional(),
  default: string().optional(),
  choices: array(string()).optional(),
  repeated: boolean().optional(),
});

export const installOutput = object({
  slug: string(),
  name: string(),
  client: zEnum(INSTALL_CLIENTS),
  options: array(
    object({
      id: string(),
      title: string(),
      kind: zEnum(['package', 'remote', 'bundle']),
      snippet: snippet.optional().describe('The configuration for the client; absent when this way does not apply to it (a note says why).'),
      start: snippet.optional().describe('A package that serves HTTP locally: the command that starts it, before the client connects.'),
      inputs: array(inputNote).describe('Values the snippet leaves to the user (placeholders like <API_KEY>), and optional ones it leaves out.'),
      notes: array(string()),
    }),
  ),
});

export const listCategoriesOutput = object({
  total: number().int().describe('Servers in the catalog.'),
  categories: array(object({ name: string(), count: number().int() })),
});

export const errorOutput = errorOutputOf(['invalid_argument', 'not_found', 'unavailable']);

export type SearchOut = Infer<typeof searchOutput>;
export type ServerHit = Infer<typeof serverHit>;
export type ServerOut = Infer<typeof getServerOutput>;
export type InstallOut = Infer<typeof installOutput>;
export type CategoriesOut = Infer<typeof listCategoriesOutput>;
