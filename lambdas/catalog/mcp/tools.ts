import {
  CATEGORIES,
  findServer,
  orgDecision,
  type AllowList,
  type CatalogFilters,
  type CatalogStore,
  type SearchIndex,
  type ServerRef,
} from '../../catalog-core';
import type { CursorCodec } from '../../shared/cursor';
import { toolDefiner, type McpTool } from '../../shared/mcp/define-tool';
import { ToolError } from '../../shared/mcp/tool-error';
import { logger } from '../../shared/logger';
import { ICONS } from './icons';
import { ORG_WINDOW, orgMark, orgSearch, type OrgMark } from './org';
import {
  errorOutput,
  getServerInput,
  getServerOutput,
  installInput,
  installOutput,
  listCategoriesInput,
  listCategoriesOutput,
  searchInput,
  searchOutput,
} from './schemas';
import { categoriesText, installText, searchText, serverText } from './text';
import { detailOf, hitOf, installOf } from './views';

/** What a catalog tool call reads: the catalog function's own store, index and cursor keys. */
export interface CatalogToolContext {
  store: Pick<CatalogStore, 'get'>;
  index: Pick<SearchIndex, 'search' | 'list' | 'registryPage'>;
  cursors: CursorCodec;
  /** `SITE_URL_TEMPLATE`: the servers' pages on the site; no `url` without it. */
  siteUrlTemplate?: string;
  /** The organisation's allow-list (its per-instance cache): `undefined` from `current()` when the deployment has none. */
  allowList?: { current(): Promise<AllowList | undefined> };
  requestId: string;
}

const NO_ALLOW_LIST = 'orgOnly needs an organisation allow-list, and this deployment has none: search without orgOnly';

/**
 * The allow-list for marking hits: a failure to read it (S3 unreachable) leaves the hits unmarked
 * rather than failing a search that did not ask for it (logged, as the site's badge does).
 */
async function markerOf(ctx: CatalogToolContext): Promise<((name: string) => OrgMark) | undefined> {
  try {
    const list = await ctx.allowList?.current();
    return list && ((name) => orgMark(orgDecision(list, name)));
  } catch (err) {
    logger.warn('the allow-list could not be read; catalog tool results say nothing of the organisation', {
      requestId: ctx.requestId,
      err: err instanceof Error ? err.message : String(err),
    });
    return undefined;
  }
}

const CURSOR_MESSAGE = 'cursor is not a cursor of this search: pass nextCursor back verbatim, with the same query and filters';

/**
 * The catalog's failures an agent can act on, as tool errors; anything else is a bug (logged,
 * `unavailable`). Told by name, not class: in AWS the tools run from their own file
 * (mcp-endpoint.ts) with their own copy of the core's modules, while the index and the cursor codec
 * that throw are the catalog function's.
 */
function toolError(err: unknown): ToolError | undefined {
  const name = err instanceof Error ? err.name : undefined;
  if (name === 'SearchWindowError') return new ToolError('invalid_argument', `${(err as Error).message} (add words or a filter)`);
  if (name === 'CursorError') return new ToolError('invalid_argument', CURSOR_MESSAGE);
  return undefined;
}

const defineTool = toolDefiner<CatalogToolContext>({ errorOutput, toolError, requestId: (ctx) => ctx.requestId });

const READ_ONLY = { readOnlyHint: true, openWorldHint: false } as const;

const clip = (s: string, n = 80) => (s.length > n ? `${s.slice(0, n)}…` : s);

/** `slug` or `name`, exactly one. */
function refOf(args: { slug?: string; name?: string }): ServerRef {
  if (args.slug !== undefined && args.name !== undefined) throw new ToolError('invalid_argument', 'give slug or name, not both');
  if (args.slug !== undefined) return { slug: args.slug };
  if (args.name !== undefined) return { name: args.name };
  throw new ToolError('invalid_argument', 'slug or name is required: the slug search_servers returns, or the registry name');
}

async function serverOf(ctx: CatalogToolContext, ref: ServerRef) {
  const found = await findServer(ctx, ref);
  if (found) return found;
  const what = 'slug' in ref ? `slug "${clip(ref.slug)}"` : `name "${clip(ref.name)}"`;
  throw new ToolError('not_found', `no server with ${what} in the catalog; search_servers finds servers and their slugs`);
}

/**
 * A search's cursor is bound to its arguments (all but limit): another search cannot continue with
 * it. orgOnly is among them: its cursor is a raw rank among all hits, not an offset among allowed ones.
 */
const searchPurpose = (a: { query: string; category?: string; type?: string; remoteOnly?: boolean; orgOnly?: boolean }) =>
  `catalog-mcp/search\n${JSON.stringify([a.query, a.category ?? null, a.type ?? null, a.remoteOnly ?? false, a.orgOnly ?? false])}`;

function cursorAt(ctx: CatalogToolContext, purpose: string, next: number): string {
  const payload = Buffer.alloc(4);
  payload.writeUInt32BE(next);
  return ctx.cursors.encode(purpose, payload);
}

const search = defineTool({
  name: 'search_servers',
  title: 'Search MCP servers',
  description:
    'Find MCP servers in the catalog by what they do. Ranked by relevance over names, descriptions, tools and READMEs. ' +
    'Returns per server its slug (for get_server and install_server), registry name, description, categories, transports, ' +
    'where it is published, license and maintenance grades, whether its hosted endpoint is live, and its page. ' +
    'Narrow with category (list_categories gives them), type (npm, pypi, oci, mcpb, nuget, remote) or remoteOnly; ' +
    `orgOnly keeps the servers your organisation allows (among the first ${ORG_WINDOW} matches), with the version it pins. Pass nextCursor back as cursor for more.`,
  icons: ICONS.search,
  annotations: { ...READ_ONLY, title: 'Search MCP servers' },
  input: searchInput,
  output: searchOutput,
  async run(args, ctx) {
    if (args.remoteOnly && args.type !== undefined && args.type !== 'remote') {
      throw new ToolError('invalid_argument', `remoteOnly is type "remote" and cannot be combined with type "${args.type}"; pass one of them`);
    }
    const purpose = searchPurpose(args);
    const offset = args.cursor === undefined ? 0 : (await ctx.cursors.decode(purpose, args.cursor)).readUInt32BE(0);
    const type = args.remoteOnly ? 'remote' : args.type;
    const filters: CatalogFilters = { ...(args.category && { category: [args.category] }), ...(type && { type: [type] }) };
    if (args.orgOnly) {
      const list = await ctx.allowList?.current();
      if (!list) throw new ToolError('invalid_argument', NO_ALLOW_LIST);
      const page = await orgSearch(ctx.index, list, { query: args.query, filters, offset, limit: args.limit });
      return {
        query: args.query,
        total: page.total,
        ranked: page.ranked,
        servers: page.hits.map(({ record, pinnedVersion }) => ({
          ...hitOf(record, ctx.siteUrlTemplate),
          allowedInOrg: true,
          ...(pinnedVersion !== undefined && { pinnedVersion }),
        })),
        ...(page.next !== undefined && { nextCursor: cursorAt(ctx, purpose, page.next) }),
      };
    }
    const [page, mark] = await Promise.all([ctx.index.search({ q: args.query, filters, page: { offset, limit: args.limit } }), markerOf(ctx)]);
    const next = offset + page.items.length;
    const nextCursor = page.items.length > 0 && next < page.total ? cursorAt(ctx, purpose, next) : undefined;
    const servers = page.items.map((r) => ({ ...hitOf(r, ctx.siteUrlTemplate), ...mark?.(r.name) }));
    return { query: args.query, total: page.total, servers, ...(nextCursor && { nextCursor }) };
  },
  text: searchText,
});

const getServer = defineTool({
  name: 'get_server',
  title: 'Show an MCP server',
  description:
    "Everything the catalog's page of a server shows: description, grades, health of its hosted endpoint, packages and hosted endpoints, " +
    'the tools it offers with their input schemas, the ways to install it, and the beginning of its README. Name it by slug (from search_servers) or by registry name.',
  icons: ICONS.detail,
  annotations: { ...READ_ONLY, title: 'Show an MCP server' },
  input: getServerInput,
  output: getServerOutput,
  async run(args, ctx) {
    const [detail, mark] = await Promise.all([serverOf(ctx, refOf(args)), markerOf(ctx)]);
    return { ...detailOf(detail, ctx.siteUrlTemplate), ...mark?.(detail.record.name) };
  },
  text: serverText,
});

const install = defineTool({
  name: 'install_server',
  title: 'Configure an MCP server in a client',
  description:
    'The configuration that installs a server in an MCP client (claude-desktop, claude-code, vscode, cursor, or generic): per way of installing ' +
    '(hosted endpoint first, then each package), the snippet and where it goes (the file, or a terminal command), and the values the user must supply: ' +
    'environment variables, headers and arguments, which of them are required and which are secret (ask the user; never write a secret into a shared file).',
  icons: ICONS.install,
  annotations: { ...READ_ONLY, title: 'Configure an MCP server in a client' },
  input: installInput,
  output: installOutput,
  async run(args, ctx) {
    const { record } = await serverOf(ctx, refOf(args));
    return installOf(record, args.client);
  },
  text: installText,
});

const listCategories = defineTool({
  name: 'list_categories',
  title: 'List the categories',
  description: "The catalog's categories with how many servers each holds, most first: the values of search_servers' category.",
  icons: ICONS.categories,
  annotations: { ...READ_ONLY, title: 'List the categories' },
  input: listCategoriesInput,
  output: listCategoriesOutput,
  async run(_args, ctx) {
    const all = await ctx.index.list({ filters: {}, sort: 'popularity', page: { offset: 0, limit: 1 }, facets: true });
    const counts = new Map((all.facets?.categories ?? []).map((c) => [c.name, c.count]));
    // Every label, the empty ones too: the list is also the vocabulary of `category`.
    const categories = CATEGORIES.map((name) => ({ name, count: counts.get(name) ?? 0 })).sort((a, b) => b.count - a.count || a.name.localeCompare(b.name));
    return { total: all.total, categories };
  },
  text: categoriesText,
});

/** The four tools, in the order `tools/list` offers them. */
export const TOOLS: readonly McpTool<CatalogToolContext>[] = [search, getServer, install, listCategories];
