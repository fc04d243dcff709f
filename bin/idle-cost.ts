/**
 * `npm run cost`: the monthly cost of a deployment nobody uses, per search mode (the README's
 * table), computed from the synthesized templates: every resource that bills by the hour or the
 * month whether or not anyone calls it, the GitHub token secret the stage names, the storage that
 * point-in-time recovery and AWS Backup keep, the scheduled crawl and health check rounds themselves, priced with the list
 * prices and the inputs below (stated in the README under the table). Requests by users (Lambda,
 * API Gateway, DynamoDB on demand, CloudFront, S3 requests) bill per use and are not in it.
 */
import { App, type Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { deployCatalog, type DeploymentProps } from '../lib/deployment';
import { CRAWL_METRICS } from '../lambdas/shared/observability/metric-names';
import { STAGES } from './stages';

/**
 * us-east-1 on-demand list prices (USD) of November 2025, entered by hand (the pricing pages were
 * not reachable from the machine this was written on: check them, and correct a price here if it
 * moved; the README's table is this file's output). No free tier applied.
 */
export const PRICES = {
  region: 'us-east-1',
  asOf: '2025-11',
  hoursPerMonth: 730,
  /** OpenSearch Service instance, per hour. */
  openSearchInstance: { 't3.small.search': 0.036, 't3.medium.search': 0.073 } as Record<string, number>,
  /** OpenSearch Service gp3 storage, per GiB-month (3,000 IOPS and 125 MB/s included). */
  openSearchGp3GiB: 0.122,
  /** WAF: per web ACL-month, per rule-month (a managed rule group is one rule). */
  wafWebAcl: 5,
  wafRule: 1,
  /** Secrets Manager, per secret-month. */
  secret: 0.4,
  /** Parameter Store, per parameter-month: standard parameters are free, advanced ones are not (API calls at standard throughput are free). */
  parameter: { Standard: 0, Advanced: 0.05 } as Record<string, number>,
  /** CloudWatch, per standard-resolution alarm metric-month (a metric-math alarm pays for each metric it reads). */
  alarmMetric: 0.1,
  /** CloudWatch, per dashboard-month. */
  dashboard: 3,
  /** CloudWatch, per custom metric-month (the first 10,000). */
  customMetric: 0.3,
  /** DynamoDB, per GB-month: table storage, point-in-time recovery, on-demand backups (AWS Backup of DynamoDB bills the same). */
  dynamoGb: 0.25,
  pitrGb: 0.2,
  dynamoBackupGb: 0.1,
  /** AWS Backup of S3, per GB-month. */
  s3BackupGb: 0.05,
  /** DynamoDB on demand, per million write / read request units. */
  writeMillion: 0.625,
  readMillion: 0.125,
  /** Lambda arm64, per GB-second; Step Functions Standard, per 1,000 state transitions. */
  lambdaArmGbSecond: 0.0000133334,
  /** Per million requests (the per-request cost in BENCHMARKS.md): Lambda invocations, API Gateway HTTP APIs (first 300 million), CloudFront HTTPS (North America and Europe). */
  lambdaRequestMillion: 0.2,
  httpApiMillion: 1.0,
  cloudFrontHttpsMillion: 1.0,
  stateTransitionThousand: 0.025,
} as const;

/**
 * What the storage and crawl figures assume (the README states them under the table): the
 * catalog's size, what an item weighs, what a crawl does. Crawls a day come from the template's
 * schedule.
 */
export const INPUTS = {
  /** Servers in the catalog (the official registry had about this many in November 2025). */
  catalogServers: 10_000,
  /** Bytes per server in the catalog table (the record with its README excerpt and scores) and in the crawl state. */
  catalogItemBytes: 6_000,
  stateItemBytes: 1_000,
  /** Memories, tokens, clients and favorites together (tables), and the memory bucket with its versions. */
  userTablesGb: 0.1,
  memoryBucketGb: 0.5,
  /** Recovery points per backed-up table at steady state: 35 daily and 12 monthly ones. */
  recoveryPoints: 35 + 12,
  /** Servers an incremental crawl processes: up to 500 refreshed (enrichment older than a day) and about 1% changed upstream. */
  serversPerCrawl: 600,
  /** Lambda seconds per processed server (GitHub, package registries and a health check over a real network). */
  secondsPerServer: 0.5,
  /** DynamoDB write units per processed server (catalog record, crawl state, name state). */
  writeUnitsPerServer: 9,
  /** Servers per Map unit; state transitions per unit and per run. */
  serversPerUnit: 100,
  transitionsPerUnit: 6,
  transitionsPerRun: 12,
  /** Hosted servers (a remote without `{variables}`) each check round checks: the issue's scale target, above today's registry. */
  hostedServers: 5_000,
  /** Wall seconds of one check over a real network (connect, initialize, tools/list); CHECK_CONCURRENCY of them share a function's time. */
  checkSeconds: 0.5,
  /** Bytes of one check item in the trust table. */
  checkItemBytes: 200,
  /** Write units per checked server: its check item, and the renewed record (about 3 KB without its README). */
  checkWriteUnits: 4,
  /** State transitions per round (Plan, Map, Finish and their retries' bookkeeping) and per batch. */
  transitionsPerRound: 6,
  transitionsPerBatch: 3,
} as const;

const GB = 1e9;
const DAYS_PER_MONTH = 30.4;

export interface CostLine {
  /** The table's row. */
  row: string;
  /** What of it the template has, e.g. `2 × t3.small.search`. */
  detail: string;
  monthly: number;
}

// biome-ignore lint/suspicious/noExplicitAny: template JSON, read property by property.
type Resource = { id: string; Type: string; Properties: Record<string, any> };

/** The idle monthly cost of the resources of some templates, line by line. */
export function idleCost(resources: Resource[]): CostLine[] {
  const of = (type: string) => resources.filter((r) => r.Type === type);
  const lines: CostLine[] = [];
  for (const d of of('AWS::OpenSearchService::Domain')) {
    const cluster = d.Properties.ClusterConfig as { InstanceType: string; InstanceCount: number; DedicatedMasterCount?: number };
    const hourly = PRICES.openSearchInstance[cluster.InstanceType];
    if (hourly === undefined) throw new Error(`no price for ${cluster.InstanceType}: add it to PRICES (bin/idle-cost.ts)`);
    if (cluster.DedicatedMasterCount) throw new Error('dedicated masters are not priced here: add them to bin/idle-cost.ts');
    lines.push({
      row: 'OpenSearch nodes',
      detail: `${cluster.InstanceCount} × ${cluster.InstanceType}`,
      monthly: cluster.InstanceCount * hourly * PRICES.hoursPerMonth,
    });
    const ebs = d.Properties.EBSOptions as { VolumeSize: number };
    lines.push({
      row: 'OpenSearch storage',
      detail: `${cluster.InstanceCount} × ${ebs.VolumeSize} GiB gp3`,
      monthly: cluster.InstanceCount * ebs.VolumeSize * PRICES.openSearchGp3GiB,
    });
  }
  for (const acl of of('AWS::WAFv2::WebACL')) {
    const rules = (acl.Properties.Rules as unknown[]).length;
    lines.push({ row: 'WAF', detail: `web ACL, ${rules} rules`, monthly: PRICES.wafWebAcl + rules * PRICES.wafRule });
  }
  const secrets = of('AWS::SecretsManager::Secret').length;
  if (secrets) lines.push({ row: 'Secrets Manager', detail: `${secrets} secrets`, monthly: secrets * PRICES.secret });
  // Settings that are not credentials live in Parameter Store: CloudFormation's default tier is Standard.
  const tiers = of('AWS::SSM::Parameter').map((p) => String(p.Properties.Tier ?? 'Standard'));
  if (tiers.length) {
    const counts = [...new Set(tiers)].sort().map((tier) => {
      if (PRICES.parameter[tier] === undefined) throw new Error(`no price for ${tier} parameters: add it to PRICES (bin/idle-cost.ts)`);
      return { tier, n: tiers.filter((t) => t === tier).length };
    });
    lines.push({
      row: 'Parameter Store',
      detail: counts.map(({ tier, n }) => `${n} ${tier.toLowerCase()} parameters`).join(', '),
      monthly: counts.reduce((sum, { tier, n }) => sum + n * PRICES.parameter[tier], 0),
    });
  }
  const alarms = of('AWS::CloudWatch::Alarm');
  const alarmMetrics = alarms.reduce((n, a) => {
    const metrics = a.Properties.Metrics as Array<{ MetricStat?: unknown }> | undefined;
    return n + (metrics ? metrics.filter((m) => m.MetricStat !== undefined).length : 1);
  }, 0);
  if (alarms.length)
    lines.push({ row: 'CloudWatch alarms', detail: `${alarms.length} alarms, ${alarmMetrics} metrics`, monthly: alarmMetrics * PRICES.alarmMetric });
  const dashboards = of('AWS::CloudWatch::Dashboard').length;
  if (dashboards) lines.push({ row: 'CloudWatch dashboard', detail: `${dashboards}`, monthly: dashboards * PRICES.dashboard });
  lines.push(...storageCost(resources), ...crawlCost(resources), ...checksCost(resources));
  return lines;
}

/** Rounds a day of a schedule's `rate(...)`, 0 for none or a disabled one. */
function perDayOf(schedule: Resource | undefined): number {
  if (schedule === undefined || schedule.Properties.State === 'DISABLED') return 0;
  const rate = String(schedule.Properties.ScheduleExpression ?? '').match(/^rate\((\d+) (minute|hour|day)s?\)$/);
  return rate ? (24 * 60) / (Number(rate[1]) * { minute: 1, hour: 60, day: 1440 }[rate[2] as 'minute' | 'hour' | 'day']) : 0;
}

/** The check rounds of a template: rounds a day, the function's settings. */
function checkRounds(resources: Resource[]) {
  const fn = resources.find((r) => r.Type === 'AWS::Lambda::Function' && r.Properties.Environment?.Variables?.POWERTOOLS_SERVICE_NAME === 'checks');
  const vars = (fn?.Properties.Environment?.Variables ?? {}) as Record<string, string>;
  return {
    perDay: perDayOf(resources.find((r) => r.Type === 'AWS::Scheduler::Schedule' && r.id.startsWith('Checks'))),
    memoryGb: Number(fn?.Properties.MemorySize ?? 512) / 1024,
    concurrency: Number(vars.CHECK_CONCURRENCY ?? 16),
    batchSize: Number(vars.CHECK_BATCH_SIZE ?? 100),
    retentionDays: Number(vars.CHECK_RETENTION_DAYS ?? 90),
    embedded: vars.SEARCH_BACKEND === 'embedded',
  };
}

/** The trust table at steady state: every hosted server's checks of the retention (changes are small beside them). */
const trustTableGb = (resources: Resource[]): number => {
  const c = checkRounds(resources);
  return (INPUTS.hostedServers * c.perDay * c.retentionDays * INPUTS.checkItemBytes) / GB;
};

const tableSizeGb = (logicalId: string, trustGb = 0): number =>
  logicalId.startsWith('DataTrustTable')
    ? trustGb
    : logicalId.startsWith('DataCatalogTable')
      ? (INPUTS.catalogServers * INPUTS.catalogItemBytes) / GB
      : logicalId.startsWith('CrawlerStateTable')
        ? (INPUTS.catalogServers * INPUTS.stateItemBytes) / GB
        : logicalId.startsWith('DataRateLimitTable')
          ? 0
          : INPUTS.userTablesGb / 4;

/** The GitHub token secret, point-in-time recovery and AWS Backup's recovery points, from the inputs' sizes. */
function storageCost(resources: Resource[]): CostLine[] {
  const lines: CostLine[] = [];
  const fns = resources.filter((r) => r.Type === 'AWS::Lambda::Function');
  if (fns.some((f) => JSON.stringify(f.Properties).includes('GITHUB_TOKEN_SECRET_ARN')))
    lines.push({ row: 'GitHub token secret', detail: '1 secret (githubTokenSecretName)', monthly: PRICES.secret });
  const tables = resources.filter((r) => r.Type === 'AWS::DynamoDB::Table');
  const pitr = tables.filter((t) => JSON.stringify(t.Properties.PointInTimeRecoverySpecification ?? {}).includes('"PointInTimeRecoveryEnabled":true'));
  const trustGb = trustTableGb(resources);
  const pitrGb = pitr.reduce((n, t) => n + tableSizeGb(t.id, trustGb), 0);
  if (pitr.length) lines.push({ row: 'Point-in-time recovery', detail: `${pitr.length} tables, ${pitrGb.toFixed(2)} GB`, monthly: pitrGb * PRICES.pitrGb });
  const selections = resources.filter((r) => r.Type === 'AWS::Backup::BackupSelection');
  const selected = JSON.stringify(selections.map((s) => s.Properties));
  const backedUp = tables.filter((t) => selected.includes(`"${t.id}"`));
  const bucket = resources.some((r) => r.Type === 'AWS::S3::Bucket' && r.id.startsWith('MemoryMemoryBucket') && selected.includes(`"${r.id}"`));
  if (backedUp.length) {
    const gb = backedUp.reduce((n, t) => n + tableSizeGb(t.id), 0) * INPUTS.recoveryPoints;
    lines.push({
      row: 'Backup storage',
      detail: `${INPUTS.recoveryPoints} recovery points × ${backedUp.length} tables (${gb.toFixed(1)} GB)${bucket ? `, memory bucket ${INPUTS.memoryBucketGb} GB` : ''}`,
      monthly: gb * PRICES.dynamoBackupGb + (bucket ? INPUTS.memoryBucketGb * PRICES.s3BackupGb : 0),
    });
  }
  return lines;
}

/** The scheduled crawl: Lambda time, state transitions, table writes, the snapshot scan, and the metrics it publishes. */
function crawlCost(resources: Resource[]): CostLine[] {
  const perDay = perDayOf(resources.find((r) => r.Type === 'AWS::Scheduler::Schedule' && r.id.startsWith('Crawler')));
  if (perDay === 0) return [];
  const crawls = perDay * DAYS_PER_MONTH;
  const crawler = resources.find((r) => r.Type === 'AWS::Lambda::Function' && r.Properties.Environment?.Variables?.POWERTOOLS_SERVICE_NAME === 'crawler');
  const memoryGb = Number(crawler?.Properties.MemorySize ?? 1024) / 1024;
  const embedded = crawler?.Properties.Environment?.Variables?.SEARCH_BACKEND === 'embedded';
  const n = INPUTS.serversPerCrawl;
  const lambda = n * INPUTS.secondsPerServer * memoryGb * PRICES.lambdaArmGbSecond;
  const transitions = ((INPUTS.transitionsPerRun + Math.ceil(n / INPUTS.serversPerUnit) * INPUTS.transitionsPerUnit) / 1000) * PRICES.stateTransitionThousand;
  const writes = ((n * INPUTS.writeUnitsPerServer) / 1e6) * PRICES.writeMillion;
  // The embedded mode's finalize rebuilds the snapshot from a Scan of the catalog (eventually consistent: half a unit per 4 KB).
  const scan = embedded ? ((INPUTS.catalogServers * Math.ceil(INPUTS.catalogItemBytes / 4096) * 0.5) / 1e6) * PRICES.readMillion : 0;
  const metrics = Object.keys(CRAWL_METRICS).length - (embedded ? 0 : 1);
  return [
    {
      row: 'The crawl',
      detail: `${perDay} a day × ${n} servers; ${metrics} metrics`,
      monthly: crawls * (lambda + transitions + writes + scan) + metrics * PRICES.customMetric,
    },
  ];
}

/**
 * The health check rounds: Lambda time (CHECK_CONCURRENCY checks share a function's wall time),
 * state transitions, the writes (a check item and the record per server), the reads (the server's
 * items and its 30 days of checks, eventually consistent), the trust table's storage, the
 * small-catalog mode's snapshot rebuild, and the metrics a round publishes.
 */
function checksCost(resources: Resource[]): CostLine[] {
  const c = checkRounds(resources);
  if (c.perDay === 0) return [];
  const rounds = c.perDay * DAYS_PER_MONTH;
  const n = INPUTS.hostedServers;
  const lambda = ((n * INPUTS.checkSeconds) / c.concurrency) * c.memoryGb * PRICES.lambdaArmGbSecond;
  const transitions = ((INPUTS.transitionsPerRound + Math.ceil(n / c.batchSize) * INPUTS.transitionsPerBatch) / 1000) * PRICES.stateTransitionThousand;
  const writes = ((n * INPUTS.checkWriteUnits) / 1e6) * PRICES.writeMillion;
  const historyUnits = Math.ceil((30 * c.perDay * INPUTS.checkItemBytes) / 4096) * 0.5;
  const reads = ((n * (Math.ceil(INPUTS.catalogItemBytes / 4096) * 0.5 + historyUnits)) / 1e6) * PRICES.readMillion;
  const scan = c.embedded ? ((INPUTS.catalogServers * Math.ceil(INPUTS.catalogItemBytes / 4096) * 0.5) / 1e6) * PRICES.readMillion : 0;
  const storage = trustTableGb(resources) * PRICES.dynamoGb;
  const metrics = 3 + (c.embedded ? 1 : 0);
  return [
    {
      row: 'Health checks',
      detail: `${c.perDay} rounds a day × ${n} hosted servers; ${trustTableGb(resources).toFixed(1)} GB of checks; ${metrics} metrics`,
      monthly: rounds * (lambda + transitions + writes + reads + scan) + storage + metrics * PRICES.customMetric,
    },
  ];
}

export const MODES: ReadonlyArray<{ name: string; props: Partial<DeploymentProps> }> = [
  { name: 'default (OpenSearch, 2 nodes)', props: {} },
  { name: 'single node', props: { search: { instanceCount: 1 } } },
  { name: 'embedded (no OpenSearch)', props: { searchEngine: 'embedded' } },
];

/** Synthesizes each mode (us-east-1: one stack holds everything; no bundling) and prices it. */
export function costByMode(): Array<{ name: string; lines: CostLine[]; total: number }> {
  return MODES.map((mode) => {
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
    // The prod stage's GitHub secret name: the secret is the operator's, and billed.
    const d = deployCatalog(app, {
      stage: 'prod',
      region: PRICES.region,
      sharpLayer: 'skip',
      githubTokenSecretName: STAGES.prod.githubTokenSecretName,
      ...mode.props,
    });
    const stacks = [d.main, d.edge, d.cdnAlarms].filter((s): s is Stack => s !== undefined);
    const resources = stacks.flatMap((s) =>
      Object.entries(Template.fromStack(s).toJSON().Resources as Record<string, Omit<Resource, 'id'>>).map(([id, r]) => ({ id, ...r })),
    );
    const lines = idleCost(resources);
    return { name: mode.name, lines, total: lines.reduce((t, l) => t + l.monthly, 0) };
  });
}

const usd = (v: number): string => `$${v.toFixed(2)}`;

/** The README's table: one column per mode, one row per billed item. */
export function costTable(modes = costByMode()): string {
  const rows = [...new Set(modes.flatMap((m) => m.lines.map((l) => l.row)))];
  const out = [
    `| idle, per month (${PRICES.region}, list prices of ${PRICES.asOf}) | ${modes.map((m) => m.name).join(' | ')} |`,
    `|---|${modes.map(() => '---').join('|')}|`,
  ];
  for (const row of rows) {
    const cells = modes.map((m) => {
      const line = m.lines.find((l) => l.row === row);
      return line ? `${usd(line.monthly)} (${line.detail})` : '—';
    });
    out.push(`| ${row} | ${cells.join(' | ')} |`);
  }
  out.push(`| **total** | ${modes.map((m) => `**${usd(m.total)}**`).join(' | ')} |`);
  return out.join('\n');
}

if (require.main === module) console.log(costTable());
