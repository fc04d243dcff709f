/**
 * The OpenSearch domain's alarms and dashboard rows (the search engine of the `opensearch` mode;
 * the embedded engine has no domain to watch).
 */
import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as opensearch from 'aws-cdk-lib/aws-opensearchservice';
import { FIVE_MINUTES, type Monitoring } from './monitoring';

/** Health of the OpenSearch domain: red, yellow, storage, JVM pressure, CPU credits, blocked writes, snapshots. */
export function watchSearchDomain(
  monitoring: Monitoring,
  domain: opensearch.IDomain,
  opts: { volumeGiB: number; burstable: boolean; dataNodes: number },
): cloudwatch.Alarm[] {
  const m = (metric: cloudwatch.Metric) => metric.with({ period: Duration.minutes(1) });
  const alarms = [
    monitoring.alarm('SearchClusterRed', {
      alarmDescription:
        'OpenSearch cluster is red: a primary shard is unassigned; searches miss results and indexing fails. `npm run reindex` rebuilds the index from DynamoDB',
      metric: m(domain.metricClusterStatusRed({ statistic: 'Maximum' })),
      threshold: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: cloudwatch.TreatMissingData.BREACHING,
    }),
    monitoring.alarm('SearchClusterYellow', {
      alarmDescription: 'OpenSearch cluster is yellow for 10 minutes: a replica shard is unassigned (a node is down or being replaced)',
      metric: m(domain.metricClusterStatusYellow({ statistic: 'Maximum' })),
      threshold: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 10,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    }),
    monitoring.alarm('SearchFreeStorage', {
      alarmDescription: `OpenSearch: a node has less than ${monitoring.settings.freeStoragePercent}% of its ${opts.volumeGiB} GiB volume free`,
      metric: m(domain.metricFreeStorageSpace({ statistic: 'Minimum' })),
      // FreeStorageSpace is in MiB.
      threshold: Math.floor((opts.volumeGiB * 1024 * monitoring.settings.freeStoragePercent) / 100),
      comparisonOperator: cloudwatch.ComparisonOperator.LESS_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      // A gap in this metric says nothing about storage (the red alarm speaks for a silent domain).
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    }),
    monitoring.alarm('SearchJvmMemoryPressure', {
      alarmDescription: `OpenSearch: JVM memory pressure above ${monitoring.settings.jvmMemoryPressurePercent}% for 15 minutes (the node risks out-of-memory errors; consider a larger instance)`,
      metric: domain.metricJVMMemoryPressure({ statistic: 'Maximum', period: FIVE_MINUTES }),
      threshold: monitoring.settings.jvmMemoryPressurePercent,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 3,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    }),
    monitoring.alarm('SearchWritesBlocked', {
      alarmDescription: 'OpenSearch is blocking writes (storage or memory pressure): the crawler cannot index',
      metric: domain.metricClusterIndexWritesBlocked({ statistic: 'Maximum', period: FIVE_MINUTES }),
      threshold: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    }),
    monitoring.alarm('SearchSnapshotFailed', {
      alarmDescription: 'OpenSearch: an automated snapshot failed',
      metric: domain.metricAutomatedSnapshotFailure({ statistic: 'Maximum', period: FIVE_MINUTES }),
      threshold: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    }),
  ];
  if (opts.burstable) {
    alarms.push(
      monitoring.alarm('SearchCpuCredits', {
        alarmDescription: `OpenSearch: a burstable node has fewer than ${monitoring.settings.cpuCreditBalance} CPU credits left; it will be throttled to its baseline`,
        metric: domain.metric('CPUCreditBalance', { statistic: 'Minimum', period: FIVE_MINUTES }),
        threshold: monitoring.settings.cpuCreditBalance,
        comparisonOperator: cloudwatch.ComparisonOperator.LESS_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 3,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      }),
    );
  }
  monitoring.widgets(
    new cloudwatch.GraphWidget({
      title: 'OpenSearch: cluster status (red, yellow), nodes',
      left: [domain.metricClusterStatusRed({ statistic: 'Maximum' }), domain.metricClusterStatusYellow({ statistic: 'Maximum' })],
      right: [domain.metricNodes({ statistic: 'Minimum' })],
      width: 8,
    }),
    new cloudwatch.GraphWidget({
      title: 'OpenSearch: JVM pressure, CPU (%)',
      left: [domain.metricJVMMemoryPressure({ statistic: 'Maximum' }), domain.metricCPUUtilization({ statistic: 'Maximum' })],
      width: 8,
    }),
    new cloudwatch.GraphWidget({
      title: 'OpenSearch: free storage (MiB), search latency (ms)',
      left: [domain.metricFreeStorageSpace({ statistic: 'Minimum' })],
      right: [domain.metricSearchLatency({ statistic: 'p99' })],
      width: 8,
    }),
  );
  return alarms;
}
