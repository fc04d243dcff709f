import { Names, Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as ssm from 'aws-cdk-lib/aws-ssm';
import type { Construct } from 'constructs';

/**
 * A function's settings that depend on the distribution (audience, public URL, Cognito client ids,
 * table names) in a Parameter Store String parameter of `scope` (id `Settings`), a JSON object of
 * environment variables the function reads at init and again every few minutes. By default
 * PUBLIC_URL is the distribution's own domain and the distribution's origin is the function's URL:
 * with the settings in its environment, function → distribution → function URL → function would be
 * a dependency cycle. So the function and its policy name the parameter by a fixed name, never by
 * reference. Nothing in it is a credential, so it is a standard parameter (free) rather than a
 * secret ($0.40 a month). Used by the MCP function and the git remote.
 */
export interface DistributionSettings {
  readonly parameter: ssm.StringParameter;
  /** The fixed name the function reads (its `*_SETTINGS_PARAMETER` variable). */
  readonly name: string;
  /** Lets `role` read exactly this parameter, by its name. */
  grantRead(role: iam.Role): void;
}

/** A standard parameter holds up to 4 KB: the settings are a few hundred bytes (test/infra/first-deploy.test.ts bounds them). */
export function distributionSettings(scope: Construct, description: string, values: Record<string, string>): DistributionSettings {
  const stack = Stack.of(scope);
  // A name with a path must start with '/'; its ARN is `…:parameter/<name without the '/'>`.
  const path = `${stack.stackName}/${Names.uniqueId(scope)}/settings`;
  const parameter = new ssm.StringParameter(scope, 'Settings', {
    parameterName: `/${path}`,
    description,
    stringValue: stack.toJsonString(values),
    tier: ssm.ParameterTier.STANDARD,
  });
  const arn = stack.formatArn({ service: 'ssm', resource: 'parameter', resourceName: path });
  return {
    parameter,
    name: `/${path}`,
    grantRead(role) {
      role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['ssm:GetParameter'], resources: [arn] }));
    },
  };
}
