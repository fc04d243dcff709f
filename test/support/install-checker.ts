/**
 * A checker per MCP client for the site's install snippets, its rules written from the clients'
 * and runners' documentation and from server.json, not from the snippet builder:
 *
 * - JSON configs parse and match the client's format (test/fixtures/install-clients/*.schema.json);
 *   VS Code's `${input:id}` references are all declared, every declared input is used.
 * - Command lines tokenise as a POSIX shell would (shell-quote): no operator, glob or expansion.
 *   `claude mcp add` parses as its options say (`--env`/`--header` take every following word up to
 *   the next option, `--` ends them).
 * - The command runs the entry's package with the runner of its registry: `docker run` once, its
 *   options then the image once (the entry's identifier, with its tag); `npx -y <pkg>@<version>`,
 *   `bunx`, `uvx <pkg>@<version>` or `uvx --from <pkg>==<version> <command>`, `pipx run`,
 *   `dnx <pkg>@<version> --yes`: the package and its version named once.
 * - Every required (or fixed) environment variable and header of the entry appears, every required
 *   named argument's flag; Docker passes each variable the client sets into the container (`-e`).
 * - No secret is inlined: a secret's value is a `<placeholder>` or an `${input:…}` prompt
 *   (masked), and no secret text of the entry appears anywhere. A placeholder never names a flag.
 */
import type { CatalogRecord, RegistryPackage, RegistryRemote, InstallOption, Snippet } from '../../lambdas/catalog-core';
import Ajv from 'ajv';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as shellParse } from 'shell-quote';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const list = (v: unknown): Obj[] => (Array.isArray(v) ? v.filter(isObj) : []);
const s = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

const FIXTURES = join(__dirname, '..', 'fixtures', 'install-clients');
const ajv = new Ajv({ strict: false, allErrors: true });
const schemas = Object.fromEntries(
  (['claude-desktop', 'cursor', 'vscode'] as const).map((c) => [c, ajv.compile(JSON.parse(readFileSync(join(FIXTURES, `${c}.schema.json`), 'utf8')))]),
);

/** What a snippet makes the client do, whatever its format. */
interface Launch {
  command?: string;
  args?: string[];
  env: Record<string, string>;
  url?: string;
  transport?: 'http' | 'sse';
  headers: Record<string, string>;
  /** VS Code's declared inputs, by id. */
  inputs?: Map<string, Obj>;
}

// ------------------------------------------------------------------------------ shell words

/** The words a POSIX shell makes of a line; a problem for anything but plain words. */
export function shellWords(line: string, problems: string[]): string[] {
  const words: string[] = [];
  for (const t of shellParse(line, (name) => `\u0000${name}`)) {
    if (typeof t !== 'string') problems.push(`the shell reads ${JSON.stringify(t)} as an operator, glob or comment`);
    else if (t.includes('\u0000')) problems.push(`the shell expands a variable in ${JSON.stringify(t.replace(/\u0000/g, '$'))}`);
    else words.push(t);
  }
  return words;
}

/** `claude mcp add [options] <name> <commandOrUrl> [args...]`: -t/--transport, -s/--scope, -e/--env <env...>, -H/--header <header...>. */
function claudeCode(words: string[], problems: string[]): Launch {
  if (words.slice(0, 3).join(' ') !== 'claude mcp add') problems.push('does not start with `claude mcp add`');
  const positional: string[] = [];
  const env: Record<string, string> = {};
  const headers: Record<string, string> = {};
  let transport = 'stdio';
  for (let i = 3; i < words.length; i++) {
    const w = words[i];
    if (w === '--') {
      positional.push(...words.slice(i + 1));
      break;
    }
    if (w === '-t' || w === '--transport') transport = words[++i] ?? '';
    else if (w === '-s' || w === '--scope') i++;
    else if (['-e', '--env', '-H', '--header'].includes(w)) {
      const isEnv = w === '-e' || w === '--env';
      // Variadic: every following word up to the next option.
      while (i + 1 < words.length && !words[i + 1].startsWith('-')) {
        const v = words[++i];
        const m = isEnv ? /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/s.exec(v) : /^([^:\s]+):\s*(.*)$/s.exec(v);
        if (!m) problems.push(`${w} ${JSON.stringify(v)} is not ${isEnv ? 'KEY=value' : '"Name: value"'}`);
        else if (isEnv) env[m[1]] = m[2];
        else headers[m[1]] = m[2];
      }
    } else if (w.startsWith('-')) problems.push(`unknown option ${w} before the server's command (missing --?)`);
    else positional.push(w);
  }
  if (!['stdio', 'http', 'sse'].includes(transport)) problems.push(`unknown transport ${transport}`);
  const [name, target, ...rest] = positional;
  if (!name || !target) problems.push('no server name or command/URL');
  if (transport === 'stdio') return { command: target, args: rest, env, headers };
  if (rest.length > 0) problems.push(`words after the URL: ${rest.join(' ')}`);
  return { url: target, transport: transport as 'http' | 'sse', env, headers };
}

/** `NAME=value … command args`: a server started by hand. */
function terminal(words: string[]): Launch {
  const env: Record<string, string> = {};
  let i = 0;
  for (; i < words.length; i++) {
    const m = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/s.exec(words[i]);
    if (!m) break;
    env[m[1]] = m[2];
  }
  return { command: words[i], args: words.slice(i + 1), env, headers: {} };
}

// ----------------------------------------------------------------------------------- JSON

function only(servers: unknown, problems: string[]): Obj {
  const entries = isObj(servers) ? Object.values(servers) : [];
  if (entries.length !== 1) problems.push(`${entries.length} servers in the config, expected 1`);
  return isObj(entries[0]) ? entries[0] : {};
}

const strings = (v: unknown): Record<string, string> =>
  isObj(v) ? (Object.fromEntries(Object.entries(v).filter(([, x]) => typeof x === 'string')) as Record<string, string>) : {};

/** `npx -y mcp-remote <url> [--transport …] [--header Name:${VAR}]` with VAR in env: Claude Desktop's way to a hosted server. */
function bridge(l: Launch, problems: string[]): Launch {
  const args = l.args ?? [];
  const at = args.indexOf('mcp-remote');
  if (l.command !== 'npx' || at < 0) return l;
  const headers: Record<string, string> = {};
  for (let i = at + 2; i < args.length; i++) {
    if (args[i] === '--transport') i++;
    else if (args[i] === '--header') {
      const m = /^([^:\s]+):(.*)$/s.exec(args[++i] ?? '');
      if (!m) problems.push(`mcp-remote --header ${args[i]} is not Name:value`);
      else headers[m[1]] = m[2].replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, v: string) => l.env[v] ?? `\${${v}}`);
    } else problems.push(`unknown mcp-remote argument ${args[i]}`);
  }
  return { url: args[at + 1], env: {}, headers };
}

function config(client: 'claude-desktop' | 'cursor' | 'vscode', text: string, problems: string[]): Launch {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    problems.push(`not JSON: ${(err as Error).message}`);
    return { env: {}, headers: {} };
  }
  const validate = schemas[client];
  if (!validate(doc)) problems.push(`does not match the ${client} config format: ${ajv.errorsText(validate.errors)}`);
  const d = isObj(doc) ? doc : {};
  const server = only(client === 'vscode' ? d.servers : d.mcpServers, problems);
  const launch: Launch = {
    ...(typeof server.command === 'string' && { command: server.command, args: Array.isArray(server.args) ? server.args.map(String) : [] }),
    ...(typeof server.url === 'string' && { url: server.url }),
    ...(server.type === 'http' || server.type === 'sse' ? { transport: server.type } : {}),
    env: strings(server.env),
    headers: strings(server.headers),
  };
  if (client !== 'vscode') return client === 'claude-desktop' ? bridge(launch, problems) : launch;
  const inputs = new Map(list(d.inputs).map((i) => [String(i.id), i]));
  if (inputs.size !== list(d.inputs).length) problems.push('two inputs with one id');
  const used = new Set([...JSON.stringify(server).matchAll(/\$\{input:([^}]+)\}/g)].map((m) => m[1]));
  for (const id of used) if (!inputs.has(id)) problems.push(`\${input:${id}} is not declared in inputs`);
  for (const id of inputs.keys()) if (!used.has(id)) problems.push(`input ${id} is declared but not used`);
  return { ...launch, inputs };
}

function generic(text: string, problems: string[]): Launch {
  const headers: Record<string, string> = {};
  let url: string | undefined;
  let transport: 'http' | 'sse' | undefined;
  for (const line of text.split('\n')) {
    const [k, ...rest] = line.split(': ');
    const v = rest.join(': ');
    if (k === 'URL') url = v;
    else if (k === 'Transport') transport = v === 'SSE' ? 'sse' : v === 'Streamable HTTP' ? 'http' : undefined;
    else if (k === 'Header' && /^[^:\s]+: /.test(v)) headers[v.slice(0, v.indexOf(':'))] = v.slice(v.indexOf(':') + 2);
    else problems.push(`unexpected line ${JSON.stringify(line)}`);
  }
  if (!transport) problems.push('no transport line');
  return { url, transport, env: {}, headers };
}

// -------------------------------------------------------------------------------- runners

/** Docker's image reference grammar: `[registry[:port]/]path[:tag][@digest]`; no registry means docker.io (`library/` for one component). */
function repositoryOf(ref: string): string {
  const noDigest = ref.split('@')[0];
  const colon = noDigest.lastIndexOf(':');
  const name = colon > noDigest.lastIndexOf('/') ? noDigest.slice(0, colon) : noDigest;
  const parts = name.split('/');
  const hasRegistry = parts.length > 1 && (parts[0].includes('.') || parts[0].includes(':') || parts[0] === 'localhost');
  const path = hasRegistry ? parts.slice(1) : parts;
  const registry = hasRegistry && parts[0] !== 'index.docker.io' ? parts[0] : 'docker.io';
  return `${registry}/${registry === 'docker.io' && path.length === 1 ? 'library/' : ''}${path.join('/')}`.toLowerCase();
}

// `docker run` options (Docker's run reference): those that take a value, and switches.
const DOCKER_VALUE = new Set(
  '-a --attach --add-host --annotation --cap-add --cap-drop --cgroupns --cidfile --cpus --device --dns --entrypoint -e --env --env-file --expose --gpus --group-add -h --hostname --ipc --isolation -l --label --label-file --link --log-driver --log-opt -m --memory --memory-swap --mount --name --net --network --pid --platform -p --publish --pull --restart --runtime --security-opt --shm-size --stop-signal --stop-timeout --tmpfs --ulimit -u --user --userns --uts -v --volume --volumes-from -w --workdir'.split(
    ' ',
  ),
);
const DOCKER_SWITCH = new Set(
  '-d --detach -i --interactive --init -P --publish-all --privileged --read-only --rm -t --tty --no-healthcheck --oom-kill-disable --sig-proxy'.split(' '),
);

function docker(pkg: RegistryPackage, args: string[], env: Record<string, string>, problems: string[]): void {
  if (args[0] !== 'run') problems.push(`docker ${args[0] ?? ''}: the first word is not run`);
  const passed = new Set<string>();
  let i = 1;
  for (; i < args.length && args[i].startsWith('-'); i++) {
    const a = args[i];
    let value: string | undefined;
    let flagName = a;
    if (a.startsWith('--')) {
      flagName = a.split('=')[0];
      if (DOCKER_VALUE.has(flagName)) value = a.includes('=') ? a.slice(a.indexOf('=') + 1) : args[++i];
      else if (!DOCKER_SWITCH.has(flagName)) problems.push(`docker run: unknown option ${a}`);
    } else {
      flagName = a.slice(0, 2);
      if (DOCKER_VALUE.has(flagName)) value = a.length > 2 ? a.slice(2) : args[++i];
      else if (![...a.slice(1)].every((c) => DOCKER_SWITCH.has(`-${c}`))) problems.push(`docker run: unknown option ${a}`);
    }
    if ((flagName === '-e' || flagName === '--env') && value) passed.add(value.split('=')[0]);
  }
  const image = args[i];
  const expected = pkg.version && !/[:@][^/]*$/.test(pkg.identifier) ? `${pkg.identifier}:${pkg.version}` : pkg.identifier;
  if (image !== expected) problems.push(`docker run's image is ${image}, expected ${expected}`);
  if (args.slice(0, i).filter((a) => a === 'run').length !== 1) problems.push('docker: run given more than once');
  const repo = repositoryOf(pkg.identifier);
  const named = args.filter((a) => !a.startsWith('-') && repositoryOf(a) === repo).length;
  if (named !== 1) problems.push(`docker: the image is named ${named} times`);
  for (const k of Object.keys(env)) if (!passed.has(k)) problems.push(`docker: ${k} is set for docker but not passed into the container (-e ${k})`);
}

/** `name@version` of npm and NuGet (a scoped npm name starts with @). */
function atSpec(t: string): { name: string; version?: string } {
  const at = t.lastIndexOf('@');
  return at > 0 ? { name: t.slice(0, at), version: t.slice(at + 1) } : { name: t };
}

function npx(pkg: RegistryPackage, runner: string, args: string[], problems: string[]): void {
  let i = 0;
  const options: string[] = [];
  for (; i < args.length && args[i].startsWith('-'); i++) {
    options.push(args[i]);
    if (['-p', '--package', '-c', '--call'].includes(args[i])) i++;
  }
  const spec = atSpec(args[i] ?? '');
  if (spec.name !== pkg.identifier) problems.push(`${runner} runs ${args[i]}, not ${pkg.identifier}`);
  if (pkg.version && spec.version !== pkg.version) problems.push(`${runner} runs version ${spec.version}, the entry's is ${pkg.version}`);
  // npx asks before installing a package unless --yes: a client has no one to answer.
  if (runner === 'npx' && !options.some((o) => o === '-y' || o === '--yes')) problems.push('npx without -y/--yes waits for a confirmation');
  if (args.slice(i + 1).some((a) => atSpec(a).name === pkg.identifier)) problems.push(`${pkg.identifier} named twice`);
}

const pyName = (n: string) => n.toLowerCase().replace(/[-_.]+/g, '-');
const PY_SPEC = /^([A-Za-z0-9][A-Za-z0-9._-]*)(\[[^\]]*\])?(?:(==|@)(.+))?$/;

/** uvx (uv's tool run): `uvx [options] <command>[@version] [args]`, or `--from <requirement>` naming the package and the command apart. pipx: `pipx run [--spec <requirement>] <app> [args]`. */
function pythonRunner(pkg: RegistryPackage, runner: string, args: string[], problems: string[]): void {
  const words = runner === 'pipx' ? args.slice(1) : args;
  if (runner === 'pipx' && args[0] !== 'run') problems.push('pipx without run');
  const fromFlag = runner === 'pipx' ? '--spec' : '--from';
  let from: string | undefined;
  let i = 0;
  for (; i < words.length && words[i].startsWith('-'); i++) {
    if (words[i] === fromFlag) from = words[++i];
    else if (['--with', '-w', '--python', '-p', '--index', '--with-requirements', '--with-editable'].includes(words[i])) i++;
  }
  const command = words[i] ?? '';
  const spec = PY_SPEC.exec(from ?? command);
  if (!spec || pyName(spec[1]) !== pyName(pkg.identifier)) problems.push(`${runner} installs ${from ?? command}, not ${pkg.identifier}`);
  else if (pkg.version && spec[4] !== pkg.version) problems.push(`${runner} installs version ${spec[4]}, the entry's is ${pkg.version}`);
  if (from !== undefined && /@|==/.test(command)) problems.push(`${runner}: a version both in ${fromFlag} and on the command`);
  if (words.slice(i + 1).some((a) => PY_SPEC.exec(a)?.[3] !== undefined && pyName(PY_SPEC.exec(a)?.[1] ?? '') === pyName(pkg.identifier)))
    problems.push(`${pkg.identifier} named twice`);
}

/** dnx (dotnet tool exec): `dnx <package>[@version] [--yes] [-- args]`; it asks before installing unless --yes. */
function dnx(pkg: RegistryPackage, args: string[], problems: string[]): void {
  const end = args.includes('--') ? args.indexOf('--') : args.length;
  const own = args.slice(0, end);
  const spec = atSpec(own.find((a) => !a.startsWith('-')) ?? '');
  if (spec.name.toLowerCase() !== pkg.identifier.toLowerCase()) problems.push(`dnx runs ${spec.name}, not ${pkg.identifier}`);
  if (pkg.version && spec.version !== pkg.version) problems.push(`dnx runs version ${spec.version}, the entry's is ${pkg.version}`);
  if (!own.includes('--yes') && !own.includes('-y')) problems.push('dnx without --yes waits for a confirmation');
  if (own.filter((a) => !a.startsWith('-')).length !== 1) problems.push(`dnx: words before -- other than the package: ${own.join(' ')}`);
}

const RUNNERS: Record<string, string[]> = { npm: ['npx', 'bunx'], pypi: ['uvx', 'pipx'], oci: ['docker', 'podman'], nuget: ['dnx'] };

function runs(pkg: RegistryPackage, l: Launch, problems: string[]): void {
  const command = l.command ?? '';
  const args = l.args ?? [];
  if (!(RUNNERS[pkg.registryType] ?? []).includes(command)) problems.push(`${pkg.registryType} package run with ${command}`);
  else if (command === 'docker' || command === 'podman') docker(pkg, args, l.env, problems);
  else if (command === 'npx' || command === 'bunx') npx(pkg, command, args, problems);
  else if (command === 'dnx') dnx(pkg, args, problems);
  else pythonRunner(pkg, command, args, problems);
  for (const a of [...list(pkg.runtimeArguments), ...list(pkg.packageArguments)]) {
    const name = s(a.name);
    if (a.type === 'named' && name && (a.isRequired === true || s(a.value)) && !args.includes(name)) problems.push(`required argument ${name} missing`);
    if (a.type === 'named' && name && a.isSecret === true && !s(a.value)) {
      const v = args[args.indexOf(name) + 1];
      if (args.includes(name) && v !== undefined && !holdsPlaceholder(v)) problems.push(`secret argument ${name} has the value ${v}`);
    }
  }
}

// --------------------------------------------------------------------------------- values

const holdsPlaceholder = (v: string) => /<[^<>\s-][^<>]*>|\$\{input:[^}]+\}/.test(v);

/** Names that must appear (required or fixed) and names whose values are secret, of env vars or headers. */
function keyValues(items: unknown): { must: string[]; secret: string[] } {
  const all = list(items).filter((i) => s(i.name));
  return {
    must: all.filter((i) => i.isRequired === true || s(i.value)).map((i) => String(i.name)),
    secret: all.filter((i) => i.isSecret === true).map((i) => String(i.name)),
  };
}

/** The secret text an entry holds (a secret's fixed value without a template, its default): never shown. */
function secretTexts(entry: unknown): string[] {
  const out: string[] = [];
  const walk = (v: unknown, secret: boolean): void => {
    if (Array.isArray(v)) for (const x of v) walk(x, secret);
    if (!isObj(v)) return;
    const mine = secret || v.isSecret === true;
    for (const [k, x] of Object.entries(v)) {
      if ((k === 'value' || k === 'default') && mine && s(x) && !/\{[^}]+\}/.test(String(x)) && String(x).length >= 4) out.push(String(x));
      else walk(x, mine);
    }
  };
  walk(entry, false);
  return out;
}

function values(where: string, kv: Record<string, string>, expected: { must: string[]; secret: string[] }, l: Launch, problems: string[]): void {
  for (const k of expected.must) if (!s(kv[k])) problems.push(`${where} ${k} missing`);
  for (const k of expected.secret) {
    const v = kv[k];
    if (v === undefined) continue;
    if (!holdsPlaceholder(v)) problems.push(`secret ${where} ${k} is inlined: ${JSON.stringify(v)}`);
    for (const m of v.matchAll(/\$\{input:([^}]+)\}/g))
      if (l.inputs && l.inputs.get(m[1])?.password !== true) problems.push(`VS Code input ${m[1]} for secret ${k} is not masked`);
  }
}

/** A URL of the entry's template: its `{names}` filled with anything but spaces. */
function urlMatches(template: string, url: string | undefined): boolean {
  const re = template
    .split(/(\{[^}]+\})/)
    .map((p) => (/^\{[^}]+\}$/.test(p) ? '\\S+?' : p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('');
  return url !== undefined && new RegExp(`^${re}$`).test(url);
}

// ---------------------------------------------------------------------------------- checks

function launchOf(snippet: Snippet, problems: string[]): Launch {
  switch (snippet.client) {
    case 'claude-code':
      return claudeCode(shellWords(snippet.text, problems), problems);
    case 'terminal':
      return terminal(shellWords(snippet.text, problems));
    case 'generic':
      return generic(snippet.text, problems);
    default:
      return config(snippet.client, snippet.text, problems);
  }
}

/** The problems of one snippet of an option (empty when it passes). */
export function checkSnippet(option: InstallOption, snippet: Snippet): string[] {
  const problems: string[] = [];
  const l = launchOf(snippet, problems);
  for (const m of snippet.text.matchAll(/<(-[^<>]*)>/g)) problems.push(`a placeholder names a flag: <${m[1]}>`);
  const { package: pkg, remote } = option.source;
  const entry = pkg ?? remote;
  for (const secret of secretTexts(entry)) if (snippet.text.includes(secret)) problems.push(`secret text of the entry inlined: ${secret}`);
  const endpoint: (Pick<RegistryRemote, 'url' | 'headers'> & { type: string }) | undefined =
    remote ??
    (pkg && pkg.transport.type !== 'stdio' && snippet.client !== 'terminal'
      ? { type: pkg.transport.type, url: pkg.transport.url ?? '', headers: pkg.transport.headers }
      : undefined);
  if (endpoint) {
    if (!urlMatches(endpoint.url, l.url)) problems.push(`URL ${l.url} is not the entry's ${endpoint.url}`);
    const want = endpoint.type === 'sse' ? 'sse' : 'http';
    if (l.transport !== undefined && l.transport !== want) problems.push(`transport ${l.transport}, the entry's is ${endpoint.type}`);
    values('header', l.headers, keyValues(endpoint.headers), l, problems);
  } else if (pkg) {
    if (l.command === undefined) problems.push('no command');
    else runs(pkg, l, problems);
    values('environment variable', l.env, keyValues(pkg.environmentVariables), l, problems);
  }
  return problems;
}

/** Every snippet of every install option of a record, as `name · option · client: problem` lines. */
export function checkRecord(record: CatalogRecord, options: InstallOption[]): string[] {
  return options.flatMap((o) => o.snippets.flatMap((sn) => checkSnippet(o, sn).map((p) => `${record.name} · ${o.title} · ${sn.label}: ${p}`)));
}
