/**
 * What a demo server publishes (`synthetic.ts`): its packages and hosted endpoints in the registry's
 * server.json shape, its tools with input schemas, and its README, drawn from its topic.
 */
import { createHash } from 'node:crypto';
import type { CatalogTool, ReadmeContent, RegistryPackage, RegistryRemote, RegistryRepository } from '../../lambdas/catalog-core';
import type { Rng } from './rng';
import { README_ONLY_WORDS, REMOTE_HOSTS, TOOL_ONLY_WORDS, type Topic } from './vocabulary';

export const capitalize = (s: string): string => s.charAt(0).toUpperCase() + s.slice(1);
export const displayName = (token: string): string => token.split('-').map(capitalize).join(' ');
const pascal = (token: string): string => token.split(/[-_]/).map(capitalize).join('');

export type Publisher =
  | { kind: 'user'; handle: string; namespace: string; owner: string }
  | { kind: 'smithery'; handle: string; namespace: string; owner: string }
  | { kind: 'company'; company: string; domain: string; namespace: string; owner: string };

/** What the parts of one server are drawn with. */
export interface Ctx {
  rng: Rng;
  topic: Topic;
  pub: Publisher;
  /** The name after `/`. */
  base: string;
  /** Lowercase project token (repository, package and URL names). */
  project: string;
  version: string;
  repository?: RegistryRepository;
}

function localTransport(rng: Rng): RegistryPackage['transport'] {
  const kind = rng.weighted([
    ['stdio', 90],
    ['streamable-http', 8],
    ['sse', 2],
  ] as const);
  if (kind === 'stdio') return { type: 'stdio' };
  const port = rng.pick([3000, 8000, 8080, 8931, 9090]);
  return { type: kind, url: `http://localhost:${port}/${kind === 'sse' ? 'sse' : 'mcp'}` };
}

function envVars(ctx: Ctx): unknown[] | undefined {
  const { rng, topic } = ctx;
  if (topic.env === undefined || !rng.chance(0.6)) return undefined;
  const { name, description, secret } = topic.env;
  return [{ name, description, isRequired: true, isSecret: secret, format: 'string' }];
}

export function makePackage(ctx: Ctx, registryType: string): RegistryPackage {
  const { rng, pub, base, version } = ctx;
  const owner = pub.owner.toLowerCase();
  const lowerBase = base.toLowerCase().replace(/_/g, '-');
  let pkg: RegistryPackage;
  switch (registryType) {
    case 'npm': {
      const scoped = pub.kind === 'company' || rng.chance(0.45);
      pkg = { registryType, identifier: scoped ? `@${owner}/${lowerBase}` : lowerBase, version, transport: localTransport(rng) };
      if (rng.chance(0.8)) pkg.registryBaseUrl = 'https://registry.npmjs.org';
      if (rng.chance(0.6)) pkg.runtimeHint = 'npx';
      break;
    }
    case 'pypi': {
      pkg = {
        registryType,
        identifier: pub.kind === 'company' && rng.chance(0.5) ? `${owner}-${lowerBase}` : lowerBase,
        version,
        transport: localTransport(rng),
      };
      if (rng.chance(0.7)) pkg.registryBaseUrl = 'https://pypi.org';
      if (rng.chance(0.6)) pkg.runtimeHint = 'uvx';
      break;
    }
    case 'oci': {
      // OCI references carry their tag in the identifier; upstream rows have no separate version.
      const host = rng.weighted([
        ['ghcr.io', 60],
        ['docker.io', 40],
      ] as const);
      const tag = rng.chance(0.3) ? `v${version}` : version;
      pkg = { registryType, identifier: `${host}/${owner}/${lowerBase}:${tag}`, transport: localTransport(rng) };
      if (rng.chance(0.5)) pkg.runtimeHint = 'docker';
      if (rng.chance(0.25)) {
        pkg.runtimeHint = 'docker';
        pkg.runtimeArguments = [
          { type: 'named', name: '--rm' },
          { type: 'named', name: '-i' },
        ];
      }
      break;
    }
    case 'mcpb': {
      // Bundles are release assets; the schema requires their SHA-256.
      const identifier =
        ctx.repository !== undefined
          ? `${ctx.repository.url}/releases/download/v${version}/${lowerBase}.mcpb`
          : pub.kind === 'company'
            ? `https://${pub.domain}/downloads/${lowerBase}-${version}.mcpb`
            : `https://github.com/${owner}/${lowerBase}/releases/download/v${version}/${lowerBase}.mcpb`;
      pkg = {
        registryType,
        identifier,
        version,
        fileSha256: rng.hex(64),
        transport: { type: 'stdio' },
      };
      break;
    }
    case 'nuget': {
      const org = pub.kind === 'company' ? pascal(pub.company) : pascal(pub.owner);
      pkg = { registryType, identifier: `${org}.${pascal(ctx.topic.key)}Mcp`, version, transport: { type: 'stdio' } };
      if (rng.chance(0.6)) pkg.registryBaseUrl = 'https://api.nuget.org/v3/index.json';
      if (rng.chance(0.5)) pkg.runtimeHint = 'dnx';
      break;
    }
    default:
      throw new Error(`unknown registry type ${registryType}`);
  }
  const env = envVars(ctx);
  if (env !== undefined) pkg.environmentVariables = env;
  if (rng.chance(0.08)) {
    pkg.packageArguments = rng.chance(0.5)
      ? [{ type: 'positional', valueHint: 'directory', description: 'Directory the server may access' }]
      : [{ type: 'named', name: '--read-only', description: 'Refuse write operations' }];
  }
  return pkg;
}

export function makeRemotes(ctx: Ctx): RegistryRemote[] {
  const { rng, pub, base, topic } = ctx;
  const auth = rng.chance(0.35);
  // A fresh headers array per remote: records are plain data that callers may mutate.
  const withHeaders = (r: RegistryRemote): RegistryRemote =>
    auth ? { ...r, headers: [{ name: 'Authorization', description: `Bearer token for ${topic.label}`, isRequired: true, isSecret: true }] } : r;
  const lowerBase = base.toLowerCase().replace(/_/g, '-');
  if (pub.kind === 'smithery') {
    return [withHeaders({ type: 'streamable-http', url: `https://server.smithery.ai/@${pub.owner}/${ctx.project}/mcp` })];
  }
  let origin: string;
  if (pub.kind === 'company') {
    origin = rng.weighted([
      [`https://mcp.${pub.domain}`, 50],
      [`https://${topic.key}.${pub.domain}`, 30],
      [`https://api.${pub.domain}/${topic.key}`, 20],
    ] as const);
  } else {
    origin = `https://${lowerBase}-${pub.owner.toLowerCase()}.${rng.pick(REMOTE_HOSTS)}`;
  }
  const shape = rng.weighted([
    ['http', 55],
    ['both', 35],
    ['sse', 10],
  ] as const);
  const out: RegistryRemote[] = [];
  if (shape !== 'sse') out.push(withHeaders({ type: 'streamable-http', url: `${origin}/mcp` }));
  if (shape !== 'http') out.push(withHeaders({ type: 'sse', url: `${origin}/sse` }));
  return out;
}

const plural = (noun: string): string => (/[^aeiou]y$/.test(noun) ? `${noun.slice(0, -1)}ies` : /(s|x|z|ch|sh)$/.test(noun) ? `${noun}es` : `${noun}s`);
const article = (word: string): string => (/^[aeiou]/i.test(word) ? `an ${word}` : `a ${word}`);

const VERB_TEMPLATES: ReadonlyArray<readonly [string, (noun: string, label: string) => string]> = [
  ['list', (n, l) => `List ${plural(n)} in ${l}, newest first, with pagination.`],
  ['get', (n, l) => `Get one ${n} from ${l} by its identifier.`],
  ['search', (n, l) => `Search ${l} ${plural(n)} by keyword and filters.`],
  ['create', (n, l) => `Create a new ${n} in ${l}.`],
  ['update', (n, l) => `Update fields of an existing ${n} in ${l}.`],
  ['delete', (n, l) => `Delete ${article(n)} from ${l}; irreversible.`],
  ['describe', (n, l) => `Describe the structure and metadata of ${article(l)} ${n}.`],
  ['export', (n, l) => `Export ${plural(n)} from ${l} as JSON or CSV.`],
  ['count', (n, l) => `Count ${plural(n)} in ${l} matching a filter.`],
  ['watch', (n, l) => `Watch ${article(l)} ${n} for changes and report them.`],
  ['summarize', (n, l) => `Summarize recent ${n} activity in ${l}.`],
  ['archive', (n, l) => `Archive ${article(n)} in ${l} without deleting it.`],
];

function inputSchema(rng: Rng, verb: string, noun: string): Record<string, unknown> {
  const id = `${noun}_id`;
  const idProp = { type: 'string', description: `Identifier of the ${noun.replace(/_/g, ' ')}` };
  switch (verb) {
    case 'list':
    case 'export':
      return {
        type: 'object',
        properties: {
          limit: { type: 'integer', minimum: 1, maximum: 100, default: 20 },
          cursor: { type: 'string', description: 'Opaque cursor from a previous call' },
        },
      };
    case 'search':
    case 'count':
      return {
        type: 'object',
        properties: { query: { type: 'string', description: 'Search text' }, limit: { type: 'integer', minimum: 1, maximum: 50 } },
        required: ['query'],
      };
    case 'create':
      return {
        type: 'object',
        properties: {
          name: { type: 'string' },
          description: { type: 'string' },
          ...(rng.chance(0.5) ? { tags: { type: 'array', items: { type: 'string' } } } : {}),
        },
        required: ['name'],
      };
    case 'update':
      return { type: 'object', properties: { [id]: idProp, fields: { type: 'object', additionalProperties: true } }, required: [id, 'fields'] };
    default:
      return { type: 'object', properties: { [id]: idProp }, required: [id] };
  }
}

interface ToolDraft {
  tool: CatalogTool;
  /** The description without the tool-only probe word, for the README's tool list. */
  plain: string;
}

export function makeTools(rng: Rng, topic: Topic): ToolDraft[] {
  const count = rng.weighted([
    [rng.int(1, 4), 35],
    [rng.int(5, 10), 45],
    [rng.int(11, 25), 20],
  ] as const);
  const combos: Array<readonly [string, string]> = [];
  for (const noun of topic.nouns) for (const [verb] of VERB_TEMPLATES) combos.push([verb, noun]);
  const drafts = rng.sample(combos, count).map(([verb, noun]): ToolDraft => {
    const template = VERB_TEMPLATES.find(([v]) => v === verb);
    const plain = template ? template[1](noun.replace(/_/g, ' '), topic.label) : `${verb} ${noun}`;
    return { tool: { name: `${verb}_${noun}`, description: plain, inputSchema: inputSchema(rng, verb, noun) }, plain };
  });
  // One tool per server carries a probe word, so tool-only search hits are predictable.
  const probe = drafts[rng.int(0, drafts.length - 1)];
  probe.tool.description = `${probe.plain} Internal codename: ${rng.pick(TOOL_ONLY_WORDS)}.`;
  return drafts;
}

const README_SENTENCES: ReadonlyArray<(k: string, l: string) => string> = [
  (k, l) => `It exposes ${l} ${k} operations to assistants such as Claude, Cursor and VS Code.`,
  (k) => `Results come back as structured JSON so agents can reason about ${k} data without scraping text.`,
  (k) => `Use it to automate ${k} workflows without leaving your editor.`,
  (_k, l) => `Every call is logged, which makes auditing ${l} access straightforward.`,
  (k) => `Large ${k} responses are paginated and truncated to keep the context window small.`,
  (_k, l) => `The server never stores ${l} credentials; they are read from the environment at startup.`,
  (k) => `Rate limits are respected automatically, with exponential backoff on ${k} errors.`,
  (_k, l) => `Read-only mode disables every tool that would modify ${l}.`,
  (k) => `Prompts and resources are included for common ${k} tasks.`,
  (_k, l) => `Tested against the latest ${l} API and the MCP specification.`,
  (k) => `Caching keeps repeated ${k} lookups fast.`,
  (k) => `Errors are reported as tool results with a short explanation of the ${k} problem.`,
];

const FEATURE_LINES: ReadonlyArray<(k: string, l: string) => string> = [
  (k, l) => `Browse ${l} ${k} data`,
  (k) => `Full-text search across ${k} records`,
  (k) => `Create and update ${k} entries`,
  () => 'Pagination for large result sets',
  () => 'Read-only mode for safe exploration',
  (k) => `Streaming updates for ${k} changes`,
  () => 'Works with stdio and HTTP transports',
  (_k, l) => `Fine-grained ${l} permissions`,
  () => 'Detailed error messages',
  (k) => `Bulk ${k} export`,
];

function installBlock(pkg: RegistryPackage, serverName: string): string {
  const key = serverName.split('/')[1];
  const id = pkg.identifier;
  switch (pkg.registryType) {
    case 'npm':
      return `### npm\n\n\`\`\`json\n{\n  "mcpServers": {\n    "${key}": { "command": "npx", "args": ["-y", "${id}"] }\n  }\n}\n\`\`\`\n`;
    case 'pypi':
      return `### PyPI\n\n\`\`\`bash\nuvx ${id}\n\`\`\`\n\nor \`pip install ${id}\`.\n`;
    case 'oci':
      return `### Docker\n\n\`\`\`bash\ndocker run --rm -i ${id}\n\`\`\`\n`;
    case 'nuget':
      return `### NuGet\n\n\`\`\`bash\ndnx ${id}@${pkg.version ?? ''}\n\`\`\`\n`;
    case 'mcpb':
      return `### MCP bundle\n\nDownload [the bundle](${id}) and open it with Claude Desktop.\n`;
    default:
      return '';
  }
}

export function makeReadme(
  ctx: Ctx,
  heading: string,
  description: string,
  packages: RegistryPackage[],
  remotes: RegistryRemote[],
  tools: ToolDraft[] | undefined,
  license: string | undefined,
  name: string,
): ReadmeContent {
  const { rng, topic } = ctx;
  const kw = (): string => rng.pick(topic.keywords);
  const parts: string[] = [`# ${heading}\n\n${description}\n`];
  const sentenceCount = rng.weighted([
    [rng.int(1, 3), 50],
    [rng.int(4, 8), 35],
    [rng.int(9, 20), 15],
  ] as const);
  const sentences: string[] = [];
  for (let i = 0; i < sentenceCount; i++) sentences.push(rng.pick(README_SENTENCES)(kw(), topic.label));
  parts.push(`${sentences.join(' ')}\n`);
  parts.push(
    `## Features\n\n${rng
      .sample(FEATURE_LINES, rng.int(3, 7))
      .map((f) => `- ${f(kw(), topic.label)}`)
      .join('\n')}\n`,
  );
  if (packages.length > 0 || remotes.length > 0) {
    const blocks = packages.map((p) => installBlock(p, name));
    if (remotes.length > 0) blocks.push(`### Hosted\n\nConnect your client to \`${remotes[0].url}\`.\n`);
    parts.push(`## Installation\n\n${blocks.join('\n')}`);
  }
  if (topic.env !== undefined && rng.chance(0.8)) {
    parts.push(`## Configuration\n\n| Variable | Description |\n|---|---|\n| \`${topic.env.name}\` | ${topic.env.description} |\n`);
  }
  if (tools !== undefined && rng.chance(0.7)) {
    parts.push(`## Tools\n\n${tools.map((d) => `- \`${d.tool.name}\`: ${d.plain}`).join('\n')}\n`);
  }
  if (rng.chance(0.35)) parts.push(`## Development\n\n\`\`\`bash\ngit clone ${ctx.repository?.url ?? ''}\nmake test\n\`\`\`\n`);
  parts.push(`Fun fact: the first ${topic.label} prototype was written on a train, and its mascot is a ${rng.pick(README_ONLY_WORDS)}.\n`);
  parts.push(`## License\n\n${license !== undefined ? `${license}. See LICENSE.` : 'No license has been chosen yet.'}\n`);
  const content = parts.join('\n');
  const size = Buffer.byteLength(content, 'utf8');
  // The sha of the git blob, as GitHub's contents API reports it.
  const sha = createHash('sha1').update(`blob ${size}\0`).update(content).digest('hex');
  const folder = ctx.repository?.subfolder;
  const path = folder !== undefined ? `${folder}/README.md` : rng.chance(0.05) ? 'readme.md' : 'README.md';
  return { content, path, size, sha };
}
