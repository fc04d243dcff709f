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
  /**
   * Runs `fn` and returns its result with the calls it made (not safe with concurrent operations):
   * `calls` by command; `waves`, per command, how many times a call started while no other call of
   * that command was in flight (a parallel wave counts once, two waves one after the other twice);
   * `targets` by command and table or bucket (`dynamodb.UpdateItem memories`).
   */
  measure<T>(fn: () => Promise<T>): Promise<{ result: T; calls: CallCounts; waves: CallCounts; targets: CallCounts }>;
  detach(): void;
}

let serial = 0;

type Recorder = (command: string, target: string | undefined) => () => void;

function attach<I extends object, O extends object>(stack: MiddlewareStack<I, O>, name: string, record: Recorder): void {
  stack.add(
    (next: InitializeHandler<I, O>, context: HandlerExecutionContext) => async (args: InitializeHandlerArguments<I>) => {
      const input = args.input as { TableName?: string; Bucket?: string };
      const done = record((context.commandName ?? 'Unknown').replace(/Command$/, ''), input.TableName ?? input.Bucket);
      try {
        return await next(args);
      } finally {
        done();
      }
    },
    { step: 'initialize', name, override: true },
  );
}

export function countStorageCalls(clients: { s3?: S3Client; dynamodb?: DynamoDBClient }): CallCounter {
  let counts: CallCounts = {};
  let waves: CallCounts = {};
  let targets: CallCounts = {};
  const inFlight: CallCounts = {};
  const name = `memoryCallCounter${++serial}`;
  const bump =
    (service: string): Recorder =>
    (command, target) => {
      const key = `${service}.${command}`;
      counts[key] = (counts[key] ?? 0) + 1;
      if (target !== undefined) targets[`${key} ${target}`] = (targets[`${key} ${target}`] ?? 0) + 1;
      if (!inFlight[key]) waves[key] = (waves[key] ?? 0) + 1;
      inFlight[key] = (inFlight[key] ?? 0) + 1;
      return () => {
        inFlight[key]--;
      };
    };
  if (clients.s3) attach(clients.s3.middlewareStack, name, bump('s3'));
  if (clients.dynamodb) attach(clients.dynamodb.middlewareStack, name, bump('dynamodb'));
  const api: CallCounter = {
    counts: () => ({ ...counts }),
    total: (service) => Object.entries(counts).reduce((sum, [k, v]) => (service === undefined || k.startsWith(`${service}.`) ? sum + v : sum), 0),
    reset: () => {
      counts = {};
      waves = {};
      targets = {};
    },
    measure: async (fn) => {
      counts = {};
      waves = {};
      targets = {};
      const result = await fn();
      const out = { result, calls: { ...counts }, waves: { ...waves }, targets: { ...targets } };
      counts = {};
      waves = {};
      targets = {};
      return out;
    },
    detach: () => {
      clients.s3?.middlewareStack.remove(name);
      clients.dynamodb?.middlewareStack.remove(name);
    },
  };
  return api;
}
