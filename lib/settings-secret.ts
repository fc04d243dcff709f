import { ArnFormat, Names, SecretValue, Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import type { Construct } from 'constructs';
import { acknowledge, nagFlatten } from './nag';

/**
 * A function's settings that depend on the distribution (audience, public URL, Cognito client ids)
 * in a secret of `scope` (id `Settings`), which the function reads at init and again every few
 * minutes. By default PUBLIC_URL is the distribution's own domain and the distribution's origin is
 * the function's URL: with the settings in its environment, function → distribution → function URL
 * → function would be a dependency cycle. So the function and its policy name the secret by a fixed
 * name, never by reference. CloudFormation deletes such a secret without a recovery window, so the
 * name can be reused at once. Used by the MCP function and the git remote.
 */
export interface DistributionSettings {
  readonly secret: secretsmanager.Secret;
  /** The fixed name the function reads (its `*_SETTINGS_SECRET` variable). */
  readonly name: string;
  /** Lets `role` read the secret by its name. */
  grantRead(role: iam.Role): void;
}

export function distributionSettings(scope: Construct, description: string, values: Record<string, string>): DistributionSettings {
  const stack = Stack.of(scope);
  const name = `${stack.stackName}/${Names.uniqueId(scope)}/settings`;
  const secret = new secretsmanager.Secret(scope, 'Settings', {
    secretName: name,
    description,
    secretObjectValue: Object.fromEntries(Object.entries(values).map(([k, v]) => [k, SecretValue.unsafePlainText(v)])),
  });
  acknowledge(
    secret,
    'AwsSolutions-SMG4',
    'This secret holds deploy-time settings (audience, public URL, app client ids, table names) that are not credentials; nothing in it can be rotated, and each deployment rewrites it.',
  );
  const arn = stack.formatArn({ service: 'secretsmanager', resource: 'secret', resourceName: `${name}-??????`, arnFormat: ArnFormat.COLON_RESOURCE_NAME });
  return {
    secret,
    name,
    grantRead(role) {
      role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['secretsmanager:GetSecretValue'], resources: [arn] }));
      acknowledge(
        role,
        `AwsSolutions-IAM5[Resource::${nagFlatten(scope, arn)}]`,
        'Secrets Manager appends six random characters to a secret name in its ARN; the grant names this one settings secret by its fixed name (a reference would close a dependency cycle through the distribution), read-only.',
      );
    },
  };
}
