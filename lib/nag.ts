import { CfnElement, Stack, Validations } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';

/**
 * Acknowledges one cdk-nag finding (the AwsSolutions or the Serverless pack) on a construct (and
 * everything under it). cdk-nag 3.x reads acknowledgements from CDK's own `Validations` metadata;
 * each finding of a multi-finding rule (`AwsSolutions-IAM5[Resource::…]`) is acknowledged on its
 * own, never a whole rule at once.
 *
 * The reason is part of the audit trail: it says why the finding does not apply or what
 * compensates for it, specifically enough that a reviewer can disagree with it.
 */
export function acknowledge(scope: IConstruct, id: string, reason: string): void {
  if (!/^(AwsSolutions-[A-Z]+[0-9]+|Serverless-[A-Za-z0-9]+)(\[.+\])?$/.test(id)) throw new Error(`not a cdk-nag AwsSolutions or Serverless rule id: ${id}`);
  if (reason.trim().length < 40) throw new Error(`acknowledgement of ${id} needs a specific reason, got "${reason}"`);
  Validations.of(scope).acknowledge({ id, reason });
}

/**
 * The flat form cdk-nag gives a CloudFormation reference in a finding id: `<LogicalId>` for a Ref,
 * `<LogicalId.Attr>` for a GetAtt. Logical ids depend only on construct paths, so this is stable.
 */
export function nagRef(element: IConstruct, attribute?: string): string {
  const cfn = CfnElement.isCfnElement(element) ? element : element.node.defaultChild;
  if (!cfn || !CfnElement.isCfnElement(cfn)) throw new Error(`${element.node.path} has no CloudFormation element`);
  const logicalId = Stack.of(cfn).resolve(cfn.logicalId) as string;
  return attribute ? `<${logicalId}.${attribute}>` : `<${logicalId}>`;
}

/**
 * A token (an ARN built with `formatArn`, an attribute) as it appears in a cdk-nag finding id:
 * resolved in the stack, then flattened the way cdk-nag flattens references.
 */
export function nagFlatten(scope: IConstruct, value: string): string {
  return flatten(Stack.of(scope).resolve(value));
}

function flatten(node: unknown): string {
  if (node === undefined) return '';
  if (typeof node === 'string') return node.replace(/\$\{/g, '<').replace(/\}/g, '>');
  if (node !== null && typeof node === 'object') {
    const o = node as Record<string, unknown>;
    if (Array.isArray(o['Fn::Join'])) {
      const [delimiter, items] = o['Fn::Join'] as [string, unknown[]];
      return items.map(flatten).join(delimiter);
    }
    if (o['Fn::Sub'] !== undefined) return flatten(o['Fn::Sub']);
    if (Array.isArray(o['Fn::GetAtt'])) {
      const [resource, attribute] = o['Fn::GetAtt'] as [unknown, unknown];
      return `<${flatten(resource)}.${flatten(attribute)}>`;
    }
    if (o['Fn::ImportValue'] !== undefined) return flatten(o['Fn::ImportValue']);
    if (o.Ref !== undefined) return `<${flatten(o.Ref)}>`;
  }
  return JSON.stringify(node);
}
