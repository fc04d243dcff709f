import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import { Duration } from 'aws-cdk-lib';
import { EVENT_METRICS } from '../lambdas/shared/observability/metric-names';
import type { Stack } from 'aws-cdk-lib';
import type { CatalogApi } from './catalog-api';
import type { CatalogChecks } from './catalog-checks';
import type { CatalogCrawler } from './catalog-crawler';
import type { CatalogData } from './catalog-data';
import type { CatalogStackProps } from './catalog-stack-props';
import type { Edge } from './edge';
import type { EdgeLogRetention } from './edge-log-retention';
import type { Identity } from './identity';
import type { MemoryApi } from './memory-api';
import type { MemoryGit } from './memory-git';
import type { MemoryMcp } from './memory-mcp';
import type { Monitoring } from './monitoring';
import { watchSearchDomain } from './monitoring-search';
import type { OAuthFront } from './oauth-front';
import type { Site } from './site';

/** What is watched: the parts of a `CatalogStack`. */
export interface WatchedDeployment extends Stack {
  readonly monitoring: Monitoring;
  readonly data: CatalogData;
  readonly api: CatalogApi;
  readonly auth: Identity;
  readonly oauth: OAuthFront;
  readonly memory: MemoryApi;
  readonly mcp: MemoryMcp;
  readonly memoryGit: MemoryGit;
  readonly site: Site;
  readonly org: OrgRegistry;
  readonly crawler: CatalogCrawler;
  readonly checks: CatalogChecks;
  readonly edge: Edge;
  readonly edgeLogRetention: EdgeLogRetention;
}
import { acknowledge } from './nag';
import type { OrgRegistry } from './org-registry';

/**
 * Every failure path of the deployment into the alarm topic, and the dashboard: the HTTP API (5xx
 * rate, p99), every function (errors, throttles), the MCP function URL (5xx rate), every table
 * (throttles, system errors), the search domain (health) or snapshot loads, the crawler (failed
 * runs, dead letters, staleness). CloudFront's alarm is here when the stack is in us-east-1, else
 * in the deployment's us-east-1 alarms stack (lib/deployment.ts); its graphs are here either way.
 */
export function watchDeployment(stack: WatchedDeployment, props: CatalogStackProps): void {
  const m = stack.monitoring;
  m.watchHttpApi('Api', stack.api.httpApi);
  m.watchFunction('CatalogFunction', stack.api.fn);
  m.watchFunction('FavoritesFunction', stack.api.favoritesFn);
  m.watchFunction('OrgFunction', stack.org.fn);
  m.watchFunction('OAuthFunction', stack.oauth.fn);
  m.watchFunction('MemoryFunction', stack.memory.fn);
  m.watchFunction('McpFunction', stack.mcp.fn);
  m.watchFunction('CrawlerFunction', stack.crawler.fn);
  m.watchFunction('ChecksFunction', stack.checks.fn);
  m.watchFunction('MemoryGitFunction', stack.memoryGit.fn);
  m.watchFunction('SiteFunction', stack.site.fn);
  m.watchFunctionUrl('Mcp', stack.mcp.fn);
  m.watchFunctionUrl('MemoryGit', stack.memoryGit.fn);

  // Each table with the operations its adapters make (the grants in lib/ say the same).
  const op = dynamodb.Operation;
  const tables: Array<[string, dynamodb.ITable, dynamodb.Operation[]]> = [
    ['CatalogTable', stack.data.catalogTable, [op.GET_ITEM, op.QUERY, op.BATCH_WRITE_ITEM, op.SCAN]],
    ['TrustTable', stack.data.trustTable, [op.QUERY, op.BATCH_WRITE_ITEM]],
    ['RateLimitTable', stack.data.rateLimitTable, [op.UPDATE_ITEM, op.PUT_ITEM, op.GET_ITEM]],
    ['TokenTable', stack.auth.tokenTable, [op.GET_ITEM, op.BATCH_GET_ITEM, op.PUT_ITEM, op.UPDATE_ITEM, op.TRANSACT_WRITE_ITEMS]],
    ['ClientTable', stack.auth.clientTable, [op.GET_ITEM, op.PUT_ITEM]],
    ['FavoritesTable', stack.auth.favoritesTable, [op.QUERY, op.GET_ITEM, op.TRANSACT_WRITE_ITEMS]],
    ['MemoryTable', stack.memory.table, [op.GET_ITEM, op.QUERY, op.UPDATE_ITEM, op.TRANSACT_WRITE_ITEMS]],
    [
      'CrawlStateTable',
      stack.crawler.stateTable,
      [op.GET_ITEM, op.BATCH_GET_ITEM, op.QUERY, op.SCAN, op.PUT_ITEM, op.UPDATE_ITEM, op.BATCH_WRITE_ITEM, op.TRANSACT_WRITE_ITEMS],
    ],
  ];
  for (const [name, table, operations] of tables) m.watchTable(name, table, operations);

  if (stack.data.searchDomain && stack.data.searchDomainSize) {
    watchSearchDomain(m, stack.data.searchDomain, stack.data.searchDomainSize);
  } else {
    m.alarm('SearchSnapshotLoadFailed', {
      alarmDescription:
        'A catalog instance could not load a new search snapshot generation and keeps serving the previous one (see the catalog function logs); `npm run reindex` writes a fresh one',
      metric: m.appMetric(EVENT_METRICS.snapshotLoadFailures, 'catalog', { statistic: 'Sum', period: Duration.minutes(5) }),
      threshold: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
  }

  for (const alarm of [stack.crawler.failedRunsAlarm, stack.crawler.deadLetterAlarm, stack.crawler.timedOutRunsAlarm]) if (alarm) m.adopt(alarm);
  m.watchCrawlFreshness(props.crawlSchedule ?? Duration.hours(6), stack.crawler.stateMachine);
  for (const alarm of [stack.checks.failedRoundsAlarm, stack.checks.timedOutRoundsAlarm]) m.adopt(alarm);

  if (stack.region === 'us-east-1') {
    m.watchDistribution(stack.edge.distribution);
    m.watchFunction('EdgeLogRetentionFunction', stack.edgeLogRetention.fn);
  }
  m.showDistribution(stack.edge.distribution);
  m.showApplication(['catalog', 'favorites', 'oauth', 'memory', 'mcp']);

  acknowledge(
    stack.api.stage,
    'Serverless-APIGWXrayEnabled',
    'HTTP APIs (API Gateway v2) have no X-Ray tracing; every function behind it is traced (active tracing, AWS SDK calls as subsegments), which is where the time goes.',
  );
}
