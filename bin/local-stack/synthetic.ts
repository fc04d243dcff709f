/**
 * Deterministic synthetic catalog: realistic-looking MCP servers for local runs, seeding,
 * benchmarks and tests, without network access. (Over 400 lines: most of it is word lists, data.)
 *
 * Same `(count, seed, now)` → byte-identical output: everything comes from a seeded PRNG
 * (mulberry32) and the given `now`, never from Math.random or the wall clock. Each server draws
 * from its own PRNG stream (derived from the seed and its index), so `generateCatalog(n)` is a
 * prefix of `generateCatalog(m)` for n ≤ m, and adding a field to one server does not reshuffle
 * the others.
 *
 * The shape follows the upstream registry sample (2025-10-21): mostly npm/PyPI stdio packages,
 * `io.github.<user>` and `ai.smithery` namespaces, remote-only hosted servers, Zipf-like stars and
 * downloads. The word lists are exported so tests can search for words they know are there.
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
  type RegistryRemote,
  type RegistryRepository,
  type SearchDocument,
  ICON_KIND_COUNT,
  slugFromName,
} from '../../lambdas/catalog-core';
import { createHash } from 'node:crypto';

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

// ---------------------------------------------------------------------------------------------
// PRNG
// ---------------------------------------------------------------------------------------------

// Hot-path globals bound once: inside a vm context (Jest's test environment) every global lookup
// goes through an interceptor, which made `Math.imul` in the PRNG the dominant cost of a
// 10,000-server run there (about 3x slower than plain Node).
const { imul, floor, pow } = Math;
const DateCtor = Date;

/** mulberry32: a tiny, fast 32-bit PRNG; returns floats in [0, 1). */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = imul(t ^ (t >>> 15), t | 1);
    t ^= t + imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A 32-bit avalanche mix, so neighbouring indexes get unrelated PRNG streams. */
function mix32(x: number): number {
  let h = x >>> 0;
  h = imul(h ^ (h >>> 16), 0x7feb352d);
  h = imul(h ^ (h >>> 15), 0x846ca68b);
  return (h ^ (h >>> 16)) >>> 0;
}

class Rng {
  private readonly next: () => number;
  constructor(seed: number) {
    this.next = mulberry32(seed);
  }
  float(): number {
    return this.next();
  }
  /** Integer in [lo, hi], both inclusive. */
  int(lo: number, hi: number): number {
    return lo + floor(this.next() * (hi - lo + 1));
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(items: readonly T[]): T {
    return items[floor(this.next() * items.length)];
  }
  weighted<T>(items: ReadonlyArray<readonly [T, number]>): T {
    let total = 0;
    for (const [, w] of items) total += w;
    let r = this.next() * total;
    for (const [item, w] of items) {
      r -= w;
      if (r < 0) return item;
    }
    return items[items.length - 1][0];
  }
  /** Distinct picks, in draw order. */
  sample<T>(items: readonly T[], n: number): T[] {
    const pool = items.slice();
    const out: T[] = [];
    while (out.length < n && pool.length > 0) out.push(pool.splice(floor(this.next() * pool.length), 1)[0]);
    return out;
  }
  /**
   * Pareto-distributed non-negative number (xm · (u^(−1/α) − 1)): the heavy tail gives a handful
   * of huge values and a long tail of small ones, as stars and downloads really are.
   */
  pareto(xm: number, alpha: number): number {
    const u = 1 - this.next(); // (0, 1]
    return xm * (pow(u, -1 / alpha) - 1);
  }
  hex(chars: number): string {
    let s = '';
    while (s.length < chars) s += (floor(this.next() * 0x100000000) >>> 0).toString(16).padStart(8, '0');
    return s.slice(0, chars);
  }
}

// ---------------------------------------------------------------------------------------------
// Vocabulary (exported: tests search for these words)
// ---------------------------------------------------------------------------------------------

export interface Topic {
  /** Token used in server names and package identifiers ([a-z0-9-]). */
  key: string;
  /** Display name of the integrated product or domain. */
  label: string;
  category: Category;
  /** Plausible secondary categories. */
  related: readonly Category[];
  /** Verb phrases for descriptions ("query PostgreSQL databases"). */
  purposes: readonly string[];
  /** Domain words used in READMEs and tool descriptions. */
  keywords: readonly string[];
  /** Things the tools act on (snake_case). */
  nouns: readonly string[];
  /** Environment variable a package needs: name, description, secret? */
  env?: readonly [string, string, boolean];
}

const t = (
  key: string,
  label: string,
  category: Category,
  related: Category[],
  purposes: string[],
  keywords: string[],
  nouns: string[],
  env?: [string, string, boolean],
): Topic => ({ key, label, category, related, purposes, keywords, nouns, ...(env ? { env } : {}) });

export const TOPICS: readonly Topic[] = [
  // Development & Coding
  t(
    'github',
    'GitHub',
    'Development & Coding',
    ['Cloud & DevOps', 'Productivity & Docs'],
    ['manage GitHub repositories, issues and pull requests', 'review pull requests and triage GitHub issues'],
    ['repository', 'issue', 'pull request', 'commit', 'branch', 'workflow'],
    ['repository', 'issue', 'pull_request', 'branch', 'commit'],
    ['GITHUB_TOKEN', 'GitHub personal access token', true],
  ),
  t(
    'gitlab',
    'GitLab',
    'Development & Coding',
    ['Cloud & DevOps'],
    ['work with GitLab projects, merge requests and pipelines', 'inspect GitLab pipelines and merge requests'],
    ['project', 'merge request', 'pipeline', 'runner', 'milestone'],
    ['project', 'merge_request', 'pipeline', 'job'],
    ['GITLAB_TOKEN', 'GitLab access token', true],
  ),
  t(
    'sentry',
    'Sentry',
    'Development & Coding',
    ['Cloud & DevOps', 'Security'],
    ['investigate Sentry errors and stack traces', 'triage production exceptions from Sentry'],
    ['exception', 'stacktrace', 'release', 'breadcrumb', 'crash'],
    ['issue', 'event', 'release', 'project'],
    ['SENTRY_AUTH_TOKEN', 'Sentry auth token', true],
  ),
  t(
    'code-runner',
    'Code Sandbox',
    'Development & Coding',
    ['AI & Machine Learning'],
    ['run Python and JavaScript snippets in an isolated sandbox', 'execute code safely in ephemeral containers'],
    ['sandbox', 'interpreter', 'snippet', 'runtime', 'notebook'],
    ['snippet', 'session', 'file', 'package'],
  ),
  t(
    'lsp',
    'Language Server',
    'Development & Coding',
    [],
    ['give agents go-to-definition and references via LSP', 'navigate large codebases with language server symbols'],
    ['symbol', 'definition', 'reference', 'diagnostic', 'refactor'],
    ['symbol', 'definition', 'diagnostic', 'file'],
  ),
  // Data & Databases
  t(
    'postgres',
    'PostgreSQL',
    'Data & Databases',
    ['Development & Coding'],
    ['query PostgreSQL databases with read-only SQL', 'inspect PostgreSQL schemas and run SQL queries'],
    ['postgresql', 'sql', 'schema', 'table', 'index', 'migration'],
    ['table', 'schema', 'query', 'index', 'row'],
    ['DATABASE_URL', 'PostgreSQL connection string', true],
  ),
  t(
    'mysql',
    'MySQL',
    'Data & Databases',
    ['Development & Coding'],
    ['query MySQL and MariaDB databases', 'explore MySQL tables and run SQL'],
    ['mysql', 'mariadb', 'sql', 'table', 'replica'],
    ['table', 'database', 'query', 'row'],
    ['MYSQL_URL', 'MySQL connection URL', true],
  ),
  t(
    'mongodb',
    'MongoDB',
    'Data & Databases',
    [],
    ['query MongoDB collections and aggregation pipelines', 'manage MongoDB documents and indexes'],
    ['mongodb', 'collection', 'document', 'aggregation', 'atlas'],
    ['collection', 'document', 'index', 'database'],
    ['MONGODB_URI', 'MongoDB connection URI', true],
  ),
  t(
    'sqlite',
    'SQLite',
    'Data & Databases',
    ['Knowledge & Memory'],
    ['read and write local SQLite database files', 'analyse SQLite files with SQL'],
    ['sqlite', 'sql', 'table', 'file', 'pragma'],
    ['table', 'query', 'row', 'view'],
  ),
  t(
    'redis',
    'Redis',
    'Data & Databases',
    ['Cloud & DevOps'],
    ['inspect Redis keys, streams and caches', 'manage Redis caches and pub/sub channels'],
    ['redis', 'cache', 'key', 'stream', 'ttl'],
    ['key', 'stream', 'channel', 'hash'],
    ['REDIS_URL', 'Redis connection URL', true],
  ),
  t(
    'bigquery',
    'BigQuery',
    'Data & Databases',
    ['Cloud & DevOps', 'AI & Machine Learning'],
    ['run BigQuery SQL over warehouse datasets', 'explore BigQuery datasets and job history'],
    ['bigquery', 'warehouse', 'dataset', 'analytics', 'sql'],
    ['dataset', 'table', 'job', 'query'],
    ['GOOGLE_APPLICATION_CREDENTIALS', 'Path to a service account key', false],
  ),
  t(
    'snowflake',
    'Snowflake',
    'Data & Databases',
    ['Cloud & DevOps'],
    ['query Snowflake warehouses and stages', 'explore Snowflake databases with SQL'],
    ['snowflake', 'warehouse', 'stage', 'sql', 'analytics'],
    ['warehouse', 'table', 'stage', 'query'],
    ['SNOWFLAKE_PASSWORD', 'Snowflake password', true],
  ),
  // Search & Web
  t(
    'web-search',
    'Web Search',
    'Search & Web',
    ['AI & Machine Learning'],
    ['search the web and return ranked results with snippets', 'give agents real-time web search'],
    ['search engine', 'ranking', 'snippet', 'crawl', 'news'],
    ['result', 'query', 'page', 'news_article'],
    ['SEARCH_API_KEY', 'Search API key', true],
  ),
  t(
    'fetch',
    'Fetch',
    'Search & Web',
    ['Browser & Automation'],
    ['fetch web pages and convert them to clean markdown', 'download URLs and extract readable content'],
    ['url', 'html', 'markdown', 'readability', 'robots'],
    ['page', 'url', 'link', 'image'],
  ),
  t(
    'scraper',
    'Web Scraper',
    'Search & Web',
    ['Browser & Automation', 'Data & Databases'],
    ['scrape websites into structured JSON', 'crawl sites and extract structured data'],
    ['scraping', 'crawler', 'selector', 'sitemap', 'extraction'],
    ['page', 'selector', 'crawl', 'sitemap'],
    ['SCRAPER_API_KEY', 'Scraping service API key', true],
  ),
  t(
    'rss',
    'RSS',
    'Search & Web',
    ['Knowledge & Memory'],
    ['read RSS and Atom feeds', 'follow news feeds and summarise new entries'],
    ['feed', 'atom', 'headline', 'subscription', 'podcast'],
    ['feed', 'entry', 'subscription'],
  ),
  t(
    'arxiv',
    'arXiv',
    'Search & Web',
    ['AI & Machine Learning', 'Knowledge & Memory'],
    ['search arXiv papers and read abstracts', 'find and summarise research papers on arXiv'],
    ['paper', 'abstract', 'citation', 'preprint', 'research'],
    ['paper', 'author', 'citation'],
  ),
  // AI & Machine Learning
  t(
    'huggingface',
    'Hugging Face',
    'AI & Machine Learning',
    ['Data & Databases'],
    ['search Hugging Face models, datasets and Spaces', 'run inference on Hugging Face models'],
    ['model', 'dataset', 'inference', 'transformer', 'space'],
    ['model', 'dataset', 'space', 'inference'],
    ['HF_TOKEN', 'Hugging Face token', true],
  ),
  t(
    'image-gen',
    'Image Generation',
    'AI & Machine Learning',
    ['Media & Design'],
    ['generate images from text prompts with diffusion models', 'create and edit images with generative AI'],
    ['diffusion', 'prompt', 'image', 'upscale', 'inpainting'],
    ['image', 'prompt', 'style', 'generation'],
    ['IMAGE_API_KEY', 'Image generation API key', true],
  ),
  t(
    'llm-router',
    'LLM Router',
    'AI & Machine Learning',
    [],
    ['route prompts to the cheapest capable language model', 'compare answers from several LLM providers'],
    ['llm', 'prompt', 'completion', 'token', 'embedding'],
    ['model', 'completion', 'embedding', 'provider'],
    ['OPENAI_API_KEY', 'OpenAI API key', true],
  ),
  t(
    'mlflow',
    'MLflow',
    'AI & Machine Learning',
    ['Data & Databases'],
    ['track MLflow experiments, runs and registered models', 'compare MLflow runs and metrics'],
    ['experiment', 'metric', 'artifact', 'training', 'registry'],
    ['experiment', 'run', 'metric', 'model'],
  ),
  // Productivity & Docs
  t(
    'notion',
    'Notion',
    'Productivity & Docs',
    ['Knowledge & Memory'],
    ['read and update Notion pages and databases', 'search a Notion workspace and edit pages'],
    ['workspace', 'page', 'block', 'database', 'wiki'],
    ['page', 'block', 'database', 'comment'],
    ['NOTION_TOKEN', 'Notion integration token', true],
  ),
  t(
    'google-drive',
    'Google Drive',
    'Productivity & Docs',
    ['Knowledge & Memory'],
    ['search and read Google Drive documents and sheets', 'manage Google Docs, Sheets and Drive files'],
    ['document', 'spreadsheet', 'folder', 'drive', 'slides'],
    ['file', 'folder', 'document', 'spreadsheet'],
    ['GOOGLE_CLIENT_SECRET', 'OAuth client secret', true],
  ),
  t(
    'calendar',
    'Calendar',
    'Productivity & Docs',
    ['Communication & Messaging'],
    ['schedule meetings and read calendar availability', 'manage calendar events and invitations'],
    ['meeting', 'event', 'availability', 'timezone', 'invitation'],
    ['event', 'calendar', 'attendee', 'slot'],
  ),
  t(
    'todoist',
    'Todoist',
    'Productivity & Docs',
    [],
    ['manage Todoist tasks and projects', 'capture and prioritise tasks from chat'],
    ['task', 'project', 'deadline', 'label', 'priority'],
    ['task', 'project', 'label', 'comment'],
    ['TODOIST_API_TOKEN', 'Todoist API token', true],
  ),
  t(
    'jira',
    'Jira',
    'Productivity & Docs',
    ['Development & Coding'],
    ['search and update Jira issues and sprints', 'plan sprints and triage Jira tickets'],
    ['ticket', 'sprint', 'backlog', 'epic', 'board'],
    ['issue', 'sprint', 'board', 'epic'],
    ['JIRA_API_TOKEN', 'Atlassian API token', true],
  ),
  t(
    'pdf',
    'PDF Tools',
    'Productivity & Docs',
    ['Media & Design'],
    ['extract text and tables from PDF files', 'merge, split and summarise PDF documents'],
    ['pdf', 'table', 'ocr', 'page', 'form'],
    ['document', 'page', 'table', 'form'],
  ),
  // Communication & Messaging
  t(
    'slack',
    'Slack',
    'Communication & Messaging',
    ['Productivity & Docs'],
    ['read and post Slack messages and threads', 'summarise Slack channels and reply in threads'],
    ['channel', 'message', 'thread', 'workspace', 'emoji'],
    ['channel', 'message', 'thread', 'user'],
    ['SLACK_BOT_TOKEN', 'Slack bot token', true],
  ),
  t(
    'discord',
    'Discord',
    'Communication & Messaging',
    [],
    ['moderate Discord servers and send messages', 'read Discord channels and manage roles'],
    ['guild', 'channel', 'message', 'role', 'moderation'],
    ['channel', 'message', 'member', 'role'],
    ['DISCORD_TOKEN', 'Discord bot token', true],
  ),
  t(
    'email',
    'Email',
    'Communication & Messaging',
    ['Productivity & Docs'],
    ['search, read and send email over IMAP and SMTP', 'triage an inbox and draft replies'],
    ['inbox', 'imap', 'smtp', 'attachment', 'draft'],
    ['message', 'mailbox', 'draft', 'attachment'],
    ['IMAP_PASSWORD', 'Mailbox password', true],
  ),
  t(
    'telegram',
    'Telegram',
    'Communication & Messaging',
    [],
    ['send and read Telegram messages through a bot', 'automate Telegram chats and groups'],
    ['bot', 'chat', 'group', 'sticker', 'message'],
    ['chat', 'message', 'group'],
  ),
  t(
    'sms',
    'SMS',
    'Communication & Messaging',
    ['Commerce & Marketing'],
    ['send SMS and place phone calls', 'send text messages and read delivery receipts'],
    ['phone', 'sms', 'call', 'voice', 'delivery'],
    ['message', 'call', 'number'],
    ['SMS_AUTH_TOKEN', 'SMS provider auth token', true],
  ),
  // Cloud & DevOps
  t(
    'aws',
    'AWS',
    'Cloud & DevOps',
    ['Security', 'Data & Databases'],
    ['inspect AWS resources, costs and CloudWatch logs', 'query AWS accounts for resources and spend'],
    ['lambda', 'bucket', 'cloudwatch', 'iam', 'region', 'cost'],
    ['bucket', 'function', 'log_group', 'instance'],
    ['AWS_PROFILE', 'AWS named profile', false],
  ),
  t(
    'kubernetes',
    'Kubernetes',
    'Cloud & DevOps',
    ['Development & Coding'],
    ['inspect Kubernetes pods, deployments and logs', 'troubleshoot Kubernetes clusters with kubectl'],
    ['cluster', 'pod', 'deployment', 'namespace', 'helm'],
    ['pod', 'deployment', 'namespace', 'service'],
    ['KUBECONFIG', 'Path to the kubeconfig file', false],
  ),
  t(
    'docker',
    'Docker',
    'Cloud & DevOps',
    ['Development & Coding'],
    ['manage Docker containers, images and volumes', 'build and run containers from chat'],
    ['container', 'image', 'volume', 'compose', 'registry'],
    ['container', 'image', 'volume', 'network'],
  ),
  t(
    'terraform',
    'Terraform',
    'Cloud & DevOps',
    ['Development & Coding'],
    ['plan Terraform changes and read state', 'explore Terraform modules and providers'],
    ['infrastructure', 'module', 'provider', 'state', 'plan'],
    ['module', 'workspace', 'plan', 'resource'],
    ['TF_TOKEN', 'Terraform Cloud token', true],
  ),
  t(
    'cloudflare',
    'Cloudflare',
    'Cloud & DevOps',
    ['Security', 'Search & Web'],
    ['manage Cloudflare Workers, DNS and KV', 'deploy Workers and edit DNS records'],
    ['worker', 'dns', 'edge', 'kv', 'zone'],
    ['worker', 'zone', 'dns_record', 'namespace'],
    ['CLOUDFLARE_API_TOKEN', 'Cloudflare API token', true],
  ),
  t(
    'grafana',
    'Grafana',
    'Cloud & DevOps',
    ['Data & Databases'],
    ['query Grafana dashboards, alerts and metrics', 'investigate incidents with Grafana and Prometheus'],
    ['dashboard', 'alert', 'prometheus', 'metric', 'incident'],
    ['dashboard', 'alert', 'datasource', 'panel'],
    ['GRAFANA_API_KEY', 'Grafana service account token', true],
  ),
  // Finance & Crypto
  t(
    'stripe',
    'Stripe',
    'Finance & Crypto',
    ['Commerce & Marketing'],
    ['manage Stripe customers, invoices and refunds', 'look up Stripe payments and subscriptions'],
    ['payment', 'invoice', 'subscription', 'refund', 'checkout'],
    ['customer', 'invoice', 'payment', 'subscription'],
    ['STRIPE_SECRET_KEY', 'Stripe secret key', true],
  ),
  t(
    'stocks',
    'Market Data',
    'Finance & Crypto',
    ['Data & Databases'],
    ['get stock quotes, fundamentals and market news', 'analyse equities with real-time market data'],
    ['stock', 'ticker', 'quote', 'dividend', 'earnings'],
    ['quote', 'ticker', 'candle', 'filing'],
    ['MARKET_API_KEY', 'Market data API key', true],
  ),
  t(
    'ethereum',
    'Ethereum',
    'Finance & Crypto',
    ['Security'],
    ['read Ethereum balances, transactions and contracts', 'explore on-chain data across EVM networks'],
    ['blockchain', 'wallet', 'token', 'contract', 'transaction'],
    ['wallet', 'transaction', 'contract', 'token'],
    ['RPC_URL', 'EVM JSON-RPC endpoint', false],
  ),
  t(
    'accounting',
    'Accounting',
    'Finance & Crypto',
    ['Productivity & Docs'],
    ['reconcile ledgers and read accounting reports', 'create invoices and track expenses'],
    ['ledger', 'expense', 'invoice', 'bookkeeping', 'tax'],
    ['invoice', 'expense', 'account', 'report'],
  ),
  // Security
  t(
    'vuln-scanner',
    'Vulnerability Scanner',
    'Security',
    ['Development & Coding', 'Cloud & DevOps'],
    ['scan dependencies and containers for known CVEs', 'audit projects for vulnerable packages'],
    ['vulnerability', 'cve', 'advisory', 'sbom', 'severity'],
    ['finding', 'advisory', 'scan', 'package'],
  ),
  t(
    'secrets',
    'Secrets Vault',
    'Security',
    ['Cloud & DevOps'],
    ['read and rotate secrets from a vault', 'manage API keys and certificates safely'],
    ['secret', 'vault', 'certificate', 'rotation', 'encryption'],
    ['secret', 'certificate', 'policy', 'lease'],
    ['VAULT_TOKEN', 'Vault token', true],
  ),
  t(
    'threat-intel',
    'Threat Intelligence',
    'Security',
    ['Search & Web'],
    ['look up IP addresses, domains and malware hashes', 'enrich security alerts with threat intelligence'],
    ['malware', 'indicator', 'phishing', 'reputation', 'ioc'],
    ['indicator', 'domain', 'hash', 'report'],
    ['THREAT_API_KEY', 'Threat intelligence API key', true],
  ),
  t(
    'network-scan',
    'Network Scanner',
    'Security',
    ['Cloud & DevOps'],
    ['scan hosts and ports and fingerprint services', 'map networks and detect open ports'],
    ['port', 'host', 'fingerprint', 'subnet', 'packet'],
    ['host', 'port', 'scan', 'service'],
  ),
  // Media & Design
  t(
    'figma',
    'Figma',
    'Media & Design',
    ['Development & Coding'],
    ['read Figma files, frames and design tokens', 'turn Figma designs into code'],
    ['design', 'frame', 'component', 'token', 'prototype'],
    ['file', 'frame', 'component', 'style'],
    ['FIGMA_TOKEN', 'Figma personal access token', true],
  ),
  t(
    'youtube',
    'YouTube',
    'Media & Design',
    ['Search & Web'],
    ['fetch YouTube transcripts and video metadata', 'search YouTube videos and summarise transcripts'],
    ['video', 'transcript', 'channel', 'playlist', 'caption'],
    ['video', 'transcript', 'playlist', 'channel'],
    ['YOUTUBE_API_KEY', 'YouTube Data API key', true],
  ),
  t(
    'spotify',
    'Spotify',
    'Media & Design',
    [],
    ['control Spotify playback and playlists', 'search music and manage Spotify playlists'],
    ['music', 'playlist', 'track', 'album', 'playback'],
    ['track', 'playlist', 'album', 'artist'],
    ['SPOTIFY_CLIENT_SECRET', 'Spotify client secret', true],
  ),
  t(
    'image-tools',
    'Image Tools',
    'Media & Design',
    ['AI & Machine Learning'],
    ['resize, convert and optimise images', 'edit photos and generate thumbnails'],
    ['photo', 'thumbnail', 'resize', 'webp', 'compression'],
    ['image', 'thumbnail', 'format'],
  ),
  // Browser & Automation
  t(
    'playwright',
    'Playwright',
    'Browser & Automation',
    ['Development & Coding', 'Search & Web'],
    ['drive a real browser with Playwright', 'automate browser testing and form filling'],
    ['browser', 'headless', 'screenshot', 'selector', 'navigation'],
    ['page', 'element', 'screenshot', 'tab'],
  ),
  t(
    'puppeteer',
    'Puppeteer',
    'Browser & Automation',
    ['Search & Web'],
    ['control Chrome with Puppeteer', 'take screenshots and fill forms in headless Chrome'],
    ['chrome', 'headless', 'screenshot', 'devtools', 'pdf'],
    ['page', 'element', 'screenshot'],
  ),
  t(
    'workflow',
    'Workflow Automation',
    'Browser & Automation',
    ['Productivity & Docs', 'Communication & Messaging'],
    ['trigger automation workflows and webhooks', 'connect apps with no-code workflows'],
    ['workflow', 'webhook', 'trigger', 'integration', 'schedule'],
    ['workflow', 'execution', 'webhook', 'trigger'],
    ['WORKFLOW_API_KEY', 'Automation platform API key', true],
  ),
  t(
    'desktop',
    'Desktop Control',
    'Browser & Automation',
    [],
    ['control the desktop with mouse, keyboard and screenshots', 'automate native apps on macOS and Windows'],
    ['mouse', 'keyboard', 'window', 'clipboard', 'accessibility'],
    ['window', 'screenshot', 'clipboard', 'app'],
  ),
  // Knowledge & Memory
  t(
    'memory',
    'Memory',
    'Knowledge & Memory',
    ['AI & Machine Learning'],
    ['give agents long-term memory as a knowledge graph', 'remember facts and preferences across sessions'],
    ['memory', 'knowledge graph', 'entity', 'relation', 'recall'],
    ['entity', 'relation', 'observation', 'memory'],
  ),
  t(
    'obsidian',
    'Obsidian',
    'Knowledge & Memory',
    ['Productivity & Docs'],
    ['search and edit notes in an Obsidian vault', 'link and organise markdown notes'],
    ['vault', 'note', 'backlink', 'markdown', 'tag'],
    ['note', 'tag', 'folder', 'backlink'],
  ),
  t(
    'vector-db',
    'Vector Search',
    'Knowledge & Memory',
    ['AI & Machine Learning', 'Data & Databases'],
    ['store and query embeddings in a vector database', 'semantic search over your documents'],
    ['embedding', 'vector', 'similarity', 'chunk', 'retrieval'],
    ['collection', 'vector', 'document', 'point'],
    ['VECTOR_DB_API_KEY', 'Vector database API key', true],
  ),
  t(
    'wikipedia',
    'Wikipedia',
    'Knowledge & Memory',
    ['Search & Web'],
    ['search and read Wikipedia articles', 'look up encyclopedia facts and summaries'],
    ['article', 'encyclopedia', 'summary', 'category', 'language'],
    ['article', 'section', 'category'],
  ),
  // Commerce & Marketing
  t(
    'shopify',
    'Shopify',
    'Commerce & Marketing',
    ['Finance & Crypto'],
    ['manage Shopify products, orders and inventory', 'answer questions about a Shopify store'],
    ['storefront', 'product', 'order', 'inventory', 'cart'],
    ['product', 'order', 'customer', 'collection'],
    ['SHOPIFY_ACCESS_TOKEN', 'Shopify Admin API token', true],
  ),
  t(
    'hubspot',
    'HubSpot',
    'Commerce & Marketing',
    ['Communication & Messaging'],
    ['manage HubSpot contacts, deals and companies', 'update CRM records and pipelines'],
    ['crm', 'contact', 'deal', 'pipeline', 'lead'],
    ['contact', 'deal', 'company', 'ticket'],
    ['HUBSPOT_TOKEN', 'HubSpot private app token', true],
  ),
  t(
    'ads',
    'Ads Manager',
    'Commerce & Marketing',
    ['Data & Databases'],
    ['analyse ad campaigns, budgets and conversions', 'optimise advertising spend across campaigns'],
    ['campaign', 'advertising', 'conversion', 'audience', 'budget'],
    ['campaign', 'ad_group', 'audience', 'report'],
    ['ADS_DEVELOPER_TOKEN', 'Ads API developer token', true],
  ),
  t(
    'seo',
    'SEO',
    'Commerce & Marketing',
    ['Search & Web'],
    ['audit pages for SEO and track keyword rankings', 'research keywords and backlinks'],
    ['keyword', 'backlink', 'ranking', 'serp', 'audit'],
    ['keyword', 'backlink', 'audit', 'page'],
  ),
  // Other
  t(
    'weather',
    'Weather',
    'Other',
    ['Search & Web'],
    ['get weather forecasts and severe weather alerts', 'look up current conditions and forecasts'],
    ['forecast', 'temperature', 'precipitation', 'wind', 'alert'],
    ['forecast', 'alert', 'station', 'location'],
  ),
  t(
    'time',
    'Time',
    'Other',
    [],
    ['convert time zones and compute dates', 'answer questions about dates and time zones'],
    ['timezone', 'date', 'clock', 'calendar', 'duration'],
    ['timezone', 'date', 'duration'],
  ),
  t(
    'maps',
    'Maps',
    'Other',
    ['Search & Web', 'Commerce & Marketing'],
    ['geocode addresses and plan routes', 'search places and get directions'],
    ['geocoding', 'route', 'place', 'distance', 'coordinate'],
    ['place', 'route', 'address', 'distance'],
    ['MAPS_API_KEY', 'Maps API key', true],
  ),
  t(
    'sports',
    'Sports',
    'Other',
    ['Data & Databases'],
    ['get live scores, fixtures and player statistics', 'look up sports results and standings'],
    ['score', 'fixture', 'league', 'player', 'standings'],
    ['game', 'team', 'player', 'league'],
  ),
  t(
    'travel',
    'Travel',
    'Other',
    ['Commerce & Marketing'],
    ['search flights, hotels and itineraries', 'plan trips and compare fares'],
    ['flight', 'hotel', 'itinerary', 'fare', 'airport'],
    ['flight', 'hotel', 'booking', 'airport'],
    ['TRAVEL_API_KEY', 'Travel API key', true],
  ),
];

/** Words that appear only in READMEs (never in names, descriptions or tools): README search probes. */
export const README_ONLY_WORDS: readonly string[] = [
  'aardvark',
  'bumblebee',
  'cinnamon',
  'dandelion',
  'eucalyptus',
  'flamingo',
  'gondola',
  'hibiscus',
  'iguana',
  'jacaranda',
  'kumquat',
  'lagoon',
  'marmalade',
  'narwhal',
  'origami',
  'pelican',
];

/** Words that appear only in tool descriptions: tool-text search probes. */
export const TOOL_ONLY_WORDS: readonly string[] = [
  'quasar',
  'rhubarb',
  'saffron',
  'tamarind',
  'ukulele',
  'vermilion',
  'walrus',
  'xylophone',
  'zeppelin',
  'yodeling',
];

export const USER_HANDLES: readonly string[] = [
  'alice',
  'bob',
  'carol',
  'dmitri',
  'esther',
  'farid',
  'gwen',
  'hiro',
  'ines',
  'jonas',
  'kemal',
  'lena',
  'mateo',
  'nadia',
  'oskar',
  'priya',
  'quentin',
  'rosa',
  'sven',
  'tariq',
  'ursula',
  'viktor',
  'wei',
  'xenia',
  'yusuf',
  'zoe',
  'arjun',
  'beatriz',
  'chen',
  'dario',
  'elif',
  'femi',
  'greta',
  'hamid',
  'ivana',
  'jakob',
  'kaito',
  'leila',
  'marco',
  'nikhil',
  'olga',
  'pablo',
  'rahul',
  'sakura',
  'tomas',
  'uma',
  'vera',
  'wren',
  'yara',
  'zaid',
  'codewitch',
  'bytesmith',
  'nullpointer',
  'devnomad',
  'stackhopper',
  'tinkerer',
  'hexlab',
  'quietloop',
  'lambdacat',
  'rustacean',
  'pyhacker',
  'gopherden',
];
const USER_SUFFIXES: readonly string[] = ['', '', '', 'dev', '-dev', '42', '-ai', 'hq', '-labs', 'codes', '-io', '7', 'x', '-oss'];

export const COMPANY_NAMES: readonly string[] = [
  'acme',
  'globex',
  'initech',
  'hooli',
  'vandelay',
  'umbrella',
  'cyberdyne',
  'tyrell',
  'wonka',
  'stark',
  'oscorp',
  'aperture',
  'blackmesa',
  'soylent',
  'monarch',
  'nakatomi',
  'weyland',
  'virtucon',
  'bluth',
  'rekall',
  'abstergo',
  'encom',
  'dharma',
  'octan',
  'contoso',
  'fabrikam',
  'northwind',
  'tailspin',
  'wingtip',
  'adatum',
  'litware',
  'proseware',
  'lucerne',
  'woodgrove',
  'coho',
  'alpinesky',
  'brightloom',
  'cloudberry',
  'datavance',
  'edgewise',
  'fluxwave',
  'gridspan',
  'helixdata',
  'ironclad',
  'junipero',
  'kiteflow',
  'lumenary',
  'meshwork',
  'novacraft',
  'orbitly',
  'pixelforge',
  'quantive',
  'riverstone',
  'skylark',
  'tidewater',
  'upstreamly',
  'vectorial',
  'waypoint',
  'yellowfin',
  'zenbase',
  'pied-piper',
  'massive-dynamic',
  'planet-express',
];

const COMPANY_TLDS: ReadonlyArray<readonly [string, number]> = [
  ['com', 60],
  ['ai', 14],
  ['dev', 8],
  ['io', 8],
  ['app', 5],
  ['net', 2],
  ['co', 2],
  ['so', 1],
];

const NAME_ADJECTIVES: readonly string[] = ['simple', 'fast', 'tiny', 'open', 'smart', 'super', 'better', 'lite', 'pro', 'unified', 'async', 'local'];

export const LANGUAGES: readonly string[] = [
  'TypeScript',
  'JavaScript',
  'Python',
  'Go',
  'Rust',
  'Java',
  'C#',
  'Kotlin',
  'Ruby',
  'PHP',
  'Swift',
  'Elixir',
  'Scala',
  'F#',
  'Dart',
  'Zig',
];

const LANGUAGE_BY_REGISTRY: Readonly<Record<string, ReadonlyArray<readonly [string, number]>>> = {
  npm: [
    ['TypeScript', 70],
    ['JavaScript', 28],
    ['Rust', 1],
    ['Go', 1],
  ],
  pypi: [
    ['Python', 96],
    ['Rust', 3],
    ['Go', 1],
  ],
  oci: [
    ['Go', 30],
    ['Python', 20],
    ['Rust', 12],
    ['TypeScript', 12],
    ['Java', 10],
    ['Kotlin', 5],
    ['C#', 4],
    ['Elixir', 3],
    ['Ruby', 2],
    ['Zig', 2],
  ],
  mcpb: [
    ['TypeScript', 50],
    ['Python', 20],
    ['Rust', 15],
    ['Swift', 10],
    ['Go', 5],
  ],
  nuget: [
    ['C#', 90],
    ['F#', 10],
  ],
  remote: [
    ['TypeScript', 30],
    ['Python', 25],
    ['Go', 12],
    ['Ruby', 6],
    ['PHP', 6],
    ['Elixir', 5],
    ['Java', 5],
    ['Kotlin', 4],
    ['Rust', 4],
    ['C#', 3],
    ['Swift', 2],
    ['Scala', 2],
    ['Dart', 1],
  ],
};

/** GitHub license name, SPDX id and relative weight; `null` = repository without a license. */
export const LICENSES: ReadonlyArray<readonly [{ name: string; spdx: string } | null, number]> = [
  [{ name: 'MIT License', spdx: 'MIT' }, 52],
  [{ name: 'Apache License 2.0', spdx: 'Apache-2.0' }, 17],
  [{ name: 'BSD 3-Clause "New" or "Revised" License', spdx: 'BSD-3-Clause' }, 3],
  [{ name: 'BSD 2-Clause "Simplified" License', spdx: 'BSD-2-Clause' }, 1],
  [{ name: 'ISC License', spdx: 'ISC' }, 2],
  [{ name: 'The Unlicense', spdx: 'Unlicense' }, 1],
  [{ name: 'BSD Zero Clause License', spdx: '0BSD' }, 0.5],
  [{ name: 'Mozilla Public License 2.0', spdx: 'MPL-2.0' }, 2],
  [{ name: 'GNU Lesser General Public License v3.0', spdx: 'LGPL-3.0' }, 1],
  [{ name: 'GNU Lesser General Public License v2.1', spdx: 'LGPL-2.1' }, 0.5],
  [{ name: 'Eclipse Public License 2.0', spdx: 'EPL-2.0' }, 0.5],
  [{ name: 'GNU General Public License v3.0', spdx: 'GPL-3.0' }, 4],
  [{ name: 'GNU General Public License v2.0', spdx: 'GPL-2.0' }, 1],
  [{ name: 'GNU Affero General Public License v3.0', spdx: 'AGPL-3.0' }, 2],
  [{ name: 'Other', spdx: 'NOASSERTION' }, 3],
  [null, 7.5],
];

const REMOTE_HOSTS: readonly string[] = ['fly.dev', 'onrender.com', 'workers.dev', 'up.railway.app', 'deno.dev', 'vercel.app'];

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

const capitalize = (s: string): string => s.charAt(0).toUpperCase() + s.slice(1);
const displayName = (token: string): string => token.split('-').map(capitalize).join(' ');
const pascal = (token: string): string => token.split(/[-_]/).map(capitalize).join('');
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

type Publisher =
  | { kind: 'user'; handle: string; namespace: string; owner: string }
  | { kind: 'smithery'; handle: string; namespace: string; owner: string }
  | { kind: 'company'; company: string; domain: string; namespace: string; owner: string };

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
// Packages, remotes, tools, README
// ---------------------------------------------------------------------------------------------

interface Ctx {
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
  const [name, description, secret] = topic.env;
  return [{ name, description, isRequired: true, isSecret: secret, format: 'string' }];
}

function makePackage(ctx: Ctx, registryType: string): RegistryPackage {
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

function makeRemotes(ctx: Ctx): RegistryRemote[] {
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

function makeTools(rng: Rng, topic: Topic): ToolDraft[] {
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

function makeReadme(
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
    parts.push(`## Configuration\n\n| Variable | Description |\n|---|---|\n| \`${topic.env[0]}\` | ${topic.env[1]} |\n`);
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
