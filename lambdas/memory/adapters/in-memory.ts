import type { BlobItem, BlobKind, BlobStore, CreateOutcome, HeadMove, MemoryRecord, MoveOutcome, RestoreOutcome, RevLock } from '../ports';

/**
 * In-process adapters with the same semantics as S3 and DynamoDB (conditional moves, the ceiling
 * counted over active memories). For unit tests and for transports' tests that need no backends.
 */
export class InMemoryBlobStore implements BlobStore {
  readonly items = new Map<string, Uint8Array>();

  async get(memoryId: string, kind: BlobKind, sha: string): Promise<Uint8Array | undefined> {
    const v = this.items.get(`${memoryId}/${kind}/${sha}`);
    return v ? new Uint8Array(v) : undefined;
  }

  async putMany(memoryId: string, items: readonly BlobItem[]): Promise<void> {
    for (const item of items) this.items.set(`${memoryId}/${item.kind}/${item.sha}`, new Uint8Array(item.body));
  }

  async list(memoryId: string, kind: 'pack-index'): Promise<string[]> {
    const prefix = `${memoryId}/${kind}/`;
    return [...this.items.keys()].filter((k) => k.startsWith(prefix)).map((k) => k.slice(prefix.length));
  }
}

export class InMemoryRevLock implements RevLock {
  private readonly records = new Map<string, MemoryRecord>();

  private k(account: string, name: string): string {
    return `${account}\u0000${name}`;
  }

  async get(account: string, name: string): Promise<MemoryRecord | undefined> {
    const r = this.records.get(this.k(account, name));
    return r ? { ...r } : undefined;
  }

  async list(account: string): Promise<MemoryRecord[]> {
    return [...this.records.values()]
      .filter((r) => r.account === account)
      .sort((a, b) => (a.name < b.name ? -1 : 1))
      .map((r) => ({ ...r }));
  }

  private active(account: string): number {
    return [...this.records.values()].filter((r) => r.account === account && r.state === 'active').length;
  }

  async create(record: MemoryRecord, ceiling: number): Promise<CreateOutcome> {
    const existing = this.records.get(this.k(record.account, record.name));
    if (existing) return { kind: 'exists', record: { ...existing } };
    if (this.active(record.account) >= ceiling) return { kind: 'ceiling' };
    this.records.set(this.k(record.account, record.name), { ...record });
    return { kind: 'created', record: { ...record } };
  }

  async moveHead(account: string, name: string, expected: string | null, next: HeadMove): Promise<MoveOutcome> {
    const r = this.records.get(this.k(account, name));
    if (r?.state !== 'active' || r.head !== expected) return { ok: false, current: r ? { ...r } : undefined };
    Object.assign(r, next);
    return { ok: true };
  }

  async retire(account: string, name: string, expected: string | null | undefined, at: string): Promise<MoveOutcome> {
    const r = this.records.get(this.k(account, name));
    if (r?.state !== 'active' || (expected !== undefined && r.head !== expected)) return { ok: false, current: r ? { ...r } : undefined };
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
    return { kind: 'restored', record: { ...r } };
  }
}
