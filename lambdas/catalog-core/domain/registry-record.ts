/**
 * Projection of a catalog record onto the official server.json shape (schema 2025-12-11), used
 * as the `server` object of `/v0.1/servers` entries.
 *
 * What the official schema (`ServerDetail`, draft-07) says, checked against
 * static/schemas/2025-12-11/server.schema.json:
 * - required: `name` (pattern `^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$`, 3-200 chars), `description`
 *   (1-100 chars), `version` (at most 255 chars);
 * - `packages` and `remotes` are optional arrays with no `minItems`, so empty arrays are valid;
 *   they are always emitted because spec 1's RegistryServerRecord requires both;
 * - `status` is NOT a property of the schema (upstream carries it in
 *   `_meta["io.modelcontextprotocol.registry/official"]`), but `ServerDetail` declares no
 *   `additionalProperties`, so extra top-level keys are permitted (the draft-07 default) and
 *   `status`, which spec 1 requires, is emitted at the top level;
 * - a package requires `registryType`, `identifier`, `transport`; its `version` must be non-empty
 *   and not `latest`; a remote requires `type` (`streamable-http` | `sse`) and an http(s) `url`;
 *   a repository requires `url` (uri) and `source`; an icon requires `src` (uri, <= 255 chars).
 */

import type { CatalogRecord, RegistryIcon, RegistryPackage, RegistryRemote, RegistryRepository, ServerStatus } from './types';

export const SERVER_SCHEMA_URL = 'https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json';

/** Upper bound of `description` and `title` in the 2025-12-11 schema. */
export const SERVER_TEXT_MAX = 100;

export interface ServerJson {
  $schema: string;
  name: string;
  title?: string;
  description: string;
  version: string;
  status: ServerStatus;
  repository?: RegistryRepository;
  websiteUrl?: string;
  packages: RegistryPackage[];
  remotes: RegistryRemote[];
  icons?: RegistryIcon[];
}

/**
 * Records normalised from pre-2025-10-11 upstream shapes may carry descriptions or titles longer
 * than the current schema's 100 characters; cut on a code-point boundary (never mid-surrogate)
 * with an ellipsis so the projection still validates.
 */
function clip(text: string, max: number): string {
  const chars = Array.from(text);
  return chars.length <= max
    ? text
    : `${chars
        .slice(0, max - 1)
        .join('')
        .trimEnd()}…`;
}

function packageJson(p: RegistryPackage): RegistryPackage {
  const out = { registryType: p.registryType } as RegistryPackage;
  if (p.registryBaseUrl !== undefined) out.registryBaseUrl = p.registryBaseUrl;
  out.identifier = p.identifier;
  // The schema rejects "" and "latest"; such a version carries no information, so it is dropped.
  if (p.version !== undefined && p.version !== '' && p.version !== 'latest') out.version = p.version;
  if (p.fileSha256 !== undefined) out.fileSha256 = p.fileSha256;
  if (p.runtimeHint !== undefined) out.runtimeHint = p.runtimeHint;
  out.transport = { ...p.transport };
  if (p.runtimeArguments !== undefined) out.runtimeArguments = p.runtimeArguments;
  if (p.packageArguments !== undefined) out.packageArguments = p.packageArguments;
  if (p.environmentVariables !== undefined) out.environmentVariables = p.environmentVariables;
  return out;
}

function remoteJson(r: RegistryRemote): RegistryRemote {
  const out: RegistryRemote = { type: r.type, url: r.url };
  if (r.headers !== undefined) out.headers = r.headers;
  if (r.variables !== undefined) out.variables = r.variables;
  return out;
}

/**
 * The record as an official server.json document. Optional fields are omitted (never null);
 * catalog-only fields (grades, popularity, github, health, …) are left to the caller's `_meta`.
 */
export function toServerJson(record: CatalogRecord): ServerJson {
  // Built key by key, in the order of upstream documents, so diffs against upstream rows stay
  // readable and absent optionals never appear as `undefined` keys.
  const out: ServerJson = { $schema: SERVER_SCHEMA_URL, name: record.name } as ServerJson;
  if (record.title !== undefined && record.title !== '') out.title = clip(record.title, SERVER_TEXT_MAX);
  out.description = clip(record.description, SERVER_TEXT_MAX);
  out.version = record.version;
  out.status = record.status;
  // Upstream sometimes sends `{url: "", source: ""}`; that says "no repository".
  if (record.repository !== undefined && record.repository.url !== '') {
    const { url, source, subfolder, id } = record.repository;
    out.repository = { url, source };
    if (subfolder !== undefined) out.repository.subfolder = subfolder;
    if (id !== undefined) out.repository.id = id;
  }
  if (record.websiteUrl !== undefined) out.websiteUrl = record.websiteUrl;
  out.packages = record.packages.map(packageJson);
  out.remotes = record.remotes.map(remoteJson);
  if (record.icons !== undefined && record.icons.length > 0) out.icons = record.icons.map((i) => ({ ...i }));
  return out;
}
