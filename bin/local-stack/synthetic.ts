/**
 * Deterministic synthetic catalog: realistic-looking MCP servers for local runs, seeding,
 * benchmarks and tests, without network access.
 *
 * Same `(count, seed, now)` → byte-identical output: everything comes from a seeded PRNG
 * (mulberry32) and the given `now`, never from Math.random or the wall clock. Each server draws
 * from its own PRNG stream (derived from the seed and its index), so `generateCatalog(n)` is a
 * prefix of `generateCatalog(m)` for n ≤ m, and adding a field to one server does not reshuffle
 * the others.
 *
 * The shape follows the upstream registry sample (2025-10-21): mostly npm/PyPI stdio packages,
 * `io.github.<user>` and `ai.smithery` namespaces, remote-only hosted servers, Zipf-like stars and
 * downloads. The words it draws from are data (`demo-vocabulary.json`, checked by `vocabulary.ts`),
 * re-exported here so tests can search for words they know are there.
 */

import {
  searchDocumentOf,
  isOfficialNamespace,
  licenseGrade,
  maintenanceGrade,
  popularityScore,
  type CatalogHealth,
  type CatalogRecord,
  type CatalogTool,
  type Category,
  type GithubInfo,
  type ReadmeContent,
  type RegistryIcon,
  type RegistryPackage,
  type RegistryRepository,
  type SearchDocument,
  ICON_KIND_COUNT,
  slugFromName,
} from '../../lambdas/catalog-core';
import { type Ctx, capitalize, displayName, makePackage, makeReadme, makeRemotes, makeTools, type Publisher } from './synthetic-content';
import { mix32, Rng } from './rng';
import { COMPANY_NAMES, COMPANY_TLDS, LANGUAGE_BY_REGISTRY, LICENSES, NAME_ADJECTIVES, TOPICS, type Topic, USER_HANDLES, USER_SUFFIXES } from './vocabulary';

export { COMPANY_NAMES, LANGUAGES, LICENSES, README_ONLY_WORDS, TOOL_ONLY_WORDS, TOPICS, type Topic, USER_HANDLES } from './vocabulary';

export interface SyntheticServer {
  record: CatalogRecord;
  readme?: ReadmeContent;
  tools?: CatalogTool[];
  /** Which placeholder icon (see `renderIcon`) the server gets; absent when it has none. */
  iconKind?: number;
}

export interface GenerateOptions {
  seed?: number;
  /** The crawl instant all dates are relative to. */
  now?: Date;
}

export const DEFAULT_SEED = 1;
export const DEFAULT_NOW_ISO = '2026-11-01T00:00:00.000Z';

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
// Bound once: inside a vm context (Jest's test environment) every global lookup goes through an interceptor (see rng.ts).
const DateCtor = Date;

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/**
 * Compresses values above `knee` (x ↦ knee · (x/knee)^0.35, monotone) and clamps at `cap`:
 * raw Pareto extremes are absurd (billions of stars), and a plain clamp would pile them onto one
 * identical, obviously fake value.
 */
function softCap(x: number, knee: number, cap: number): number {
  if (x <= knee) return Math.floor(x);
  return Math.min(cap, Math.floor(knee * (x / knee) ** 0.35));
}

const iso = (ms: number): string => new DateCtor(ms).toISOString();

function semver(rng: Rng): string {
  const major = rng.weighted([
    [0, 45],
    [1, 40],
    [2, 10],
    [3, 5],
  ] as const);
  const v = `${major}.${rng.int(0, major === 0 ? 12 : 20)}.${rng.int(0, 15)}`;
  return rng.chance(0.05) ? `${v}-${rng.pick(['beta', 'alpha', 'rc'])}.${rng.int(1, 4)}` : v;
}

function pickPublisher(rng: Rng): Publisher {
  const kind = rng.weighted([
    ['user', 55],
    ['smithery', 10],
    ['company', 35],
  ] as const);
  if (kind === 'company') {
    const company = rng.pick(COMPANY_NAMES);
    const tld = rng.weighted(COMPANY_TLDS);
    // Some publishers verify a sub-domain (`com.figma.mcp` in the sample).
    const sub = rng.chance(0.08) ? '.mcp' : '';
    return { kind, company, domain: `${company}.${tld}`, namespace: `${tld}.${company}${sub}`, owner: rng.chance(0.7) ? company : `${company}-ai` };
  }
  let handle = `${rng.pick(USER_HANDLES)}${rng.pick(USER_SUFFIXES)}`;
  // GitHub logins are case-insensitive but keep their casing, and server names keep it too.
  if (rng.chance(0.12)) handle = capitalize(handle);
  if (kind === 'smithery') return { kind, handle, namespace: 'ai.smithery', owner: handle };
  return { kind, handle, namespace: `io.github.${handle}`, owner: handle };
}

function baseName(rng: Rng, pub: Publisher, topic: Topic): string {
  const k = topic.key;
  if (pub.kind === 'company')
    return rng.weighted([
      [k, 45],
      [`${k}-mcp`, 25],
      ['mcp', 10],
      [`mcp-${k}`, 10],
      [`${k}-server`, 10],
    ] as const);
  return rng.weighted([
    [`${k}-mcp`, 30],
    [`mcp-${k}`, 15],
    [`${k}-mcp-server`, 15],
    [`mcp-server-${k}`, 10],
    [`${rng.pick(NAME_ADJECTIVES)}-${k}-mcp`, 15],
    [`${k}-tools`, 5],
    [`${k}_mcp`, 5],
    [k, 5],
  ] as const);
}

// ---------------------------------------------------------------------------------------------
// Generator
// ---------------------------------------------------------------------------------------------

function pushedDaysAgo(rng: Rng): number {
  // Spread over every maintenance grade, weighted towards recently active repositories.
  return rng.weighted([
    [rng.float() * 30, 35],
    [30 + rng.float() * 60, 25],
    [90 + rng.float() * 90, 15],
    [180 + rng.float() * 185, 12],
    [365 + rng.float() * 900, 13],
  ] as const);
}

function generateOne(index: number, seed: number, now: number, taken: Set<string>): SyntheticServer {
  const rng = new Rng(mix32((seed >>> 0) ^ mix32(index + 0x9e3779b9)));
  // The first servers walk the topic list so even a small catalog covers every category.
  const topic = index < TOPICS.length ? TOPICS[index] : rng.pick(TOPICS);
  const pub = pickPublisher(rng);

  const projectName = baseName(rng, pub, topic);
  // Smithery names its mirrors `<owner>-<repo>` inside its own namespace.
  let base = pub.kind === 'smithery' ? `${pub.handle.toLowerCase()}-${projectName}` : projectName;
  let name = `${pub.namespace}/${base}`;
  for (let n = 2; taken.has(slugFromName(name)); n++) name = `${pub.namespace}/${base}-${n}`;
  const slug = slugFromName(name);
  taken.add(slug);
  base = name.slice(name.indexOf('/') + 1);

  const version = semver(rng);
  const crawledAt = now - rng.int(0, 6 * 3600) * 1000;
  const project = projectName.toLowerCase().replace(/_/g, '-');
  const ctx: Ctx = { rng, topic, pub, base, project, version };

  // Repository and GitHub facts.
  const hasRepo = rng.chance(pub.kind === 'company' ? 0.75 : pub.kind === 'smithery' ? 0.97 : 0.95);
  if (hasRepo) {
    const repoName = pub.kind === 'company' && rng.chance(0.3) ? 'mcp' : project;
    const repository: RegistryRepository = { url: `https://github.com/${pub.owner}/${repoName}`, source: 'github' };
    if (rng.chance(0.06)) repository.subfolder = rng.chance(0.5) ? `packages/${topic.key}` : `servers/${topic.key}`;
    if (rng.chance(0.3)) repository.id = String(rng.int(100_000_000, 1_100_000_000));
    ctx.repository = repository;
  }

  // Remotes: smithery rows are always hosted; companies host more often than individuals.
  const remoteMode: 'none' | 'both' | 'only' =
    pub.kind === 'smithery' ? 'only' : rng.chance(pub.kind === 'company' ? 0.55 : 0.2) ? (rng.chance(0.5) ? 'only' : 'both') : 'none';
  const packages: RegistryPackage[] = [];
  if (remoteMode !== 'only') {
    const first = rng.weighted([
      ['npm', 55],
      ['pypi', 22],
      ['oci', 12],
      ['mcpb', 6],
      ['nuget', 5],
    ] as const);
    packages.push(makePackage(ctx, first));
    // Some servers ship the same code twice, typically a package plus a container image.
    if (rng.chance(0.12)) {
      const second = first === 'oci' ? rng.pick(['npm', 'pypi'] as const) : first === 'nuget' || first === 'mcpb' ? 'oci' : rng.pick(['oci', 'mcpb'] as const);
      packages.push(makePackage(ctx, second));
    }
  }
  const remotes = remoteMode === 'none' ? [] : makeRemotes(ctx);

  const isOfficial = isOfficialNamespace(name);
  let github: GithubInfo | undefined;
  if (ctx.repository !== undefined) {
    const primary = packages.length > 0 ? packages[0].registryType : 'remote';
    github = {};
    github.stars = rng.chance(0.12) ? 0 : softCap(rng.pareto(pub.kind === 'company' ? 8 : 3, 0.8), 20_000, 250_000);
    if (rng.chance(0.97)) github.language = rng.weighted(LANGUAGE_BY_REGISTRY[primary]);
    const lic = rng.weighted(LICENSES);
    if (lic !== null) {
      github.license = lic.name;
      github.licenseSpdx = lic.spdx;
    }
    github.pushedAt = iso(crawledAt - Math.round(pushedDaysAgo(rng) * DAY_MS));
    github.ownerAvatarUrl = `https://avatars.githubusercontent.com/u/${rng.int(10_000, 250_000_000)}?v=4`;
  }
  const stars = github?.stars;

  let downloads: number | undefined;
  if (packages.some((p) => p.registryType === 'npm' || p.registryType === 'pypi') && rng.chance(0.95)) {
    // Loosely correlated with stars: popular repositories also get installed more.
    downloads = softCap(rng.pareto(40, 0.6) * (1 + Math.log10(1 + (stars ?? 0)) / 2), 1_000_000, 50_000_000);
  }

  // Health of the hosted endpoint, and captured tools.
  let health: CatalogHealth | undefined;
  if (remotes.length > 0) {
    const authRequired = remotes.some((r) => r.headers !== undefined) || rng.chance(0.1);
    health = { live: rng.chance(pub.kind === 'smithery' ? 0.9 : 0.8), checkedAt: iso(crawledAt - rng.int(1, 36) * HOUR_MS) };
    if (rng.chance(0.9)) health.authRequired = authRequired;
  }
  const listable = health?.live && health.authRequired !== true;
  const toolDrafts = listable || rng.chance(0.5) ? makeTools(rng, topic) : undefined;
  const tools = toolDrafts?.map((d) => d.tool);
  if (health !== undefined && listable && tools !== undefined) health.toolCount = tools.length;

  // Texts.
  const label = pub.kind === 'company' ? `${displayName(pub.company)} ${topic.label}` : topic.label;
  let title: string | undefined;
  if (rng.chance(0.7)) {
    title =
      pub.kind === 'company'
        ? rng.pick([label, `${topic.label} MCP Server`, `${displayName(pub.company)} MCP`])
        : rng.pick([`${topic.label} MCP`, `${topic.label} MCP Server`, `${capitalize(rng.pick(NAME_ADJECTIVES))} ${topic.label}`]);
  }
  const purpose = rng.pick(topic.purposes);
  const templates = [
    `MCP server to ${purpose}.`,
    `${label} for AI agents: ${purpose}.`,
    `Lets assistants ${purpose}.`,
    `${capitalize(purpose)} from any MCP client.`,
  ];
  if (pub.kind === 'company') templates.push(`Official ${label} server: ${purpose}.`);
  // The schema caps descriptions at 100 characters; the shortest template always fits.
  const fitting = templates.filter((d) => d.length <= 100);
  const description = fitting.length > 0 ? rng.pick(fitting) : templates[0].slice(0, 100);

  // Dates: everything at or before the crawl.
  const publishedMs = crawledAt - Math.round((1 + rng.float() * 540) * DAY_MS);
  const updatedMs = rng.chance(0.9) ? publishedMs + Math.round(rng.float() ** 0.5 * (crawledAt - publishedMs)) : undefined;

  let websiteUrl: string | undefined;
  if (rng.chance(0.2))
    websiteUrl =
      pub.kind === 'company'
        ? rng.pick([`https://${pub.domain}`, `https://docs.${pub.domain}/mcp`])
        : `https://${pub.owner.toLowerCase()}.github.io/${base.toLowerCase()}`;
  let icons: RegistryIcon[] | undefined;
  if (rng.chance(0.05)) {
    icons =
      pub.kind === 'company'
        ? [{ src: `https://${pub.domain}/icon.png`, mimeType: 'image/png', sizes: ['128x128'] }]
        : [{ src: `https://raw.githubusercontent.com/${pub.owner}/${base}/main/icon.svg`, mimeType: 'image/svg+xml', sizes: ['any'] }];
  }
  const iconKind = (github !== undefined || icons !== undefined) && rng.chance(0.95) ? rng.int(0, ICON_KIND_COUNT - 1) : undefined;

  const categories: Category[] = [topic.category];
  if (topic.related.length > 0 && rng.chance(0.45)) categories.push(rng.pick(topic.related));
  if (rng.chance(0.12)) {
    const extra = rng.pick(TOPICS).category;
    if (!categories.includes(extra)) categories.push(extra);
  }
  // "Other" is never combined with a real label (the classifier's rule, lambdas/crawler/README.md):
  // a server of an Other topic stays Other, a real one drops an extra Other. The draws above are
  // made either way, so every later field of every server stays what it was.
  const uniqueCategories: Category[] = topic.category === 'Other' ? ['Other'] : [...new Set(categories)].filter((c) => c !== 'Other');

  const trending = stars !== undefined && stars > 0 && rng.chance(0.15) ? 1 + Math.floor(rng.float() * Math.min(40, 1 + stars / 200)) : 0;
  const nowDate = new Date(now);

  // Keys are set in a fixed order and only when defined, so records are byte-stable and carry
  // no `undefined` values (DynamoDB marshalling rejects them).
  const record = { slug, name } as CatalogRecord;
  if (title !== undefined) record.title = title;
  record.description = description;
  record.version = version;
  record.status = rng.chance(0.05) ? 'deprecated' : 'active';
  if (websiteUrl !== undefined) record.websiteUrl = websiteUrl;
  if (ctx.repository !== undefined) record.repository = ctx.repository;
  record.packages = packages;
  record.remotes = remotes;
  if (icons !== undefined) record.icons = icons;
  record.isOfficial = isOfficial;
  record.crawledAt = iso(crawledAt);
  if (updatedMs !== undefined) record.updatedAt = iso(updatedMs);
  if (rng.chance(0.95)) record.publishedAt = iso(publishedMs);
  record.categories = uniqueCategories;
  if (github !== undefined) record.github = github;
  if (downloads !== undefined) record.downloads = downloads;
  if (health !== undefined) record.health = health;
  if (tools !== undefined) record.toolCount = tools.length;
  record.grades = {
    license: licenseGrade(github?.licenseSpdx ?? github?.license, ctx.repository !== undefined),
    maintenance: maintenanceGrade(github?.pushedAt, nowDate),
    quality: 'untested',
  };
  record.popularity = popularityScore({ stars, downloads, live: health?.live, pushedAt: github?.pushedAt, isOfficial }, nowDate);
  record.trending = trending;
  record.hasIcon = iconKind !== undefined;
  record.demo = true;

  const out: SyntheticServer = { record };
  if (ctx.repository !== undefined && rng.chance(0.88)) {
    out.readme = makeReadme(ctx, title ?? base, description, packages, remotes, toolDrafts, github?.license, name);
  }
  if (tools !== undefined) out.tools = tools;
  if (iconKind !== undefined) out.iconKind = iconKind;
  return out;
}

/**
 * `count` synthetic servers with unique names and slugs. Deterministic in `(count, seed, now)`;
 * `now` defaults to 2026-11-01T00:00:00Z (not the wall clock) and `seed` to `DEFAULT_SEED`.
 */
export function generateCatalog(count: number, opts: GenerateOptions = {}): SyntheticServer[] {
  if (!Number.isInteger(count) || count < 0) throw new RangeError(`count must be a non-negative integer, got ${count}`);
  const seed = opts.seed ?? DEFAULT_SEED;
  const now = (opts.now ?? new Date(DEFAULT_NOW_ISO)).getTime();
  const taken = new Set<string>();
  const out: SyntheticServer[] = [];
  for (let i = 0; i < count; i++) out.push(generateOne(i, seed, now, taken));
  return out;
}

/** The search-index document of a synthetic server (the same derivation the crawler and reindex use). */
export function toSearchDocument(s: SyntheticServer): SearchDocument {
  return searchDocumentOf(s);
}
