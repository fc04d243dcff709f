import type { PolicyViolation } from 'aws-cdk-lib';
import { AwsSolutionsChecks, ServerlessChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';

/**
 * The findings `cdk synth` fails on: cdk-nag's AwsSolutions and Serverless packs, as bin/app.ts
 * adds them, honouring every `Validations.acknowledge()` (see lib/nag.ts).
 */
export function nagViolations(scope: IConstruct): PolicyViolation[] {
  return [...new AwsSolutionsChecks().validateScope(scope).violations, ...new ServerlessChecks().validateScope(scope).violations];
}
