/**
 * The configuration of each stage, in one typed place: everything a deployment may set is a prop of
 * `DeploymentProps` (lib/deployment.ts → `CatalogStackProps`, each with its documented default),
 * and this file is where an operator sets them. `npx cdk deploy -c stage=<name>` picks the entry;
 * a stage not listed here deploys with every default (a developer's own stage, say).
 *
 * Region and account come from the CLI (README, "Deployment"); a stage may pin its region here.
 * Secrets never go here: the GitHub token is a Secrets Manager secret named by `githubTokenSecretName`.
 */
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { DeploymentProps } from '../lib/deployment';

export type StageConfig = Omit<DeploymentProps, 'stage' | 'region' | 'account'> & {
  /** Pins the stage to a region (otherwise CDK_DEPLOY_REGION, then the CLI's default region). */
  readonly region?: string;
  /** Pins the stage to an account (otherwise the CLI's). */
  readonly account?: string;
};

export const STAGES: Readonly<Record<string, StageConfig>> = {
  /**
   * Production: the defaults (OpenSearch, WAF, backups, RETAIN, termination protection, no reserved
   * concurrency until the account's limit allows it), plus what only an operator knows. Until
   * `alarms` names a subscriber, synth warns and `npm run preflight` fails (README, "First deploy").
   */
  prod: {
    brand: 'example',
    githubTokenSecretName: 'mcp-catalog/github-token',
    logRetention: RetentionDays.THREE_MONTHS,
    // reservedConcurrency: 'recommended', // once `npm run preflight` says the account's limit allows it
    alarms: {
      // emails: ['oncall@example.com'],
      // topicArn: 'arn:aws:sns:eu-west-1:123456789012:pager',
    },
    // domainNames: ['mcp.example.com'],
    // hostedZone: { hostedZoneId: 'Z0123456789ABCDEFGHIJ', zoneName: 'example.com' },
    // apiOriginDomain: { domainName: 'origin.mcp.example.com' },
    // cognitoEmail: { fromEmail: 'no-reply@mcp.example.com', fromName: 'MCP catalog' },
  },
  /**
   * A cheaper second stage: the embedded search engine (no OpenSearch domain), no backups, data
   * destroyed with the stack, shorter logs, no reserved concurrency (the default), alarms that go
   * to the topic only (subscribe by hand when you want them).
   */
  staging: {
    searchEngine: 'embedded',
    removalPolicy: RemovalPolicy.DESTROY,
    backup: false,
    logRetention: RetentionDays.TWO_WEEKS,
    alarms: { noSubscriberOnPurpose: true },
    crawlSchedule: Duration.hours(12),
    // Health checks of the hosted servers every 3 hours rather than every hour: a third of the cost, coarser uptime.
    checkSchedule: Duration.hours(3),
    githubTokenSecretName: 'mcp-catalog/github-token',
  },
};
