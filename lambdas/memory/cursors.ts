import { CursorError, type CursorCodec } from '../shared/cursor';
import { badRequest } from './errors';
import type { MemoryRecord } from './ports';

/**
 * Cursors of listings and searches: the commit of the first page and an offset, signed for one
 * purpose (the memory and the query), so later pages read the same snapshot and a cursor of another
 * query is refused. 24 bytes of payload keep every cursor under 200 characters whatever the query.
 */
export type CursorKind = 'notes' | 'search' | 'history';

export interface Position {
  /** The commit the pages are read at; null when the memory has no history. */
  commit: string | null;
  offset: number;
}

/** What a cursor is bound to: the memory (its storage id included, so a recreated name differs) and the query. */
export function cursorPurpose(kind: CursorKind, rec: MemoryRecord, ...query: unknown[]): string {
  return JSON.stringify([kind, rec.account, rec.name, rec.id, ...query]);
}

export class PageCursors {
  constructor(private readonly codec: CursorCodec) {}

  encode(purpose: string, commit: string, offset: number): string {
    const payload = Buffer.alloc(24);
    Buffer.from(commit, 'hex').copy(payload, 0);
    payload.writeUInt32BE(offset, 20);
    return this.codec.encode(purpose, payload);
  }

  /** The position of `cursor`, or the first page at `head` when there is none. */
  async decode(purpose: string, cursor: string | undefined, head: string | null): Promise<Position> {
    if (cursor === undefined) return { commit: head, offset: 0 };
    try {
      const payload = await this.codec.decode(purpose, cursor);
      if (payload.length !== 24) throw new CursorError('bad payload');
      return { commit: payload.subarray(0, 20).toString('hex'), offset: payload.readUInt32BE(20) };
    } catch (err) {
      if (err instanceof CursorError) throw badRequest('invalid_cursor', 'cursor is not a valid cursor of this listing', 'cursor');
      throw err;
    }
  }
}
