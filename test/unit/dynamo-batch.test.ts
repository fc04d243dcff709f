import { BatchGetCommand, BatchWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { batchGetAll, batchWriteAll, type WriteRequest } from '../../lambdas/shared/aws/dynamo-batch';

// DynamoDB Local never answers "unprocessed", so the retry loop is driven by a client that
// processes only the first `perCall` entries of each call, the way a throttled table does.
function partialClient(perCall: number, stuck = false) {
  const calls: number[] = [];
  const stored = new Map<string, Record<string, unknown>>();
  const send = async (cmd: unknown) => {
    if (cmd instanceof BatchWriteCommand) {
      const reqs = cmd.input.RequestItems?.t ?? [];
      calls.push(reqs.length);
      const done = stuck ? [] : reqs.slice(0, perCall);
      for (const r of done) if (r.PutRequest?.Item) stored.set(String(r.PutRequest.Item.pk), r.PutRequest.Item);
      const rest = reqs.slice(done.length);
      return { UnprocessedItems: rest.length ? { t: rest } : {} };
    }
    if (cmd instanceof BatchGetCommand) {
      const keys = cmd.input.RequestItems?.t?.Keys ?? [];
      calls.push(keys.length);
      const done = stuck ? [] : keys.slice(0, perCall);
      const rest = keys.slice(done.length);
      return {
        Responses: { t: done.flatMap((k) => (stored.has(String(k.pk)) ? [stored.get(String(k.pk))] : [])) },
        UnprocessedKeys: rest.length ? { t: { Keys: rest } } : {},
      };
    }
    throw new Error('unexpected command');
  };
  return { doc: { send } as unknown as DynamoDBDocumentClient, calls, stored };
}

const puts = (n: number): WriteRequest[] => Array.from({ length: n }, (_, i) => ({ PutRequest: { Item: { pk: `k${i}`, v: i } } }));

describe('DynamoDB batch helpers', () => {
  it('writes every item in chunks of 25, retrying what the table hands back', async () => {
    const c = partialClient(10);
    await batchWriteAll(c.doc, 't', puts(60));
    expect(c.stored.size).toBe(60);
    expect(Math.max(...c.calls)).toBe(25);
    // 25 → 15 → 5 for each full chunk, 10 for the last
    expect(c.calls).toEqual([25, 15, 5, 25, 15, 5, 10]);
  });

  it('reads every key in chunks of 100, retrying unprocessed keys', async () => {
    const c = partialClient(1000);
    await batchWriteAll(c.doc, 't', puts(150));
    const slow = partialClient(40);
    for (const [k, v] of c.stored) slow.stored.set(k, v);
    const found = await batchGetAll(
      slow.doc,
      't',
      Array.from({ length: 150 }, (_, i) => ({ pk: `k${i}` })),
    );
    expect(found.map((f) => f.pk).sort()).toEqual([...c.stored.keys()].sort());
    expect(slow.calls).toEqual([100, 60, 20, 50, 10]);
  });

  it('gives up after its attempts with the message the caller chose', async () => {
    const c = partialClient(0, true);
    await expect(batchGetAll(c.doc, 't', [{ pk: 'a' }], { attempts: 3, exhausted: 'token table kept returning unprocessed keys' })).rejects.toThrow(
      'token table kept returning unprocessed keys',
    );
    expect(c.calls).toHaveLength(3);
    await expect(batchWriteAll(c.doc, 't', puts(1), { attempts: 2 })).rejects.toThrow('DynamoDB kept returning unprocessed items');
  });
});
