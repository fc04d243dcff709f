/**
 * `npm run cost`: the idle monthly cost of a deployment per search mode (the README's table),
 * computed from the synthesized templates: every resource that bills by the hour or the month
 * whether or not anyone calls it, priced with the list prices below. Everything else (Lambda, API
 * Gateway, DynamoDB on demand, CloudFront, S3 requests, Step Functions, SQS, SNS) bills per use and
 * costs nothing idle, besides storage of a few MB.
 */
import { App, type Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { deployCatalog, type DeploymentProps } from '../lib/deployment';

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
  /** CloudWatch, per standard-resolution alarm metric-month (a metric-math alarm pays for each metric it reads). */
  alarmMetric: 0.1,
  /** CloudWatch, per dashboard-month. */
  dashboard: 3,
} as const;

export interface CostLine {
  /** The table's row. */
  row: string;
  /** What of it the template has, e.g. `2 × t3.small.search`. */
  detail: string;
  monthly: number;
}

type Resource = { Type: string; Properties: Record<string, unknown> };

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
  const alarms = of('AWS::CloudWatch::Alarm');
  const alarmMetrics = alarms.reduce((n, a) => {
    const metrics = a.Properties.Metrics as Array<{ MetricStat?: unknown }> | undefined;
    return n + (metrics ? metrics.filter((m) => m.MetricStat !== undefined).length : 1);
  }, 0);
  if (alarms.length)
    lines.push({ row: 'CloudWatch alarms', detail: `${alarms.length} alarms, ${alarmMetrics} metrics`, monthly: alarmMetrics * PRICES.alarmMetric });
  const dashboards = of('AWS::CloudWatch::Dashboard').length;
  if (dashboards) lines.push({ row: 'CloudWatch dashboard', detail: `${dashboards}`, monthly: dashboards * PRICES.dashboard });
  return lines;
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
    const d = deployCatalog(app, { stage: 'prod', region: PRICES.region, sharpLayer: 'skip', ...mode.props });
    const stacks = [d.main, d.edge, d.cdnAlarms].filter((s): s is Stack => s !== undefined);
    const resources = stacks.flatMap((s) => Object.values(Template.fromStack(s).toJSON().Resources as Record<string, Resource>));
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
