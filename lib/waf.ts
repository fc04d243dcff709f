import * as wafv2 from 'aws-cdk-lib/aws-wafv2';
import { Construct } from 'constructs';

/** The edge firewall's knobs (README, "Deployment" → "The edge"). */
export interface WafSettings {
  /**
   * Requests per client IP in any 5-minute window before the IP is blocked (429) until it slows
   * down: a flood stops at the edge instead of costing Lambda invocations. Above the application's
   * own limits (30 requests per second per IP anonymous = 9,000 in 5 minutes), which stay the
   * precise ones.
   * @default 15000
   */
  readonly ratePerIpPer5Minutes?: number;
  /**
   * Rules of the AWS managed groups to count instead of block, e.g. after a false positive (the
   * WAF's sampled requests and metrics name the rule). Added to the body rules that always count
   * (see `ALWAYS_COUNTED`).
   * @default - none
   */
  readonly countRules?: string[];
}

/**
 * Rules of the managed groups that inspect request bodies and only count: a note is markdown that
 * may hold HTML, scripts, file paths, URLs and log4j strings as its content (it is data, never
 * interpreted), and notes are up to 1 MiB where the common group blocks bodies over 8 KB. The
 * application validates every body itself.
 */
export const ALWAYS_COUNTED: Readonly<Record<string, string[]>> = {
  AWSManagedRulesCommonRuleSet: ['SizeRestrictions_BODY', 'CrossSiteScripting_BODY', 'GenericLFI_BODY', 'GenericRFI_BODY', 'EC2MetaDataSSRF_BODY'],
  AWSManagedRulesKnownBadInputsRuleSet: ['JavaDeserializationRCE_BODY', 'Log4JRCE_BODY'],
};

export interface EdgeWebAclProps extends WafSettings {
  /** Prefix of the metric names (CloudWatch, WAF namespace). */
  readonly metricPrefix: string;
}

/**
 * The WAF web ACL of the distribution (scope CLOUDFRONT, so it lives in us-east-1): a rate-based
 * rule per IP, then AWS's common and known-bad-inputs managed groups. Its name is account-global
 * (`AccountGlobalNames` gives it the stage and region).
 */
export class EdgeWebAcl extends Construct {
  readonly webAcl: wafv2.CfnWebACL;
  readonly ratePerIpPer5Minutes: number;

  constructor(scope: Construct, id: string, props: EdgeWebAclProps) {
    super(scope, id);
    const rate = props.ratePerIpPer5Minutes ?? 15_000;
    if (!Number.isInteger(rate) || rate < 10 || rate > 2_000_000_000) throw new Error(`waf.ratePerIpPer5Minutes must be a whole number from 10, got ${rate}`);
    this.ratePerIpPer5Minutes = rate;
    const visibility = (name: string): wafv2.CfnWebACL.VisibilityConfigProperty => ({
      cloudWatchMetricsEnabled: true,
      sampledRequestsEnabled: true,
      metricName: `${props.metricPrefix}-${name}`,
    });
    const managed = (name: string, priority: number): wafv2.CfnWebACL.RuleProperty => {
      const counted = [...(ALWAYS_COUNTED[name] ?? []), ...(props.countRules ?? []).filter((r) => !(ALWAYS_COUNTED[name] ?? []).includes(r))];
      return {
        name,
        priority,
        overrideAction: { none: {} },
        statement: {
          managedRuleGroupStatement: {
            vendorName: 'AWS',
            name,
            ruleActionOverrides: counted.map((r) => ({ name: r, actionToUse: { count: {} } })),
          },
        },
        visibilityConfig: visibility(name),
      };
    };

    this.webAcl = new wafv2.CfnWebACL(this, 'WebAcl', {
      scope: 'CLOUDFRONT',
      description: 'MCP catalog edge: rate limit per IP, AWS common and known-bad-inputs rules',
      defaultAction: { allow: {} },
      customResponseBodies: {
        rateLimited: {
          contentType: 'APPLICATION_JSON',
          content: JSON.stringify({ error: { code: 'RATE_LIMITED', message: 'Too many requests from this address; slow down and retry in a few minutes' } }),
        },
      },
      rules: [
        {
          name: 'RatePerIp',
          priority: 0,
          action: {
            block: { customResponse: { responseCode: 429, customResponseBodyKey: 'rateLimited', responseHeaders: [{ name: 'retry-after', value: '300' }] } },
          },
          statement: { rateBasedStatement: { limit: rate, aggregateKeyType: 'IP', evaluationWindowSec: 300 } },
          visibilityConfig: visibility('RatePerIp'),
        },
        managed('AWSManagedRulesCommonRuleSet', 1),
        managed('AWSManagedRulesKnownBadInputsRuleSet', 2),
      ],
      visibilityConfig: visibility('WebAcl'),
    });
  }

  get arn(): string {
    return this.webAcl.attrArn;
  }
}
