/**
 * Retention for the Lambda@Edge function's log groups in every region. Lambda@Edge writes its
 * logs in the region nearest to where it ran, creating the log group there on first use, without a
 * retention (logs kept forever). CloudFormation can only create the group in us-east-1, so this
 * function, run daily by a schedule (lib/edge-log-retention.ts), finds the group in each region and
 * sets the retention the stack was given. Idempotent: a group already at that retention is left.
 *
 * Configuration (set by CDK): `EDGE_LOG_GROUP` (the function's custom log group name, the same in
 * every region), `RETENTION_DAYS`, `REGIONS` (comma list), and `LOGS_ENDPOINT` for tests only.
 */
import { CloudWatchLogsClient, DescribeLogGroupsCommand, PutRetentionPolicyCommand, type CloudWatchLogsClientConfig } from '@aws-sdk/client-cloudwatch-logs';
import { mapLimit } from '../shared/concurrency';
import { envInt, envString } from '../shared/env';
import { logger } from '../shared/logger';
import { traced } from '../shared/observability/tracing';

export interface RetentionOutcome {
  region: string;
  /** `set`: retention changed; `kept`: already right; `absent`: no group there yet; `failed`: see `error`. */
  result: 'set' | 'kept' | 'absent' | 'failed';
  previous?: number;
  error?: string;
}

export interface RetentionSweep {
  logGroupName: string;
  retentionDays: number;
  regions: string[];
  /** A client per region (tests point it at a fake). */
  client(region: string): Pick<CloudWatchLogsClient, 'send'>;
}

/** Sets the retention of one log group in each region where it exists. One failing region does not stop the others. */
export async function sweepRetention(s: RetentionSweep): Promise<RetentionOutcome[]> {
  return mapLimit(s.regions, 4, async (region): Promise<RetentionOutcome> => {
    try {
      const client = s.client(region);
      const out = await client.send(new DescribeLogGroupsCommand({ logGroupNamePrefix: s.logGroupName, limit: 5 }));
      const group = out.logGroups?.find((g) => g.logGroupName === s.logGroupName);
      if (!group) return { region, result: 'absent' };
      if (group.retentionInDays === s.retentionDays) return { region, result: 'kept', previous: group.retentionInDays };
      await client.send(new PutRetentionPolicyCommand({ logGroupName: s.logGroupName, retentionInDays: s.retentionDays }));
      return { region, result: 'set', ...(group.retentionInDays !== undefined && { previous: group.retentionInDays }) };
    } catch (err) {
      return { region, result: 'failed', error: err instanceof Error ? `${err.name}: ${err.message}` : String(err) };
    }
  });
}

function sweepFromEnv(env: NodeJS.ProcessEnv = process.env): RetentionSweep {
  const logGroupName = envString(env, 'EDGE_LOG_GROUP');
  if (!logGroupName) throw new Error('EDGE_LOG_GROUP is required');
  const regions = (envString(env, 'REGIONS') ?? '')
    .split(',')
    .map((r) => r.trim())
    .filter(Boolean);
  const endpoint = envString(env, 'LOGS_ENDPOINT');
  const clients = new Map<string, CloudWatchLogsClient>();
  return {
    logGroupName,
    retentionDays: envInt(env, 'RETENTION_DAYS', 30, { min: 1 }),
    regions,
    client: (region) => {
      let c = clients.get(region);
      if (!c) {
        const config: CloudWatchLogsClientConfig = {
          region,
          maxAttempts: 3,
          ...(endpoint && { endpoint, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }),
        };
        c = traced(new CloudWatchLogsClient(config));
        clients.set(region, c);
      }
      return c;
    },
  };
}

/** The scheduled entry: fails (so the schedule's retries and the function's error alarm see it) when any region failed. */
export async function handler(): Promise<{ outcomes: RetentionOutcome[] }> {
  const sweep = sweepFromEnv();
  const outcomes = await sweepRetention(sweep);
  logger.info('edge log retention', { logGroup: sweep.logGroupName, retentionDays: sweep.retentionDays, outcomes });
  const failed = outcomes.filter((o) => o.result === 'failed');
  if (failed.length > 0) throw new Error(`could not set the retention in ${failed.map((f) => `${f.region} (${f.error})`).join(', ')}`);
  return { outcomes };
}
