import type { CatalogRecord, RegistryPackage, RegistryRemote } from '../domain/types';
import { type Command, commandOf } from './command';
import { type InputNote, Inputs, keyValues, plain, type Value, VsInputs } from './values';

/**
 * Install snippets per MCP client, built from what the registry says about a server: each package
 * (see command.ts for the command) and each hosted endpoint (URL template, transport,
 * headers). Pure functions of the record, checked against the clients' documented formats by
 * test/support/install-checker.ts on every server of the real registry sample:
 *
 * - Claude Desktop: `claude_desktop_config.json`, `mcpServers.<name>` with `command`/`args`/`env`;
 *   a hosted endpoint through the `mcp-remote` bridge (or Settings → Connectors).
 * - Claude Code: `claude mcp add <name> --env K=V -- <command> <args…>`, and
 *   `claude mcp add --transport http|sse <name> <url> --header "K: V"` for an endpoint.
 * - VS Code: `.vscode/mcp.json`, `servers.<name>` with `type`; every value to supply an
 *   `${input:…}` prompt (masked when secret, a pick list when the entry gives choices).
 * - Cursor: `.cursor/mcp.json`, `mcpServers.<name>`, `url` + `headers` for an endpoint.
 * - Any client: the endpoint's URL, transport and headers.
 *
 * Outside VS Code a value to supply is its default (never for a secret) or a `<NAME>` placeholder
 * named after the variable; optional arguments and variables are listed beside the snippet rather
 * than guessed.
 */

export type { InputNote };

/** The MCP clients a snippet is written for (`generic`: any client, by URL, transport and headers). */
export const INSTALL_CLIENTS = ['claude-desktop', 'claude-code', 'vscode', 'cursor', 'generic'] as const;
export type InstallClient = (typeof INSTALL_CLIENTS)[number];
/** A snippet's client, or `terminal`: the command that starts a package serving HTTP locally, before a client connects. */
export type ClientId = InstallClient | 'terminal';

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
  /** "npm @acme/weather 1.2.0", "Hosted endpoint (Streamable HTTP)". */
  title: string;
  kind: 'package' | 'remote' | 'bundle';
  snippets: Snippet[];
  /** Inputs the snippet leaves to the user, and optional ones it leaves out. */
  inputs: InputNote[];
  /** Anything else worth saying (a local HTTP server to start first, a bundle's checksum). */
  notes: string[];
  /** The registry entry this option installs. */
  source: { package?: RegistryPackage; remote?: RegistryRemote };
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

const json = (v: unknown) => JSON.stringify(v, null, 2);
const entries = (kv: Array<[string, Value]>, render: (v: Value) => string) => Object.fromEntries(kv.map(([k, v]) => [k, render(v)]));

function stdioSnippets(key: string, c: Command): Snippet[] {
  const env = entries(c.env, plain);
  const entry = { command: c.command, args: c.args.map(plain), ...(c.env.length > 0 && { env }) };
  const vs = new VsInputs();
  const vsEntry = { type: 'stdio', command: c.command, args: c.args.map((a) => vs.ref(a)), ...(c.env.length > 0 && { env: entries(c.env, (v) => vs.ref(v)) }) };
  const envFlags = Object.entries(env).flatMap(([k, v]) => ['--env', shellQuote(`${k}=${v}`)]);
  return [
    { client: 'claude-desktop', label: 'Claude Desktop', where: 'claude_desktop_config.json', language: 'json', text: json({ mcpServers: { [key]: entry } }) },
    {
      client: 'claude-code',
      label: 'Claude Code',
      where: 'Terminal',
      language: 'shell',
      text: ['claude', 'mcp', 'add', shellQuote(key), ...envFlags, '--', shellQuote(c.command), ...entry.args.map(shellQuote)].join(' '),
    },
    {
      client: 'vscode',
      label: 'VS Code',
      where: '.vscode/mcp.json',
      language: 'json',
      text: json({ ...(vs.list.length > 0 && { inputs: vs.list }), servers: { [key]: vsEntry } }),
    },
    { client: 'cursor', label: 'Cursor', where: '.cursor/mcp.json', language: 'json', text: json({ mcpServers: { [key]: entry } }) },
  ];
}

interface Endpoint {
  type: 'streamable-http' | 'sse';
  url: Value;
  headers: Array<[string, Value]>;
  /** A server the reader starts: its URL is the one they started it on, in every client. */
  local?: boolean;
}

function remoteSnippets(key: string, e: Endpoint): Snippet[] {
  const http = e.type === 'sse' ? 'sse' : 'http';
  const url = plain(e.url);
  const headers = entries(e.headers, plain);
  const hasHeaders = e.headers.length > 0;
  // mcp-remote takes `--header Name:${VAR}` and reads the value from its environment, so no client splits a value with spaces.
  const bridgeArgs = ['-y', 'mcp-remote', url, ...(e.type === 'sse' ? ['--transport', 'sse-only'] : [])];
  const bridgeEnv: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    const envName = `MCP_HEADER_${name.toUpperCase().replace(/[^A-Z0-9]+/g, '_')}`;
    bridgeArgs.push('--header', `${name}:\${${envName}}`);
    bridgeEnv[envName] = value;
  }
  const vs = new VsInputs();
  const vsEntry = { type: http, url: e.local ? url : vs.ref(e.url), ...(hasHeaders && { headers: entries(e.headers, (v) => vs.ref(v)) }) };
  const headerFlags = Object.entries(headers).flatMap(([k, v]) => ['--header', shellQuote(`${k}: ${v}`)]);
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
      text: ['claude', 'mcp', 'add', '--transport', http, shellQuote(key), shellQuote(url), ...headerFlags].join(' '),
    },
    {
      client: 'vscode',
      label: 'VS Code',
      where: '.vscode/mcp.json',
      language: 'json',
      text: json({ ...(vs.list.length > 0 && { inputs: vs.list }), servers: { [key]: vsEntry } }),
    },
    {
      client: 'cursor',
      label: 'Cursor',
      where: '.cursor/mcp.json',
      language: 'json',
      text: json({ mcpServers: { [key]: { url, ...(hasHeaders && { headers }) } } }),
    },
    {
      client: 'generic',
      label: 'Any MCP client',
      where: 'Connection settings',
      language: 'text',
      text: [`URL: ${url}`, `Transport: ${transportName(e.type)}`, ...Object.entries(headers).map(([k, v]) => `Header: ${k}: ${v}`)].join('\n'),
    },
  ];
}

/** The command line that starts a package serving HTTP, its environment set in front. */
function terminalSnippet(c: Command): Snippet {
  const env = c.env.map(([k, v]) => `${k}=${shellQuote(plain(v))}`);
  return {
    client: 'terminal',
    label: 'Start the server',
    where: 'Terminal',
    language: 'shell',
    text: [...env, shellQuote(c.command), ...c.args.map((a) => shellQuote(plain(a)))].join(' '),
  };
}

const transportName = (type: string) => (type === 'sse' ? 'SSE' : 'Streamable HTTP');
const REGISTRY_LABEL: Record<string, string> = { npm: 'npm', pypi: 'PyPI', oci: 'Docker image', nuget: 'NuGet', mcpb: 'MCP bundle' };
/** Which packages are offered first when a server publishes several. */
const PACKAGE_ORDER = ['npm', 'pypi', 'oci', 'nuget', 'mcpb'];
const rank = (type: string) => (PACKAGE_ORDER.includes(type) ? PACKAGE_ORDER.indexOf(type) : PACKAGE_ORDER.length);

function remoteOption(key: string, remote: RegistryRemote, id: string): InstallOption {
  const inputs = new Inputs();
  const url = inputs.template(remote.url, remote.variables, { id: 'url', from: {} });
  const headers = keyValues(remote.headers, 'header', inputs);
  return {
    id,
    title: `Hosted endpoint (${transportName(remote.type)})`,
    kind: 'remote',
    snippets: remoteSnippets(key, { type: remote.type, url, headers }),
    inputs: inputs.notes,
    notes: ['Claude Desktop can also connect without the bridge: Settings → Connectors → Add custom connector, with the URL above.'],
    source: { remote },
  };
}

function packageOption(key: string, pkg: RegistryPackage, id: string): InstallOption | undefined {
  const title = `${REGISTRY_LABEL[pkg.registryType] ?? pkg.registryType} ${pkg.identifier}${pkg.version && pkg.registryType !== 'oci' ? ` ${pkg.version}` : ''}`;
  const inputs = new Inputs();
  const known = new Map<string, Value>();
  if (pkg.registryType === 'mcpb') {
    keyValues(pkg.environmentVariables, 'env', inputs);
    return {
      id,
      title,
      kind: 'bundle',
      snippets: [],
      inputs: inputs.notes,
      notes: [
        'An MCP bundle installs in Claude Desktop: download the .mcpb file and open it (or drag it into Settings → Extensions).',
        ...(pkg.fileSha256 ? [`Check the download before opening it: SHA-256 ${pkg.fileSha256}.`] : []),
      ],
      source: { package: pkg },
    };
  }
  const command = commandOf(pkg, inputs, known);
  if (!command) return undefined;
  const { transport } = pkg;
  if (transport.type === 'stdio' || !transport.url) {
    return { id, title, kind: 'package', snippets: stdioSnippets(key, command), inputs: inputs.notes, notes: command.notes, source: { package: pkg } };
  }
  // The package runs a local HTTP server: start it, then point the client at its URL (its `{names}` are the package's inputs).
  const url = inputs.template(transport.url, undefined, { id: 'url', from: {} }, known);
  const headers = keyValues(transport.headers, 'header', inputs);
  return {
    id,
    title,
    kind: 'package',
    snippets: [terminalSnippet(command), ...remoteSnippets(key, { type: transport.type, url, headers, local: true })],
    inputs: inputs.notes,
    notes: [
      `This package serves ${transportName(transport.type)} locally: start it in a terminal (first snippet), then connect your client to ${plain(url)}.`,
      ...command.notes,
    ],
    source: { package: pkg },
  };
}

/** Every way to install the server: its hosted endpoints first (nothing to run), then one option per package registry. */
export function installOptions(record: CatalogRecord): InstallOption[] {
  const key = configKey(record);
  const out: InstallOption[] = [];
  // One endpoint per transport: Streamable HTTP first, SSE as the older alternative.
  const remotes = [...record.remotes].sort((a, b) => (a.type === b.type ? 0 : a.type === 'streamable-http' ? -1 : 1));
  for (const remote of remotes) {
    if (out.some((o) => o.title === `Hosted endpoint (${transportName(remote.type)})`)) continue;
    out.push(remoteOption(key, remote, `remote-${out.length}`));
  }
  const seen = new Set<string>();
  for (const pkg of [...record.packages].sort((a, b) => rank(a.registryType) - rank(b.registryType))) {
    if (seen.has(pkg.registryType)) continue;
    seen.add(pkg.registryType);
    const option = packageOption(key, pkg, `pkg-${out.length}`);
    if (option) out.push(option);
  }
  return out;
}
