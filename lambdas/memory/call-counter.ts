import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { S3Client } from '@aws-sdk/client-s3';
import type { HandlerExecutionContext, InitializeHandler, InitializeHandlerArguments, MiddlewareStack } from '@smithy/types';

/**
 * Counts the storage calls an operation makes, by SDK middleware on the S3 and DynamoDB clients:
 * the budgets of DESIGN.md are held by counting, never by guessing or timing. Each SDK command is
 * counted once however many times the SDK retries it (the counter sits before the retry step).
 */

export type CallCounts = Record<string, number>;

export interface CallCounter {
  /** Calls since the last reset, keyed `s3.GetObject`, `dynamodb.UpdateItem`, … */
  counts(): CallCounts;
  /** Sum of the calls of one service (`s3` or `dynamodb`), or of all. */
  total(service?: string): number;
  reset(): void;
  /** Runs `fn` and returns its result with the calls it made (not safe with concurrent operations). */
  measure<T>(fn: () => Promise<T>): Promise<{ result: T; calls: CallCounts }>;
  detach(): void;
}

let serial = 0;

function attach<I extends object, O extends object>(stack: MiddlewareStack<I, O>, name: string, record: (command: string) => void): void {
  stack.add(
    (next: InitializeHandler<I, O>, context: HandlerExecutionContext) => async (args: InitializeHandlerArguments<I>) => {
      record((context.commandName ?? 'Unknown').replace(/Command$/, ''));
      return next(args);
    },
    { step: 'initialize', name, override: true },
  );
}

export function countStorageCalls(clients: { s3?: S3Client; dynamodb?: DynamoDBClient }): CallCounter {
  let counts: CallCounts = {};
  const name = `memoryCallCounter${++serial}`;
  const bump =
    (service: string) =>
    (command: string): void => {
      const key = `${service}.${command}`;
      counts[key] = (counts[key] ?? 0) + 1;
    };
  if (clients.s3) attach(clients.s3.middlewareStack, name, bump('s3'));
  if (clients.dynamodb) attach(clients.dynamodb.middlewareStack, name, bump('dynamodb'));
  const api: CallCounter = {
    counts: () => ({ ...counts }),
    total: (service) => Object.entries(counts).reduce((sum, [k, v]) => (service === undefined || k.startsWith(`${service}.`) ? sum + v : sum), 0),
    reset: () => {
      counts = {};
    },
    measure: async (fn) => {
      counts = {};
      const result = await fn();
      const calls = { ...counts };
      counts = {};
      return { result, calls };
    },
    detach: () => {
      clients.s3?.middlewareStack.remove(name);
      clients.dynamodb?.middlewareStack.remove(name);
    },
  };
  return api;
}
