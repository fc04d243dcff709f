import type { CatalogRecord, RegistryPackage, RegistryRemote } from '../../catalog/domain/types';

/**
 * Install snippets per MCP client, built from what the registry says about a server: each package
 * (its registry, version, runtime and package arguments, environment variables, transport) and
 * each hosted endpoint (URL, transport, headers). Pure functions of the record, so every snippet
 * is unit-tested against the clients' documented formats:
 *
 * - Claude Desktop: `claude_desktop_config.json`, `mcpServers.<name>` with `command`/`args`/`env`;
 *   a hosted endpoint through the `mcp-remote` bridge (or Settings → Connectors).
 * - Claude Code: `claude mcp add <name> --env K=V -- <command> <args…>`, and
 *   `claude mcp add --transport http|sse <name> <url> --header "K: V"` for an endpoint.
 * - VS Code: `.vscode/mcp.json`, `servers.<name>` with `type`, secrets as `${input:…}` prompts.
 * - Cursor: `.cursor/mcp.json`, `mcpServers.<name>`, `url` + `headers` for an endpoint.
 * - Any client: the endpoint's URL, transport and headers.
 *
 * Values the user must supply are placeholders in angle brackets (`<GITHUB_TOKEN>`); optional
 * arguments and variables are listed beside the snippet rather than guessed.
 */

export type ClientId = 'claude-desktop' | 'claude-code' | 'vscode' | 'cursor' | 'generic';

export interface Snippet {
  client: ClientId;
  /** "Claude Desktop", … */
  label: string;
  /** Where it goes: a file name, or "Terminal". */
  where: string;
  language: 'json' | 'shell' | 'text';
  text: string;
}

export interface InstallOption {
  /** Stable id for the page's anchors (`pkg-0`, `remote-0`). */
  id: string;
  /** "npm package @acme/weather 1.2.0", "Hosted endpoint (Streamable HTTP)". */
  title: string;
  kind: 'package' | 'remote' | 'bundle';
  snippets: Snippet[];
  /** Inputs the snippet leaves to the user, and optional ones it leaves out. */
  inputs: InputNote[];
  /** Anything else worth saying (a local HTTP server to start first, a bundle's checksum). */
  notes: string[];
}

export interface InputNote {
  kind: 'env' | 'argument' | 'header';
  name: string;
  required: boolean;
  secret: boolean;
  description?: string;
  default?: string;
}

/** The fields of a registry Input this module reads (server.json 2025-12-11, `Input`/`KeyValueInput`/`Argument`). */
interface InputLike {
  type?: unknown;
  name?: unknown;
  value?: unknown;
  valueHint?: unknown;
  default?: unknown;
  description?: unknown;
  isRequired?: unknown;
  isSecret?: unknown;
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
const flag = (v: unknown): boolean => v === true;

function asInputs(list: unknown[] | undefined): InputLike[] {
  return (list ?? []).filter((x): x is InputLike => typeof x === 'object' && x !== null && !Array.isArray(x));
}

/** The key a server gets in a client's config: the part of its name after `/`, tidied. */
export function configKey(record: Pick<CatalogRecord, 'name' | 'slug'>): string {
  const base = record.name.split('/').pop() ?? record.slug;
  const key = base
    .toLowerCase()
    .replace(/[^a-z0-9_-]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return key || record.slug;
}

/** POSIX shell quoting: bare when safe, else single quotes (`'` written as `'\''`). */
export function shellQuote(s: string): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(s)) return s;
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

interface Command {
  command: string;
  args: string[];
  /** Environment variables the client must set: name → value or placeholder. */
  env: Record<string, string>;
  /** The same, as VS Code `${input:…}` references where the value is secret or required. */
  inputs: InputNote[];
}

function placeholder(name: string): string {
  return `<${name}>`;
}

/** One argument's words, or [] when it is optional and has no fixed value (it is listed instead). */
function argumentWords(a: InputLike, alwaysInclude: boolean): { words: string[]; note?: InputNote } {
  const name = str(a.name);
  const hint = str(a.valueHint) ?? name ?? 'value';
  const fixed = str(a.value);
  const required = flag(a.isRequired);
  const note: InputNote = {
    kind: 'argument',
    name: a.type === 'named' ? (name ?? hint) : hint,
    required,
    secret: flag(a.isSecret),
    ...(str(a.description) && { description: str(a.description) }),
    ...(str(a.default) && { default: str(a.default) }),
  };
  if (a.type === 'named') {
    if (!name) return { words: [] };
    if (fixed !== undefined) return { words: [name, fixed] };
    const hasValue = str(a.valueHint) !== undefined || str(a.default) !== undefined;
    if (alwaysInclude && !hasValue) return { words: [name] };
    if (required) return { words: hasValue ? [name, placeholder(hint)] : [name], note };
    return { words: [], note };
  }
  if (fixed !== undefined) return { words: [fixed] };
  if (required || alwaysInclude) return { words: [placeholder(hint)], note: { ...note, required: true } };
  return { words: [], note };
}

function argumentList(list: unknown[] | undefined, alwaysInclude: boolean): { words: string[]; notes: InputNote[] } {
  const words: string[] = [];
  const notes: InputNote[] = [];
  for (const a of asInputs(list)) {
    const r = argumentWords(a, alwaysInclude);
    words.push(...r.words);
    if (r.note) notes.push(r.note);
  }
  return { words, notes };
}

function envOf(pkg: RegistryPackage): { env: Record<string, string>; notes: InputNote[] } {
  const env: Record<string, string> = {};
  const notes: InputNote[] = [];
  for (const v of asInputs(pkg.environmentVariables)) {
    const name = str(v.name);
    if (!name) continue;
    const required = flag(v.isRequired);
    const secret = flag(v.isSecret);
    const fixed = str(v.value);
    notes.push({
      kind: 'env',
      name,
      required,
      secret,
      ...(str(v.description) && { description: str(v.description) }),
      ...(str(v.default) && { default: str(v.default) }),
    });
    if (fixed !== undefined && !secret) env[name] = fixed;
    else if (required) env[name] = placeholder(name);
  }
  return { env, notes };
}

const versioned = (id: string, version: string | undefined, sep: string) => (version && version !== 'latest' ? `${id}${sep}${version}` : id);

/** How a package is started, by registry; undefined for registries no client can run from a command line. */
function commandOf(pkg: RegistryPackage): Command | undefined {
  const runtime = argumentList(pkg.runtimeArguments, true);
  const args = argumentList(pkg.packageArguments, false);
  const { env, notes } = envOf(pkg);
  const inputs = [...runtime.notes, ...args.notes, ...notes];
  switch (pkg.registryType) {
    case 'npm': {
      const command = pkg.runtimeHint === 'bunx' ? 'bunx' : 'npx';
      const yes = command === 'npx' && !runtime.words.includes('-y') && !runtime.words.includes('--yes') ? ['-y'] : [];
      return { command, args: [...yes, ...runtime.words, versioned(pkg.identifier, pkg.version, '@'), ...args.words], env, inputs };
    }
    case 'pypi':
      return { command: 'uvx', args: [...runtime.words, versioned(pkg.identifier, pkg.version, '=='), ...args.words], env, inputs };
    case 'oci': {
      // The container sees only the variables passed with -e; the client sets them for docker.
      const base = ['run', '-i', '--rm'].filter((w) => w === 'run' || !runtime.words.includes(w));
      const passEnv = Object.keys(env).flatMap((k) => ['-e', k]);
      return { command: 'docker', args: [...base, ...runtime.words, ...passEnv, pkg.identifier, ...args.words], env, inputs };
    }
    case 'nuget':
      return {
        command: 'dnx',
        args: [...runtime.words, versioned(pkg.identifier, pkg.version, '@'), '--yes', ...(args.words.length ? ['--', ...args.words] : [])],
        env,
        inputs,
      };
    default:
      return undefined;
  }
}

const json = (v: unknown) => JSON.stringify(v, null, 2);

function stdioEntry(c: Command): Record<string, unknown> {
  return { command: c.command, args: c.args, ...(Object.keys(c.env).length > 0 && { env: c.env }) };
}

/** VS Code: required or secret values become `${input:…}` prompts (secrets masked) instead of text in the file. */
function vscodeInputs(names: InputNote[], values: Record<string, string>): { map: Record<string, string>; inputs: unknown[] } {
  const map: Record<string, string> = {};
  const inputs: unknown[] = [];
  for (const [k, v] of Object.entries(values)) {
    const note = names.find((n) => n.name === k);
    if (v.startsWith('<') && v.endsWith('>')) {
      const id = k.toLowerCase().replace(/[^a-z0-9]+/g, '-');
      map[k] = `\${input:${id}}`;
      inputs.push({ type: 'promptString', id, description: note?.description ?? k, ...(note?.secret && { password: true }) });
    } else {
      map[k] = v;
    }
  }
  return { map, inputs };
}

function packageSnippets(key: string, c: Command): Snippet[] {
  const vs = vscodeInputs(c.inputs, c.env);
  const vsEntry = { type: 'stdio', command: c.command, args: c.args, ...(Object.keys(vs.map).length > 0 && { env: vs.map }) };
  const envFlags = Object.entries(c.env).flatMap(([k, v]) => ['--env', shellQuote(`${k}=${v}`)]);
  return [
    {
      client: 'claude-desktop',
      label: 'Claude Desktop',
      where: 'claude_desktop_config.json',
      language: 'json',
      text: json({ mcpServers: { [key]: stdioEntry(c) } }),
    },
    {
      client: 'claude-code',
      label: 'Claude Code',
      where: 'Terminal',
      language: 'shell',
      text: ['claude', 'mcp', 'add', shellQuote(key), ...envFlags, '--', shellQuote(c.command), ...c.args.map(shellQuote)].join(' '),
    },
    {
      client: 'vscode',
      label: 'VS Code',
      where: '.vscode/mcp.json',
      language: 'json',
      text: json({ ...(vs.inputs.length > 0 && { inputs: vs.inputs }), servers: { [key]: vsEntry } }),
    },
    { client: 'cursor', label: 'Cursor', where: '.cursor/mcp.json', language: 'json', text: json({ mcpServers: { [key]: stdioEntry(c) } }) },
  ];
}

function headersOf(remote: Pick<RegistryRemote, 'headers'>): { headers: Record<string, string>; notes: InputNote[] } {
  const headers: Record<string, string> = {};
  const notes: InputNote[] = [];
  for (const h of asInputs(remote.headers)) {
    const name = str(h.name);
    if (!name) continue;
    const required = flag(h.isRequired);
    const secret = flag(h.isSecret);
    notes.push({ kind: 'header', name, required, secret, ...(str(h.description) && { description: str(h.description) }) });
    const fixed = str(h.value);
    if (fixed !== undefined && !secret) headers[name] = fixed;
    else if (required) headers[name] = name.toLowerCase() === 'authorization' ? 'Bearer <token>' : placeholder(name);
  }
  return { headers, notes };
}

function remoteSnippets(key: string, remote: Pick<RegistryRemote, 'type' | 'url'>, headers: Record<string, string>, notes: InputNote[]): Snippet[] {
  const http = remote.type === 'sse' ? 'sse' : 'http';
  const hasHeaders = Object.keys(headers).length > 0;
  // mcp-remote takes `--header Name:value`; a value with spaces goes through an env variable so no client splits it.
  const bridgeArgs = ['-y', 'mcp-remote', remote.url, ...(remote.type === 'sse' ? ['--transport', 'sse-only'] : [])];
  const bridgeEnv: Record<string, string> = {};
  for (const [i, [name, value]] of Object.entries(headers).entries()) {
    const envName = `MCP_HEADER_${i + 1}`;
    bridgeArgs.push('--header', `${name}:\${${envName}}`);
    bridgeEnv[envName] = value;
  }
  const vsHeaders: Record<string, string> = {};
  const vsInputs: unknown[] = [];
  for (const [name, value] of Object.entries(headers)) {
    const note = notes.find((n) => n.name === name);
    if (value.includes('<')) {
      const id = name.toLowerCase().replace(/[^a-z0-9]+/g, '-');
      vsInputs.push({ type: 'promptString', id, description: note?.description ?? name, ...(note?.secret && { password: true }) });
      vsHeaders[name] = value.startsWith('Bearer <') ? `Bearer \${input:${id}}` : `\${input:${id}}`;
    } else {
      vsHeaders[name] = value;
    }
  }
  const headerFlags = Object.entries(headers).flatMap(([k, v]) => ['--header', shellQuote(`${k}: ${v}`)]);
  const transportName = remote.type === 'sse' ? 'SSE' : 'Streamable HTTP';
  return [
    {
      client: 'claude-desktop',
      label: 'Claude Desktop',
      where: 'claude_desktop_config.json',
      language: 'json',
      text: json({ mcpServers: { [key]: { command: 'npx', args: bridgeArgs, ...(hasHeaders && { env: bridgeEnv }) } } }),
    },
    {
      client: 'claude-code',
      label: 'Claude Code',
      where: 'Terminal',
      language: 'shell',
      text: ['claude', 'mcp', 'add', '--transport', http, shellQuote(key), shellQuote(remote.url), ...headerFlags].join(' '),
    },
    {
      client: 'vscode',
      label: 'VS Code',
      where: '.vscode/mcp.json',
      language: 'json',
      text: json({
        ...(vsInputs.length > 0 && { inputs: vsInputs }),
        servers: { [key]: { type: http, url: remote.url, ...(hasHeaders && { headers: vsHeaders }) } },
      }),
    },
    {
      client: 'cursor',
      label: 'Cursor',
      where: '.cursor/mcp.json',
      language: 'json',
      text: json({ mcpServers: { [key]: { url: remote.url, ...(hasHeaders && { headers }) } } }),
    },
    {
      client: 'generic',
      label: 'Any MCP client',
      where: 'Connection settings',
      language: 'text',
      text: [`URL: ${remote.url}`, `Transport: ${transportName}`, ...Object.entries(headers).map(([k, v]) => `Header: ${k}: ${v}`)].join('\n'),
    },
  ];
}

const REGISTRY_LABEL: Record<string, string> = { npm: 'npm', pypi: 'PyPI', oci: 'Docker image', nuget: 'NuGet', mcpb: 'MCP bundle' };
/** Which packages are offered first when a server publishes several. */
const PACKAGE_ORDER = ['npm', 'pypi', 'oci', 'nuget', 'mcpb'];

/** Every way to install the server: its hosted endpoints first (nothing to run), then one option per package registry. */
export function installOptions(record: CatalogRecord): InstallOption[] {
  const key = configKey(record);
  const out: InstallOption[] = [];
  // One endpoint per transport: Streamable HTTP first, SSE as the older alternative.
  const remotes = [...record.remotes].sort((a, b) => (a.type === b.type ? 0 : a.type === 'streamable-http' ? -1 : 1));
  const seenTransport = new Set<string>();
  for (const remote of remotes) {
    if (seenTransport.has(remote.type)) continue;
    seenTransport.add(remote.type);
    const { headers, notes } = headersOf(remote);
    const hints = [
      'Claude Desktop can also connect without the bridge: Settings → Connectors → Add custom connector, with the URL above.',
      ...(/\{[^}]+\}/.test(remote.url) ? ['The URL contains {variables}: replace them with your values.'] : []),
    ];
    out.push({
      id: `remote-${out.length}`,
      title: `Hosted endpoint (${remote.type === 'sse' ? 'SSE' : 'Streamable HTTP'})`,
      kind: 'remote',
      snippets: remoteSnippets(key, remote, headers, notes),
      inputs: notes,
      notes: hints,
    });
  }
  const packages = [...record.packages].sort((a, b) => rank(a.registryType) - rank(b.registryType));
  const seenRegistry = new Set<string>();
  for (const pkg of packages) {
    if (seenRegistry.has(pkg.registryType)) continue;
    seenRegistry.add(pkg.registryType);
    const title = `${REGISTRY_LABEL[pkg.registryType] ?? pkg.registryType} ${pkg.identifier}${pkg.version && pkg.registryType !== 'oci' ? ` ${pkg.version}` : ''}`;
    if (pkg.registryType === 'mcpb') {
      out.push({
        id: `pkg-${out.length}`,
        title,
        kind: 'bundle',
        snippets: [],
        inputs: envOf(pkg).notes,
        notes: [
          'An MCP bundle installs in Claude Desktop: download the .mcpb file and open it (or drag it into Settings → Extensions).',
          ...(pkg.fileSha256 ? [`Check the download before opening it: SHA-256 ${pkg.fileSha256}.`] : []),
        ],
      });
      continue;
    }
    const command = commandOf(pkg);
    if (!command) continue;
    const notes: string[] = [];
    let snippets = packageSnippets(key, command);
    if (pkg.transport.type !== 'stdio' && pkg.transport.url) {
      // The package runs a local HTTP server: start it, then point the client at its URL.
      const run = [shellQuote(command.command), ...command.args.map(shellQuote)].join(' ');
      const env = Object.entries(command.env)
        .map(([k, v]) => `${k}=${shellQuote(v)}`)
        .join(' ');
      notes.push(
        `This package serves ${pkg.transport.type === 'sse' ? 'SSE' : 'Streamable HTTP'} locally: start it with \`${env ? `${env} ` : ''}${run}\`, then connect your client to ${pkg.transport.url}.`,
      );
      snippets = remoteSnippets(key, { type: pkg.transport.type === 'sse' ? 'sse' : 'streamable-http', url: pkg.transport.url }, {}, []);
    }
    out.push({ id: `pkg-${out.length}`, title, kind: 'package', snippets, inputs: command.inputs, notes });
  }
  return out;
}

function rank(type: string): number {
  const i = PACKAGE_ORDER.indexOf(type);
  return i < 0 ? PACKAGE_ORDER.length : i;
}
