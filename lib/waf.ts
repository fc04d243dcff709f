import { ArnFormat, RemovalPolicy, Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as logs from 'aws-cdk-lib/aws-logs';
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
  /**
   * Log every request the web ACL sees, not only those a rule blocked or counted. Every request is
   * a log line (about 1.5 KB; $0.50 per GB ingested): a million requests cost about $0.75.
   * @default false - only blocked and counted requests are logged
   */
  readonly logAllRequests?: boolean;
}

/**
 * Rules of the managed groups that inspect request bodies and only count, each with why (README,
 * "The edge" has the same table): a note is markdown that may hold HTML, scripts, file paths, URLs
 * and log4j strings as its content (data, never interpreted), and notes are up to 1 MiB where the
 * common group blocks bodies over 8 KB. The application validates every body itself. A counted
 * rule still shows in the WAF's metrics, sampled requests and logs.
 */
export const ALWAYS_COUNTED_REASONS: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  AWSManagedRulesCommonRuleSet: {
    SizeRestrictions_BODY: 'a note is up to 1 MiB and a git push up to 4 MiB; the rule blocks bodies over 8 KB',
    CrossSiteScripting_BODY: 'a note is markdown that may quote HTML and scripts as its content; pages escape it when they render it',
    GenericLFI_BODY: 'notes and git packs carry file paths such as ../ as data; nothing reads a file by a name from a body',
    GenericRFI_BODY: 'notes carry URLs as data; nothing fetches a URL from a body',
    EC2MetaDataSSRF_BODY: 'a note may mention the metadata address as text; nothing fetches an address from a body',
  },
  AWSManagedRulesKnownBadInputsRuleSet: {
    JavaDeserializationRCE_BODY: 'git packs and notes are arbitrary bytes and text; no Java runs behind the API',
    Log4JRCE_BODY: 'a note may quote a log4j string as text; no Java (and no log4j) runs behind the API',
  },
};

/** The counted body rules per group (the names of `ALWAYS_COUNTED_REASONS`). */
export const ALWAYS_COUNTED: Readonly<Record<string, string[]>> = Object.fromEntries(
  Object.entries(ALWAYS_COUNTED_REASONS).map(([group, rules]) => [group, Object.keys(rules)]),
);

export interface EdgeWebAclProps extends WafSettings {
  /** Prefix of the metric names (CloudWatch, WAF namespace) and of the log group (`aws-waf-logs-<prefix>`). */
  readonly metricPrefix: string;
  /** Retention of the WAF's log group. */
  readonly logRetention: logs.RetentionDays;
}

/**
 * The WAF web ACL of the distribution (scope CLOUDFRONT, so it lives in us-east-1): a rate-based
 * rule per IP, then AWS's common and known-bad-inputs managed groups. Its name is account-global
 * (`AccountGlobalNames` gives it the stage and region).
 */
export class EdgeWebAcl extends Construct {
  readonly webAcl: wafv2.CfnWebACL;
  /** The web ACL's log (`aws-waf-logs-<stage>-<home region>`). */
  logGroup!: logs.LogGroup;
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
    this.addLogging(props);
  }

  /**
   * The web ACL's log: CloudWatch Logs in this (us-east-1) stack, a group whose name WAF requires to
   * start with `aws-waf-logs-`, with the deployment's retention, the Authorization header redacted
   * (bearer tokens and git's Basic credentials never reach a log), and only the requests a rule
   * blocked or counted unless `logAllRequests`.
   */
  private addLogging(props: EdgeWebAclProps): void {
    const stack = Stack.of(this);
    this.logGroup = new logs.LogGroup(this, 'Logs', {
      logGroupName: `aws-waf-logs-${props.metricPrefix}`,
      retention: props.logRetention,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    // WAF delivers through CloudWatch Logs' log delivery, for this account's web ACLs only; written
    // here so WAF does not add a broader policy of its own at the first delivery.
    const policy = new logs.ResourcePolicy(this, 'LogsDelivery', {
      policyStatements: [
        new iam.PolicyStatement({
          principals: [new iam.ServicePrincipal('delivery.logs.amazonaws.com')],
          actions: ['logs:CreateLogStream', 'logs:PutLogEvents'],
          resources: [this.logGroup.logGroupArn],
          conditions: {
            StringEquals: { 'aws:SourceAccount': stack.account },
            ArnLike: { 'aws:SourceArn': stack.formatArn({ service: 'logs', resource: '*' }) },
          },
        }),
      ],
    });
    const logging = new wafv2.CfnLoggingConfiguration(this, 'Logging', {
      resourceArn: this.webAcl.attrArn,
      // WAF takes the group's ARN without the `:*` that the group's own Arn attribute ends with.
      logDestinationConfigs: [
        stack.formatArn({ service: 'logs', resource: 'log-group', resourceName: this.logGroup.logGroupName, arnFormat: ArnFormat.COLON_RESOURCE_NAME }),
      ],
      redactedFields: [{ singleHeader: { Name: 'authorization' } }],
      ...(!props.logAllRequests && {
        loggingFilter: {
          DefaultBehavior: 'DROP',
          Filters: [
            {
              Behavior: 'KEEP',
              Requirement: 'MEETS_ANY',
              Conditions: ['BLOCK', 'COUNT', 'EXCLUDED_AS_COUNT'].map((Action) => ({ ActionCondition: { Action } })),
            },
          ],
        },
      }),
    });
    logging.node.addDependency(policy);
  }

  get arn(): string {
    return this.webAcl.attrArn;
  }
}
