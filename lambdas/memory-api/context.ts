import type { Principal } from '../identity/principal';
import type { Caller, WriteOptions } from '../memory';
import type { HandlerResponse, HttpEvent } from '../shared/http/types';
import type { KeyedWrite } from '../shared/idempotency/store';
import type { MemoryApiDeps } from './deps';
import { ifMatchOption } from './if-match';

/** What a `/v1` handler sees: the request, its decoded path parameters, the verified caller. */
export interface MemoryCtx {
  event: HttpEvent;
  query: Map<string, string[]>;
  /** Decoded exactly once (by API Gateway, or by the local server's matcher). */
  params: Record<string, string>;
  caller: Caller;
  /**
   * The verified token the caller is derived from: the token routes need its kind and grant, an
   * operation whose commands need more than its route's scope (the memory tool) its scopes.
   */
  principal: Principal;
  requestId: string;
  /** The request's claimed `Idempotency-Key` (`idempotency.ts`), for the core to record with its commit. */
  once?: KeyedWrite;
}

export type MemoryRouteHandler = (ctx: MemoryCtx, deps: MemoryApiDeps) => Promise<HandlerResponse>;

/** A note write's options: If-Match as the expected rev (`if-match.ts`), and the request's key. */
export const writeOptions = (ctx: MemoryCtx): Pick<WriteOptions, 'expectedRev' | 'once'> => ({
  ...ifMatchOption(ctx.event),
  ...(ctx.once && { once: ctx.once }),
});
