/**
 * A first `cdk deploy` in a new account, read as an operator reads the templates before it
 * (issue 24): alarms that can reach someone, a deploy that fits a new account's Lambda limit,
 * production stacks protected, permissions boundaries, a second deploy after a destroy, WAF logs,
 * the search domain's access policy. Every check runs on each mode `cdk synth` builds (default,
 * embedded, staging, a home region outside us-east-1), through bin/app.ts as the CLI runs it.
 */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { STAGES } from '../../bin/stages';
import { unreachedAlarms } from '../../lib/alarm-settings';
import { ALWAYS_COUNTED_REASONS } from '../../lib/waf';
import { nagViolations } from '../support/nag';
import { ACCOUNT, type Json, MODES, ofType, type Resource, type SynthMode, type SynthStack, synthMode } from '../support/deployment-modes';

const BOUNDARY = 'arn:aws:iam::123456789012:policy/landing-zone-boundary';

let plain: SynthMode[];
/** Every mode again with `-c permissionsBoundary`, `-c reservedConcurrency=recommended` and `tracing: false` in every stage. */
let variant: SynthMode[];
let variantViolations: string[];

beforeAll(() => {
  plain = MODES.map(synthMode);
  const untraced = Object.fromEntries(Object.entries(STAGES).map(([k, v]) => [k, { ...v, tracing: false }]));
  variant = MODES.map((m) =>
    synthMode({
      ...m,
      name: `${m.name} (variant)`,
      stages: untraced,
      context: { ...m.context, permissionsBoundary: BOUNDARY, reservedConcurrency: 'recommended' },
    }),
  );
  variantViolations = variant.flatMap((m) =>
    nagViolations(m.deployment.main.node.root).flatMap((v) => v.violatingResources.map((r) => `${m.name}: ${v.ruleName} at ${r.constructPath}`)),
  );
}, 900_000);

const allStacks = (modes: SynthMode[]): Array<[SynthMode, SynthStack]> => modes.flatMap((m) => m.stacks.map((s) => [m, s] as [SynthMode, SynthStack]));
const refersTo = (value: unknown, logicalId: string): boolean => JSON.stringify(value ?? null).includes(`"Ref":"${logicalId}"`);

describe('the modes', () => {
  it('are the four stacks sets an operator deploys', () => {
    expect(plain.map((m) => m.stacks.map((s) => `${s.region}/${s.name}`))).toEqual([
      ['us-east-1/prod-McpCatalog'],
      ['us-east-1/prod-McpCatalog'],
      ['us-east-1/staging-McpCatalog'],
      ['us-east-1/prod-McpCatalog-edge-eu-west-1', 'eu-west-1/prod-McpCatalog', 'us-east-1/prod-McpCatalog-cdn-alarms-eu-west-1'],
    ]);
  });
});

describe('alarms that reach someone', () => {
  it('every topic lets each service that publishes to it (CloudWatch for the alarms, AWS Backup for the vault) publish, for this account only, and refuses plain HTTP', () => {
    let topics = 0;
    for (const [mode, stack] of allStacks(plain)) {
      for (const [topicId] of ofType(stack, 'AWS::SNS::Topic')) {
        topics++;
        const statements = ofType(stack, 'AWS::SNS::TopicPolicy')
          .filter(([, p]) => refersTo(p.Properties.Topics, topicId))
          .flatMap(([, p]) => p.Properties.PolicyDocument.Statement as Json[]);
        const where = `${mode.name} ${stack.name} ${topicId}`;
        expect({ where, ssl: statements.some((s) => s.Effect === 'Deny' && s.Condition?.Bool?.['aws:SecureTransport'] === 'false') }).toEqual({
          where,
          ssl: true,
        });
        const publishers = new Set<string>();
        if (ofType(stack, 'AWS::CloudWatch::Alarm').some(([, a]) => refersTo(a.Properties.AlarmActions, topicId))) publishers.add('cloudwatch.amazonaws.com');
        if (ofType(stack, 'AWS::Backup::BackupVault').some(([, v]) => refersTo(v.Properties.Notifications?.SNSTopicArn, topicId)))
          publishers.add('backup.amazonaws.com');
        expect({ where, alarms: publishers.has('cloudwatch.amazonaws.com') }).toEqual({ where, alarms: true });
        for (const service of publishers) {
          const allow = statements.find((s) => s.Effect === 'Allow' && s.Principal?.Service === service && [s.Action].flat().includes('sns:Publish'));
          expect({ where, service, sourceAccount: allow?.Condition?.StringEquals?.['aws:SourceAccount'] }).toEqual({
            where,
            service,
            sourceAccount: '123456789012',
          });
          if (service === 'cloudwatch.amazonaws.com') expect(JSON.stringify(allow?.Condition?.ArnLike?.['aws:SourceArn'])).toMatch(/:cloudwatch:.*:alarm:\*/);
        }
      }
    }
    // The home topic of each mode, and CloudFront's in us-east-1 outside it.
    expect(topics).toBe(5);
    // The vault's events reach the topic (prod modes have backups; staging has none).
    expect(ofType(plain[0].main, 'AWS::Backup::BackupVault')[0][1].Properties.Notifications.BackupVaultEvents).toEqual([
      'BACKUP_JOB_FAILED',
      'BACKUP_JOB_EXPIRED',
      'RESTORE_JOB_FAILED',
    ]);
  });

  it('a stage whose alarms reach no one gets a synth warning naming the setting; one that says so on purpose does not', () => {
    for (const m of plain) {
      const warned = m.main.warnings.filter((w) => w.includes('nobody is subscribed'));
      if (m.name === 'staging') expect(warned).toEqual([]);
      else expect(warned).toEqual([expect.stringContaining("set alarms.emails or alarms.topicArn of stage 'prod' in bin/stages.ts")]);
    }
    const opts = { stage: 'prod', homeRegion: 'eu-west-1' };
    expect(unreachedAlarms({ emails: ['oncall@example.com'] }, opts)).toEqual([]);
    // An existing topic in the home region leaves CloudFront's us-east-1 topic without anyone.
    expect(unreachedAlarms({ topicArn: 'arn:aws:sns:eu-west-1:123456789012:pager' }, opts)).toEqual([expect.stringContaining('alarms.usEast1TopicArn')]);
    expect(unreachedAlarms({ topicArn: 'arn:aws:sns:us-east-1:123456789012:pager' }, { ...opts, homeRegion: 'us-east-1' })).toEqual([]);
  });
});

describe('a deploy that fits a new account', () => {
  const reserved = (stack: SynthStack): number =>
    ofType(stack, 'AWS::Lambda::Function').reduce((n, [, f]) => n + ((f.Properties.ReservedConcurrentExecutions as number | undefined) ?? 0), 0);

  it('a plain synth reserves no concurrency in any stack, prod included (the edge log sweep too)', () => {
    for (const [mode, stack] of allStacks(plain))
      expect({ mode: mode.name, stack: stack.name, reserved: reserved(stack) }).toEqual({ mode: mode.name, stack: stack.name, reserved: 0 });
  });

  it('-c reservedConcurrency=recommended reserves the recommended set: 311 in the home region, 1 in us-east-1', () => {
    const perRegion = variant.map((m) => m.stacks.map((s) => `${s.name}: ${reserved(s)}`));
    expect(perRegion).toEqual([
      ['prod-McpCatalog: 312'],
      ['prod-McpCatalog: 312'],
      ['staging-McpCatalog: 312'],
      ['prod-McpCatalog-edge-eu-west-1: 1', 'prod-McpCatalog: 311', 'prod-McpCatalog-cdn-alarms-eu-west-1: 0'],
    ]);
  });

  it('termination protection on every stack of a production stage, not on staging', () => {
    for (const [mode, stack] of allStacks(plain))
      expect({ stack: stack.name, protected: stack.terminationProtection }).toEqual({ stack: stack.name, protected: mode.name !== 'staging' });
  });

  it('-c permissionsBoundary puts the boundary on every IAM role of every stack, CDK custom-resource providers included', () => {
    let roles = 0;
    for (const [mode, stack] of allStacks(variant)) {
      for (const [id, role] of ofType(stack, 'AWS::IAM::Role')) {
        roles++;
        expect({ mode: mode.name, id, boundary: role.Properties.PermissionsBoundary }).toEqual({ mode: mode.name, id, boundary: BOUNDARY });
      }
    }
    expect(roles).toBeGreaterThan(40);
    const providers = allStacks(variant).flatMap(([, s]) => ofType(s, 'AWS::IAM::Role').filter(([id]) => id.startsWith('Custom')));
    expect(providers.length).toBeGreaterThan(0);
  });

  it('tracing: false in a stage synthesizes: cdk-nag passes, every function and the crawl untraced', () => {
    expect(variantViolations).toEqual([]);
    for (const [, stack] of allStacks(variant)) {
      for (const [, f] of ofType(stack, 'AWS::Lambda::Function')) expect(f.Properties.TracingConfig).toBeUndefined();
      for (const [, sm] of ofType(stack, 'AWS::StepFunctions::StateMachine')) expect(sm.Properties.TracingConfiguration).toEqual({ Enabled: false });
    }
  });

  it('a production stage without a custom domain warns at synth that viewers may use TLSv1', () => {
    for (const m of plain) {
      const warned = m.main.warnings.filter((w) => w.includes('TLSv1'));
      expect({ mode: m.name, warned: warned.length }).toEqual({ mode: m.name, warned: m.name === 'staging' ? 0 : 1 });
    }
  });
});

describe('destroy and deploy again', () => {
  it('no resource that outlives the stack has a fixed name: a second deploy of the stage cannot collide with it', () => {
    let retained = 0;
    for (const [mode, stack] of allStacks(plain)) {
      for (const [id, r] of Object.entries(stack.template.Resources) as Array<[string, Resource]>) {
        if (r.DeletionPolicy !== 'Retain' && r.DeletionPolicy !== 'RetainExceptOnCreate') continue;
        retained++;
        for (const [key, value] of Object.entries(r.Properties ?? {})) {
          if (!/Name$/.test(key)) continue;
          // A name made of the stack's id (new with every stack) is not fixed.
          const fixed = !JSON.stringify(value).includes('"Ref":"AWS::StackId"');
          expect({ mode: mode.name, id, key, fixed }).toEqual({ mode: mode.name, id, key, fixed: false });
        }
      }
    }
    expect(retained).toBeGreaterThan(10);
  });
});

describe('security defaults', () => {
  it('the web ACL logs to aws-waf-logs-<stage>-<region> with a retention, the Authorization header redacted, blocked and counted requests only', () => {
    for (const [mode, stack] of allStacks(plain)) {
      const acls = ofType(stack, 'AWS::WAFv2::WebACL');
      if (acls.length === 0) continue;
      const t = Template.fromJSON(stack.template);
      const home = mode.main.region;
      const stage = mode.main.name.split('-')[0];
      const [[groupId, group]] = ofType(stack, 'AWS::Logs::LogGroup').filter(([, g]) => g.Properties.LogGroupName === `aws-waf-logs-${stage}-${home}`);
      expect(typeof group.Properties.RetentionInDays).toBe('number');
      t.hasResourceProperties('AWS::WAFv2::LoggingConfiguration', {
        ResourceArn: { 'Fn::GetAtt': [acls[0][0], 'Arn'] },
        LogDestinationConfigs: [{ 'Fn::Join': ['', [Match.stringLikeRegexp(':log-group:$'), { Ref: groupId }]] }],
        RedactedFields: [{ SingleHeader: { Name: 'authorization' } }],
        LoggingFilter: { DefaultBehavior: 'DROP', Filters: [Match.objectLike({ Behavior: 'KEEP', Requirement: 'MEETS_ANY' })] },
      });
    }
    expect(allStacks(plain).filter(([, s]) => ofType(s, 'AWS::WAFv2::LoggingConfiguration').length === 1)).toHaveLength(4);
  });

  it("the search domain's access policy names exactly the five roles that query it: catalog, the org registry and site read, the crawler and the health checks write", () => {
    for (const m of plain.filter((x) => ofType(x.main, 'AWS::OpenSearchService::Domain').length > 0)) {
      const [[, domain]] = ofType(m.main, 'AWS::OpenSearchService::Domain');
      const roleOf = Object.fromEntries(
        ofType(m.main, 'AWS::Lambda::Function')
          .filter(([, f]) => f.Properties.Environment?.Variables?.POWERTOOLS_SERVICE_NAME)
          .map(([, f]) => [f.Properties.Role['Fn::GetAtt'][0] as string, f.Properties.Environment.Variables.POWERTOOLS_SERVICE_NAME as string]),
      );
      const granted = (domain.Properties.AccessPolicies.Statement as Json[]).flatMap((s) =>
        [s.Principal.AWS].flat().map((p: Json) => [roleOf[p['Fn::GetAtt'][0]], [s.Action].flat().sort().join(' ')]),
      );
      const read = 'es:ESHttpGet es:ESHttpHead es:ESHttpPost';
      expect(granted.sort()).toEqual([
        ['catalog', read],
        ['checks', 'es:ESHttpDelete es:ESHttpGet es:ESHttpHead es:ESHttpPatch es:ESHttpPost es:ESHttpPut'],
        ['crawler', 'es:ESHttpDelete es:ESHttpGet es:ESHttpHead es:ESHttpPatch es:ESHttpPost es:ESHttpPut'],
        ['org', read],
        ['site', read],
      ]);
    }
  });
});

describe('origin secret rotation', () => {
  it('the origin secret has a rotation schedule (30 days) with the rotation function, which may update only this distribution', () => {
    for (const m of plain) {
      const secretId = Object.keys(m.main.template.Resources).find(
        (id) => id.startsWith('DataOriginVerifySecret') && m.main.template.Resources[id].Type === 'AWS::SecretsManager::Secret',
      );
      const [[, schedule]] = ofType(m.main, 'AWS::SecretsManager::RotationSchedule');
      expect(schedule.Properties).toMatchObject({
        SecretId: { Ref: secretId },
        RotationRules: { ScheduleExpression: 'rate(30 days)' },
        RotateImmediatelyOnUpdate: false,
      });
      const fnId = schedule.Properties.RotationLambdaARN['Fn::GetAtt'][0] as string;
      const env = m.main.template.Resources[fnId].Properties.Environment.Variables;
      expect(env).toMatchObject({ DISTRIBUTION_ID: { Ref: expect.stringMatching(/^EdgeDistribution/) }, ORIGIN_HEADER: 'x-origin-verify' });
      const role = m.main.template.Resources[fnId].Properties.Role['Fn::GetAtt'][0] as string;
      const statements = ofType(m.main, 'AWS::IAM::Policy')
        .filter(([, p]) => refersTo(p.Properties.Roles, role))
        .flatMap(([, p]) => p.Properties.PolicyDocument.Statement as Json[]);
      const cf = statements.find((st) => [st.Action].flat().includes('cloudfront:UpdateDistribution'));
      expect(JSON.stringify(cf.Resource)).toContain(':distribution/');
      expect(JSON.stringify(cf.Resource)).toContain('EdgeDistribution');
    }
  });
});

describe('settings that are not secrets live in Parameter Store', () => {
  /** What IAM compares a statement's Resource with: the ARN with the stack's pseudo parameters in place (anything else stays unresolved). */
  const resolved = (stack: SynthStack, value: Json): string =>
    typeof value === 'string'
      ? value
      : value?.['Fn::Join']
        ? (value['Fn::Join'][1] as Json[])
            .map((part) => ({ 'AWS::Partition': 'aws', 'AWS::Region': stack.region, 'AWS::AccountId': ACCOUNT })[part?.Ref as string] ?? resolved(stack, part))
            .join(value['Fn::Join'][0])
        : '\u0000';
  const covers = (pattern: string, arn: string) =>
    new RegExp(
      `^${pattern
        .replace(/[.+^${}()|[\]\\]/g, '\\$&')
        .replace(/\*/g, '.*')
        .replace(/\?/g, '.')}$`,
    ).test(arn);
  const grantsOf = (stack: SynthStack): Array<{ role: string; statement: Json }> => [
    ...ofType(stack, 'AWS::IAM::Policy').flatMap(([, p]) =>
      (p.Properties.Roles as Json[]).flatMap((r) =>
        (p.Properties.PolicyDocument.Statement as Json[]).map((statement) => ({ role: r.Ref as string, statement })),
      ),
    ),
    ...ofType(stack, 'AWS::IAM::Role').flatMap(([role, r]) =>
      ((r.Properties.Policies ?? []) as Json[]).flatMap((p) => (p.PolicyDocument.Statement as Json[]).map((statement) => ({ role, statement }))),
    ),
  ];

  it('the MCP function and the git remote read theirs from a standard String parameter of a fixed name, which only their own role may read, exactly', () => {
    for (const m of plain) {
      const readers = ofType(m.main, 'AWS::Lambda::Function').flatMap(([, f]) => {
        const env = f.Properties.Environment?.Variables ?? {};
        const name = env.MCP_SETTINGS_PARAMETER ?? env.MEMORY_SETTINGS_PARAMETER;
        return name === undefined ? [] : [{ service: env.POWERTOOLS_SERVICE_NAME as string, name, role: f.Properties.Role['Fn::GetAtt'][0] as string }];
      });
      expect({ mode: m.name, readers: readers.map((r) => r.service).sort() }).toEqual({ mode: m.name, readers: ['mcp', 'memory-git'] });
      for (const { service, name, role } of readers) {
        const where = `${m.name} ${service}`;
        // A literal under the stack's name: no reference to the parameter, which references the distribution.
        expect({ where, name }).toEqual({ where, name: expect.stringMatching(new RegExp(`^/${m.main.name}/[A-Za-z0-9]+/settings$`)) });
        const [[, parameter], ...others] = ofType(m.main, 'AWS::SSM::Parameter').filter(([, p]) => p.Properties.Name === name);
        expect({ where, others: others.length, type: parameter.Properties.Type, tier: parameter.Properties.Tier, kept: parameter.DeletionPolicy }).toEqual({
          where,
          others: 0,
          type: 'String',
          tier: 'Standard',
          kept: undefined,
        });
        // The standard tier holds 4 KB: the settings fit with every reference at CloudFormation's longest name (255).
        const longest = (parameter.Properties.Value['Fn::Join'][1] as Json[]).map((p) => (typeof p === 'string' ? p : 'x'.repeat(255))).join('');
        expect({ where, fits: Buffer.byteLength(longest) <= 4096 }).toEqual({ where, fits: true });
        const arn = `arn:aws:ssm:${m.main.region}:${ACCOUNT}:parameter${name}`;
        const granted = allStacks([m])
          .flatMap(([, st]) => grantsOf(st).map((g) => ({ ...g, stack: st })))
          .filter(
            ({ stack, statement }) =>
              statement.Effect === 'Allow' &&
              [statement.Action].flat().some((a: string) => covers(a, 'ssm:GetParameter')) &&
              [statement.Resource].flat().some((r: Json) => covers(resolved(stack, r), arn)),
          );
        expect({
          where,
          granted: granted.map((g) => ({ role: g.role, action: g.statement.Action, resource: resolved(g.stack, g.statement.Resource) })),
        }).toEqual({
          where,
          granted: [{ role, action: 'ssm:GetParameter', resource: arn }],
        });
      }
    }
  });

  it('no settings secret remains: the only secrets are the cursor keys and the origin secret', () => {
    for (const m of plain) {
      const secrets = allStacks([m]).flatMap(([, st]) => ofType(st, 'AWS::SecretsManager::Secret').map(([id]) => id.replace(/[0-9A-F]{8}$/, '')));
      expect({ mode: m.name, secrets: secrets.sort() }).toEqual({ mode: m.name, secrets: ['DataCursorKeysSecret', 'DataOriginVerifySecret'] });
    }
  });
});

describe("the README's Deployment section matches the templates", () => {
  const readme = readFileSync(path.join(__dirname, '..', '..', 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('\n## Deployment\n'), readme.indexOf('\n## Architecture\n'));
  const outputsOf = (stack: SynthStack | undefined) => new Set(Object.keys(stack?.template.Outputs ?? {}));
  const rows = [...section.matchAll(/^\| ((?:`[A-Za-z]+`(?:, )?)+) \| (main|cdn-alarms) \| ([a-z0-9, -]+) \|/gm)].map((r) => ({
    names: [...r[1].matchAll(/`([A-Za-z]+)`/g)].map((n) => n[1]),
    stack: r[2],
    modes: r[3] === 'all' ? MODES.map((x) => x.name) : r[3].split(', '),
  }));

  it('every output in the outputs table is in the templates of exactly the modes it lists', () => {
    expect(rows.length).toBeGreaterThanOrEqual(12);
    for (const m of plain) {
      for (const row of rows) {
        const stack = row.stack === 'main' ? m.main : m.stacks.find((x) => x.name.includes('-cdn-alarms-'));
        for (const name of row.names)
          expect({ mode: m.name, name, present: outputsOf(stack).has(name) }).toEqual({ mode: m.name, name, present: row.modes.includes(m.name) });
      }
    }
  });

  it('every <Output> the runbooks name is an output of the table', () => {
    const named = new Set(rows.flatMap((r) => r.names));
    const placeholders = [...new Set([...section.matchAll(/<([A-Z][A-Za-z]+)>/g)].map((x) => x[1]))];
    expect(placeholders.filter((p) => !named.has(p) && !['Function', 'Table', 'Output'].includes(p))).toEqual([]);
    for (const wrong of ['OriginVerifySecretArn', 'CatalogTableName', 'SearchDomainEndpoint', 'SearchSnapshotBucketName'])
      expect(placeholders).toContain(wrong);
  });

  it("every alarm of the alarms table is an alarm of some mode's templates", () => {
    // The alarms table alone: the section's later tables (costs) are not alarms.
    const table = section.slice(section.indexOf('| alarm | fires when |')).split('\n\n')[0];
    const names = table
      .split('\n')
      .filter((l) => l.startsWith('| '))
      .slice(2)
      .flatMap((l) => [...l.split(' | ')[0].matchAll(/`([^`]+)`/g)].map((x) => x[1]))
      .flatMap((n) => {
        const alt = n.match(/^(.*)\{(.+)\}(.*)$/);
        return alt ? alt[2].split(',').map((a) => `${alt[1]}${a}${alt[3]}`) : [n];
      });
    expect(names.length).toBeGreaterThan(15);
    const alarmIds = allStacks(plain).flatMap(([, st]) => ofType(st, 'AWS::CloudWatch::Alarm').map(([id]) => id));
    for (const n of names) {
      const re = new RegExp(`^(Monitoring|Crawler|Checks)${n.replace(/<(Function|Table)>/g, '[A-Za-z]+')}[0-9A-F]{8}$`);
      expect({ alarm: n, found: alarmIds.some((id) => re.test(id)) }).toEqual({ alarm: n, found: true });
    }
  });

  it('the stacks, log groups and dashboard it names by <stage> and <region> exist under those names', () => {
    const eu = plain.find((m) => m.name === 'eu-west-1') as SynthMode;
    const everything = JSON.stringify(eu.stacks.map((x) => x.template));
    const names = [...new Set([...section.matchAll(/`([^` ]*<stage>[^` ]*)`/g)].map((x) => x[1]))];
    expect(names.length).toBeGreaterThanOrEqual(6);
    for (const n of names) {
      const concrete = n.replace('<stage>', 'prod').replace('<region>', 'eu-west-1');
      expect({ n, found: eu.stacks.some((x) => x.name === concrete) || everything.includes(`"${concrete}"`) }).toEqual({ n, found: true });
    }
  });

  it('the custom resources it names are exactly those of the templates: none in us-east-1, the cross-region reader elsewhere', () => {
    const custom = (m: SynthMode) => [
      ...new Set(m.stacks.flatMap((x) => Object.values(x.template.Resources).map((r) => r.Type)).filter((t) => t.startsWith('Custom::'))),
    ];
    const named = [...new Set([...section.matchAll(/`(Custom::[A-Za-z]+)`/g)].map((x) => x[1]))];
    for (const m of plain) expect({ mode: m.name, custom: custom(m) }).toEqual({ mode: m.name, custom: m.name === 'eu-west-1' ? named : [] });
    expect(section).toContain('In us-east-1 all of it is the one stack, with no custom resource.');
  });

  it("the WAF's counted body rules are in its table, each with the reason the code gives", () => {
    for (const rules of Object.values(ALWAYS_COUNTED_REASONS))
      for (const [rule, why] of Object.entries(rules)) expect(section).toContain(`| \`${rule}\` | count | ${why} |`);
  });
});
