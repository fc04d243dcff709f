import { channel } from 'node:diagnostics_channel';

/**
 * Where a push's time goes, step by step, published on a diagnostics channel (`node:diagnostics_channel`)
 * once the push is answered: nothing is measured for nobody (a channel without subscribers costs a
 * check), and a profiler or the bench (`npm run bench -- git`) subscribes without any wiring.
 */
export const PUSH_STEPS_CHANNEL = 'memory:push-steps';

export type PushStep =
  /** The rev read, the memory's access. */
  | 'head'
  /** The pack: inflated, deltas applied, every id computed. */
  | 'unpack'
  /** The new commits walked and their ancestry checked; every pushed tree checked. */
  | 'commits'
  /** What each commit changed, and every new or changed note checked like a write. */
  | 'notes'
  /** Each new commit's index, packed search texts and lineage. */
  | 'indexes'
  /** The objects to store: one pack and its index, or loose objects. */
  | 'pack'
  /** The parallel PUT wave. */
  | 'wave'
  /** The conditional head move. */
  | 'move';

export interface PushReport {
  memory: string;
  /** `landed`, or the refusal's reason (git's short status). */
  outcome: string;
  objects: number;
  commits: number;
  notes: number;
  /** Milliseconds per step, in the order they ran; steps not reached are absent. */
  ms: Partial<Record<PushStep, number>>;
  total: number;
}

const published = channel(PUSH_STEPS_CHANNEL);

/** Times the steps of one push. */
export class PushTimer {
  private readonly start = performance.now();
  private last = this.start;
  readonly ms: Partial<Record<PushStep, number>> = {};
  objects = 0;
  commits = 0;
  notes = 0;

  /** The time since the previous step ended, counted to `step`. */
  step(step: PushStep): void {
    const now = performance.now();
    this.ms[step] = (this.ms[step] ?? 0) + (now - this.last);
    this.last = now;
  }

  publish(memory: string, outcome: string): void {
    if (!published.hasSubscribers) return;
    const report: PushReport = {
      memory,
      outcome,
      objects: this.objects,
      commits: this.commits,
      notes: this.notes,
      ms: this.ms,
      total: performance.now() - this.start,
    };
    published.publish(report);
  }
}
