/**
 * The restore runbook (README, "Restore"), as far as it runs here: DynamoDB Local has no
 * point-in-time recovery and the S3 server no versions, so a point-in-time restore of the rev table
 * is played by copying the table's items as they were at that moment into a new table (what
 * `restore-table-to-point-in-time` produces), and an object brought back from its versions by
 * putting the same bytes again (what copying a previous version over the key produces). The check
 * between the two is the real tool, `npm run memory:verify` (bin/memory-verify.ts).
 */
import { CreateTableCommand, PutItemCommand, ScanCommand, type AttributeValue } from '@aws-sdk/client-dynamodb';
import { DeleteObjectCommand, GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { randomBytes } from 'node:crypto';
import { verifyMemories } from '../../bin/memory-verify';
import { DynamoRevLock } from '../../lambdas/memory/adapters/dynamo-rev-lock';
import { S3BlobStore } from '../../lambdas/memory/adapters/s3-blob-store';
import { ImmutableCache } from '../../lambdas/memory/cache';
import { MemoryService } from '../../lambdas/memory/service';
import { objectKey } from '../../lambdas/memory/tables';
import { CursorCodec } from '../../lambdas/shared/cursor';
import { cloneBundle } from '../support/memory-git';
import { expectMemoryError, newCaller, startMemoryHarness, type MemoryHarness } from '../support/memory-harness';

let h: MemoryHarness;
beforeAll(async () => {
  h = await startMemoryHarness();
});
afterAll(async () => {
  await h?.close();
});

const target = () => ({
  bucket: h.bucket,
  region: 'us-east-1',
  dynamoEndpoint: process.env.TEST_DYNAMODB_ENDPOINT,
  s3Endpoint: process.env.TEST_S3_ENDPOINT,
});

/** The rev table as it is now, copied into a new table: a point-in-time restore to this moment. */
async function pointInTimeCopy(): Promise<string> {
  const restored = `${h.table}-restored-${randomBytes(3).toString('hex')}`;
  await h.dynamodb.send(
    new CreateTableCommand({
      TableName: restored,
      KeySchema: [
        { AttributeName: 'account', KeyType: 'HASH' },
        { AttributeName: 'name', KeyType: 'RANGE' },
      ],
      AttributeDefinitions: [
        { AttributeName: 'account', AttributeType: 'S' },
        { AttributeName: 'name', AttributeType: 'S' },
      ],
      BillingMode: 'PAY_PER_REQUEST',
    }),
  );
  let start: Record<string, AttributeValue> | undefined;
  do {
    const page = await h.dynamodb.send(new ScanCommand({ TableName: h.table, ExclusiveStartKey: start, ConsistentRead: true }));
    for (const Item of page.Items ?? []) await h.dynamodb.send(new PutItemCommand({ TableName: restored, Item }));
    start = page.LastEvaluatedKey;
  } while (start);
  return restored;
}

function serviceOn(table: string): MemoryService {
  return new MemoryService({
    blobs: new S3BlobStore(h.s3, h.bucket),
    lock: new DynamoRevLock(h.dynamodb, table),
    cursors: new CursorCodec(h.keys),
    cache: new ImmutableCache(64 * 1024 * 1024),
  });
}

it('a rev table restored to a point in time serves that rev from the same bucket, history included, and takes new writes', async () => {
  const me = newCaller();
  const live = h.service();
  await live.writeNote(me, 'work', 'plans/today.md', { body: '# Today\nfirst' }, { createMemory: true });
  const atRestore = await live.writeNote(me, 'work', 'plans/today.md', { body: '# Today\nsecond' });
  const restored = await pointInTimeCopy();
  // Life goes on after the point the table is restored to: a mistake, say.
  await live.writeNote(me, 'work', 'plans/today.md', { body: '# Today\nclobbered by mistake' });
  await live.writeNote(me, 'work', 'plans/other.md', { body: '# Other' });

  const clean = await verifyMemories({ ...target(), table: restored }, () => undefined);
  expect(clean).toMatchObject({ memories: 1, damaged: 0, missingObjects: 0 });
  expect(clean.objects).toBeGreaterThanOrEqual(6);

  const back = serviceOn(restored);
  expect((await back.getMemory(me, 'work')).rev).toBe(atRestore.rev);
  expect((await back.readNote(me, 'work', 'plans/today.md')).body).toBe('# Today\nsecond');
  await expectMemoryError(back.readNote(me, 'work', 'plans/other.md'), 'NOT_FOUND');
  // The whole history up to the restored rev, by real git.
  const clone = cloneBundle((await back.exportBundle(me, 'work')).bytes);
  try {
    expect(clone.git('rev-parse', 'HEAD').trim()).toBe(atRestore.rev);
    expect(clone.git('log', '--format=%s').trim().split('\n')).toHaveLength(2);
  } finally {
    clone.cleanup();
  }
  // The restored memory takes writes again, on top of the restored rev.
  const next = await back.writeNote(me, 'work', 'plans/after-restore.md', { body: '# After' });
  expect(next.rev).not.toBe(atRestore.rev);
  expect((await verifyMemories({ ...target(), table: restored }, () => undefined)).damaged).toBe(0);
});

it('an object deleted outside the functions is reported by key, and reads work again once it is put back (from its version)', async () => {
  const me = newCaller();
  const svc = h.service();
  await svc.writeNote(me, 'fragile', 'a.md', { body: '# A\nkeep me' }, { createMemory: true });
  const written = await svc.writeNote(me, 'fragile', 'b.md', { body: '# B' });
  const rec = await new DynamoRevLock(h.dynamodb, h.table).get(me.account, 'fragile');
  if (!rec) throw new Error('no rev item');
  const bundle = await svc.exportBundle(me, 'fragile');
  expect(bundle.rev).toBe(written.rev);
  // The blob of a.md (in both commits' trees): found through the head's tree, as git would.
  const clone = cloneBundle(bundle.bytes);
  const blob = clone.git('rev-parse', 'HEAD:a.md').trim();
  clone.cleanup();
  const key = objectKey(rec.id, 'object', blob);
  const saved = await (await h.s3.send(new GetObjectCommand({ Bucket: h.bucket, Key: key }))).Body?.transformToByteArray();
  await h.s3.send(new DeleteObjectCommand({ Bucket: h.bucket, Key: key }));

  const lines: Array<{ memory: string; missing: string[] }> = [];
  const damaged = await verifyMemories({ ...target(), table: h.table }, (l) => lines.push(l as { memory: string; missing: string[] }));
  expect(damaged.damaged).toBeGreaterThanOrEqual(1);
  expect(lines.find((l) => l.memory === 'fragile')?.missing).toEqual([key]);
  // A fresh instance (no cache) cannot read the note without its blob, and says which object is missing.
  await expect(h.service().readNote(me, 'fragile', 'a.md')).rejects.toMatchObject({ name: 'NotFoundError', message: `Could not find ${blob}.` });

  // The runbook: copy the previous version over the key (here: the same bytes again).
  await h.s3.send(new PutObjectCommand({ Bucket: h.bucket, Key: key, Body: saved }));
  const after: unknown[] = [];
  await verifyMemories({ ...target(), table: h.table }, (l) => after.push(l));
  expect(after.filter((l) => (l as { memory: string }).memory === 'fragile')).toEqual([]);
  expect((await h.service().readNote(me, 'fragile', 'a.md')).body).toBe('# A\nkeep me');
});
