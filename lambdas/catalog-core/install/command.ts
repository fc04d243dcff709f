/**
 * The command that runs a registry package, built from its server.json entry as the registry
 * documents it: the runtime (`runtimeHint`, else the registry's usual runner), the runtime's own
 * arguments (`runtimeArguments`), the package pinned to its version, then the package's arguments
 * (`packageArguments`), and the environment (`environmentVariables`).
 *
 * Entries often spell out in `runtimeArguments` what a runner would add itself (GitHub's server:
 * `run -i --rm -e GITHUB_PERSONAL_ACCESS_TOKEN ghcr.io/github/github-mcp-server`). Nothing the entry
 * already gives is added again: one `docker run`, the image once (the entry's identifier, with its
 * tag, where the arguments name it), a variable passed into the container once, the package named
 * once where the arguments name it (pinned to the entry's version).
 */
import type { RegistryPackage } from '../domain/types';
import { asInputs, flag, type InputLike, type Inputs, keyValues, literalText, str, type Value } from './values';

export interface Command {
  command: string;
  args: Value[];
  /** Environment variables the client sets, in the entry's order. */
  env: Array<[string, Value]>;
  notes: string[];
}

interface Word {
  value: Value;
  /** From a positional argument (a bare word), not a flag or a flag's value. */
  positional: boolean;
}

/**
 * One argument's words. A value the user must supply is a slot named after the variable (its
 * `valueHint`, else the flag without its dashes). Optional arguments without a fixed value are
 * listed, not guessed, except the runtime's own bare switches (`-i`, `--rm`, `-y`: a named runtime
 * argument with nothing to supply).
 */
function argumentWords(a: InputLike, runtime: boolean, inputs: Inputs, known: Map<string, Value>): Word[] {
  const name = str(a.name);
  const hint = str(a.valueHint);
  const fixed = str(a.value);
  const required = flag(a.isRequired);
  if (a.type === 'named') {
    if (!name) return [];
    const id = hint ?? (name.replace(/^-+/, '') || name);
    if (fixed !== undefined) {
      const v = inputs.template(fixed, a.variables, { id, from: a });
      for (const k of [id, name]) known.set(k, v);
      return [
        { value: [name], positional: false },
        { value: v, positional: false },
      ];
    }
    // The runner's own switches: a runtime flag that says nothing about a value (no hint, format, default, choices).
    const nothingToSupply = hint === undefined && a.format === undefined && str(a.default) === undefined && a.choices === undefined;
    if (runtime && nothingToSupply) return [{ value: [name], positional: false }];
    if (a.format === 'boolean' && required) return [{ value: [name], positional: false }];
    inputs.note('argument', name, a);
    if (!required) return [];
    const v: Value = [inputs.slot(id, a)];
    for (const k of [id, name]) known.set(k, v);
    return [
      { value: [name], positional: false },
      { value: v, positional: false },
    ];
  }
  const id = hint ?? 'value';
  if (fixed !== undefined) {
    const v = inputs.template(fixed, a.variables, { id, from: a });
    if (hint) known.set(hint, v);
    return [{ value: v, positional: true }];
  }
  inputs.note('argument', id, a);
  if (!required) return [];
  const v: Value = [inputs.slot(id, a)];
  known.set(id, v);
  return [{ value: v, positional: true }];
}

function words(list: unknown, runtime: boolean, inputs: Inputs, known: Map<string, Value>): Word[] {
  return asInputs(list).flatMap((a) => argumentWords(a, runtime, inputs, known));
}

const text = (w: Word) => literalText(w.value) ?? '';
const lit = (s: string): Word => ({ value: [s], positional: true });
const values = (ws: Word[]) => ws.map((w) => w.value);

/** Replaces the first word naming the package (`match`) by `by` of it; says whether there was one. */
function replacePackageWord(ws: Word[], match: (t: string) => boolean, by: (t: string) => Word[]): { words: Word[]; found: boolean } {
  const i = ws.findIndex((w) => match(text(w)));
  if (i < 0) return { words: ws, found: false };
  return { words: [...ws.slice(0, i), ...by(text(ws[i])), ...ws.slice(i + 1)], found: true };
}

// ------------------------------------------------------------------------------------- npm

function npm(pkg: RegistryPackage, runtime: Word[], args: Word[]): Omit<Command, 'env' | 'notes'> {
  const command = pkg.runtimeHint === 'bunx' || pkg.runtimeHint === 'bun' ? 'bunx' : 'npx';
  const spec = pkg.version ? `${pkg.identifier}@${pkg.version}` : pkg.identifier;
  const named = (t: string) => t === pkg.identifier || t.startsWith(`${pkg.identifier}@`);
  const { words: ws, found } = replacePackageWord(runtime, named, () => [lit(spec)]);
  const yes = command === 'npx' && !ws.some((w) => ['-y', '--yes'].includes(text(w))) ? [lit('-y')] : [];
  return { command, args: values([...yes, ...ws, ...(found ? [] : [lit(spec)]), ...args]) };
}

// ------------------------------------------------------------------------------------ PyPI

/** PEP 503 name normalisation. */
const pyName = (s: string) => s.toLowerCase().replace(/[-_.]+/g, '-');

function pypi(pkg: RegistryPackage, runtime: Word[], args: Word[]): Omit<Command, 'env' | 'notes'> {
  const { identifier: id, version } = pkg;
  const from = (extras = '') => [lit('--from'), lit(`${id}${extras}${version ? `==${version}` : ''}`)];
  // uv's documented forms: `uvx pkg@version`, and `uvx --from 'pkg[extras]==version' command`.
  if (/^python(3(\.\d+)*)?$/.test(pkg.runtimeHint ?? '') && runtime.length > 0) {
    // Arguments for the interpreter (`-m module`): run that package's Python.
    return { command: 'uvx', args: values([...from(), lit('python'), ...runtime, ...args]) };
  }
  const spec = /^([A-Za-z0-9][A-Za-z0-9._-]*)(\[[^\]]*\])?(?:(?:@|==).*)?$/;
  const names = (t: string) => pyName(spec.exec(t)?.[1] ?? '') === pyName(id);
  const pinned = replacePackageWord(runtime, names, (t) => {
    const extras = spec.exec(t)?.[2];
    return extras ? [...from(extras), lit(id)] : [lit(version ? `${id}@${version}` : id)];
  });
  if (pinned.found) return { command: 'uvx', args: values([...pinned.words, ...args]) };
  // A bare word in the runtime arguments that is not the package is the command it provides.
  const cmd = runtime.findIndex((w) => w.positional && !text(w).startsWith('-'));
  if (cmd >= 0) return { command: 'uvx', args: values([...runtime.slice(0, cmd), ...from(), ...runtime.slice(cmd), ...args]) };
  return { command: 'uvx', args: values([...runtime, lit(version ? `${id}@${version}` : id), ...args]) };
}

// ----------------------------------------------------------------------------------- NuGet

function nuget(pkg: RegistryPackage, runtime: Word[], args: Word[]): Omit<Command, 'env' | 'notes'> {
  const spec = pkg.version ? `${pkg.identifier}@${pkg.version}` : pkg.identifier;
  const id = pkg.identifier.toLowerCase();
  const named = (t: string) => t.toLowerCase() === id || t.toLowerCase().startsWith(`${id}@`);
  const { words: ws, found } = replacePackageWord(runtime, named, () => [lit(spec)]);
  const yes = ws.some((w) => text(w) === '--yes') ? [] : [lit('--yes')];
  return { command: 'dnx', args: values([...ws, ...(found ? [] : [lit(spec)]), ...yes, ...(args.length > 0 ? [lit('--'), ...args] : [])]) };
}

// ------------------------------------------------------------------------------------- OCI

/** An image reference's repository, as Docker resolves it (`hamcodes/x:v1` is `docker.io/hamcodes/x`). */
function imageRepository(ref: string): string {
  let r = ref.replace(/@[A-Za-z0-9]+:[A-Fa-f0-9]+$/, '');
  if (r.lastIndexOf(':') > r.lastIndexOf('/')) r = r.slice(0, r.lastIndexOf(':'));
  const parts = r.split('/');
  if (parts.length === 1 || !/[.:]|^localhost$/.test(parts[0])) parts.unshift('docker.io');
  if (parts[0] === 'index.docker.io') parts[0] = 'docker.io';
  if (parts[0] === 'docker.io' && parts.length === 2) parts.splice(1, 0, 'library');
  return parts.join('/').toLowerCase();
}

const hasTag = (ref: string) => ref.includes('@') || ref.lastIndexOf(':') > ref.lastIndexOf('/');

/** The variables `docker run` options already pass into the container (`-e NAME`, `--env NAME=…`). */
function passedEnv(opts: Word[]): Set<string> {
  // The name is the literal head of the word (`-e TOKEN={token}` passes TOKEN).
  const head = (w: Word | undefined) => (typeof w?.value[0] === 'string' ? w.value[0] : '');
  const out = new Set<string>();
  opts.forEach((w, i) => {
    const t = head(w);
    const v = t === '-e' || t === '--env' ? head(opts[i + 1]) : /^(?:-e|--env=)(.+)$/.exec(t)?.[1];
    if (v) out.add(v.split('=')[0]);
  });
  return out;
}

function oci(pkg: RegistryPackage, runtime: Word[], args: Word[], env: Array<[string, Value]>): Omit<Command, 'env'> {
  const image = !hasTag(pkg.identifier) && pkg.version ? `${pkg.identifier}:${pkg.version}` : pkg.identifier;
  const repo = imageRepository(pkg.identifier);
  let ws = runtime;
  if (text(ws[0] ?? lit('')) === 'run') ws = ws.slice(1);
  // Where the runtime arguments name the image, what follows it is the container's command line.
  const at = ws.findIndex((w) => w.positional && literalText(w.value) !== undefined && imageRepository(text(w)) === repo);
  const opts = at < 0 ? ws : ws.slice(0, at);
  const after = at < 0 ? [] : ws.slice(at + 1);
  const given = new Set(opts.map(text));
  const interactive = ['-i', '--interactive', '-it', '-ti'].some((f) => given.has(f));
  const base = [...(pkg.transport.type === 'stdio' && !interactive ? [lit('-i')] : []), ...(given.has('--rm') ? [] : [lit('--rm')])];
  const passed = passedEnv(opts);
  // The container sees only the variables passed to it; the client sets them for docker.
  const pass = env.filter(([k]) => !passed.has(k)).flatMap(([k]) => [lit('-e'), lit(k)]);
  const command = pkg.runtimeHint === 'podman' ? 'podman' : 'docker';
  const notes =
    pkg.transport.type !== 'stdio' && ![...given].some((f) => /^(-p|--publish|--network|--net)(=|$)/.test(f))
      ? ['The entry publishes no port: add `-p <port>:<port>` for the port the container listens on.']
      : [];
  return { command, args: values([lit('run'), ...base, ...opts, ...pass, lit(image), ...after, ...args]), notes };
}

// -------------------------------------------------------------------------------------------

/** How a package is started; undefined for registries no client can run from a command line (MCP bundles, unknown ones). */
export function commandOf(pkg: RegistryPackage, inputs: Inputs, known: Map<string, Value>): Command | undefined {
  const runtime = words(pkg.runtimeArguments, true, inputs, known);
  const args = words(pkg.packageArguments, false, inputs, known);
  const env = keyValues(pkg.environmentVariables, 'env', inputs);
  for (const [name, v] of env) known.set(name, v);
  switch (pkg.registryType) {
    case 'npm':
      return { ...npm(pkg, runtime, args), env, notes: [] };
    case 'pypi':
      return { ...pypi(pkg, runtime, args), env, notes: [] };
    case 'nuget':
      return { ...nuget(pkg, runtime, args), env, notes: [] };
    case 'oci':
      return { ...oci(pkg, runtime, args, env), env };
    default:
      return undefined;
  }
}
