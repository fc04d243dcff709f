import { MemoryError, type StaleRev } from '../memory';
import { header, type HttpEvent } from '../shared/http/types';

/**
 * If-Match, the `/v1` spelling of the core's expected rev (DECISIONS: `sha` and `"sha"` in any
 * case). `*` is any current rev, i.e. no precondition. A weak tag (`W/"…"`) is well formed but never
 * matches (RFC 9110 §13.1.1 compares If-Match strongly): 409, as a stale rev. Anything else is 400.
 */
export function parseIfMatch(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  let v = String(value).trim();
  if (v === '*') return undefined;
  if (/^W\/"[^"]*"$/.test(v)) {
    throw new MemoryError('CONFLICT', 'stale_rev', 'If-Match is a weak entity tag, which never matches a rev; send the rev itself');
  }
  if (v.length >= 2 && v.startsWith('"') && v.endsWith('"')) v = v.slice(1, -1);
  if (!/^[0-9a-fA-F]{40}$/.test(v)) {
    throw new MemoryError('BAD_REQUEST', 'invalid_rev', 'If-Match must be a rev (40 hex characters), optionally quoted', { field: 'If-Match' });
  }
  return v.toLowerCase();
}

/** The request's If-Match as the core's write option. */
export function ifMatchOption(event: HttpEvent): { expectedRev?: string } {
  const rev = parseIfMatch(header(event, 'if-match'));
  return rev === undefined ? {} : { expectedRev: rev };
}

/** A failed expected rev, said in terms of the header the client sent. */
export function ifMatchConflictMessage(stale: StaleRev): string {
  if (!stale.exists) return `memory "${stale.memory}" does not exist, so If-Match cannot match`;
  return `If-Match does not match the current rev ${stale.currentRev ?? '(none: the memory is empty)'}`;
}
