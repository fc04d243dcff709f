import type { Principal } from '../identity/principal';
import type { Caller } from '../memory';
import type { HandlerResponse, HttpEvent } from '../shared/http/types';
import type { MemoryApiDeps } from './deps';

/** What a `/v1` handler sees: the request, its decoded path parameters, the verified caller. */
export interface MemoryCtx {
  event: HttpEvent;
  query: Map<string, string[]>;
  /** Decoded exactly once (by API Gateway, or by the local server's matcher). */
  params: Record<string, string>;
  caller: Caller;
  /** The verified token (its scopes, for an operation whose commands need more than its route's scope). */
  principal: Principal;
  requestId: string;
}

export type MemoryRouteHandler = (ctx: MemoryCtx, deps: MemoryApiDeps) => Promise<HandlerResponse>;
