import {
  ConditionalCheckFailedException,
  GetItemCommand,
  QueryCommand,
  ScanCommand,
  TransactionCanceledException,
  TransactWriteItemsCommand,
  UpdateItemCommand,
  type AttributeValue,
  type DynamoDBClient,
  type TransactWriteItem,
} from '@aws-sdk/client-dynamodb';
import { sleep } from '../../shared/concurrency';
import { StorageError } from '../errors';
import type { CreateOutcome, HeadMove, MemoryRecord, MoveOutcome, RestoreOutcome, RevLock } from '../ports';
import { ACCOUNT_COUNTER_NAME } from '../tables';

type Item = Record<string, AttributeValue>;

const s = (v: string): AttributeValue => ({ S: v });
const n = (v: number): AttributeValue => ({ N: String(v) });

function toItem(r: MemoryRecord): Item {
  const item: Item = {
    account: s(r.account),
    name: s(r.name),
    id: s(r.id),
    state: s(r.state),
    created: s(r.created),
    files: n(r.files),
    folders: n(r.folders),
    sizeBytes: n(r.sizeBytes),
  };
  if (r.head) item.head = s(r.head);
  if (r.updated) item.updated = s(r.updated);
  if (r.retired) item.retired = s(r.retired);
  if (r.writer) item.writer = s(r.writer);
  return item;
}

function fromItem(item: Item | undefined): MemoryRecord | undefined {
  if (!item?.id?.S || !item.account?.S || !item.name?.S) return undefined;
  const num = (k: string): number => Number(item[k]?.N ?? '0');
  return {
    account: item.account.S,
    name: item.name.S,
    id: item.id.S,
    head: item.head?.S ?? null,
    state: item.state?.S === 'retired' ? 'retired' : 'active',
    created: item.created?.S ?? '',
    updated: item.updated?.S ?? null,
    ...(item.retired?.S ? { retired: item.retired.S } : {}),
    ...(item.writer?.S ? { writer: item.writer.S } : {}),
    files: num('files'),
    folders: num('folders'),
    sizeBytes: num('sizeBytes'),
  };
}

function reasonCodes(err: unknown): string[] {
  if (err instanceof TransactionCanceledException) return (err.CancellationReasons ?? []).map((r) => r.Code ?? 'None');
  return [];
}

function reasonItem(err: unknown, i: number): Item | undefined {
  if (err instanceof TransactionCanceledException) return err.CancellationReasons?.[i]?.Item as Item | undefined;
  return undefined;
}

/**
 * The rev lock on DynamoDB. Every read is strongly consistent; head moves are conditional updates
 * that return the item as it was when the condition failed, so a losing writer learns the new head
 * without another read. The per-account ceiling lives in a counter item updated in the same
 * transaction as create, retire and restore.
 */
export class DynamoRevLock implements RevLock {
  constructor(
    private readonly ddb: DynamoDBClient,
    private readonly table: string,
  ) {}

  private key(account: string, name: string): Item {
    return { account: s(account), name: s(name) };
  }

  async get(account: string, name: string): Promise<MemoryRecord | undefined> {
    try {
      const out = await this.ddb.send(new GetItemCommand({ TableName: this.table, Key: this.key(account, name), ConsistentRead: true }));
      return fromItem(out.Item);
    } catch (err) {
      throw new StorageError('dynamodb.GetItem', err);
    }
  }

  async list(account: string): Promise<MemoryRecord[]> {
    const out: MemoryRecord[] = [];
    let start: Item | undefined;
    try {
      do {
        const page = await this.ddb.send(
          new QueryCommand({
            TableName: this.table,
            KeyConditionExpression: 'account = :a',
            ExpressionAttributeValues: { ':a': s(account) },
            ConsistentRead: true,
            ExclusiveStartKey: start,
          }),
        );
        for (const item of page.Items ?? []) {
          const rec = fromItem(item);
          if (rec && rec.name !== ACCOUNT_COUNTER_NAME) out.push(rec);
        }
        start = page.LastEvaluatedKey;
      } while (start);
    } catch (err) {
      throw new StorageError('dynamodb.Query', err);
    }
    return out;
  }

  /**
   * Every memory of every account (the operator's integrity check after a restore, bin/memory-verify.ts;
   * the functions never scan and are not granted it).
   */
  async *scanAll(): AsyncIterable<MemoryRecord> {
    let start: Item | undefined;
    do {
      let page: { Items?: Item[]; LastEvaluatedKey?: Item };
      try {
        page = await this.ddb.send(new ScanCommand({ TableName: this.table, ExclusiveStartKey: start, ConsistentRead: true }));
      } catch (err) {
        throw new StorageError('dynamodb.Scan', err);
      }
      for (const item of page.Items ?? []) {
        const rec = fromItem(item);
        if (rec && rec.name !== ACCOUNT_COUNTER_NAME) yield rec;
      }
      start = page.LastEvaluatedKey;
    } while (start);
  }

  private counter(account: string, delta: number, ceiling?: number): TransactWriteItem {
    return {
      Update: {
        TableName: this.table,
        Key: this.key(account, ACCOUNT_COUNTER_NAME),
        UpdateExpression: 'ADD active :d',
        ...(ceiling === undefined
          ? { ExpressionAttributeValues: { ':d': n(delta) } }
          : {
              ConditionExpression: 'attribute_not_exists(active) OR active < :max',
              ExpressionAttributeValues: { ':d': n(delta), ':max': n(ceiling) },
            }),
      },
    };
  }

  async create(record: MemoryRecord, ceiling: number): Promise<CreateOutcome> {
    const put: TransactWriteItem = {
      Put: {
        TableName: this.table,
        Item: toItem(record),
        ConditionExpression: 'attribute_not_exists(#n)',
        ExpressionAttributeNames: { '#n': 'name' },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      },
    };
    const outcome = await this.transactKeepingError([put, this.counter(record.account, 1, ceiling)], 'create');
    if (outcome.codes === null) return { kind: 'created', record };
    if (outcome.codes[0] === 'ConditionalCheckFailed') {
      // Some engines omit the old item from cancellation reasons: then read it.
      const existing = fromItem(reasonItem(outcome.error, 0)) ?? (await this.get(record.account, record.name));
      if (existing) return { kind: 'exists', record: existing };
    }
    return { kind: 'ceiling' };
  }

  async moveHead(account: string, name: string, expected: string | null, next: HeadMove): Promise<MoveOutcome> {
    try {
      await this.ddb.send(
        new UpdateItemCommand({
          TableName: this.table,
          Key: this.key(account, name),
          UpdateExpression: 'SET head = :h, updated = :u, files = :f, folders = :d, sizeBytes = :b, writer = :w',
          ConditionExpression: expected === null ? '#st = :active AND attribute_not_exists(head)' : '#st = :active AND head = :exp',
          ExpressionAttributeNames: { '#st': 'state' },
          ExpressionAttributeValues: {
            ':h': s(next.head),
            ':u': s(next.updated),
            ':w': s(next.writer),
            ':f': n(next.files),
            ':d': n(next.folders),
            ':b': n(next.sizeBytes),
            ':active': s('active'),
            ...(expected === null ? {} : { ':exp': s(expected) }),
          },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return { ok: true };
    } catch (err) {
      if (err instanceof ConditionalCheckFailedException) return { ok: false, current: fromItem(err.Item as Item | undefined) };
      throw new StorageError('dynamodb.UpdateItem', err);
    }
  }

  async retire(account: string, name: string, expected: string | null | undefined, at: string): Promise<MoveOutcome> {
    let condition = '#st = :active';
    const values: Item = { ':active': s('active'), ':retired': s('retired'), ':at': s(at) };
    if (expected === null) condition += ' AND attribute_not_exists(head)';
    else if (expected !== undefined) {
      condition += ' AND head = :exp';
      values[':exp'] = s(expected);
    }
    const update: TransactWriteItem = {
      Update: {
        TableName: this.table,
        Key: this.key(account, name),
        UpdateExpression: 'SET #st = :retired, retired = :at',
        ConditionExpression: condition,
        ExpressionAttributeNames: { '#st': 'state' },
        ExpressionAttributeValues: values,
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      },
    };
    const outcome = await this.transactKeepingError([update, this.counter(account, -1)], 'retire');
    if (outcome.codes === null) return { ok: true };
    const current = fromItem(reasonItem(outcome.error, 0)) ?? (await this.get(account, name));
    return { ok: false, current };
  }

  async restore(account: string, name: string, ceiling: number): Promise<RestoreOutcome> {
    const update: TransactWriteItem = {
      Update: {
        TableName: this.table,
        Key: this.key(account, name),
        UpdateExpression: 'SET #st = :active REMOVE retired',
        ConditionExpression: '#st = :retired',
        ExpressionAttributeNames: { '#st': 'state' },
        ExpressionAttributeValues: { ':active': s('active'), ':retired': s('retired') },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      },
    };
    const outcome = await this.transactKeepingError([update, this.counter(account, 1, ceiling)], 'restore');
    if (outcome.codes === null) {
      const record = await this.get(account, name);
      return record ? { kind: 'restored', record } : { kind: 'missing' };
    }
    if (outcome.codes[0] === 'ConditionalCheckFailed') {
      const current = fromItem(reasonItem(outcome.error, 0)) ?? (await this.get(account, name));
      return current ? { kind: 'active' } : { kind: 'missing' };
    }
    return { kind: 'ceiling' };
  }

  /** Runs a transaction, retrying DynamoDB's transient transaction conflicts a few times. */
  private async transactKeepingError(items: TransactWriteItem[], what: string): Promise<{ codes: string[] | null; error?: unknown }> {
    for (let attempt = 0; ; attempt++) {
      try {
        await this.ddb.send(new TransactWriteItemsCommand({ TransactItems: items }));
        return { codes: null };
      } catch (err) {
        const codes = reasonCodes(err);
        if (codes.includes('ConditionalCheckFailed')) return { codes, error: err };
        if (codes.includes('TransactionConflict') && attempt < 5) {
          await sleep(10 + Math.random() * 40 * (attempt + 1));
          continue;
        }
        throw new StorageError(`dynamodb.TransactWriteItems(${what})`, err);
      }
    }
  }
}
