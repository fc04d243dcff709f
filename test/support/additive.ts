import { isDeepStrictEqual } from 'node:util';

/**
 * Contract guard: is `next` the same as `prev` up to additions? Objects may gain keys, and the
 * arrays that list alternatives (enum, parameters, tags, anyOf/oneOf, servers) may gain entries;
 * anything removed, renamed or changed is reported with its JSON path. `required` lists may not
 * grow for request parameters' schemas but may for responses, so they are compared as sets that
 * may only gain entries. Descriptions and summaries may be reworded.
 */
const GROWABLE_ARRAYS = new Set(['enum', 'parameters', 'tags', 'anyOf', 'oneOf', 'required', 'servers']);
/** Prose may be reworded without breaking anyone; it is not frozen. */
const PROSE = new Set(['description', 'summary']);

export function nonAdditiveChanges(prev: unknown, next: unknown, path = '$'): string[] {
  if (isDeepStrictEqual(prev, next)) return [];
  if (Array.isArray(prev)) {
    if (!Array.isArray(next)) return [`${path}: was an array`];
    const key = path.slice(path.lastIndexOf('.') + 1);
    if (GROWABLE_ARRAYS.has(key)) {
      return prev.flatMap((item, i) => {
        const id = identity(item);
        const match = next.find((n) => (id !== undefined ? identity(n) === id : isDeepStrictEqual(n, item)));
        if (match === undefined) return [`${path}[${i}]: removed or changed (${JSON.stringify(item).slice(0, 80)})`];
        return id !== undefined ? nonAdditiveChanges(item, match, `${path}[${id}]`) : [];
      });
    }
    if (prev.length !== next.length) return [`${path}: length ${prev.length} → ${next.length}`];
    return prev.flatMap((item, i) => nonAdditiveChanges(item, next[i], `${path}[${i}]`));
  }
  if (prev !== null && typeof prev === 'object') {
    if (next === null || typeof next !== 'object' || Array.isArray(next)) return [`${path}: was an object`];
    const n = next as Record<string, unknown>;
    return Object.entries(prev as Record<string, unknown>).flatMap(([k, v]) => {
      if (!(k in n)) return [`${path}.${k}: removed`];
      if (PROSE.has(k) && typeof v === 'string' && typeof n[k] === 'string') return [];
      return nonAdditiveChanges(v, n[k], `${path}.${k}`);
    });
  }
  return [`${path}: ${JSON.stringify(prev)} → ${JSON.stringify(next)}`];
}

/** Parameters are matched by name and location, not position. */
function identity(item: unknown): string | undefined {
  if (item && typeof item === 'object' && 'name' in item && 'in' in item) {
    const o = item as { name: unknown; in: unknown };
    return `${String(o.in)}:${String(o.name)}`;
  }
  return undefined;
}
