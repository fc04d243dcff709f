import { randomBytes } from 'node:crypto';
import { ensureTables } from '../../bin/local-stack/provision';
import { dynamoClient } from '../../lambdas/shared/aws/clients';
import { tableDefinition } from '../../lambdas/shared/aws/table-schema';
import { DynamoIdempotencyStore } from '../../lambdas/shared/idempotency/store';
import { RATE_LIMIT_TABLE } from '../../lambdas/shared/rate-limit/tables';

// The claim protocol on DynamoDB Local, with a clock the test moves: two stores are two instances.
// The clock starts at the real time and only moves forward: DynamoDB Local deletes items whose TTL
// (taken from this clock) is past, which a clock in 2023 made possible in the middle of a test.
const ddb = dynamoClient({ region: 'us-east-1', dynamoEndpoint: process.env.TEST_DYNAMODB_ENDPOINT });
const table = `idem-${randomBytes(4).toString('hex')}`;
let now = Date.now();
const store = () => new DynamoIdempotencyStore(ddb, table, { ttlSeconds: 86_400, leaseSeconds: 60, clock: () => now });
const answer = { status: 200, body: '{"rev":"r"}', headers: { etag: '"r"' } };

beforeAll(() => ensureTables(ddb, [tableDefinition(table, RATE_LIMIT_TABLE)]));
afterAll(() => ddb.destroy());

test('of two concurrent first claims one wins; the other waits; then both see the answer', async () => {
  const [a, b] = [store(), store()];
  const claims = await Promise.all([a.claim('k1', 'f'), b.claim('k1', 'f')]);
  expect(claims.map((c) => c.kind).sort()).toEqual(['claimed', 'in_progress']);
  await a.complete('k1', 'f', answer);
  expect(await b.claim('k1', 'f')).toEqual({ kind: 'replay', answer });
  expect(await b.claim('k1', 'other')).toEqual({ kind: 'mismatch' });
});

test('a claim whose holder died lapses after the lease; a released one at once; a record lives a day', async () => {
  const [a, b] = [store(), store()];
  expect((await a.claim('k2', 'f')).kind).toBe('claimed');
  now += 59_000;
  expect((await b.claim('k2', 'f')).kind).toBe('in_progress');
  now += 2_000;
  const taken = await b.claim('k2', 'f');
  if (taken.kind !== 'claimed') throw new Error(`expected a claim, got ${taken.kind}`);
  // Only the claim's own token gives it up.
  await a.release('k2', 'not-the-token');
  expect((await a.claim('k2', 'f')).kind).toBe('in_progress');
  await b.release('k2', taken.token);
  expect((await a.claim('k2', 'f')).kind).toBe('claimed');
  await a.complete('k2', 'f', answer);
  now += 86_401_000;
  expect((await b.claim('k2', 'f')).kind).toBe('claimed');
});
