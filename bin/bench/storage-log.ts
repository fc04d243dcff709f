import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { S3Client } from '@aws-sdk/client-s3';
import type { HandlerExecutionContext, InitializeHandler, InitializeHandlerArguments, MiddlewareStack } from '@smithy/types';

/**
 * Every storage call of an operation with what it touched and when, by SDK middleware (before the
 * retry step: one entry per command however often the SDK retries it). The memory benchmark's
 * verdicts read it: which kinds of call were made (and no other), which objects were fetched
 * (none twice) and whether a write's PUTs formed one parallel wave (all started before any ended).
 */
export interface StorageCall {
  /** `s3.GetObject`, `dynamodb.UpdateItem`, … */
  call: string;
  /** The object key (S3) or the table (DynamoDB). */
  target: string;
  start: number;
  end: number;
}

export interface StorageLog {
  /** Runs `fn` and returns the calls it made (one operation at a time). */
  record<T>(fn: () => Promise<T>): Promise<{ result: T; calls: StorageCall[] }>;
  detach(): void;
}

let serial = 0;

export function storageLog(clients: { s3: S3Client; dynamodb: DynamoDBClient }): StorageLog {
  let calls: StorageCall[] = [];
  const name = `benchStorageLog${++serial}`;
  const attach = <I extends object, O extends object>(stack: MiddlewareStack<I, O>, service: string) =>
    stack.add(
      (next: InitializeHandler<I, O>, context: HandlerExecutionContext) => async (args: InitializeHandlerArguments<I>) => {
        const input = args.input as { Key?: unknown; TableName?: unknown };
        const entry: StorageCall = {
          call: `${service}.${(context.commandName ?? 'Unknown').replace(/Command$/, '')}`,
          target: String(service === 's3' ? input.Key : input.TableName),
          start: performance.now(),
          end: Number.NaN,
        };
        calls.push(entry);
        try {
          return await next(args);
        } finally {
          entry.end = performance.now();
        }
      },
      { step: 'initialize', name, override: true },
    );
  attach(clients.s3.middlewareStack, 's3');
  attach(clients.dynamodb.middlewareStack, 'dynamodb');
  return {
    record: async (fn) => {
      calls = [];
      const result = await fn();
      const out = calls;
      calls = [];
      return { result, calls: out };
    },
    detach: () => {
      clients.s3.middlewareStack.remove(name);
      clients.dynamodb.middlewareStack.remove(name);
    },
  };
}

/** Calls per kind, e.g. `{ 'dynamodb.GetItem': 1, 's3.PutObject': 6 }`. */
export function countsOf(calls: readonly StorageCall[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const c of calls) out[c.call] = (out[c.call] ?? 0) + 1;
  return out;
}

/** Only the kinds of call in `allowed` were made. */
export function onlyKinds(calls: readonly StorageCall[], allowed: readonly string[]): boolean {
  return calls.every((c) => allowed.includes(c.call));
}

/** Objects fetched more than once. */
export function fetchedTwice(calls: readonly StorageCall[]): string[] {
  const seen = new Map<string, number>();
  for (const c of calls) if (c.call === 's3.GetObject') seen.set(c.target, (seen.get(c.target) ?? 0) + 1);
  return [...seen].filter(([, n]) => n > 1).map(([k]) => k);
}

/** The calls of `kind` ran as one parallel wave: every one started before the first of them ended. */
export function oneWave(calls: readonly StorageCall[], kind: string): boolean {
  const wave = calls.filter((c) => c.call === kind);
  if (wave.length === 0) return false;
  return Math.max(...wave.map((c) => c.start)) < Math.min(...wave.map((c) => c.end));
}
