/**
 * Normalisation of upstream registry rows into the 2025-12-11 server.json shape.
 * (One file on purpose, over 400 lines: each repair below is a row of the table and a few lines of
 * code, read together; split, the table and its code would drift. The untyped-value readers the
 * repairs share are `row-values.ts`.)
 *
 * Real rows are messy: they declare mixed `$schema` versions (2025-07-09 snake_case, 2025-09-16,
 * 2025-09-29, 2025-10-17, none), carry empty repositories, old-style fields and values the current
 * schema rejects. The mapping below repairs what has one obvious meaning and rejects the rest;
 * every repair is listed on the result (`repairs`) and every rejection carries a reason.
 *
 * | Input | Output |
 * |---|---|
 * | `{server, _meta}` (API ServerResponse) or a bare server (legacy seed shape) | the server and its registry metadata |
 * | `_meta["io.modelcontextprotocol.registry/official"]`, else legacy `status` / `version_detail` | status, publishedAt, updatedAt, isLatest |
 * | snake_case keys (`registry_type`, `registry_name`, `registry_base_url`, `file_sha256`, `runtime_hint`, `runtime_arguments`, `package_arguments`, `environment_variables`, `website_url`, `is_required`, `is_secret`, `is_repeated`, `value_hint`, `transport_type`) | camelCase keys |
 * | legacy package `name` | `identifier` |
 * | legacy `version_detail.version` | `version` |
 * | package `registryType` `docker` | `oci` (the same registry under its current name) |
 * | package without `transport` (or a bare string) | `{type: "stdio"}` (or `{type: <string>}`) |
 * | package `version` `""` or `"latest"` | dropped (the schema allows none; "latest" says nothing) |
 * | `fileSha256` in upper case | lower case |
 * | remote/transport type `http`, `streamable_http`, `streamablehttp` | `streamable-http` |
 * | input `format` `integer`/`float`/`int`/`double` → `number`, `bool` → `boolean`, `file`/`path` → `filepath`, anything else unknown | mapped, else dropped (the default is `string`) |
 * | argument without `type` (or `""`) | `named` when it has a name starting with `-`, else `positional` when it has a value or valueHint, else `named` when it has a name; otherwise the row is rejected |
 * | environment variable or header without a name | dropped |
 * | `repository` with an empty or invalid `url` | dropped; an empty `source` is inferred from the host (github.com, gitlab.com, bitbucket.org) |
 * | empty `title`, `websiteUrl`, `subfolder`; invalid `websiteUrl`; icons that fail the schema | dropped |
 * | `websiteUrl`, `repository.url`, an icon's `src` or a `registryBaseUrl` whose scheme is not http(s) (`javascript:`, `data:`, `vbscript:`, `file:`, …) | dropped, and listed in the crawl report (`dropped`) with the field and the scheme |
 * | `description` or `title` over 100 characters | cut to 100 (ending with "…") |
 *
 * Rejected (with a reason): not an object, no name or a name that fails the schema pattern, no
 * version, an empty description, an unknown status, a package without registry type or identifier
 * (or the legacy `unknown` type), a remote or HTTP transport without a valid http(s) URL or with an
 * unknown type, and anything that still fails the zod mirror of the 2025-12-11 schema.
 */

import { type RegistryIcon, type RegistryPackage, type RegistryRemote, type RegistryRepository, SERVER_SCHEMA_URL } from '../../catalog-core';
import { codePointLength, isUri, serverJsonIssues } from './server-schema';
import { bool, clipText, isObj, isoMillis, nonWebScheme, type Obj, pick, str, text } from './row-values';
import type { NormaliseResult, NormalisedServer, RejectCode, Rejection, RowMeta, UpstreamStatus } from './types';

export const OFFICIAL_META_KEY = 'io.modelcontextprotocol.registry/official';
const TEXT_MAX = 100;
const NAME_PATTERN = /^[a-zA-Z0-9.-]+\/[a-zA-Z0-9._-]+$/;
const HTTP_URL = /^https?:\/\/[^\s]+$/;

// ---------------------------------------------------------------------------------------------
// Row identity (name, version, registry metadata): what the planner needs before normalising
// ---------------------------------------------------------------------------------------------

export interface RowParts {
  server: Obj;
  meta: RowMeta;
  /** A status value the meta carried that is not one of the three known ones. */
  badStatus?: string;
}

const STATUSES: readonly UpstreamStatus[] = ['active', 'deprecated', 'deleted'];

export function splitRow(row: unknown): RowParts | undefined {
  if (!isObj(row)) return undefined;
  const server = isObj(row.server) ? row.server : row;
  const outer = isObj(row._meta) ? row._meta : undefined;
  const inner = isObj(server._meta) ? server._meta : undefined;
  const official = [outer?.[OFFICIAL_META_KEY], inner?.[OFFICIAL_META_KEY]].find(isObj) ?? {};
  const detail = isObj(server.version_detail) ? server.version_detail : {};
  const rawStatus = text(pick(official, 'status')) ?? text(server.status);
  const status = rawStatus === undefined ? undefined : (rawStatus.toLowerCase() as UpstreamStatus);
  const meta: RowMeta = {
    publishedAt: isoMillis(pick(official, 'publishedAt', 'published_at') ?? detail.release_date),
    updatedAt: isoMillis(pick(official, 'updatedAt', 'updated_at')),
    isLatest: bool(pick(official, 'isLatest', 'is_latest')) ?? bool(detail.is_latest),
  };
  if (status !== undefined && STATUSES.includes(status)) meta.status = status;
  return { server, meta, ...(status !== undefined && !STATUSES.includes(status) && { badStatus: rawStatus }) };
}

export interface RowIdentity {
  name: string;
  version: string;
  meta: RowMeta;
  /** Orders versions of one name: see `precedenceKey`. */
  precedence: string;
}

/**
 * Which of two rows of the same name is "the latest version": the one upstream flags `isLatest`,
 * then the later `publishedAt`, then the version string. Encoded as a string so that a plain
 * string comparison (also in DynamoDB conditions) orders it.
 */
export function precedenceKey(meta: RowMeta, version: string): string {
  return `${meta.isLatest === true ? '1' : '0'}|${meta.publishedAt ?? '0000-00-00T00:00:00.000Z'}|${version}`;
}

/** Name, version and precedence of a row, or why it has none. */
export function rowIdentity(row: unknown): RowIdentity | Rejection {
  const parts = splitRow(row);
  if (!parts) return { code: 'not_an_object', reason: 'row is not a JSON object' };
  const name = text(parts.server.name);
  if (name === undefined) return { code: 'missing_name', reason: 'row has no name' };
  const detail = isObj(parts.server.version_detail) ? parts.server.version_detail : {};
  const version = text(parts.server.version) ?? text(detail.version) ?? '';
  return { name, version, meta: parts.meta, precedence: precedenceKey(parts.meta, version) };
}

export function isRejection(v: RowIdentity | Rejection): v is Rejection {
  return 'code' in v;
}

// ---------------------------------------------------------------------------------------------
// Normalisation proper
// ---------------------------------------------------------------------------------------------

class Reject extends Error {
  constructor(
    readonly code: RejectCode,
    message: string,
  ) {
    super(message);
  }
}

const FORMAT_ALIASES: Readonly<Record<string, string>> = {
  string: 'string',
  number: 'number',
  boolean: 'boolean',
  filepath: 'filepath',
  integer: 'number',
  int: 'number',
  float: 'number',
  double: 'number',
  bool: 'boolean',
  file: 'filepath',
  path: 'filepath',
};

const TRANSPORT_ALIASES: Readonly<Record<string, 'stdio' | 'streamable-http' | 'sse'>> = {
  stdio: 'stdio',
  'streamable-http': 'streamable-http',
  streamable_http: 'streamable-http',
  streamablehttp: 'streamable-http',
  http: 'streamable-http',
  sse: 'sse',
};

class Normaliser {
  readonly repairs: string[] = [];
  readonly dropped: string[] = [];

  repair(note: string): void {
    if (!this.repairs.includes(note)) this.repairs.push(note);
  }

  /** Whether `url` (a valid URI) is a web URL; if not, the drop is noted for the report. */
  web(url: string, field: string): boolean {
    const scheme = nonWebScheme(url);
    if (scheme === undefined) return true;
    const note = `${field}: a ${scheme} URL dropped (only http and https are kept)`;
    this.repair(note);
    if (!this.dropped.includes(note)) this.dropped.push(note);
    return false;
  }

  /** Input fields shared by arguments, env vars and headers (unknown keys are not retained). */
  input(o: Obj, where: string): Obj {
    const out: Obj = {};
    const description = str(o.description);
    if (description !== undefined) out.description = description;
    const isRequired = bool(pick(o, 'isRequired', 'is_required'));
    if (isRequired !== undefined) out.isRequired = isRequired;
    const rawFormat = str(o.format);
    if (rawFormat !== undefined) {
      const format = FORMAT_ALIASES[rawFormat.trim().toLowerCase()];
      if (format !== undefined) {
        out.format = format;
        if (format !== rawFormat) this.repair(`${where}: format "${rawFormat}" read as "${format}"`);
      } else {
        this.repair(`${where}: unknown format "${rawFormat}" dropped`);
      }
    }
    for (const k of ['value', 'default', 'placeholder'] as const) {
      const v = str(o[k]);
      if (v !== undefined) out[k] = v;
    }
    const isSecret = bool(pick(o, 'isSecret', 'is_secret'));
    if (isSecret !== undefined) out.isSecret = isSecret;
    if (Array.isArray(o.choices)) {
      const choices = o.choices.filter((c): c is string => typeof c === 'string');
      out.choices = choices;
    }
    if (isObj(o.variables)) {
      const vars: Obj = {};
      for (const [k, v] of Object.entries(o.variables)) if (isObj(v)) vars[k] = this.input(v, `${where}.variables.${k}`);
      out.variables = vars;
    }
    return out;
  }

  keyValues(list: unknown, where: string): Obj[] | undefined {
    if (!Array.isArray(list)) return undefined;
    const out: Obj[] = [];
    list.forEach((item, i) => {
      const name = isObj(item) ? text(item.name) : undefined;
      if (!isObj(item) || name === undefined) {
        this.repair(`${where}[${i}]: entry without a name dropped`);
        return;
      }
      out.push({ name, ...this.input(item, `${where}[${i}]`) });
    });
    return out;
  }

  arguments(list: unknown, where: string): Obj[] | undefined {
    if (!Array.isArray(list)) return undefined;
    return list.map((item, i) => {
      const at = `${where}[${i}]`;
      if (!isObj(item)) throw new Reject('invalid_package', `${at}: argument is not an object`);
      const base = this.input(item, at);
      const name = text(item.name);
      const valueHint = str(pick(item, 'valueHint', 'value_hint'));
      let type = text(item.type)?.toLowerCase();
      if (type !== 'named' && type !== 'positional') {
        const was = type === undefined ? 'no type' : `type "${String(item.type)}"`;
        if (name?.startsWith('-')) type = 'named';
        else if (valueHint !== undefined || base.value !== undefined) type = 'positional';
        else if (name !== undefined) type = 'named';
        else throw new Reject('invalid_package', `${at}: argument has ${was} and nothing to infer one from`);
        this.repair(`${at}: argument with ${was} read as ${type}`);
      }
      const out: Obj = { type, ...base };
      if (type === 'named') {
        if (name === undefined) throw new Reject('invalid_package', `${at}: named argument without a name`);
        out.name = name;
      }
      // Schemas before 2025-12-11 allowed a value hint on named arguments too; it names the value to supply.
      if (valueHint !== undefined) out.valueHint = valueHint;
      const isRepeated = bool(pick(item, 'isRepeated', 'is_repeated'));
      if (isRepeated !== undefined) out.isRepeated = isRepeated;
      return out;
    });
  }

  transport(raw: unknown, where: string, local: boolean): RegistryPackage['transport'] & { headers?: unknown[] } {
    if (raw === undefined || raw === null) {
      if (!local) throw new Reject('invalid_remote', `${where}: no transport`);
      this.repair(`${where}: missing transport read as stdio`);
      return { type: 'stdio' };
    }
    const o: Obj = typeof raw === 'string' ? { type: raw } : isObj(raw) ? raw : {};
    const rawType = text(pick(o, 'type', 'transport_type'));
    const type = rawType === undefined ? undefined : TRANSPORT_ALIASES[rawType.toLowerCase()];
    const code: RejectCode = local ? 'invalid_package' : 'invalid_remote';
    if (type === undefined) throw new Reject(code, `${where}: unknown transport type "${rawType ?? ''}"`);
    if (type !== rawType) this.repair(`${where}: transport "${rawType ?? ''}" read as ${type}`);
    if (type === 'stdio') {
      if (!local) throw new Reject(code, `${where}: a remote cannot use stdio`);
      return { type };
    }
    const url = text(o.url);
    if (url === undefined || !HTTP_URL.test(url)) throw new Reject(code, `${where}: ${type} needs an http(s) URL, got "${url ?? ''}"`);
    const out: RegistryPackage['transport'] & { headers?: unknown[] } = { type, url };
    const headers = this.keyValues(o.headers, `${where}.headers`);
    if (headers !== undefined) out.headers = headers;
    return out;
  }

  package(raw: unknown, i: number): RegistryPackage {
    const at = `packages[${i}]`;
    if (!isObj(raw)) throw new Reject('invalid_package', `${at}: not an object`);
    let registryType = text(pick(raw, 'registryType', 'registry_type', 'registry_name'))?.toLowerCase();
    if (registryType === undefined || registryType === 'unknown') {
      throw new Reject('invalid_package', `${at}: no registry type`);
    }
    if (registryType === 'docker') {
      registryType = 'oci';
      this.repair(`${at}: registry type docker read as oci`);
    }
    const identifier = text(raw.identifier) ?? text(raw.name);
    if (identifier === undefined) throw new Reject('invalid_package', `${at}: no identifier`);
    const out = { registryType, identifier } as RegistryPackage;
    const baseUrl = text(pick(raw, 'registryBaseUrl', 'registry_base_url'));
    if (baseUrl !== undefined) {
      if (!isUri(baseUrl)) this.repair(`${at}: invalid registryBaseUrl dropped`);
      else if (this.web(baseUrl, `${at}.registryBaseUrl`)) out.registryBaseUrl = baseUrl;
    }
    const version = text(raw.version);
    if (version !== undefined && version !== 'latest') out.version = version;
    else if (raw.version !== undefined) this.repair(`${at}: version "${String(raw.version)}" dropped`);
    const sha = text(pick(raw, 'fileSha256', 'file_sha256'));
    if (sha !== undefined) {
      if (/^[a-fA-F0-9]{64}$/.test(sha)) out.fileSha256 = sha.toLowerCase();
      else this.repair(`${at}: invalid fileSha256 dropped`);
    }
    const hint = text(pick(raw, 'runtimeHint', 'runtime_hint'));
    if (hint !== undefined) out.runtimeHint = hint;
    out.transport = this.transport(raw.transport, `${at}.transport`, true);
    const runtimeArguments = this.arguments(pick(raw, 'runtimeArguments', 'runtime_arguments'), `${at}.runtimeArguments`);
    if (runtimeArguments !== undefined) out.runtimeArguments = runtimeArguments;
    const packageArguments = this.arguments(pick(raw, 'packageArguments', 'package_arguments'), `${at}.packageArguments`);
    if (packageArguments !== undefined) out.packageArguments = packageArguments;
    const env = this.keyValues(pick(raw, 'environmentVariables', 'environment_variables'), `${at}.environmentVariables`);
    if (env !== undefined) out.environmentVariables = env;
    return out;
  }

  remote(raw: unknown, i: number): RegistryRemote {
    const at = `remotes[${i}]`;
    if (!isObj(raw)) throw new Reject('invalid_remote', `${at}: not an object`);
    const t = this.transport(raw, at, false);
    if (t.type === 'stdio' || t.url === undefined) throw new Reject('invalid_remote', `${at}: no URL`);
    const out: RegistryRemote = { type: t.type, url: t.url };
    if (t.headers !== undefined) out.headers = t.headers;
    if (isObj(raw.variables)) {
      const vars: Obj = {};
      for (const [k, v] of Object.entries(raw.variables)) if (isObj(v)) vars[k] = this.input(v, `${at}.variables.${k}`);
      out.variables = vars;
    } else if (raw.variables !== undefined) {
      this.repair(`${at}: variables that are not an object dropped`);
    }
    return out;
  }

  repository(raw: unknown): RegistryRepository | undefined {
    if (!isObj(raw)) return undefined;
    const url = text(raw.url);
    if (url === undefined || !isUri(url)) {
      this.repair(url === undefined ? 'empty repository dropped' : 'repository with an invalid URL dropped');
      return undefined;
    }
    if (!this.web(url, 'repository.url')) return undefined;
    let source = str(raw.source)?.trim() ?? '';
    if (source === '') {
      const host = new URL(url).hostname.toLowerCase();
      const inferred = host === 'github.com' ? 'github' : host === 'gitlab.com' ? 'gitlab' : host === 'bitbucket.org' ? 'bitbucket' : '';
      if (inferred !== '') {
        source = inferred;
        this.repair(`repository source inferred as ${inferred}`);
      }
    }
    const out: RegistryRepository = { url, source };
    const subfolder = text(raw.subfolder);
    if (subfolder !== undefined) out.subfolder = subfolder;
    const id = raw.id === undefined || raw.id === null ? undefined : String(raw.id).trim();
    if (id !== undefined && id !== '') out.id = id;
    return out;
  }

  icons(raw: unknown): RegistryIcon[] | undefined {
    if (!Array.isArray(raw)) return undefined;
    const out: RegistryIcon[] = [];
    raw.forEach((icon, i) => {
      const src = isObj(icon) ? text(icon.src) : undefined;
      if (!isObj(icon) || src === undefined || !isUri(src) || codePointLength(src) > 255) {
        this.repair(`icons[${i}]: invalid icon dropped`);
        return;
      }
      if (!this.web(src, `icons[${i}].src`)) return;
      const out1: RegistryIcon = { src };
      const mime = text(icon.mimeType)?.toLowerCase();
      if (mime !== undefined && ['image/png', 'image/jpeg', 'image/jpg', 'image/svg+xml', 'image/webp'].includes(mime)) out1.mimeType = mime;
      if (Array.isArray(icon.sizes)) {
        const sizes = icon.sizes.filter((s): s is string => typeof s === 'string' && /^(\d+x\d+|any)$/.test(s));
        if (sizes.length > 0) out1.sizes = sizes;
      }
      if (icon.theme === 'light' || icon.theme === 'dark') out1.theme = icon.theme;
      out.push(out1);
    });
    return out.length > 0 ? out : undefined;
  }

  boundedText(v: string, field: string): string {
    if (codePointLength(v) <= TEXT_MAX) return v;
    this.repair(`${field} cut to ${TEXT_MAX} characters`);
    return clipText(v, TEXT_MAX);
  }
}

/** The server.json (2025-12-11) document of a normalised server, as validated and as served. */
export function serverJsonOf(s: NormalisedServer): Record<string, unknown> {
  const doc: Record<string, unknown> = { $schema: SERVER_SCHEMA_URL, name: s.name };
  if (s.title !== undefined) doc.title = s.title;
  doc.description = s.description;
  doc.version = s.version;
  if (s.repository !== undefined) doc.repository = s.repository;
  if (s.websiteUrl !== undefined) doc.websiteUrl = s.websiteUrl;
  doc.packages = s.packages;
  doc.remotes = s.remotes;
  if (s.icons !== undefined) doc.icons = s.icons;
  return doc;
}

/** Normalises one upstream row; never throws. */
export function normaliseRow(row: unknown): NormaliseResult {
  const parts = splitRow(row);
  if (!parts) return { ok: false, rejection: { code: 'not_an_object', reason: 'row is not a JSON object' } };
  const { server, meta } = parts;
  const rawName = text(server.name);
  const detail = isObj(server.version_detail) ? server.version_detail : {};
  const version = text(server.version) ?? text(detail.version);
  const fail = (code: RejectCode, reason: string): NormaliseResult => ({
    ok: false,
    rejection: { ...(rawName !== undefined && { name: rawName }), ...(version !== undefined && { version }), code, reason },
  });
  if (rawName === undefined) return fail('missing_name', 'row has no name');
  if (!NAME_PATTERN.test(rawName) || rawName.length < 3 || rawName.length > 200) {
    return fail('invalid_name', `name "${rawName}" does not match the server.json name pattern (namespace/name, 3-200 chars)`);
  }
  if (version === undefined) return fail('missing_version', 'row has no version');
  if (codePointLength(version) > 255) return fail('missing_version', 'version is longer than 255 characters');
  if (parts.badStatus !== undefined) return fail('unknown_status', `unknown status "${parts.badStatus}"`);
  const description = text(server.description);
  if (description === undefined) return fail('invalid_description', 'row has an empty description');

  const n = new Normaliser();
  try {
    const packages = Array.isArray(server.packages) ? server.packages.map((p, i) => n.package(p, i)) : [];
    const remotes = Array.isArray(server.remotes) ? server.remotes.map((r, i) => n.remote(r, i)) : [];
    const out: NormalisedServer = {
      name: rawName,
      description: n.boundedText(description, 'description'),
      version,
      status: meta.status ?? 'active',
      packages,
      remotes,
      isLatest: meta.isLatest === true,
      declaredSchema: /(\d{4}-\d{2}-\d{2})/.exec(str(server.$schema) ?? '')?.[1] ?? '',
      repairs: n.repairs,
    };
    const title = text(server.title);
    if (title !== undefined) out.title = n.boundedText(title, 'title');
    const website = text(pick(server, 'websiteUrl', 'website_url'));
    if (website !== undefined) {
      if (!isUri(website)) n.repair('invalid websiteUrl dropped');
      else if (n.web(website, 'websiteUrl')) out.websiteUrl = website;
    }
    const repository = n.repository(server.repository);
    if (repository !== undefined) out.repository = repository;
    const icons = n.icons(server.icons);
    if (icons !== undefined) out.icons = icons;
    if (meta.publishedAt !== undefined) out.publishedAt = meta.publishedAt;
    if (meta.updatedAt !== undefined) out.upstreamUpdatedAt = meta.updatedAt;
    const issues = serverJsonIssues(serverJsonOf(out));
    if (issues.length > 0) return fail('schema', `fails the 2025-12-11 schema: ${issues.slice(0, 3).join('; ')}`);
    if (n.dropped.length > 0) out.dropped = n.dropped;
    return { ok: true, server: out };
  } catch (err) {
    if (err instanceof Reject) return fail(err.code, err.message);
    throw err;
  }
}
