import { createHash } from 'node:crypto';
import { CfnResource, type IAspect, Names } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';

/**
 * Names of a deployment (README, "Deployment": stages). A stage (`-c stage=<name>`, default `prod`)
 * prefixes every stack id, and every name that is unique per account rather than per region
 * carries the stage and the deployment's home region, so two stages, or one stage in two regions,
 * deploy side by side in one account.
 */

/** Lower-case letters, digits and hyphens, starting with a letter: usable in every name it prefixes. */
export const STAGE_PATTERN = /^[a-z][a-z0-9-]{0,19}$/;

export function checkStage(stage: string): string {
  if (!STAGE_PATTERN.test(stage)) throw new Error(`stage must be 1-20 lower-case letters, digits or hyphens, starting with a letter: "${stage}"`);
  return stage;
}

/** The stacks of a deployment: the main one in its region, and (outside us-east-1) the two us-east-1 ones CloudFront needs. */
export const stackIds = (stage: string, region: string) => ({
  main: `${stage}-McpCatalog`,
  /** us-east-1, deployed before the main stack: the Lambda@Edge function and the WAF web ACL. */
  edge: `${stage}-McpCatalog-edge-${region}`,
  /** us-east-1, deployed after the main stack: CloudFront's alarms (its metrics exist only there). */
  cdnAlarms: `${stage}-McpCatalog-cdn-alarms-${region}`,
});

/**
 * `text` cut to `max` characters; when it must be cut, the end is replaced by a hash of the whole,
 * so two long names that differ only at the end stay different.
 */
export function fitName(text: string, max: number): string {
  if (text.length <= max) return text;
  const hash = createHash('sha256').update(text).digest('hex').slice(0, 8);
  return `${text.slice(0, max - 9)}-${hash}`;
}

/**
 * CloudFormation resource types whose name is unique per account (CloudFront and WAF for CloudFront
 * are global services), with where the name sits and how long it may be. CDK derives a default from
 * the construct path, which holds the stage (the stack id) but not the region. (Dashboards are
 * account-wide too; the one dashboard is named `<stage>-mcp-catalog-<region>` by `Monitoring`.)
 */
export const ACCOUNT_GLOBAL_NAMES: Readonly<Record<string, { path: string[]; max: number }>> = {
  'AWS::CloudFront::CachePolicy': { path: ['CachePolicyConfig', 'Name'], max: 128 },
  'AWS::CloudFront::OriginRequestPolicy': { path: ['OriginRequestPolicyConfig', 'Name'], max: 128 },
  'AWS::CloudFront::ResponseHeadersPolicy': { path: ['ResponseHeadersPolicyConfig', 'Name'], max: 128 },
  'AWS::CloudFront::OriginAccessControl': { path: ['OriginAccessControlConfig', 'Name'], max: 64 },
  'AWS::CloudFront::Function': { path: ['Name'], max: 64 },
  'AWS::CloudFront::KeyValueStore': { path: ['Name'], max: 64 },
  'AWS::WAFv2::WebACL': { path: ['Name'], max: 128 },
};

/**
 * Gives every account-global name in a stack the form `<stage>-<home region>-<construct path id>`
 * (the construct path starts with the stage-prefixed stack id): unique per stage and home region
 * whatever construct added the resource, this one or a behaviour another construct adds later.
 * Deterministic, so a name changes only when its construct moves.
 */
export class AccountGlobalNames implements IAspect {
  constructor(
    private readonly stage: string,
    /** The deployment's home region (the main stack's), also for its us-east-1 stacks. */
    private readonly homeRegion: string,
  ) {}

  visit(node: IConstruct): void {
    if (!CfnResource.isCfnResource(node)) return;
    const cfn = node;
    const spec = ACCOUNT_GLOBAL_NAMES[cfn.cfnResourceType];
    if (!spec) return;
    const scope = cfn.node.scope ?? cfn;
    const name = fitName(`${this.stage}-${this.homeRegion}-${Names.uniqueId(scope).replace(/[^A-Za-z0-9-]/g, '')}`, spec.max);
    cfn.addPropertyOverride(spec.path.join('.'), name);
  }
}
