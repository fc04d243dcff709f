/**
 * The origin secret's scheduled rotation (lambdas/ops/origin-secret-rotation.ts) against a loopback
 * fake of Secrets Manager (JSON 1.1) and CloudFront (REST-XML), with the real SDK clients: the four
 * steps, CloudFront's header written before the value becomes current, and the functions' origin
 * guard (lambdas/shared/secrets.ts, over the same fake) admitting whichever value an edge sends
 * at every point of the rotation.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CloudFrontClient } from '@aws-sdk/client-cloudfront';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { type RotationEvent, rotate } from '../../lambdas/ops/origin-secret-rotation';
import { originAdmits } from '../../lambdas/shared/http/origin-guard';
import { originSecretGetter } from '../../lambdas/shared/secrets';

interface Version {
  value: string;
  stages: string[];
}

const CF_NS = 'http://cloudfront.amazonaws.com/doc/2020-05-31/';
const origin = (id: string, header?: string) =>
  `<Origin><Id>${id}</Id><DomainName>${id}.example.com</DomainName><CustomHeaders>${
    header === undefined
      ? '<Quantity>0</Quantity>'
      : `<Quantity>1</Quantity><Items><OriginCustomHeader><HeaderName>x-origin-verify</HeaderName><HeaderValue>${header}</HeaderValue></OriginCustomHeader></Items>`
  }</CustomHeaders></Origin>`;
const configXml = (value: string) =>
  `<CallerReference>ref</CallerReference><Comment>test</Comment><Enabled>true</Enabled><Origins><Quantity>3</Quantity><Items>${origin('api', value)}${origin('mcp', value)}${origin('icons')}</Items></Origins>`;

/** Secrets Manager and CloudFront in one loopback server; `deployAfter` GetDistribution calls report Deployed. */
function fakeAws(initial: string) {
  const versions: Record<string, Version> = { v1: { value: initial, stages: ['AWSCURRENT'] } };
  const cf = { config: configXml(initial), etag: 'E1', status: 'Deployed', looks: 0, deployAfter: 2, updates: 0 };
  const sm = (op: string, input: Record<string, string & string[]>) => {
    // A staged version without a value yet (RotateSecret's token before createSecret) is not found.
    const found = Object.entries(versions).find(
      ([id, v]) => v.value !== '' && (!input.VersionId || id === input.VersionId) && v.stages.includes(input.VersionStage ?? 'AWSCURRENT'),
    );
    switch (op) {
      case 'DescribeSecret':
        return { VersionIdsToStages: Object.fromEntries(Object.entries(versions).map(([id, v]) => [id, v.stages])) };
      case 'GetSecretValue':
        return found ? { SecretString: found[1].value, VersionId: found[0] } : undefined;
      case 'GetRandomPassword':
        return { RandomPassword: `new-${'x'.repeat(44)}` };
      case 'PutSecretValue':
        versions[input.ClientRequestToken] = { value: input.SecretString, stages: input.VersionStages };
        return {};
      case 'UpdateSecretVersionStage': {
        const old = versions[input.RemoveFromVersionId];
        for (const v of Object.values(versions)) v.stages = v.stages.filter((s) => s !== 'AWSPREVIOUS');
        old.stages = [...old.stages.filter((s) => s !== 'AWSCURRENT'), 'AWSPREVIOUS'];
        versions[input.MoveToVersionId].stages.push('AWSCURRENT');
        return {};
      }
    }
    throw new Error(op);
  };
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const target = String(req.headers['x-amz-target'] ?? '');
      if (target.startsWith('secretsmanager.')) {
        const out = sm(target.split('.')[1], JSON.parse(body || '{}'));
        res.writeHead(out ? 200 : 400, { 'content-type': 'application/x-amz-json-1.1' });
        return res.end(JSON.stringify(out ?? { __type: 'ResourceNotFoundException', message: 'no such version' }));
      }
      const url = req.url ?? '';
      if (url.endsWith('/distribution/D1/config') && req.method === 'GET') {
        res.writeHead(200, { 'content-type': 'text/xml', etag: cf.etag });
        return res.end(`<?xml version="1.0"?><DistributionConfig xmlns="${CF_NS}">${cf.config}</DistributionConfig>`);
      }
      if (url.endsWith('/distribution/D1/config') && req.method === 'PUT') {
        if (req.headers['if-match'] !== cf.etag) return res.writeHead(412).end();
        cf.config = body
          .replace(/^<\?xml[^>]*\?>/, '')
          .replace(/^<DistributionConfig[^>]*>/, '')
          .replace(/<\/DistributionConfig>$/, '');
        cf.etag = `E${++cf.updates + 1}`;
        cf.status = 'InProgress';
        cf.looks = 0;
        res.writeHead(200, { 'content-type': 'text/xml', etag: cf.etag });
        return res.end(`<?xml version="1.0"?><Distribution xmlns="${CF_NS}"><Id>D1</Id><Status>InProgress</Status></Distribution>`);
      }
      if (url.endsWith('/distribution/D1')) {
        if (cf.status === 'InProgress' && ++cf.looks >= cf.deployAfter) cf.status = 'Deployed';
        res.writeHead(200, { 'content-type': 'text/xml', etag: cf.etag });
        return res.end(
          `<?xml version="1.0"?><Distribution xmlns="${CF_NS}"><Id>D1</Id><Status>${cf.status}</Status><DistributionConfig>${cf.config}</DistributionConfig></Distribution>`,
        );
      }
      res.writeHead(404).end();
    });
  });
  return { server, versions, cf, headers: () => [...cf.config.matchAll(/<HeaderValue>([^<]*)<\/HeaderValue>/g)].map((m) => m[1]) };
}

let fake: ReturnType<typeof fakeAws>;
let endpoint: string;
const credentials = { accessKeyId: 'AKIDFAKE', secretAccessKey: 'fake' };

beforeEach(async () => {
  fake = fakeAws('old-value');
  await new Promise<void>((r) => fake.server.listen(0, '127.0.0.1', r));
  endpoint = `http://127.0.0.1:${(fake.server.address() as AddressInfo).port}`;
});
afterEach(() => new Promise<void>((r) => fake.server.close(() => r())));

const deps = () => ({
  secrets: new SecretsManagerClient({ region: 'eu-west-1', endpoint, credentials }),
  cloudfront: new CloudFrontClient({ region: 'us-east-1', endpoint, credentials }),
  distributionId: 'D1',
  header: 'x-origin-verify',
  deployedWithinMs: 5000,
  pollMs: 5,
});
const step = (Step: RotationEvent['Step']) => rotate({ SecretId: 'arn:origin', ClientRequestToken: 'v2', Step }, deps());

it('rotates: the new value pending, into every origin header, current once CloudFront has deployed it; every edge is admitted all along', async () => {
  let now = 0;
  const guard = await originSecretGetter({ arn: 'arn:origin', region: 'eu-west-1' }, deps().secrets, () => now);
  // The current version: nothing to do. A token Secrets Manager did not stage: refused.
  await rotate({ SecretId: 'arn:origin', ClientRequestToken: 'v1', Step: 'createSecret' }, deps());
  await expect(step('createSecret')).rejects.toThrow(/not a version/);
  // RotateSecret stages the token as AWSPENDING before the first step; it has no value yet.
  fake.versions.v2 = { value: '', stages: ['AWSPENDING'] };
  await step('createSecret');
  expect(fake.versions.v2.value).toBe(`new-${'x'.repeat(44)}`);
  const next = fake.versions.v2.value;

  await step('setSecret');
  expect(fake.headers()).toEqual([next, next]);
  expect(fake.cf.status).toBe('InProgress');
  // Edges now send either value: an instance that has not looked since admits both.
  now += 61_000;
  expect(await originAdmits(guard, next)).toBe(true);
  expect(await originAdmits(guard, 'old-value')).toBe(true);
  // A second setSecret (a retried step) changes nothing.
  await step('setSecret');
  expect(fake.cf.updates).toBe(1);

  await step('testSecret');
  expect(fake.cf.status).toBe('Deployed');
  await step('finishSecret');
  expect(fake.versions.v2.stages).toContain('AWSCURRENT');
  expect(fake.versions.v1.stages).toEqual(['AWSPREVIOUS']);
  now += 61_000;
  expect(await originAdmits(guard, next)).toBe(true);
  expect(await originAdmits(guard, 'guess')).toBe(false);
});

it('testSecret refuses while an origin still sends another value (a deploy overwrote it), and gives up when CloudFront does not deploy in time', async () => {
  fake.versions.v2 = { value: 'pending-value', stages: ['AWSPENDING'] };
  await expect(step('testSecret')).rejects.toThrow(/does not send the pending value/);
  await step('setSecret');
  fake.cf.deployAfter = Number.POSITIVE_INFINITY;
  await expect(rotate({ SecretId: 'arn:origin', ClientRequestToken: 'v2', Step: 'testSecret' }, { ...deps(), deployedWithinMs: 50 })).rejects.toThrow(
    /has not deployed the new origin header/,
  );
  expect(fake.versions.v1.stages).toEqual(['AWSCURRENT']);
});
