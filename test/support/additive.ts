import { isDeepStrictEqual } from 'node:util';

/**
 * Contract guard: is `next` the same as `prev` up to changes no client can notice? The rule depends
 * on which way data flows:
 *
 * - A **request** (parameters, request bodies, MCP `inputSchema`) may accept more, never less: it may
 *   gain optional properties and parameters and enum values; it may not gain a required property or
 *   a required parameter, a new constraint (a `maxLength` where there was none,
 *   `additionalProperties: false`, …) or a narrower enum.
 * - A **response** (`responses`, MCP `outputSchema`) may promise more, never less: it may gain
 *   properties, required entries and constraints; it may not lose a property, a required entry or an
 *   enum value.
 * - Anything else (and a component schema used by requests and responses alike) is held to both.
 *
 * Removals, renames, changed types and any changed limit (the limits are the spec's, frozen in both
 * directions) are reported everywhere, with their JSON path. Descriptions and summaries may be
 * reworded. Component schemas (`#/components/schemas/X`) take the direction of
 * the places that reference them.
 */
type Flow = 'request' | 'response' | 'both';

/** Alternatives: entries may be added (subject to the flow's rules), matched by identity or value. */
const LISTS = new Set(['enum', 'parameters', 'tags', 'anyOf', 'oneOf', 'required', 'servers', 'type']);
/** Prose may be reworded without breaking anyone; it is not frozen. */
const PROSE = new Set(['description', 'summary', 'title', 'example', 'examples']);
/** Keywords that restrict what a schema accepts: new in a request schema, they refuse what passed before. */
const CONSTRAINTS = new Set([
  'maxLength',
  'minLength',
  'maximum',
  'minimum',
  'exclusiveMaximum',
  'exclusiveMinimum',
  'maxItems',
  'minItems',
  'maxProperties',
  'minProperties',
  'pattern',
  'format',
  'multipleOf',
  'const',
  'enum',
  'required',
  'not',
  'uniqueItems',
]);
/** Map-like objects whose keys are names, not schema keywords. */
const NAME_MAPS = new Set([
  'properties',
  'patternProperties',
  'paths',
  'schemas',
  'responses',
  'headers',
  'content',
  'components',
  'securitySchemes',
  '$defs',
  'definitions',
]);

/**
 * Keywords whose value constrains nothing: JSON object keys are always strings, and an empty schema
 * (or `true`) accepts every value. Dropping one changes no schema's meaning.
 */
function vacuous(key: string, value: unknown): boolean {
  if (key === 'additionalProperties') return value === true || isDeepStrictEqual(value, {});
  if (key === 'propertyNames') return value === true || isDeepStrictEqual(value, {}) || isDeepStrictEqual(value, { type: 'string' });
  return false;
}

export function nonAdditiveChanges(prev: unknown, next: unknown): string[] {
  const flows = componentFlows(next);
  return compare(prev, next, '$', [], flows);
}

function compare(prev: unknown, next: unknown, path: string, segments: string[], flows: Map<string, Flow>): string[] {
  if (isDeepStrictEqual(prev, next)) return [];
  const key = segments[segments.length - 1] ?? '';
  const flow = flowOf(segments, flows);
  if (Array.isArray(prev)) {
    if (!Array.isArray(next)) return [`${path}: was an array`];
    if (LISTS.has(key)) return compareList(key, prev, next, path, segments, flow, flows);
    if (prev.length !== next.length) return [`${path}: length ${prev.length} → ${next.length}`];
    return prev.flatMap((item, i) => compare(item, next[i], `${path}[${i}]`, [...segments, String(i)], flows));
  }
  if (prev !== null && typeof prev === 'object') {
    if (next === null || typeof next !== 'object' || Array.isArray(next)) return [`${path}: was an object`];
    const p = prev as Record<string, unknown>;
    const n = next as Record<string, unknown>;
    const out = Object.entries(p).flatMap(([k, v]) => {
      if (!(k in n)) return (PROSE.has(k) && k !== 'description' && k !== 'summary') || (!NAME_MAPS.has(key) && vacuous(k, v)) ? [] : [`${path}.${k}: removed`];
      if (PROSE.has(k) && (typeof v === 'string' || k.startsWith('example'))) return [];
      return compare(v, n[k], `${path}.${k}`, [...segments, k], flows);
    });
    // Added keys: a new constraint on a schema that accepts input refuses what it accepted before.
    const isSchemaObject = !NAME_MAPS.has(key);
    if (isSchemaObject && flow !== 'response') {
      for (const k of Object.keys(n)) {
        if (k in p) continue;
        if (CONSTRAINTS.has(k) && !(k === 'required' && Array.isArray(n[k]) && (n[k] as unknown[]).length === 0))
          out.push(`${path}.${k}: new constraint on input (${JSON.stringify(n[k]).slice(0, 60)})`);
        if (k === 'additionalProperties' && n[k] === false) out.push(`${path}.additionalProperties: now false on input`);
        if (k === 'required' && n[k] === true) out.push(`${path}: now required`);
      }
    }
    return out;
  }
  if (key === 'required' && typeof prev === 'boolean' && typeof next === 'boolean') {
    // A parameter that stops being required accepts more; one that becomes required refuses what passed.
    if (prev && !next && flow !== 'response') return [];
    return [`${path}: ${prev} → ${next}`];
  }
  if (key === 'additionalProperties' && prev === false && next !== false && flow === 'request') return [];
  return [`${path}: ${JSON.stringify(prev)} → ${JSON.stringify(next)}`];
}

function compareList(key: string, prev: unknown[], next: unknown[], path: string, segments: string[], flow: Flow, flows: Map<string, Flow>): string[] {
  const out: string[] = [];
  for (const [i, item] of prev.entries()) {
    const id = identity(item);
    const match = next.find((n) => (id !== undefined ? identity(n) === id : isDeepStrictEqual(n, item)));
    if (match === undefined) {
      // An input that stops requiring a property accepts more.
      if (key === 'required' && flow === 'request') continue;
      out.push(`${path}[${i}]: removed or changed (${JSON.stringify(item).slice(0, 80)})`);
    } else if (id !== undefined) out.push(...compare(item, match, `${path}[${id}]`, [...segments, id], flows));
  }
  for (const item of next) {
    const id = identity(item);
    const known = prev.some((p) => (id !== undefined ? identity(p) === id : isDeepStrictEqual(p, item)));
    if (known) continue;
    if (key === 'required' && flow !== 'response') out.push(`${path}: newly requires ${JSON.stringify(item)} of input`);
    if (key === 'parameters' && item && typeof item === 'object' && (item as { required?: unknown }).required === true) {
      out.push(`${path}: new required parameter ${id ?? JSON.stringify(item).slice(0, 60)}`);
    }
    if (key === 'type' && flow !== 'response') continue;
    if (key === 'type') out.push(`${path}: output may now also be ${JSON.stringify(item)}`);
  }
  return out;
}

/** Parameters are matched by name and location, not position. */
function identity(item: unknown): string | undefined {
  if (item && typeof item === 'object' && 'name' in item && 'in' in item) {
    const o = item as { name: unknown; in: unknown };
    return `${String(o.in)}:${String(o.name)}`;
  }
  return undefined;
}

/** The direction a path is in: under a request body or parameters, or under a response. */
function flowOf(segments: readonly string[], components: Map<string, Flow>): Flow {
  let flow: Flow | undefined;
  for (const s of segments) {
    if (s === 'requestBody' || s === 'parameters' || s === 'inputSchema') flow = 'request';
    else if (s === 'responses' || s === 'outputSchema') flow = 'response';
  }
  if (flow) return flow;
  const i = segments.indexOf('schemas');
  if (i > 0 && segments[i - 1] === 'components' && segments[i + 1]) return components.get(segments[i + 1]) ?? 'both';
  return 'both';
}

/** Which way each component schema is used, following `$ref`s transitively from requests and responses. */
function componentFlows(doc: unknown): Map<string, Flow> {
  const schemas = ((doc as { components?: { schemas?: Record<string, unknown> } })?.components?.schemas ?? {}) as Record<string, unknown>;
  const seen = new Map<string, Set<'request' | 'response'>>();
  const mark = (node: unknown, flow: 'request' | 'response'): void => {
    if (Array.isArray(node)) {
      for (const n of node) mark(n, flow);
      return;
    }
    if (!node || typeof node !== 'object') return;
    for (const [k, v] of Object.entries(node as Record<string, unknown>)) {
      if (k === '$ref' && typeof v === 'string' && v.startsWith('#/components/schemas/')) {
        const name = v.slice('#/components/schemas/'.length);
        const flows = seen.get(name) ?? new Set();
        if (!flows.has(flow)) {
          flows.add(flow);
          seen.set(name, flows);
          mark(schemas[name], flow);
        }
      } else mark(v, flow);
    }
  };
  const walk = (node: unknown, segments: string[]): void => {
    if (!node || typeof node !== 'object') return;
    for (const [k, v] of Object.entries(node as Record<string, unknown>)) {
      if (segments[0] === 'components') return;
      if (k === 'requestBody' || k === 'parameters') mark(v, 'request');
      else if (k === 'responses') mark(v, 'response');
      else walk(v, [...segments, k]);
    }
  };
  walk(doc, []);
  const out = new Map<string, Flow>();
  for (const [name, flows] of seen) out.set(name, flows.size === 2 ? 'both' : [...flows][0]);
  return out;
}
