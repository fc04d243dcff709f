import { findServer, nextCandidate, orgDecision, orgEntry, type AllowList, type CatalogRecord, type OrgDecision } from '../../catalog-core';
import { validateQuery } from '../../shared/http/query';
import { json, type HandlerResponse } from '../../shared/http/types';
import type { RequestCtx } from '../endpoints/context';
import { encodeRegistryCursor, registryFingerprint, resumeRegistryCursor, type Resume } from '../registry-cursor';
import { RegistryQuerySchema } from '../schemas';
import type { OrgDeps } from './deps';
import { OrgError, serverNotFound } from './errors';

/**
 * The official registry's read routes over the allowed part of the catalog. Without an allow-list
 * nothing is allowed: an IDE pointed here before the operator wrote one sees an empty registry,
 * never the whole catalog.
 */
const PURPOSE = 'org:v0.1/servers';
/** Names read from the index per step of a listing. */
const CHUNK = 100;
/**
 * Steps one listing request takes at most: a page whose allowed servers are sparse among many
 * names that patterns admit but blocks refuse ends early, with a cursor that resumes the walk.
 */
const MAX_STEPS = 20;

type Allowed = Extract<OrgDecision, { allowed: true }>;

/** GET /org/v0.1/servers */
export async function listOrgServers(ctx: RequestCtx, deps: OrgDeps): Promise<HandlerResponse> {
  const q = validateQuery(RegistryQuerySchema, { multi: [] }, ctx.query);
  const updatedSince = q.updated_since ? new Date(q.updated_since).toISOString() : undefined;
  const fp = registryFingerprint(q.search, updatedSince);
  const filter = { search: q.search, updatedSince };
  const start = q.cursor ? await resumeRegistryCursor(deps.cursors, PURPOSE, q.cursor, fp, deps.index, filter) : {};
  const list = await deps.allowList.current();

  const found: Array<{ record: CatalogRecord; decision: Allowed }> = [];
  let scannedTo: string | undefined;
  let position = list && jump(list, start);
  for (let step = 0; position && found.length <= q.limit; step++) {
    if (step === MAX_STEPS) break;
    const rows = await deps.index.registryPage({ ...filter, ...position, limit: CHUNK });
    for (const record of rows) {
      scannedTo = record.name;
      const decision = orgDecision(list as AllowList, record.name);
      if (decision.allowed) found.push({ record, decision });
      if (found.length > q.limit) break;
    }
    position = rows.length < CHUNK ? undefined : jump(list as AllowList, { nameAfter: rows[rows.length - 1].name });
  }

  const page = found.slice(0, q.limit);
  // More to read: a full page with one more allowed behind it, or a walk cut short by MAX_STEPS.
  const more = found.length > q.limit ? page[page.length - 1]?.record.name : position ? scannedTo : undefined;
  const opts = { brand: deps.config.brand, siteUrlTemplate: deps.config.siteUrlTemplate };
  return json({
    servers: page.map(({ record, decision }) => orgEntry(record, decision, opts)),
    metadata: { count: page.length, ...(more !== undefined && { nextCursor: encodeRegistryCursor(deps.cursors, PURPOSE, more, fp) }) },
  });
}

/** Where the walk goes next from a position: to the next name an allow rule may match, or nowhere. */
function jump(list: AllowList, at: Resume): Resume | undefined {
  const next = nextCandidate(list, at.nameAfter);
  if (!next) return undefined;
  if ('after' in next) return { nameAfter: next.after };
  if (at.nameFrom !== undefined && next.from < at.nameFrom) return { nameFrom: at.nameFrom };
  return { nameFrom: next.from };
}

/** GET /org/v0.1/servers/{serverName}/versions: the one version the organisation allows. */
export async function listOrgServerVersions(ctx: RequestCtx, deps: OrgDeps): Promise<HandlerResponse> {
  return json({ servers: [await allowedEntry(ctx, deps)], metadata: { count: 1 } });
}

/** GET /org/v0.1/servers/{serverName}/versions/{version}: `latest`, or the allowed (pinned) version itself. */
export async function getOrgServerVersion(ctx: RequestCtx, deps: OrgDeps): Promise<HandlerResponse> {
  const entry = await allowedEntry(ctx, deps);
  const version = ctx.params.version;
  if (version !== 'latest' && version !== entry.server.version) throw new OrgError(404, 'Server version not found');
  return json(entry);
}

/** The entry of an allowed server; the registry's 404 for a name unknown, blocked or not allowed alike. */
async function allowedEntry(ctx: RequestCtx, deps: OrgDeps) {
  const name = ctx.params.serverName;
  const list = await deps.allowList.current();
  const decision = list && name.length <= 200 ? orgDecision(list, name) : undefined;
  if (!decision?.allowed) throw serverNotFound();
  const found = await findServer(deps, { name });
  if (!found) throw serverNotFound();
  return orgEntry(found.record, decision, { brand: deps.config.brand, siteUrlTemplate: deps.config.siteUrlTemplate });
}
