import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type { Construct } from 'constructs';

/**
 * An alarm that fires when `metric` reaches 1 in one period (a failed execution, a message in a
 * dead-letter queue): the shape of every "this should never happen" alarm; no data is fine.
 */
export function whenAny(scope: Construct, id: string, alarmDescription: string, metric: cloudwatch.IMetric): cloudwatch.Alarm {
  return new cloudwatch.Alarm(scope, id, {
    alarmDescription,
    metric,
    threshold: 1,
    evaluationPeriods: 1,
    comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
  });
}
