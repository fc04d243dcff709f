import type { CachedResponse, CrawlPointer, CrawlStateStore, NameState, PlanStep, RunMeta, UnitItem, UnitRef } from '../domain/ports';
import type { UnitResult } from '../domain/types';

/**
 * In-memory crawl state with the same semantics as the DynamoDB adapter (conditions included),
 * for unit tests of the crawler service. Values are cloned in and out, as a database would.
 */
export class MemoryCrawlState implements CrawlStateStore {
  private pointer: CrawlPointer = {};
  private readonly runs = new Map<string, RunMeta>();
  private readonly units = new Map<string, UnitItem>();
  private readonly names = new Map<string, NameState>();
  private readonly slugs = new Map<string, string>();
  private readonly cache = new Map<string, unknown>();

  async getPointer(): Promise<CrawlPointer> {
    return structuredClone(this.pointer);
  }

  async startRun(run: RunMeta, expectedCurrent: string | undefined): Promise<boolean> {
    if (this.runs.has(run.runId) || this.pointer.currentRun !== expectedCurrent) return false;
    this.runs.set(run.runId, structuredClone(run));
    this.pointer.currentRun = run.runId;
    return true;
  }

  async getRun(runId: string): Promise<RunMeta | undefined> {
    const r = this.runs.get(runId);
    return r && structuredClone(r);
  }

  async commitPlanStep(runId: string, step: PlanStep): Promise<void> {
    const run = this.runs.get(runId);
    if (!run) throw new Error(`unknown run ${runId}`);
    if (run.steps >= step.step) return;
    if (run.steps !== step.step - 1) throw new Error(`plan step ${step.step} out of order (at ${run.steps})`);
    for (const u of step.units) {
      const key = `${u.runId}/${u.unitId}`;
      if (this.units.has(key)) throw new Error(`unit ${key} exists`);
    }
    for (const u of step.units) this.units.set(`${u.runId}/${u.unitId}`, structuredClone(u));
    run.steps = step.step;
    run.unitsCreated += step.units.length;
    run.rowsSeen += step.rows;
    run.status = step.planned ? 'running' : 'planning';
    if (step.cursor !== undefined) run.cursor = step.cursor;
    else delete run.cursor;
    if (step.maxUpdatedAt !== undefined) run.maxUpdatedAt = step.maxUpdatedAt;
    if (step.upstreamStartedAt !== undefined) run.upstreamStartedAt ??= step.upstreamStartedAt;
  }

  async getUnit(ref: UnitRef): Promise<UnitItem | undefined> {
    const u = this.units.get(`${ref.runId}/${ref.unitId}`);
    return u && structuredClone(u);
  }

  async listUnits(runId: string): Promise<UnitItem[]> {
    return [...this.units.values()]
      .filter((u) => u.runId === runId)
      .sort((a, b) => (a.unitId < b.unitId ? -1 : 1))
      .map((u) => {
        const { rows: _rows, names: _names, ...rest } = structuredClone(u);
        return rest;
      });
  }

  async completeUnit(ref: UnitRef, result: UnitResult): Promise<RunMeta> {
    const u = this.units.get(`${ref.runId}/${ref.unitId}`);
    const run = this.runs.get(ref.runId);
    if (!u || !run) throw new Error(`unknown unit ${ref.runId}/${ref.unitId}`);
    if (u.status === 'pending') {
      u.status = 'done';
      u.result = structuredClone(result);
      delete u.rows;
      run.unitsDone += 1;
    }
    return structuredClone(run);
  }

  async finishRun(runId: string, summary: string, highWater: string | undefined): Promise<void> {
    const run = this.runs.get(runId);
    if (!run) throw new Error(`unknown run ${runId}`);
    if (run.status === 'done') return;
    if (this.pointer.currentRun !== runId) throw new Error(`run ${runId} is not current`);
    run.status = 'done';
    run.finishedAt = new Date().toISOString();
    run.summary = summary;
    delete this.pointer.currentRun;
    this.pointer.lastRun = runId;
    if (highWater !== undefined) this.pointer.highWater = highWater;
  }

  async getNames(names: string[]): Promise<Map<string, NameState>> {
    const out = new Map<string, NameState>();
    for (const n of names) {
      const s = this.names.get(n);
      if (s) out.set(n, structuredClone(s));
    }
    return out;
  }

  async claimSlug(slug: string, name: string): Promise<boolean> {
    const owner = this.slugs.get(slug);
    if (owner !== undefined && owner !== name) return false;
    this.slugs.set(slug, name);
    return true;
  }

  async saveNames(states: NameState[]): Promise<void> {
    for (const st of states) this.names.set(st.name, structuredClone(st));
  }

  async *scanNames(): AsyncIterable<NameState> {
    for (const s of [...this.names.values()]) yield structuredClone(s);
  }

  async getCached<T>(keys: string[]): Promise<Map<string, CachedResponse<T>>> {
    const out = new Map<string, CachedResponse<T>>();
    for (const k of keys) {
      const v = this.cache.get(k);
      if (v !== undefined) out.set(k, structuredClone(v) as CachedResponse<T>);
    }
    return out;
  }

  async putCached<T>(key: string, value: CachedResponse<T>): Promise<void> {
    this.cache.set(key, structuredClone(value));
  }
}
