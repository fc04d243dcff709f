import { GetCommand, PutCommand, TransactWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { CachedResponse, CrawlPointer, CrawlStateStore, NameState, PlanStep, RunMeta, UnitItem, UnitRef } from '../domain/ports';
import type { UnitResult } from '../domain/types';
import { batchGetAll, batchWriteAll, queryItems, scanItems } from '../../shared/aws/dynamo-batch';
import { tableDefinition, type TableDefinition } from '../../shared/aws/table-schema';
import { CRAWL_STATE_TABLE } from '../tables';

/**
 * The crawl state in one DynamoDB table (`pk`, `sk`; TTL attribute `expiresAt`):
 *
 * | pk | sk | what |
 * |---|---|---|
 * | `CRAWL` | `POINTER` | high-water mark, current and last run |
 * | `RUN#<runId>` | `META` | run progress: plan cursor, steps, units created/done, counters |
 * | `RUN#<runId>` | `UNIT#<unitId>` | one unit: its rows (page) or names (refresh), status, result |
 * | `NAME#<name>` | `STATE` | slug, version precedence, this run's best row, listed/reason, star snapshots |
 * | `SLUG#<slug>` | `OWNER` | which name holds a slug (slugs are never reassigned) |
 * | `CACHE#<key>` | `HTTP` | ETag and parsed value of a conditional GET (GitHub) |
 *
 * Run and unit items expire 30 days after they were written; cache items 60 days after their
 * last refresh. Names and slugs never expire.
 */

export function crawlerTableDefinitions(tableName: string): TableDefinition[] {
  return [tableDefinition(tableName, CRAWL_STATE_TABLE)];
}

const RUN_TTL_S = 30 * 86_400;
const CACHE_TTL_S = 60 * 86_400;
const POINTER = { pk: 'CRAWL', sk: 'POINTER' } as const;
const runKey = (runId: string) => ({ pk: `RUN#${runId}`, sk: 'META' });
const unitKey = (ref: UnitRef) => ({ pk: `RUN#${ref.runId}`, sk: `UNIT#${ref.unitId}` });
const nameKey = (name: string) => ({ pk: `NAME#${name}`, sk: 'STATE' });

function errName(err: unknown): string | undefined {
  const n = (err as { name?: unknown } | null)?.name;
  return typeof n === 'string' ? n : undefined;
}

function isConditionFailure(err: unknown): boolean {
  const n = errName(err);
  return n === 'ConditionalCheckFailedException' || n === 'TransactionCanceledException';
}

/** Retention is measured on the wall clock, whatever clock the crawl itself runs on. */
const wallSeconds = () => Math.floor(Date.now() / 1000);

function stripKeys<T>(item: Record<string, unknown> | undefined): T | undefined {
  if (!item) return undefined;
  const { pk: _pk, sk: _sk, expiresAt: _ttl, ...rest } = item;
  return rest as T;
}

export class DynamoCrawlState implements CrawlStateStore {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly table: string,
    private readonly nowSeconds: () => number = () => Math.floor(Date.now() / 1000),
  ) {}

  async getPointer(): Promise<CrawlPointer> {
    const out = await this.doc.send(new GetCommand({ TableName: this.table, Key: POINTER, ConsistentRead: true }));
    return stripKeys<CrawlPointer>(out.Item) ?? {};
  }

  async startRun(run: RunMeta, expectedCurrent: string | undefined): Promise<boolean> {
    const expiresAt = wallSeconds() + RUN_TTL_S;
    try {
      await this.doc.send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Put: {
                TableName: this.table,
                Item: { ...runKey(run.runId), ...run, expiresAt },
                ConditionExpression: 'attribute_not_exists(pk)',
              },
            },
            {
              Update: {
                TableName: this.table,
                Key: POINTER,
                UpdateExpression: 'SET currentRun = :run',
                ConditionExpression: expectedCurrent === undefined ? 'attribute_not_exists(currentRun)' : 'currentRun = :expected',
                ExpressionAttributeValues: { ':run': run.runId, ...(expectedCurrent !== undefined && { ':expected': expectedCurrent }) },
              },
            },
          ],
        }),
      );
      return true;
    } catch (err) {
      if (isConditionFailure(err)) return false;
      throw err;
    }
  }

  async getRun(runId: string): Promise<RunMeta | undefined> {
    const out = await this.doc.send(new GetCommand({ TableName: this.table, Key: runKey(runId), ConsistentRead: true }));
    return stripKeys<RunMeta>(out.Item);
  }

  async commitPlanStep(runId: string, step: PlanStep): Promise<void> {
    const run = await this.getRun(runId);
    if (!run) throw new Error(`unknown run ${runId}`);
    if (run.steps >= step.step) return; // committed by an earlier attempt
    const expiresAt = wallSeconds() + RUN_TTL_S;
    const sets = ['steps = :step', 'unitsCreated = unitsCreated + :n', 'rowsSeen = rowsSeen + :rows', '#status = :status'];
    const values: Record<string, unknown> = {
      ':step': step.step,
      ':prev': step.step - 1,
      ':n': step.units.length,
      ':rows': step.rows,
      ':status': step.planned ? 'running' : 'planning',
    };
    if (step.cursor !== undefined) {
      sets.push('#cursor = :cursor');
      values[':cursor'] = step.cursor;
    }
    if (step.maxUpdatedAt !== undefined) {
      sets.push('maxUpdatedAt = :max');
      values[':max'] = step.maxUpdatedAt;
    }
    if (step.upstreamStartedAt !== undefined) {
      sets.push('upstreamStartedAt = if_not_exists(upstreamStartedAt, :ups)');
      values[':ups'] = step.upstreamStartedAt;
    }
    const update = `SET ${sets.join(', ')}${step.cursor === undefined ? ' REMOVE #cursor' : ''}`;
    try {
      await this.doc.send(
        new TransactWriteCommand({
          TransactItems: [
            ...step.units.map((u) => ({
              Put: {
                TableName: this.table,
                Item: { ...unitKey(u), ...u, expiresAt },
                ConditionExpression: 'attribute_not_exists(pk)',
              },
            })),
            {
              Update: {
                TableName: this.table,
                Key: runKey(runId),
                UpdateExpression: update,
                ConditionExpression: 'steps = :prev',
                ExpressionAttributeNames: { '#status': 'status', '#cursor': 'cursor' },
                ExpressionAttributeValues: values,
              },
            },
          ],
        }),
      );
    } catch (err) {
      if (isConditionFailure(err)) {
        const now = await this.getRun(runId);
        if (now && now.steps >= step.step) return;
        // The same words as the in-memory store: a step that skips one is a planner bug, not a race.
        if (now) throw new Error(`plan step ${step.step} out of order (at ${now.steps})`);
      }
      throw err;
    }
  }

  async getUnit(ref: UnitRef): Promise<UnitItem | undefined> {
    const out = await this.doc.send(new GetCommand({ TableName: this.table, Key: unitKey(ref), ConsistentRead: true }));
    return stripKeys<UnitItem>(out.Item);
  }

  async listUnits(runId: string): Promise<UnitItem[]> {
    const out: UnitItem[] = [];
    const items = queryItems(this.doc, {
      TableName: this.table,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :unit)',
      ExpressionAttributeValues: { ':pk': `RUN#${runId}`, ':unit': 'UNIT#' },
      // The rows (up to ~300 KB per unit) are not needed for listing.
      ProjectionExpression: '#runId, #unitId, #kind, #status, #planRejects, #result',
      ExpressionAttributeNames: {
        '#runId': 'runId',
        '#unitId': 'unitId',
        '#kind': 'kind',
        '#status': 'status',
        '#planRejects': 'planRejects',
        '#result': 'result',
      },
      ConsistentRead: true,
    });
    for await (const item of items) {
      const u = stripKeys<UnitItem>(item);
      if (u) out.push(u);
    }
    return out;
  }

  async completeUnit(ref: UnitRef, result: UnitResult): Promise<RunMeta> {
    try {
      await this.doc.send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Update: {
                TableName: this.table,
                Key: unitKey(ref),
                UpdateExpression: 'SET #status = :done, #result = :result REMOVE #rows',
                ConditionExpression: '#status = :pending',
                ExpressionAttributeNames: { '#status': 'status', '#result': 'result', '#rows': 'rows' },
                ExpressionAttributeValues: { ':done': 'done', ':pending': 'pending', ':result': result },
              },
            },
            {
              Update: {
                TableName: this.table,
                Key: runKey(ref.runId),
                UpdateExpression: 'ADD unitsDone :one',
                ExpressionAttributeValues: { ':one': 1 },
              },
            },
          ],
        }),
      );
    } catch (err) {
      if (!isConditionFailure(err)) throw err;
      // Already completed by an earlier delivery of the same unit: nothing to count twice. A unit
      // that does not exist fails the same condition; it is an error, as in the in-memory store.
      if ((await this.getUnit(ref)) === undefined) throw new Error(`unknown unit ${ref.runId}/${ref.unitId}`);
    }
    const run = await this.getRun(ref.runId);
    if (!run) throw new Error(`unknown run ${ref.runId}`);
    return run;
  }

  async finishRun(runId: string, summary: string, highWater: string | undefined): Promise<void> {
    const finishedAt = new Date(this.nowSeconds() * 1000).toISOString();
    try {
      await this.doc.send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Update: {
                TableName: this.table,
                Key: runKey(runId),
                UpdateExpression: 'SET #status = :done, finishedAt = :at, summary = :summary',
                ConditionExpression: '#status <> :done',
                ExpressionAttributeNames: { '#status': 'status' },
                ExpressionAttributeValues: { ':done': 'done', ':at': finishedAt, ':summary': summary },
              },
            },
            {
              Update: {
                TableName: this.table,
                Key: POINTER,
                UpdateExpression: `SET lastRun = :run${highWater !== undefined ? ', highWater = :hw' : ''} REMOVE currentRun`,
                ConditionExpression: 'currentRun = :run',
                ExpressionAttributeValues: { ':run': runId, ...(highWater !== undefined && { ':hw': highWater }) },
              },
            },
          ],
        }),
      );
    } catch (err) {
      if (!isConditionFailure(err)) throw err;
      // Finished by an earlier delivery: nothing to do. Otherwise another run took over (or there is
      // no such run): said as the in-memory store says it, not as a cancelled transaction.
      const run = await this.getRun(runId);
      if (run?.status === 'done') return;
      throw new Error(run ? `run ${runId} is not current` : `unknown run ${runId}`);
    }
  }

  async getNames(names: string[]): Promise<Map<string, NameState>> {
    const out = new Map<string, NameState>();
    for (const item of await batchGetAll(this.doc, this.table, [...new Set(names)].map(nameKey), { consistent: true })) {
      const st = stripKeys<NameState>(item);
      if (st) out.set(st.name, st);
    }
    return out;
  }

  async claimSlug(slug: string, name: string): Promise<boolean> {
    try {
      await this.doc.send(
        new PutCommand({
          TableName: this.table,
          Item: { pk: `SLUG#${slug}`, sk: 'OWNER', name },
          ConditionExpression: 'attribute_not_exists(pk) OR #name = :name',
          ExpressionAttributeNames: { '#name': 'name' },
          ExpressionAttributeValues: { ':name': name },
        }),
      );
      return true;
    } catch (err) {
      if (isConditionFailure(err)) return false;
      throw err;
    }
  }

  async saveNames(states: NameState[]): Promise<void> {
    await batchWriteAll(
      this.doc,
      this.table,
      states.map((st) => ({ PutRequest: { Item: { ...nameKey(st.name), ...st } } })),
    );
  }

  async *scanNames(): AsyncIterable<NameState> {
    const items = scanItems(this.doc, { TableName: this.table, FilterExpression: 'begins_with(pk, :p)', ExpressionAttributeValues: { ':p': 'NAME#' } });
    for await (const item of items) {
      const s = stripKeys<NameState>(item);
      if (s) yield s;
    }
  }

  async getCached<T>(keys: string[]): Promise<Map<string, CachedResponse<T>>> {
    const out = new Map<string, CachedResponse<T>>();
    for (const item of await batchGetAll(
      this.doc,
      this.table,
      [...new Set(keys)].map((k) => ({ pk: `CACHE#${k}`, sk: 'HTTP' })),
    )) {
      const entry = stripKeys<{ entry: CachedResponse<T> }>(item)?.entry;
      if (entry) out.set(String(item.pk).slice('CACHE#'.length), entry);
    }
    return out;
  }

  async putCached<T>(key: string, entry: CachedResponse<T>): Promise<void> {
    await this.doc.send(
      new PutCommand({
        TableName: this.table,
        Item: { pk: `CACHE#${key}`, sk: 'HTTP', entry, expiresAt: wallSeconds() + CACHE_TTL_S },
      }),
    );
  }
}
