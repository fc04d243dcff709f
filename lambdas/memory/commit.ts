import { randomUUID } from 'node:crypto';
import type { KeyedWrite } from '../shared/idempotency/store';
import { EVENT_METRICS } from '../shared/observability/metric-names';
import { countMetric } from '../shared/observability/metrics';
import { buildChain, type Base, type Chain, type ChainDeps, type ChainWrite, type Committed, type Outcome, type Plan } from './commit-chain';
import { checkExpectedRev } from './content';
import { MemoryError, staleRev } from './errors';
import type { GitOverlay } from './git-overlay';
import { memoryNotFound, type Memories } from './memories';
import { indexStats } from './note-index';
import { checkTwins } from './paths';
import type { MemoryRecord, MoveOutcome, RevLock } from './ports';
import type { Caller } from './types';

export type { Base, Committed, Plan, Put } from './commit-chain';

/**
 * The write loop, the one path by which a REST or MCP write moves a memory's head: read the rev
 * item, let each write plan its change against the head's index, build the commits, store them in
 * one parallel PUT wave, then move the head with the rev lock's conditional write. A lost race
 * rebases (the plans run again on the new head) unless the caller expected a rev.
 *
 * Within one process, writes to one memory queue up and go in batches: the writes waiting when a
 * batch starts become a chain of commits (one per write) landed by one head move, so a burst costs
 * a few moves instead of one each. Across processes:
 * - a writer that lost a race takes the memory's write ticket before its next attempt, and every
 *   writer of this loop waits while another holds it: the next move is the loser's, so a writer on
 *   a cold instance is not starved by a hot one (a ticket lapses after `writeTicketMs`, should its
 *   holder die);
 * - every write has a time budget (`writeBudgetMs`, from the moment it is queued): past it, it is
 *   answered 503 with Retry-After. It is answered so only while no move that could land it is in
 *   flight: a write that was answered an error is never applied later.
 * - past its budget a write waits for no storage call but a head move already sent: the rev read,
 *   the ticket's take and drop and the read that checks a move without an answer are given up at
 *   the deadline (they go on unwatched). Each waited its own whole SDK budget in turn, so a write
 *   meeting a paused table took two or three of them (move, check, drop) past any client's patience.
 */

export interface CommitOptions {
  /** The head the caller expects; a different head is CONFLICT instead of a rebase. */
  expectedRev?: string;
  /** Create the memory first when it does not exist (the ceiling applies). */
  createMemory?: boolean;
  /**
   * A keyed write (`Idempotency-Key`): its result is recorded with the head move. With `committed`,
   * the write landed before (its answer was lost): that result is returned and nothing is written.
   */
  once?: KeyedWrite;
  /** No time budget: imports, which no API client waits on. */
  unbounded?: boolean;
}

export interface CommitDeps extends ChainDeps {
  lock: RevLock;
  memories: Memories;
  /** Waits between two looks at another writer's ticket. */
  backoff: (attempt: number) => Promise<void>;
  /** An overlay on the memory's objects; `fresh`: objects this write stored in an earlier attempt. */
  git: (rec: MemoryRecord, fresh?: ReadonlyMap<string, Uint8Array>) => GitOverlay;
  /** Epoch milliseconds, for budgets and tickets. */
  now?: () => number;
}

/**
 * Did this writer's conditional move land? The single place that decides it. A failed answer whose
 * current head carries our writer token means the move landed and only its answer was lost (an SDK
 * retry of a request that succeeded). The sha alone is not proof: another instance making the same
 * change in the same second builds the very same commit, and taking its move for ours would
 * acknowledge a write that was never applied.
 */
export function landed(moved: MoveOutcome, commit: string, writer: string): boolean {
  return moved.ok || (moved.current?.head === commit && moved.current.writer === writer);
}

interface Job extends ChainWrite {
  opts: CommitOptions;
  /** Epoch milliseconds; Infinity when unbounded. */
  deadline: number;
  settle: (outcome: Outcome) => void;
  done: boolean;
  timer?: ReturnType<typeof setTimeout>;
}

interface Queue {
  jobs: Job[];
  draining: boolean;
}

/** Thrown by `beforeDeadline` when the work was not done in time (it goes on, unwatched). */
class PastDeadline extends Error {}

export class CommitLoop {
  private readonly queues = new Map<string, Queue>();
  private readonly now: () => number;

  constructor(private readonly deps: CommitDeps) {
    this.now = deps.now ?? Date.now;
  }

  /** Runs `plan` against the memory's head until its commit lands (or the plan says there is nothing to do). */
  run<D>(caller: Caller, name: string, path: string, opts: CommitOptions, plan: (base: Base) => Promise<Plan<D>>): Promise<Committed<D>> {
    if (opts.once?.committed !== undefined) return Promise.resolve(opts.once.committed as Committed<D>);
    const key = `${caller.account}\u0000${name}`;
    return new Promise<Committed<D>>((resolve, reject) => {
      const start = this.now();
      const job: Job = {
        caller,
        path,
        plan: refuseTwins(plan),
        opts,
        ...(opts.once && { once: opts.once }),
        deadline: opts.unbounded ? Number.POSITIVE_INFINITY : start + this.deps.limits.writeBudgetMs,
        done: false,
        settle: (o) => {
          if (job.done) return;
          job.done = true;
          clearTimeout(job.timer);
          if (o.ok) resolve(o.value as Committed<D>);
          else reject(o.error);
        },
      };
      let q = this.queues.get(key);
      if (!q) {
        q = { jobs: [], draining: false };
        this.queues.set(key, q);
      }
      const queue = q;
      queue.jobs.push(job);
      if (Number.isFinite(job.deadline)) {
        // While it waits its turn in this process, a write past its budget is answered at once.
        job.timer = setTimeout(() => {
          const i = queue.jobs.indexOf(job);
          if (i < 0) return;
          queue.jobs.splice(i, 1);
          job.settle({ ok: false, error: this.overBudget() });
        }, job.deadline - start);
        job.timer.unref?.();
      }
      if (!queue.draining) void this.drain(key, name, queue);
    });
  }

  private async drain(key: string, name: string, q: Queue): Promise<void> {
    q.draining = true;
    while (q.jobs.length > 0) {
      const batch = this.takeBatch(q.jobs);
      for (const j of batch) clearTimeout(j.timer);
      try {
        await this.commitBatch(name, batch);
      } catch (error) {
        for (const j of batch) j.settle({ ok: false, error });
      }
    }
    q.draining = false;
    if (this.queues.get(key) === q) this.queues.delete(key);
  }

  /** The next writes to go together: a write with an expected rev, or an import, goes alone. */
  private takeBatch(jobs: Job[]): Job[] {
    const alone = (j: Job): boolean => j.opts.expectedRev !== undefined || j.opts.unbounded === true;
    if (alone(jobs[0])) return jobs.splice(0, 1);
    let n = 1;
    while (n < jobs.length && n < this.deps.limits.maxWriteBatch && !alone(jobs[n])) n++;
    return jobs.splice(0, n);
  }

  private overBudget(): MemoryError {
    const seconds = this.deps.limits.writeBudgetMs / 1000;
    return new MemoryError(
      'UPSTREAM_UNAVAILABLE',
      'contention',
      `the write could not be made within ${seconds} s (other writes to this memory, or storage, were slow) and was not applied; retry`,
      { retryAfterSeconds: 1 },
    );
  }

  private async commitBatch(name: string, jobs: Job[]): Promise<void> {
    const expected = checkExpectedRev(jobs[0].opts.expectedRev);
    const end = Math.max(...jobs.map((j) => j.deadline));
    const read = await this.beforeDeadline(
      this.record(name, jobs).then((r) => ({ r })),
      end,
    ).catch(pastDeadline);
    // Given up at the deadline: nothing was written, and every write of the batch is past its time.
    if (!read) for (const j of jobs) j.settle({ ok: false, error: this.overBudget() });
    let rec = read?.r;
    if (!rec) return;
    if (expected !== undefined && rec.head !== expected) throw staleRev(rec.name, rec);
    const { account } = rec;
    // Objects this batch stored in earlier attempts: the next attempt need not store them again.
    let fresh = new Map<string, Uint8Array>();
    let holder: string | undefined;
    try {
      for (let moves = 0; ; ) {
        const live = this.unexpired(jobs);
        if (live.length === 0) return;
        // An attempt may use the time of the write with the most left: one with less that ends
        // meanwhile is answered when the attempt does (landed: success; abandoned: 503). The earliest
        // deadline instead made a batch of writes queued a few milliseconds apart restart its
        // attempt for each of them in turn, and land none.
        const deadline = Math.max(...live.map((j) => j.deadline));
        if (rec.ticket && rec.ticket.holder !== holder) {
          // Another writer's turn (or a sweep's): building now would only lose the race again.
          const turn = await this.awaitTurn(account, name, rec, deadline);
          rec = turn.rec;
          holder = turn.holder;
          if (rec.state !== 'active') throw memoryNotFound(name);
          continue;
        }
        const chain = await this.beforeDeadline(buildChain(this.deps, rec, this.deps.git(rec, fresh), live), deadline).catch(pastDeadline);
        if (!chain) continue;
        if (chain.commits.length === 0) return this.settleAll(chain);
        const writer = randomUUID();
        const moved = await this.move(rec, chain, writer, holder, deadline);
        const last = chain.commits[chain.commits.length - 1];
        if (landed(moved, last.sha, writer)) {
          holder = undefined; // the move dropped it
          chain.git.persisted();
          for (const c of chain.commits) this.deps.indexes.remember(rec, c.index);
          this.deps.lineages.remember(rec, [...chain.created, ...chain.commits.map((c) => c.lineage)]);
          // The transport's claim object: its write needs no stored answer now (`runOnce`).
          for (const w of chain.keyed) if (w.once) w.once.recorded = true;
          return this.settleAll(chain);
        }
        if (moved.ok) throw new Error('unreachable: a move that succeeded did not land');
        const current = moved.current;
        if (moved.lostReceipt !== undefined) {
          // That write's idempotency claim is no longer its own (another request took the key over):
          // it is left out, the others try again at once.
          (chain.keyed[moved.lostReceipt] as Job | undefined)?.settle({ ok: false, error: claimLost() });
        } else {
          if (current?.state !== 'active') throw memoryNotFound(name);
          if (expected !== undefined) throw staleRev(name, current);
          if (++moves >= this.deps.limits.maxWriteAttempts) {
            throw new MemoryError('UPSTREAM_UNAVAILABLE', 'contention', 'too many concurrent writes to this memory; retry', { retryAfterSeconds: 1 });
          }
          countMetric(EVENT_METRICS.rebaseRetries);
        }
        if (!current) throw memoryNotFound(name);
        // After a sweep (a new epoch) nothing stored before may be relied on: the next attempt stores all it needs.
        fresh =
          (current.epoch ?? 0) === (rec.epoch ?? 0) ? new Map([...fresh, ...chain.git.pending().map((i): [string, Uint8Array] => [i.sha, i.body])]) : new Map();
        rec = current;
        if (moved.lostReceipt === undefined && !(rec.ticket && rec.ticket.holder !== holder)) {
          // Lost the race: the next move is this one's (the ticket), so a hot writer cannot starve it.
          // Given up at the deadline (the loop then answers the writes): a ticket taken meanwhile lapses.
          const turn = await this.beforeDeadline(this.takeTurn(account, name, holder), deadline).catch(pastDeadline);
          if (!turn) continue;
          rec = turn.rec ?? rec;
          holder = turn.holder;
        }
      }
    } finally {
      // Best effort (the ticket lapses): sent, but not waited for past the batch's time.
      if (holder) await this.beforeDeadline(this.deps.lock.dropTicket(account, name, holder), end).catch(() => undefined);
    }
  }

  /** The active rev item the batch writes to (creating the memory for writes that may); settles the writes that cannot run. */
  private async record(name: string, jobs: Job[]): Promise<MemoryRecord | undefined> {
    const { lock, memories } = this.deps;
    const { caller } = jobs[0];
    let rec = await lock.get(caller.account, name);
    // A write that would create the memory meets a retired one as creation does (DECISIONS: 409 naming the restore).
    if (rec?.state === 'retired') {
      for (const j of jobs) j.settle({ ok: false, error: j.opts.createMemory ? memories.retired(rec.name) : memoryNotFound(name) });
      return undefined;
    }
    if (!rec) {
      const creator = jobs.find((j) => j.opts.createMemory);
      if (creator) {
        try {
          const created = await memories.create(creator.caller, name);
          rec = await lock.get(caller.account, created.memory.name);
        } catch (error) {
          for (const j of jobs) if (j.opts.createMemory) j.settle({ ok: false, error });
        }
      }
    }
    if (rec?.state !== 'active') {
      for (const j of jobs) j.settle({ ok: false, error: memoryNotFound(name) });
      return undefined;
    }
    return rec;
  }

  /** The writes still waiting for an answer, after answering those past their budget. */
  private unexpired(jobs: Job[]): Job[] {
    const now = this.now();
    for (const j of jobs) if (!j.done && now >= j.deadline) j.settle({ ok: false, error: this.overBudget() });
    return jobs.filter((j) => !j.done);
  }

  private settleAll(chain: Chain): void {
    for (const [w, outcome] of chain.outcomes) (w as Job).settle(outcome);
  }

  /**
   * The conditional move of the head to the chain's last commit, with the receipts of its keyed
   * writes. A move without an answer may have landed: the record says, before anyone is answered.
   */
  private async move(rec: MemoryRecord, chain: Chain, writer: string, holder: string | undefined, deadline: number): Promise<MoveOutcome> {
    const last = chain.commits[chain.commits.length - 1];
    const next = { head: last.sha, updated: last.index.time, writer, ...indexStats(last.index) };
    try {
      return await this.deps.lock.moveHead(rec.account, rec.name, rec.head, next, { from: rec, fair: true, holder, receipts: chain.receipts });
    } catch (err) {
      // Checked within the write's time only: past it, the answer is the storage failure (the move may have landed).
      if (this.now() >= deadline) throw err;
      const now = await this.beforeDeadline(this.deps.lock.get(rec.account, rec.name), deadline).catch(() => undefined);
      if (now?.head === last.sha && now.writer === writer) return { ok: true };
      throw err;
    }
  }

  /** Takes the write ticket after a lost race; without it (another holds it) the loop waits for that one. */
  private async takeTurn(account: string, name: string, holder: string | undefined): Promise<{ rec?: MemoryRecord; holder?: string }> {
    const now = this.now();
    const ticket = { holder: holder ?? randomUUID(), untilMs: now + this.deps.limits.writeTicketMs };
    const out = await this.deps.lock.takeTicket(account, name, ticket, now);
    return out.taken ? { rec: out.current, holder: ticket.holder } : { rec: out.current };
  }

  /** Waits until the other writer's ticket is dropped or lapses, then takes it; gives up at `deadline`. */
  private async awaitTurn(account: string, name: string, rec: MemoryRecord, deadline: number): Promise<{ rec: MemoryRecord; holder?: string }> {
    let current = rec;
    while (this.now() < deadline) {
      await this.deps.backoff(1);
      // Let the holder's own work run even when the backoff does not wait (tests).
      await new Promise((r) => setImmediate(r));
      // Given up at the deadline: the caller's loop then answers the writes past their time.
      const turn = await this.beforeDeadline(this.takeTurn(account, name, undefined), deadline).catch(pastDeadline);
      if (!turn) break;
      if (!turn.rec) throw memoryNotFound(name);
      current = turn.rec;
      if (turn.holder || current.state !== 'active') return { rec: current, holder: turn.holder };
    }
    return { rec: current };
  }

  private async beforeDeadline<T>(work: Promise<T>, deadline: number): Promise<T> {
    if (!Number.isFinite(deadline)) return work;
    // Work abandoned at the deadline goes on unwatched: its failure must not go unhandled.
    work.catch(() => undefined);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new PastDeadline()), Math.max(0, deadline - this.now()));
    });
    try {
      return await Promise.race([work, late]);
    } finally {
      clearTimeout(timer);
    }
  }
}

/** `undefined` for work given up at its deadline; any other failure stays one. */
function pastDeadline(err: unknown): undefined {
  if (err instanceof PastDeadline) return undefined;
  throw err;
}

/** Every way a write names a note goes through here: no new path may twin another (`paths.ts`). */
function refuseTwins<D>(plan: (base: Base) => Promise<Plan<D>>): (base: Base) => Promise<Plan<D>> {
  return async (base) => {
    const step = await plan(base);
    if (step.kind === 'put')
      checkTwins(
        base.index?.files ?? new Map(),
        step.puts.map((p) => p.path),
        step.movedAway,
      );
    return step;
  };
}

function claimLost(): MemoryError {
  return new MemoryError('CONFLICT', 'contention', 'another request with this idempotency key is being processed; retry after a second', {
    retryAfterSeconds: 1,
  });
}
