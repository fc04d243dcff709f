import { isDeepStrictEqual } from 'node:util';

/**
 * Direction-aware compatibility of two schema documents (the contract guard of the tests,
 * `test/support/additive.ts`, and the catalog's tool changelog, which calls a change of a tool's
 * `inputSchema` breaking when this finds anything): is `next` the same as `prev` up to changes no client can notice? The rule depends
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
 * reworded (titles and examples also dropped). Component schemas (`#/components/schemas/X`) take the
 * direction of the places that reference them.
 *
 * The walk follows the grammar of OpenAPI and JSON Schema: under a name map (`properties`, `paths`,
 * `responses`, `content`, `components.schemas`, …) a key is a name, so a property called `title`,
 * `example` or `description` is held to the rules of every property, and the direction of data
 * comes only from keywords (`requestBody`, `responses`, …), never from a property that shares the name.
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
/**
 * Keywords whose value is a map of names (a property, a path, a status code, a media type, a
 * component): under them a key is a name, never a keyword, so a property called `title`,
 * `example` or `required` is a property like any other.
 */
const NAME_MAPS = new Set([
  'properties',
  'patternProperties',
  'dependentSchemas',
  '$defs',
  'definitions',
  'paths',
  'webhooks',
  'schemas',
  'responses',
  'headers',
  'content',
  'securitySchemes',
  'requestBodies',
  'links',
  'callbacks',
  'encoding',
  'mapping',
  'variables',
  'scopes',
  'pathItems',
]);
/** Keywords that are maps under `components` (`parameters` and `examples` are arrays or prose elsewhere). */
const COMPONENT_MAPS = new Set(['parameters', 'examples']);
const REQUEST_KEYWORDS = new Set(['requestBody', 'parameters', 'inputSchema']);
const RESPONSE_KEYWORDS = new Set(['responses', 'outputSchema']);

/**
 * Where a node sits in the grammar: the keyword (or name) it is the value of, whether its own keys
 * are names (it is the value of a name map) and the direction of data there.
 */
interface At {
  path: string;
  /** The key this node is the value of, when that key is a keyword; '' when it is a name or an index. */
  keyword: string;
  /** This node's keys are names (a property, a path, a status code), not keywords. */
  names: boolean;
  flow?: Flow;
}

/**
 * Keywords whose value constrains nothing: JSON object keys are always strings, and an empty schema
 * (or `true`) accepts every value. Dropping one changes no schema's meaning.
 */
function vacuous(key: string, value: unknown): boolean {
  if (key === 'additionalProperties') return value === true || isDeepStrictEqual(value, {});
  if (key === 'propertyNames') return value === true || isDeepStrictEqual(value, {}) || isDeepStrictEqual(value, { type: 'string' });
  return false;
}

export interface CompatOptions {
  /**
   * Descriptions and summaries may also be dropped (a published contract freezes them; a tool's
   * caller, a model, still calls it the same way without them).
   */
  proseMayGo?: boolean;
}

export function nonAdditiveChanges(prev: unknown, next: unknown, opts: CompatOptions = {}): string[] {
  const flows = componentFlows(next);
  const found = compare(prev, next, { path: '$', keyword: '', names: false }, flows);
  // The keyword only: a property *named* `description` that goes away is a removal like any other.
  return opts.proseMayGo ? found.filter((f) => !/(?<!\.properties)\.(description|summary): removed$/.test(f)) : found;
}

/** The place of `k`, a key of the object at `at`. */
function child(at: At, k: string, flows: Map<string, Flow>): At {
  const path = `${at.path}.${k}`;
  if (at.names) {
    // A name: its value is a schema, an operation, a response… whose keys are keywords again.
    const flow = at.flow ?? (at.path === '$.components.schemas' ? (flows.get(k) ?? 'both') : undefined);
    return { path, keyword: '', names: false, flow };
  }
  const flow = REQUEST_KEYWORDS.has(k) ? 'request' : RESPONSE_KEYWORDS.has(k) ? 'response' : at.flow;
  const names = NAME_MAPS.has(k) || (at.path === '$.components' && COMPONENT_MAPS.has(k));
  return { path, keyword: k, names, flow };
}

function compare(prev: unknown, next: unknown, at: At, flows: Map<string, Flow>): string[] {
  if (isDeepStrictEqual(prev, next)) return [];
  const { path, keyword: key } = at;
  const flow = at.flow ?? 'both';
  if (Array.isArray(prev)) {
    if (!Array.isArray(next)) return [`${path}: was an array`];
    if (LISTS.has(key)) return compareList(key, prev, next, at, flows);
    if (prev.length !== next.length) return [`${path}: length ${prev.length} → ${next.length}`];
    return prev.flatMap((item, i) => compare(item, next[i], { path: `${path}[${i}]`, keyword: '', names: false, flow: at.flow }, flows));
  }
  if (prev !== null && typeof prev === 'object') {
    if (next === null || typeof next !== 'object' || Array.isArray(next)) return [`${path}: was an object`];
    const p = prev as Record<string, unknown>;
    const n = next as Record<string, unknown>;
    // Prose and vacuous keywords are keywords only where the grammar puts keywords, never as names.
    const keywords = !at.names;
    const out = Object.entries(p).flatMap(([k, v]) => {
      const prose = keywords && PROSE.has(k);
      // An input that stops requiring anything accepts more, as one that drops a `required` entry does (compareList).
      const requiredDropped = keywords && k === 'required' && Array.isArray(v) && flow === 'request';
      if (!(k in n))
        return (prose && k !== 'description' && k !== 'summary') || (keywords && vacuous(k, v)) || requiredDropped ? [] : [`${path}.${k}: removed`];
      if (prose && (typeof v === 'string' || k.startsWith('example'))) return [];
      return compare(v, n[k], child(at, k, flows), flows);
    });
    // Added keys: a new constraint on a schema that accepts input refuses what it accepted before.
    if (keywords && flow !== 'response') {
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

function compareList(key: string, prev: unknown[], next: unknown[], at: At, flows: Map<string, Flow>): string[] {
  const { path } = at;
  const flow = at.flow ?? 'both';
  const out: string[] = [];
  for (const [i, item] of prev.entries()) {
    const id = identity(item);
    const match = next.find((n) => (id !== undefined ? identity(n) === id : isDeepStrictEqual(n, item)));
    if (match === undefined) {
      // An input that stops requiring a property accepts more.
      if (key === 'required' && flow === 'request') continue;
      out.push(`${path}[${i}]: removed or changed (${JSON.stringify(item).slice(0, 80)})`);
    } else if (id !== undefined) out.push(...compare(item, match, { path: `${path}[${id}]`, keyword: '', names: false, flow: at.flow }, flows));
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
  const walk = (node: unknown, at: At): void => {
    if (!node || typeof node !== 'object' || at.path === '$.components') return;
    for (const [k, v] of Object.entries(node as Record<string, unknown>)) {
      if (!at.names && (k === 'requestBody' || k === 'parameters')) mark(v, 'request');
      else if (!at.names && k === 'responses') mark(v, 'response');
      else walk(v, child(at, k, new Map()));
    }
  };
  walk(doc, { path: '$', keyword: '', names: false });
  const out = new Map<string, Flow>();
  for (const [name, flows] of seen) out.set(name, flows.size === 2 ? 'both' : [...flows][0]);
  return out;
}
