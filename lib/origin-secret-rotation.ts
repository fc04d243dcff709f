import * as path from 'node:path';
import { Duration, Stack } from 'aws-cdk-lib';
import type * as cloudfront from 'aws-cdk-lib/aws-cloudfront';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import type * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import { ORIGIN_VERIFY_HEADER } from '../lambdas/shared/http/origin-guard';
import { appFunction } from './lambda-function';
import { acknowledge } from './nag';

export interface OriginSecretRotationProps {
  readonly secret: secretsmanager.Secret;
  readonly distribution: cloudfront.IDistribution;
  /** The distribution's Lambda@Edge version: updating a distribution that runs one needs read and replication rights on it. */
  readonly edgeFunctionVersion: lambda.IVersion;
  readonly every: Duration;
}

/**
 * Rotation of CloudFront's origin secret on a schedule, without downtime: Secrets Manager runs
 * lambdas/ops/origin-secret-rotation.ts, which writes the new value into the distribution's origin
 * headers while the functions admit the current and the pending value, and makes it current once
 * CloudFront has deployed it. README, "Updates".
 */
export class OriginSecretRotation extends Construct {
  readonly fn: NodejsFunction;

  constructor(scope: Construct, id: string, props: OriginSecretRotationProps) {
    super(scope, id);
    const stack = Stack.of(this);
    const { fn, role } = appFunction(this, 'Function', {
      description: "Rotates CloudFront's origin secret: the new value into the distribution's origin headers, then current",
      roleDescription: "Origin secret rotation: the secret's versions, and the distribution's configuration",
      entry: path.join(__dirname, '..', 'lambdas', 'ops', 'origin-secret-rotation.ts'),
      memorySize: 256,
      // testSecret waits for CloudFront's deployment (minutes); the step gives up at 13.
      timeout: Duration.minutes(15),
      serviceName: 'origin-secret-rotation',
      invokedBy: 'Secrets Manager rotation (each step synchronously; a failed step fails the rotation, alarmed, and the next one resumes)',
      environment: { DISTRIBUTION_ID: props.distribution.distributionId, ORIGIN_HEADER: ORIGIN_VERIFY_HEADER, DEPLOYED_WITHIN_SECONDS: '780' },
    });
    this.fn = fn;
    props.secret.grantRead(role);
    props.secret.grantWrite(role);
    role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['secretsmanager:UpdateSecretVersionStage'], resources: [props.secret.secretArn] }));
    role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['secretsmanager:GetRandomPassword'], resources: ['*'] }));
    const distributionArn = stack.formatArn({ service: 'cloudfront', region: '', resource: 'distribution', resourceName: props.distribution.distributionId });
    role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['cloudfront:GetDistribution', 'cloudfront:GetDistributionConfig', 'cloudfront:UpdateDistribution'],
        resources: [distributionArn],
      }),
    );
    role.addToPrincipalPolicy(
      new iam.PolicyStatement({ actions: ['lambda:GetFunction', 'lambda:EnableReplication*'], resources: [props.edgeFunctionVersion.functionArn] }),
    );
    acknowledge(
      role,
      'AwsSolutions-IAM5[Action::lambda:EnableReplication*]',
      'CloudFront requires lambda:EnableReplication (and its variants) from whoever updates a distribution that runs a Lambda@Edge function; the grant names that one function version.',
    );
    acknowledge(
      role,
      'AwsSolutions-IAM5[Resource::*]',
      'secretsmanager:GetRandomPassword (the new value) has no resource; the rotation reads and writes only this secret and updates only this distribution, both named.',
    );
    props.secret.addRotationSchedule('Rotation', { rotationLambda: fn, automaticallyAfter: props.every, rotateImmediatelyOnUpdate: false });
  }
}
