import type { CatalogRecord } from '../domain/types';
import { toRegistryEntry, type RegistryMetaOptions } from '../views';
import type { OrgDecision } from './allow-list';

/**
 * A registry entry as one version of a server, the shape `versions/{version}` answers (the
 * official OpenAPI's `ServerResponse`): the feed's `{ server, _meta }` plus the registry's own
 * `io.modelcontextprotocol.registry/official` metadata, which IDEs read (status, times, isLatest).
 * The catalog mirrors each server's latest version only, so it is the one version there is.
 */
export function registryVersionEntry(
  r: CatalogRecord,
  opts: RegistryMetaOptions,
): { server: ReturnType<typeof toRegistryEntry>['server']; _meta: Record<string, object> } {
  const entry = toRegistryEntry(r, opts);
  const official = {
    status: r.status,
    ...(r.publishedAt !== undefined && { publishedAt: r.publishedAt }),
    ...(r.registryUpdatedAt !== undefined && { updatedAt: r.registryUpdatedAt }),
    isLatest: true,
  };
  return { ...entry, _meta: { 'io.modelcontextprotocol.registry/official': official, ...entry._meta } };
}

/**
 * The entry the organisation registry serves for an allowed server. With a pinned version other
 * than the catalog's, the entry announces the pin: `server.version` is the pin, and so is the
 * version of every package that tracks the server's version (one whose version equals the
 * catalog's), so an IDE installs the pinned package; the rest of the record is the latest one the
 * catalog mirrors (it keeps no older server.json). This catalog's `_meta` says so: `pinnedVersion`
 * and `latestVersion`.
 */
export function orgEntry(r: CatalogRecord, decision: Extract<OrgDecision, { allowed: true }>, opts: RegistryMetaOptions) {
  const pin = decision.pinnedVersion;
  if (pin === undefined || pin === r.version) {
    const entry = registryVersionEntry(r, opts);
    if (pin === undefined) return entry;
    return withCatalogMeta(entry, opts.brand, { pinnedVersion: pin, latestVersion: r.version });
  }
  const pinned: CatalogRecord = {
    ...r,
    version: pin,
    packages: r.packages.map((p) => (p.version === r.version ? { ...p, version: pin } : p)),
  };
  const entry = registryVersionEntry(pinned, opts);
  return withCatalogMeta(entry, opts.brand, { pinnedVersion: pin, latestVersion: r.version });
}

type Entry = ReturnType<typeof registryVersionEntry>;

function withCatalogMeta(entry: Entry, brand: string, extra: Record<string, string>): Entry {
  const key = `io.${brand}.catalog/v0`;
  return { ...entry, _meta: { ...entry._meta, [key]: { ...entry._meta[key], ...extra } } };
}
