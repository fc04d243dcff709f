/**
 * `npm run preflight` and `npm run alarms:test` against a loopback fake of the AWS calls they make
 * (test/support/aws-fake.ts speaks Lambda's, CloudFormation's, CloudWatch's and SNS's protocols):
 * the real SDK clients, their real requests, pointed at the fake by `endpoint`. Preflight reads the
 * templates of a real offline synth (`-c reservedConcurrency=recommended`, eu-west-1).
 */
import { CloudFormationClient } from '@aws-sdk/client-cloudformation';
import { CloudWatchClient } from '@aws-sdk/client-cloudwatch';
import { LambdaClient } from '@aws-sdk/client-lambda';
import { SNSClient } from '@aws-sdk/client-sns';
import { testAlarmDelivery, verdict } from '../../bin/alarms-test';
import { contextFlags, type DeployTarget, reservedIn, synthTarget } from '../../bin/deploy-target';
import { type Finding, preflight } from '../../bin/preflight';
import { type AwsFake, emptyRegion, type FakeRegion, fakeClientConfig, startAwsFake } from '../support/aws-fake';

const TOOLKIT = { status: 'UPDATE_COMPLETE', outputs: { BootstrapVersion: '27' } };

let target: DeployTarget;

beforeAll(() => {
  const { context } = contextFlags(['-c', 'reservedConcurrency=recommended']);
  target = synthTarget(context, { CDK_DEPLOY_REGION: 'eu-west-1' });
}, 300_000);

async function withFake<T>(regions: Record<string, FakeRegion>, run: (fake: AwsFake) => Promise<T>): Promise<T> {
  const fake = await startAwsFake(regions);
  try {
    return await run(fake);
  } finally {
    await fake.close();
  }
}

const runPreflight = (fake: AwsFake, t: DeployTarget = target) =>
  preflight(t, (region) => ({
    lambda: new LambdaClient(fakeClientConfig(fake, region)),
    cloudformation: new CloudFormationClient(fakeClientConfig(fake, region)),
  }));

const failures = (f: Finding[]) => f.filter((x) => x.level === 'fail').map((x) => `${x.region ?? '-'} ${x.message}`);

describe('npm run preflight', () => {
  it('reads the stacks a deploy would create: 311 reserved in eu-west-1, 1 in us-east-1, and the unsubscribed alarms of prod', () => {
    expect(target.stacks.map((s) => [s.name, s.region, reservedIn(s.template)])).toEqual([
      ['prod-McpCatalog-edge-eu-west-1', 'us-east-1', 1],
      ['prod-McpCatalog', 'eu-west-1', 311],
      ['prod-McpCatalog-cdn-alarms-eu-west-1', 'us-east-1', 0],
    ]);
  });

  it("a new account: says that the reservations do not fit either region's limit, that us-east-1 is not bootstrapped, and that the alarms reach no one, each with its fix", async () => {
    const regions = {
      'eu-west-1': { ...emptyRegion(), lambda: { limit: 10, unreserved: 10 }, stacks: { CDKToolkit: TOOLKIT } },
      'us-east-1': { ...emptyRegion(), lambda: { limit: 10, unreserved: 10 } },
    };
    const findings = await withFake(regions, (fake) => runPreflight(fake));
    expect(failures(findings)).toEqual([
      expect.stringMatching(/^eu-west-1 Lambda concurrency limit 10, unreserved 10; the stacks reserve 311: .*--quota-code L-B99A9384 --desired-value 1000/),
      'us-east-1 no CDK bootstrap stack (CDKToolkit) here: run `npx cdk bootstrap aws://<account>/us-east-1`',
      expect.stringMatching(/^us-east-1 Lambda concurrency limit 10, unreserved 10; the stacks reserve 1: reserving 1 more would leave less than the 100/),
      expect.stringContaining("- The alarms of eu-west-1 notify a topic nobody is subscribed to: set alarms.emails or alarms.topicArn of stage 'prod'"),
    ]);
    expect(findings.filter((f) => f.level === 'warn').map((f) => f.region)).toEqual(['eu-west-1', 'us-east-1']);
  });

  it("an account that fits, a redeploy counting the deployed stacks' own reservations, an old bootstrap stack and a stack left in ROLLBACK_COMPLETE", async () => {
    const deployedMain = target.stacks[1].template;
    const regions = {
      'eu-west-1': {
        ...emptyRegion(),
        // 500 with the stage's own 311 already reserved: 189 unreserved fits a redeploy, not a second 311.
        lambda: { limit: 500, unreserved: 189 },
        stacks: { CDKToolkit: TOOLKIT, 'prod-McpCatalog': { status: 'UPDATE_COMPLETE', template: deployedMain } },
      },
      'us-east-1': {
        ...emptyRegion(),
        lambda: { limit: 1000, unreserved: 1000 },
        stacks: {
          CDKToolkit: { status: 'CREATE_COMPLETE', outputs: { BootstrapVersion: '5' } },
          'prod-McpCatalog-edge-eu-west-1': { status: 'ROLLBACK_COMPLETE' },
        },
      },
    };
    // The stage with a subscriber: the synth warning is what preflight reads.
    const subscribed = { ...target, stacks: target.stacks.map((s) => ({ ...s, warnings: s.warnings.filter((w) => !w.includes('nobody is subscribed')) })) };
    const findings = await withFake(regions, (fake) => runPreflight(fake, subscribed));
    expect(findings.find((f) => f.region === 'eu-west-1' && /Lambda concurrency/.test(f.message))).toMatchObject({
      level: 'ok',
      message: 'Lambda concurrency limit 500, unreserved 189; the stacks reserve 311 (311 of it already reserved by their deployed versions)',
    });
    expect(failures(findings)).toEqual([
      'us-east-1 the CDK bootstrap stack is version 5; the templates need 6 or later: run `npx cdk bootstrap aws://<account>/us-east-1`',
      expect.stringMatching(
        /^us-east-1 prod-McpCatalog-edge-eu-west-1 is ROLLBACK_COMPLETE .*aws cloudformation delete-stack --region us-east-1 --stack-name prod-McpCatalog-edge-eu-west-1/,
      ),
    ]);
    expect(findings.filter((f) => f.level === 'warn').map((f) => f.region)).toEqual(['eu-west-1']);
  });
});

describe('npm run alarms:test', () => {
  const TOPIC = 'arn:aws:sns:eu-west-1:123456789012:prod-McpCatalog-MonitoringTopic-ABC';
  const region = (over: Partial<FakeRegion> = {}): FakeRegion => ({
    ...emptyRegion(),
    stacks: { 'prod-McpCatalog': { status: 'UPDATE_COMPLETE', outputs: { AlarmTopicArn: TOPIC } } },
    alarms: [
      { name: 'prod-McpCatalog-MonitoringApiFaultRate-X1', state: 'ALARM', actions: [TOPIC], history: [] },
      { name: 'prod-McpCatalog-MonitoringCatalogFunctionErrors-X2', state: 'OK', actions: [TOPIC], history: [] },
      { name: 'staging-McpCatalog-MonitoringApiFaultRate-X3', state: 'OK', actions: ['arn:other'], history: [] },
    ],
    ...over,
  });
  const run = (fake: AwsFake) =>
    testAlarmDelivery(
      { stackName: 'prod-McpCatalog', pollMs: 10, timeoutMs: 5000 },
      {
        cloudformation: new CloudFormationClient(fakeClientConfig(fake, 'eu-west-1')),
        cloudwatch: new CloudWatchClient(fakeClientConfig(fake, 'eu-west-1')),
        sns: new SNSClient(fakeClientConfig(fake, 'eu-west-1')),
      },
    );

  it('sets an OK alarm of the stack to ALARM, sees CloudWatch deliver it to the topic, sets it back, and counts the confirmed subscribers', async () => {
    const r = region({ publishable: new Set([TOPIC]), subscriptions: { [TOPIC]: [`${TOPIC}:sub-1`, 'PendingConfirmation'] } });
    const { result, calls } = await withFake({ 'eu-west-1': r }, async (fake) => ({ result: await run(fake), calls: fake.calls }));
    expect(result).toMatchObject({
      alarm: 'prod-McpCatalog-MonitoringCatalogFunctionErrors-X2',
      delivery: 'delivered',
      confirmedSubscriptions: 1,
      pendingSubscriptions: 1,
      restoredTo: 'OK',
    });
    expect(r.alarms[1].state).toBe('OK');
    expect(calls.filter((c) => c.endsWith('SetAlarmState'))).toHaveLength(2);
    expect(verdict(result, 5000)).toMatchObject({ ok: true });
  });

  it('a topic whose policy leaves CloudWatch out: the notification is refused, said so with the fix, and the alarm is still set back', async () => {
    const r = region({ subscriptions: { [TOPIC]: [`${TOPIC}:sub-1`] } });
    const result = await withFake({ 'eu-west-1': r }, run);
    expect(result.delivery).toBe('refused');
    expect(r.alarms[1].state).toBe('OK');
    const v = verdict(result, 5000);
    expect(v.ok).toBe(false);
    expect(v.lines[0]).toMatch(/^REFUSED: Failed to execute action .*cloudwatch\.amazonaws\.com publish/);
  });

  it('delivered to a topic nobody confirmed: fails, naming the setting', async () => {
    const result = await withFake({ 'eu-west-1': region({ publishable: new Set([TOPIC]), subscriptions: { [TOPIC]: ['PendingConfirmation'] } }) }, run);
    const v = verdict(result, 5000);
    expect(result.delivery).toBe('delivered');
    expect(v.ok).toBe(false);
    expect(v.lines[1]).toMatch(/^NOBODY: .*alarms\.emails/);
  });
});
