import type { InMemoryIdempotencyStore } from '../../shared/idempotency/store';
import {
  isSweepTicket,
  type BlobItem,
  type BlobKind,
  type BlobStore,
  type CreateOutcome,
  type HeadMove,
  type MemoryRecord,
  type MoveOptions,
  type MoveOutcome,
  type RestoreOutcome,
  type RevLock,
  type StoredItem,
  type TicketOutcome,
  type WriteTicket,
} from '../ports';

/**
 * In-process adapters with the same semantics as S3 and DynamoDB (conditional moves, the ceiling
 * counted over active memories). For unit tests and for transports' tests that need no backends.
 */
export class InMemoryBlobStore implements BlobStore {
  readonly items = new Map<string, Uint8Array>();
  private readonly modified = new Map<string, number>();

  constructor(private readonly clock: () => number = Date.now) {}

  async get(memoryId: string, kind: BlobKind, sha: string): Promise<Uint8Array | undefined> {
    const v = this.items.get(`${memoryId}/${kind}/${sha}`);
    return v ? new Uint8Array(v) : undefined;
  }

  async putMany(memoryId: string, items: readonly BlobItem[]): Promise<void> {
    for (const item of items) {
      this.items.set(`${memoryId}/${item.kind}/${item.sha}`, new Uint8Array(item.body));
      this.modified.set(`${memoryId}/${item.kind}/${item.sha}`, this.clock());
    }
  }

  async *listStored(memoryId: string): AsyncIterable<StoredItem> {
    for (const key of [...this.items.keys()]) {
      const [id, kind, sha] = key.split('/');
      if (id === memoryId) yield { kind: kind as BlobKind, sha, modifiedMs: this.modified.get(key) ?? 0 };
    }
  }

  async deleteMany(memoryId: string, items: readonly StoredItem[]): Promise<void> {
    for (const item of items) this.items.delete(`${memoryId}/${item.kind}/${item.sha}`);
  }

  async list(memoryId: string, kind: 'pack-index'): Promise<string[]> {
    const prefix = `${memoryId}/${kind}/`;
    return [...this.items.keys()].filter((k) => k.startsWith(prefix)).map((k) => k.slice(prefix.length));
  }
}

export class InMemoryRevLock implements RevLock {
  private readonly records = new Map<string, MemoryRecord>();

  constructor(
    /** Where keyed writes' receipts are recorded, with the move that makes them (the DynamoDB transaction's twin). */
    private readonly receipts?: InMemoryIdempotencyStore,
    private readonly clock: () => number = Date.now,
  ) {}

  /** A copy as a reader sees it: an expired ticket is left out. */
  private view(r: MemoryRecord | undefined): MemoryRecord | undefined {
    if (!r) return undefined;
    const { ticket, ...rest } = r;
    return ticket && ticket.untilMs > this.clock() ? { ...rest, ticket: { ...ticket } } : { ...rest };
  }

  private k(account: string, name: string): string {
    return `${account}\u0000${name}`;
  }

  async get(account: string, name: string): Promise<MemoryRecord | undefined> {
    return this.view(this.records.get(this.k(account, name)));
  }

  async list(account: string): Promise<MemoryRecord[]> {
    return [...this.records.values()]
      .filter((r) => r.account === account)
      .sort((a, b) => (a.name < b.name ? -1 : 1))
      .map((r) => this.view(r) as MemoryRecord);
  }

  private active(account: string): number {
    return [...this.records.values()].filter((r) => r.account === account && r.state === 'active').length;
  }

  async create(record: MemoryRecord, ceiling: number): Promise<CreateOutcome> {
    const existing = this.records.get(this.k(record.account, record.name));
    if (existing) return { kind: 'exists', record: this.view(existing) as MemoryRecord };
    if (this.active(record.account) >= ceiling) return { kind: 'ceiling' };
    this.records.set(this.k(record.account, record.name), { ...record });
    return { kind: 'created', record: { ...record } };
  }

  async moveHead(account: string, name: string, expected: string | null, next: HeadMove, opts: MoveOptions = {}): Promise<MoveOutcome> {
    const r = this.records.get(this.k(account, name));
    if (opts.from?.ticket && isSweepTicket(opts.from.ticket) && opts.from.ticket.holder !== opts.holder) return { ok: false, current: opts.from };
    const ticket = this.view(r)?.ticket;
    const blocked = ticket !== undefined && ticket.holder !== opts.holder && (opts.fair || isSweepTicket(ticket));
    const staleEpoch = opts.from !== undefined && (opts.from.epoch ?? 0) !== (r?.epoch ?? 0);
    if (r?.state !== 'active' || r.head !== expected || blocked || staleEpoch) return { ok: false, current: this.view(r) };
    const receipts = opts.receipts ?? [];
    if (receipts.length > 0 && !this.receipts) throw new Error('a keyed write needs the rev lock to be given the idempotency store');
    const lost = receipts.findIndex((x) => !this.receipts?.holds(x));
    if (lost >= 0) return { ok: false, current: this.view(r), lostReceipt: lost };
    Object.assign(r, next);
    if (opts.fair) delete r.ticket;
    for (const x of receipts) this.receipts?.record(x);
    return { ok: true };
  }

  async takeTicket(account: string, name: string, ticket: WriteTicket, nowMs: number): Promise<TicketOutcome> {
    const r = this.records.get(this.k(account, name));
    const held = r?.ticket && r.ticket.untilMs > nowMs && r.ticket.holder !== ticket.holder;
    if (r?.state !== 'active' || held) return { taken: false, current: this.view(r) };
    r.ticket = { ...ticket };
    if (isSweepTicket(ticket)) r.epoch = (r.epoch ?? 0) + 1;
    return { taken: true, current: this.view(r) as MemoryRecord };
  }

  async dropTicket(account: string, name: string, holder: string): Promise<void> {
    const r = this.records.get(this.k(account, name));
    if (r?.ticket?.holder === holder) delete r.ticket;
  }

  async retire(account: string, name: string, expected: string | null | undefined, at: string): Promise<MoveOutcome> {
    const r = this.records.get(this.k(account, name));
    if (r?.state !== 'active' || (expected !== undefined && r.head !== expected)) return { ok: false, current: this.view(r) };
    r.state = 'retired';
    r.retired = at;
    return { ok: true };
  }

  async restore(account: string, name: string, ceiling: number): Promise<RestoreOutcome> {
    const r = this.records.get(this.k(account, name));
    if (!r) return { kind: 'missing' };
    if (r.state === 'active') return { kind: 'active' };
    if (this.active(account) >= ceiling) return { kind: 'ceiling' };
    r.state = 'active';
    delete r.retired;
    return { kind: 'restored', record: this.view(r) as MemoryRecord };
  }
}
