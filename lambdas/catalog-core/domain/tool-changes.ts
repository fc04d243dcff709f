import { isDeepStrictEqual } from 'node:util';
import { nonAdditiveChanges } from '../../shared/schema-compat';
import type { CatalogTool } from './types';

/**
 * A server's changelog: what changed between two captures of its tools, and registry version bumps.
 *
 * - **added** / **removed**: a name in one capture only;
 * - **renamed**: a removed and an added tool with the same input schema, paired only when the pair
 *   is unambiguous (one removed and one added tool share that schema);
 * - **schema**: the same name, another `inputSchema`.
 *
 * A change is **breaking** when a caller that worked before may fail now: a tool gone (removed or
 * renamed), or an input schema that accepts less, by the direction-aware rules of the contract
 * guard (`lambdas/shared/schema-compat.ts`, the request direction): a new required parameter, a
 * narrower type, an enum that lost values, a new constraint, a parameter removed. Rewording or
 * dropping a description is not breaking; a tool's description changing alone is no entry at all.
 */

export type ToolChangeKind = 'added' | 'removed' | 'renamed' | 'schema';

export interface ToolChange {
  kind: ToolChangeKind;
  tool: string;
  /** The old name of a renamed tool. */
  from?: string;
  breaking: boolean;
  /** Why a schema change is breaking (JSON paths, from the shared rules), at most a few. */
  reasons?: string[];
}

export interface ChangeEntry {
  /** When the change was seen (the capture's time), or the registry's publish time of a version. */
  at: string;
  kind: 'tools' | 'version';
  breaking: boolean;
  /** `tools`: what changed, in name order. */
  changes?: ToolChange[];
  /** `version`: the registry's version bump. */
  version?: { from: string; to: string };
}

const MAX_REASONS = 5;

function schemaOf(t: CatalogTool): Record<string, unknown> {
  return t.inputSchema ?? { type: 'object' };
}

/** Breaking reasons of a schema change (empty: compatible for callers). */
export function breakingReasons(prev: CatalogTool['inputSchema'], next: CatalogTool['inputSchema']): string[] {
  return nonAdditiveChanges({ inputSchema: prev ?? { type: 'object' } }, { inputSchema: next ?? { type: 'object' } }, { proseMayGo: true });
}

export function diffTools(prev: readonly CatalogTool[], next: readonly CatalogTool[]): ToolChange[] {
  const before = new Map(prev.map((t) => [t.name, t]));
  const after = new Map(next.map((t) => [t.name, t]));
  const removed = prev.filter((t) => !after.has(t.name));
  const added = next.filter((t) => !before.has(t.name));
  const out: ToolChange[] = [];
  const paired = new Set<CatalogTool>();
  for (const r of removed) {
    const sameSchema = added.filter((a) => isDeepStrictEqual(schemaOf(a), schemaOf(r)));
    const rivals = removed.filter((o) => isDeepStrictEqual(schemaOf(o), schemaOf(r)));
    if (sameSchema.length === 1 && rivals.length === 1) {
      paired.add(r).add(sameSchema[0]);
      out.push({ kind: 'renamed', tool: sameSchema[0].name, from: r.name, breaking: true });
    }
  }
  for (const r of removed) if (!paired.has(r)) out.push({ kind: 'removed', tool: r.name, breaking: true });
  for (const a of added) if (!paired.has(a)) out.push({ kind: 'added', tool: a.name, breaking: false });
  for (const t of next) {
    const old = before.get(t.name);
    if (old === undefined || isDeepStrictEqual(schemaOf(old), schemaOf(t))) continue;
    const reasons = breakingReasons(old.inputSchema, t.inputSchema);
    out.push({ kind: 'schema', tool: t.name, breaking: reasons.length > 0, ...(reasons.length > 0 && { reasons: reasons.slice(0, MAX_REASONS) }) });
  }
  return out.sort((a, b) => a.tool.localeCompare(b.tool) || a.kind.localeCompare(b.kind));
}

/** The changelog entry of a new capture, or undefined when nothing a caller sees changed. */
export function toolsEntry(prev: readonly CatalogTool[] | undefined, next: readonly CatalogTool[], at: string): ChangeEntry | undefined {
  // The first capture is the baseline, not a change.
  if (prev === undefined) return undefined;
  const changes = diffTools(prev, next);
  if (changes.length === 0) return undefined;
  return { at, kind: 'tools', breaking: changes.some((c) => c.breaking), changes };
}

/** A registry version bump as an entry, at the registry's publish time of the new version when it gave one. */
export function versionEntry(from: string | undefined, to: string, publishedAt: string | undefined, seenAt: string): ChangeEntry | undefined {
  if (from === undefined || from === to) return undefined;
  return { at: publishedAt ?? seenAt, kind: 'version', breaking: false, version: { from, to } };
}
