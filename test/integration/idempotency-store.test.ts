import { randomBytes } from 'node:crypto';
import type { FinalizeHandler, FinalizeHandlerArguments, HandlerExecutionContext, MiddlewareStack } from '@smithy/types';
import { ensureTables } from '../../bin/local-stack/provision';
import { freePort } from '../../bin/local-stack/backends';
import { DynamoRevLock } from '../../lambdas/memory/adapters/dynamo-rev-lock';
import { memoryTableDefinitions } from '../../lambdas/memory/tables';
import { dynamoClient, loadSdkBudget } from '../../lambdas/shared/aws/clients';
import { tableDefinition } from '../../lambdas/shared/aws/table-schema';
import { DynamoIdempotencyStore, IdempotencyUnavailable } from '../../lambdas/shared/idempotency/store';
import { RATE_LIMIT_TABLE } from '../../lambdas/shared/rate-limit/tables';

// The claim protocol on DynamoDB Local, with a clock the test moves: two stores are two instances.
// The clock starts at the real time and only moves forward: DynamoDB Local deletes items whose TTL
// (taken from this clock) is past, which a clock in 2023 made possible in the middle of a test.
const ddb = dynamoClient({ region: 'us-east-1', dynamoEndpoint: process.env.TEST_DYNAMODB_ENDPOINT });
const table = `idem-${randomBytes(4).toString('hex')}`;
let now = Date.now();
const store = () => new DynamoIdempotencyStore(ddb, table, { ttlSeconds: 86_400, leaseSeconds: 60, clock: () => now });
const answer = { status: 200, body: '{"rev":"r"}', headers: { etag: '"r"' } };

const memories = `idem-memories-${randomBytes(4).toString('hex')}`;

beforeAll(() => ensureTables(ddb, [tableDefinition(table, RATE_LIMIT_TABLE), ...memoryTableDefinitions({ memories })]));
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

test('the SDK retrying a claim whose answer was lost finds its own claim, not one "in progress"', async () => {
  // The first PutItem takes effect, then its answer is lost (a timeout): the SDK sends it again.
  const lossy = dynamoClient({ region: 'us-east-1', dynamoEndpoint: process.env.TEST_DYNAMODB_ENDPOINT });
  let lost = false;
  const loseOne = <I extends object, O extends object>(stack: MiddlewareStack<I, O>): void =>
    stack.add(
      (next: FinalizeHandler<I, O>, context: HandlerExecutionContext) => async (args: FinalizeHandlerArguments<I>) => {
        const out = await next(args);
        if (!lost && context.commandName === 'PutItemCommand') {
          lost = true;
          throw Object.assign(new Error('the answer was lost'), { name: 'TimeoutError' });
        }
        return out;
      },
      { step: 'finalizeRequest', priority: 'low', name: 'loseOneAnswer' },
    );
  loseOne(lossy.middlewareStack);
  try {
    const claim = await new DynamoIdempotencyStore(lossy, table, { ttlSeconds: 86_400, leaseSeconds: 60, clock: () => now }).claim('k3', 'f');
    expect(lost).toBe(true);
    expect(claim.kind).toBe('claimed');
  } finally {
    lossy.destroy();
  }
});

test('DynamoDB unreachable: a claim fails as IdempotencyUnavailable (the transports answer 503), not as a raw SDK error', async () => {
  const closed = dynamoClient({ region: 'us-east-1', dynamoEndpoint: `http://127.0.0.1:${await freePort()}` }, { ...loadSdkBudget({}), dynamoMaxAttempts: 1 });
  try {
    await expect(new DynamoIdempotencyStore(closed, table).claim('k4', 'f')).rejects.toBeInstanceOf(IdempotencyUnavailable);
  } finally {
    closed.destroy();
  }
});

test('a receipt moves the head with the record of its key, or neither happens', async () => {
  const s = store();
  const lock = new DynamoRevLock(ddb, memories, s);
  const record = {
    account: 'a',
    name: 'm',
    id: 'id-m',
    head: null,
    state: 'active' as const,
    created: '2026-01-01T00:00:00.000Z',
    updated: null,
    files: 0,
    folders: 0,
    sizeBytes: 0,
  };
  await lock.create(record, 20);
  const move = (head: string) => ({ head, updated: '2026-01-01T00:00:01.000Z', writer: `w-${head}`, files: 1, folders: 0, sizeBytes: 1 });

  // Recorded with the move: a retry at any later time finds the write's result.
  const first = await s.claim('k5', 'f');
  if (first.kind !== 'claimed') throw new Error(first.kind);
  const result = { path: 'a.md', rev: 'c1', updated: 'u', changed: true };
  expect(await lock.moveHead('a', 'm', null, move('c1'), { receipts: [{ key: 'k5', token: first.token, fingerprint: 'f', result }] })).toEqual({ ok: true });
  expect(await s.claim('k5', 'f')).toEqual({ kind: 'committed', result });

  // A claim taken over by another request (its lease lapsed) cannot be recorded: the head does not move.
  const stale = await s.claim('k6', 'f');
  if (stale.kind !== 'claimed') throw new Error(stale.kind);
  now += 61_000;
  expect((await store().claim('k6', 'f')).kind).toBe('claimed');
  const refused = await lock.moveHead('a', 'm', 'c1', move('c2'), { receipts: [{ key: 'k6', token: stale.token, fingerprint: 'f', result }] });
  expect(refused).toMatchObject({ ok: false, lostReceipt: 0 });
  expect((await lock.get('a', 'm'))?.head).toBe('c1');
});
