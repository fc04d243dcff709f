import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { S3Client } from '@aws-sdk/client-s3';
import type { HandlerExecutionContext, InitializeHandler, InitializeHandlerArguments, MiddlewareStack } from '@smithy/types';

/**
 * Storage faults injected by SDK middleware, before the SDK's retry step (so the SDK does not
 * retry them away). `before` fails a call without sending it; `after` sends it, lets it take
 * effect, then fails: the answer is lost, the most ambiguous failure a writer can see.
 */
export type Phase = 'before' | 'after';

export interface FaultSwitch {
  /** The calls seen since `arm` or `record`, in the order they were started (`s3.PutObject`, …). */
  calls: string[];
  /** Records calls without failing any. */
  record(): void;
  /** Fails the call with this 1-based index (counting every call of both clients). */
  arm(index: number, phase: Phase): void;
  /** True once the armed fault has fired. */
  fired(): boolean;
  disarm(): void;
  detach(): void;
}

export class InjectedFault extends Error {
  constructor(call: string, phase: Phase) {
    super(`injected fault ${phase} ${call}`);
    this.name = 'InjectedFault';
  }
}

let serial = 0;

export function faultSwitch(clients: { s3: S3Client; dynamodb: DynamoDBClient }): FaultSwitch {
  const name = `memoryFaults${++serial}`;
  let armed: { index: number; phase: Phase } | undefined;
  let hit = false;
  const sw: FaultSwitch = {
    calls: [],
    record: () => {
      sw.calls = [];
      armed = undefined;
      hit = false;
    },
    arm: (index, phase) => {
      sw.calls = [];
      armed = { index, phase };
      hit = false;
    },
    fired: () => hit,
    disarm: () => {
      armed = undefined;
    },
    detach: () => {
      clients.s3.middlewareStack.remove(name);
      clients.dynamodb.middlewareStack.remove(name);
    },
  };
  const attach = <I extends object, O extends object>(stack: MiddlewareStack<I, O>, service: string): void => {
    stack.add(
      (next: InitializeHandler<I, O>, context: HandlerExecutionContext) => async (args: InitializeHandlerArguments<I>) => {
        const call = `${service}.${(context.commandName ?? '').replace(/Command$/, '')}`;
        sw.calls.push(call);
        const mine = armed && sw.calls.length === armed.index ? armed : undefined;
        if (mine?.phase === 'before') {
          hit = true;
          throw new InjectedFault(call, 'before');
        }
        const out = await next(args);
        if (mine?.phase === 'after') {
          hit = true;
          throw new InjectedFault(call, 'after');
        }
        return out;
      },
      { step: 'initialize', name, override: true },
    );
  };
  attach(clients.s3.middlewareStack, 's3');
  attach(clients.dynamodb.middlewareStack, 'dynamodb');
  return sw;
}
