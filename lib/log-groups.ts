import { CfnResource, type IAspect, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { CfnFunction } from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import type { IConstruct } from 'constructs';

/**
 * "Every log group with a retention": the functions of this app get their log group from
 * `appFunction`, but CDK's own helper functions (the custom-resource providers behind cross-region
 * references and the Lambda@Edge version reader) would log to `/aws/lambda/<name>`, created on
 * first use and kept forever. This aspect gives each of them a log group of its own with the
 * deployment's retention, named in its LoggingConfig. Their roles already may write any log group.
 */
export class LogGroupsWithRetention implements IAspect {
  constructor(private readonly retention: logs.RetentionDays) {}

  visit(node: IConstruct): void {
    if (!CfnResource.isCfnResource(node) || node.cfnResourceType !== 'AWS::Lambda::Function') return;
    // Functions built from CfnFunction (Function, NodejsFunction) say whether they have one.
    if (node instanceof CfnFunction) {
      const config = Stack.of(node).resolve(node.loggingConfig) as { logGroup?: unknown } | undefined;
      if (config?.logGroup !== undefined) return;
    }
    const scope = node.node.scope;
    if (!scope || scope.node.tryFindChild('LogsWithRetention')) return;
    const group = new logs.LogGroup(scope, 'LogsWithRetention', { retention: this.retention, removalPolicy: RemovalPolicy.DESTROY });
    node.addPropertyOverride('LoggingConfig.LogGroup', group.logGroupName);
  }
}
