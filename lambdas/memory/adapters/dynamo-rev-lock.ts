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
import type { Receipt } from '../../shared/idempotency/store';
import { StorageError } from '../errors';
import {
  isSweepTicket,
  SWEEP_TICKET_PREFIX,
  type CreateOutcome,
  type HeadMove,
  type MemoryRecord,
  type MoveOptions,
  type MoveOutcome,
  type RestoreOutcome,
  type RevLock,
  type TicketOutcome,
  type WriteTicket,
} from '../ports';
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

/** The record of an item read at `nowMs`: a ticket already expired then is left out. */
function fromItem(item: Item | undefined, nowMs: number): MemoryRecord | undefined {
  if (!item?.id?.S || !item.account?.S || !item.name?.S) return undefined;
  const num = (k: string): number => Number(item[k]?.N ?? '0');
  const ticket = item.ticket?.S && num('ticketUntil') > nowMs ? { holder: item.ticket.S, untilMs: num('ticketUntil') } : undefined;
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
    ...(item.epoch?.N ? { epoch: num('epoch') } : {}),
    ...(ticket && { ticket }),
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
    /** Writes the receipts of keyed writes into the transaction of their head move (the idempotency store). */
    private readonly receipts?: { receiptItem(receipt: Receipt): TransactWriteItem },
    private readonly clock: () => number = Date.now,
  ) {}

  private key(account: string, name: string): Item {
    return { account: s(account), name: s(name) };
  }

  async get(account: string, name: string): Promise<MemoryRecord | undefined> {
    try {
      const out = await this.ddb.send(new GetItemCommand({ TableName: this.table, Key: this.key(account, name), ConsistentRead: true }));
      return fromItem(out.Item, this.clock());
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
          const rec = fromItem(item, this.clock());
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
        const rec = fromItem(item, this.clock());
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
      const existing = fromItem(reasonItem(outcome.error, 0), this.clock()) ?? (await this.get(record.account, record.name));
      if (existing) return { kind: 'exists', record: existing };
    }
    return { kind: 'ceiling' };
  }

  async moveHead(account: string, name: string, expected: string | null, next: HeadMove, opts: MoveOptions = {}): Promise<MoveOutcome> {
    const now = this.clock();
    // Read while a sweep held the ticket: what the mover stored may be what the sweep deletes.
    if (opts.from?.ticket && isSweepTicket(opts.from.ticket) && opts.from.ticket.holder !== opts.holder) return { ok: false, current: opts.from };
    const conditions = ['#st = :active', expected === null ? 'attribute_not_exists(head)' : 'head = :exp'];
    const values: Item = {
      ':h': s(next.head),
      ':u': s(next.updated),
      ':w': s(next.writer),
      ':f': n(next.files),
      ':d': n(next.folders),
      ':b': n(next.sizeBytes),
      ':active': s('active'),
      ':now': n(now),
      ...(expected === null ? {} : { ':exp': s(expected) }),
    };
    if (opts.from) {
      // A sweep ran since the mover read the record: it may have deleted what the mover relies on.
      const epoch = opts.from.epoch ?? 0;
      conditions.push(epoch === 0 ? '(attribute_not_exists(epoch) OR epoch = :ep)' : 'epoch = :ep');
      values[':ep'] = n(epoch);
    }
    if (opts.fair) {
      // Another writer's turn (it lost a race) or a sweep: wait for it. The mover's own ticket is dropped by its move.
      conditions.push(`(attribute_not_exists(ticket) OR ticketUntil < :now${opts.holder ? ' OR ticket = :holder' : ''})`);
      if (opts.holder) values[':holder'] = s(opts.holder);
    } else {
      conditions.push('(attribute_not_exists(ticket) OR ticketUntil < :now OR NOT begins_with(ticket, :sweep))');
      values[':sweep'] = s(SWEEP_TICKET_PREFIX);
    }
    const update = {
      TableName: this.table,
      Key: this.key(account, name),
      UpdateExpression: `SET head = :h, updated = :u, files = :f, folders = :d, sizeBytes = :b, writer = :w${opts.fair ? ' REMOVE ticket, ticketUntil' : ''}`,
      ConditionExpression: conditions.join(' AND '),
      ExpressionAttributeNames: { '#st': 'state' },
      ExpressionAttributeValues: values,
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const,
    };
    if (opts.receipts?.length) return this.moveWithReceipts(account, name, update, opts.receipts);
    try {
      await this.ddb.send(new UpdateItemCommand(update));
      return { ok: true };
    } catch (err) {
      if (err instanceof ConditionalCheckFailedException) return { ok: false, current: fromItem(err.Item as Item | undefined, now) };
      throw new StorageError('dynamodb.UpdateItem', err);
    }
  }

  /**
   * The head move and the receipts of its keyed writes in one transaction: the head moves with the
   * record of every key, or nothing is written. (The SDK gives the transaction a client token, so
   * its own retry of a transaction that went through is not applied twice.)
   */
  private async moveWithReceipts(
    account: string,
    name: string,
    update: NonNullable<TransactWriteItem['Update']> & { ReturnValuesOnConditionCheckFailure: 'ALL_OLD' },
    receipts: readonly Receipt[],
  ): Promise<MoveOutcome> {
    if (!this.receipts) throw new Error('a keyed write needs the rev lock to be given the idempotency store');
    const store = this.receipts;
    try {
      await this.ddb.send(new TransactWriteItemsCommand({ TransactItems: [{ Update: update }, ...receipts.map((r) => store.receiptItem(r))] }));
      return { ok: true };
    } catch (err) {
      const codes = reasonCodes(err);
      if (codes.length === 0) throw new StorageError('dynamodb.TransactWriteItems(moveHead)', err);
      if (codes[0] === 'ConditionalCheckFailed') return { ok: false, current: fromItem(reasonItem(err, 0), this.clock()) ?? (await this.get(account, name)) };
      const lost = codes.findIndex((c, i) => i > 0 && c === 'ConditionalCheckFailed');
      // Another transaction on the same item at the same moment: a lost race like any other.
      if (lost < 0 && !codes.includes('TransactionConflict')) throw new StorageError('dynamodb.TransactWriteItems(moveHead)', err);
      return { ok: false, current: await this.get(account, name), ...(lost > 0 && { lostReceipt: lost - 1 }) };
    }
  }

  async takeTicket(account: string, name: string, ticket: WriteTicket, nowMs: number): Promise<TicketOutcome> {
    const sweep = isSweepTicket(ticket);
    try {
      const out = await this.ddb.send(
        new UpdateItemCommand({
          TableName: this.table,
          Key: this.key(account, name),
          UpdateExpression: `SET ticket = :t, ticketUntil = :until${sweep ? ', epoch = if_not_exists(epoch, :zero) + :one' : ''}`,
          ConditionExpression: '#st = :active AND (attribute_not_exists(ticket) OR ticket = :t OR ticketUntil < :now)',
          ExpressionAttributeNames: { '#st': 'state' },
          ExpressionAttributeValues: {
            ':t': s(ticket.holder),
            ':until': n(ticket.untilMs),
            ':now': n(nowMs),
            ':active': s('active'),
            ...(sweep && { ':zero': n(0), ':one': n(1) }),
          },
          ReturnValues: 'ALL_NEW',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      const current = fromItem(out.Attributes, nowMs);
      if (!current) throw new Error(`the ticket of memory ${name} was taken but the item came back without a record`);
      return { taken: true, current };
    } catch (err) {
      if (err instanceof ConditionalCheckFailedException) return { taken: false, current: fromItem(err.Item as Item | undefined, nowMs) };
      throw new StorageError('dynamodb.UpdateItem(ticket)', err);
    }
  }

  async dropTicket(account: string, name: string, holder: string): Promise<void> {
    try {
      await this.ddb.send(
        new UpdateItemCommand({
          TableName: this.table,
          Key: this.key(account, name),
          UpdateExpression: 'REMOVE ticket, ticketUntil',
          ConditionExpression: 'ticket = :t',
          ExpressionAttributeValues: { ':t': s(holder) },
        }),
      );
    } catch (err) {
      if (err instanceof ConditionalCheckFailedException) return;
      throw new StorageError('dynamodb.UpdateItem(ticket)', err);
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
    const current = fromItem(reasonItem(outcome.error, 0), this.clock()) ?? (await this.get(account, name));
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
      const current = fromItem(reasonItem(outcome.error, 0), this.clock()) ?? (await this.get(account, name));
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
