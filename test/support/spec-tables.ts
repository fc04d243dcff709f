import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { parse } from 'yaml';

// Over 400 lines on purpose: one checker walks one document (schemas, parameters, responses, error
// codes) with one set of pointer helpers; split, every part would need all of them.

/**
 * Holds an OpenAPI document (a frozen contract snapshot) to the spec's own tables, transcribed by
 * hand into `test/fixtures/spec/*.yaml`. The snapshot guard (`additive.ts`) only compares a
 * document with its earlier self; this compares it, once, with the contract it claims to be.
 *
 * Structure (a field, a parameter, a response) is read from the document; what a schema accepts
 * (an enum, null, a pattern) is asked of the schema itself, compiled with ajv, so a keyword the
 * document forgets or contradicts (`type: [string, null]` beside an enum without null) is caught.
 */
export interface FieldSpec {
  type: string;
  required?: boolean;
  format?: string;
  enum?: unknown[];
  enumIncludes?: unknown[];
  /**
   * Values the document may list beyond a closed `enum`: additions this project made and
   * documents (README), not part of the spec's table. Anything else beyond it still fails.
   */
  enumAdditions?: unknown[];
  nullable?: boolean;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  default?: unknown;
  pattern?: string;
  array?: boolean;
  in?: string;
  extraKeys?: boolean;
  key?: Record<string, string>;
}
type SchemaSpec = Record<string, FieldSpec> & { $extends?: string };
interface EndpointSpec {
  method: string;
  path: string;
  auth?: 'none' | 'bearer';
  scope?: string;
  data?: string;
  envelope?: boolean;
  pagination?: boolean;
  search?: boolean;
  content?: string;
  rateLimited?: boolean;
  params?: Record<string, FieldSpec>;
  body?: string | Record<string, FieldSpec>;
  bodyMedia?: string[];
  ok?: Record<string, string | string[]>;
  ifMatch?: boolean;
  attachment?: boolean;
  errors?: string[];
}
export interface SpecTables {
  version: string;
  openapi: string;
  basePath: string;
  schemas: Record<string, SchemaSpec>;
  endpoints: EndpointSpec[];
  errors: Record<string, number | null>;
  decisions?: { errors?: Record<string, number>; etagOn?: string[] };
  limits: { rateLimitHeaders: string[]; notRateLimitHeaders?: string[]; retryAfterOn: string[]; allowOn?: string[] };
}

export function loadSpecTables(file: string): SpecTables {
  return parse(readFileSync(join(__dirname, '..', 'fixtures', 'spec', file), 'utf8')) as SpecTables;
}

type Node = Record<string, unknown>;
type Flow = 'request' | 'response';
const PRIMITIVES = new Set(['string', 'integer', 'number', 'boolean', 'object']);

/** Every disagreement between `doc` and the spec's tables, each with the place it was found. */
export function specProblems(spec: SpecTables, doc: Node): string[] {
  return new Checker(spec, doc).run();
}

class Checker {
  private readonly out: string[] = [];
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
  private readonly validators = new Map<string, ValidateFunction>();
  private readonly seen = new Set<string>();

  constructor(
    private readonly spec: SpecTables,
    private readonly doc: Node,
  ) {
    addFormats(this.ajv);
    this.ajv.addSchema({ ...doc, $id: 'doc' }, 'doc');
  }

  run(): string[] {
    const info = this.doc.info as { version?: string } | undefined;
    if (info?.version !== this.spec.version) this.problem('info.version', `${info?.version} is not ${this.spec.version}`);
    if (!String(this.doc.openapi).startsWith(this.spec.openapi)) this.problem('openapi', `${this.doc.openapi} is not ${this.spec.openapi}`);
    this.checkErrorCodes();
    for (const e of this.spec.endpoints) this.checkEndpoint(e);
    return this.out;
  }

  private problem(where: string, what: string): void {
    this.out.push(`${where}: ${what}`);
  }

  // ---------- the document ----------

  private at(pointer: string): Node | undefined {
    let node: unknown = this.doc;
    for (const raw of pointer.split('/').slice(1)) {
      const seg = raw.replace(/~1/g, '/').replace(/~0/g, '~');
      node = node && typeof node === 'object' ? (node as Node)[seg] : undefined;
    }
    return node as Node | undefined;
  }

  /** Follows `$ref`s to the node they name. */
  private deref(pointer: string): string {
    for (let i = 0; i < 20; i++) {
      const ref = this.at(pointer)?.$ref;
      if (typeof ref !== 'string') return pointer;
      pointer = ref.replace(/^#/, '');
    }
    return pointer;
  }

  /** Properties and required names of an object schema, `allOf` parts merged, each property by its pointer. */
  private objectAt(pointer: string): { props: Map<string, string>; required: Set<string>; node: Node } {
    const p = this.deref(pointer);
    const node = this.at(p) ?? {};
    const props = new Map<string, string>();
    const required = new Set<string>((node.required as string[]) ?? []);
    for (const name of Object.keys((node.properties as Node) ?? {})) props.set(name, `${p}/properties/${esc(name)}`);
    for (const [i] of ((node.allOf as unknown[]) ?? []).entries()) {
      const part = this.objectAt(`${p}/allOf/${i}`);
      for (const [k, v] of part.props) props.set(k, v);
      for (const r of part.required) required.add(r);
    }
    return { props, required, node };
  }

  private accepts(pointer: string, value: unknown): boolean {
    let v = this.validators.get(pointer);
    if (!v) {
      v = this.ajv.compile({ $ref: `doc#${pointer.split('/').map(encodeURIComponent).join('/')}` });
      this.validators.set(pointer, v);
    }
    return v(value) === true;
  }

  // ---------- schemas ----------

  private checkSchema(name: string, pointer: string, flow: Flow, where: string): void {
    const key = `${name}@${pointer}@${flow}`;
    if (this.seen.has(key)) return;
    this.seen.add(key);
    const table = this.spec.schemas[name];
    if (!table) {
      this.problem(where, `the spec has no table ${name}`);
      return;
    }
    const fields: Record<string, FieldSpec> = { ...(table.$extends ? this.spec.schemas[table.$extends] : {}), ...table };
    delete (fields as { $extends?: unknown }).$extends;
    const obj = this.objectAt(pointer);
    if (!isType(obj.node, 'object') && obj.props.size === 0) {
      this.problem(where, 'is not an object schema');
      return;
    }
    for (const [field, f] of Object.entries(fields)) {
      const fp = obj.props.get(field);
      if (!fp) {
        this.problem(`${where}.${field}`, 'missing');
        continue;
      }
      if (f.required && !obj.required.has(field)) this.problem(`${where}.${field}`, 'required by the spec, optional in the document');
      if (!f.required && flow === 'request' && obj.required.has(field)) this.problem(`${where}.${field}`, 'optional in the spec, required of input');
      this.checkField(f, fp, flow, `${where}.${field}`);
    }
  }

  private checkField(f: FieldSpec, pointer: string, flow: Flow, where: string): void {
    const p = this.deref(pointer);
    const node = this.at(p) ?? {};
    if (f.array) {
      if (!isType(node, 'array')) {
        this.problem(where, 'is not an array');
        return;
      }
      this.checkField({ ...f, array: false, default: undefined }, `${p}/items`, flow, `${where}[]`);
      return;
    }
    this.checkType(f.type, p, flow, where);
    for (const k of ['format', 'minLength', 'maxLength', 'minimum', 'maximum', 'pattern'] as const) {
      if (f[k] !== undefined && node[k] !== f[k]) this.problem(where, `${k} ${JSON.stringify(node[k])}, the spec says ${JSON.stringify(f[k])}`);
    }
    if (f.default !== undefined && !isDeepStrictEqual(node.default, f.default) && String(node.default) !== String(f.default)) {
      this.problem(where, `default ${JSON.stringify(node.default)}, the spec says ${JSON.stringify(f.default)}`);
    }
    const nullable = this.accepts(p, null);
    if (f.nullable && !nullable) this.problem(where, 'refuses null, which the spec allows');
    if (!f.nullable && nullable) this.problem(where, 'accepts null, which the spec does not allow (DECISIONS: omitted, never null)');
    for (const v of [...(f.enum ?? []), ...(f.enumIncludes ?? [])]) {
      if (!this.accepts(p, v)) this.problem(where, `refuses ${JSON.stringify(v)}, a value of the spec`);
    }
    if (f.enum) {
      const listed = ((node.enum as unknown[]) ?? (node.items as Node | undefined)?.enum ?? []) as unknown[];
      const foreign = listed.filter((v) => v !== null && !f.enum?.includes(v) && !f.enumAdditions?.includes(v));
      if (foreign.length) this.problem(where, `lists ${JSON.stringify(foreign)}, not values of the spec`);
      if (!listed.length && this.accepts(p, 'not-a-spec-value')) this.problem(where, 'accepts any value, the spec lists them');
    }
    if (f.key) {
      for (const [k, schema] of Object.entries(f.key)) {
        const kp = this.objectAt(p).props.get(k);
        if (!kp) this.problem(`${where}.${k}`, 'missing');
        else this.checkField({ type: schema }, kp, flow, `${where}.${k}`);
      }
      if (f.extraKeys && node.additionalProperties === false) this.problem(where, 'refuses other keys, which the spec allows');
    }
  }

  private checkType(type: string, pointer: string, flow: Flow, where: string): void {
    const node = this.at(this.deref(pointer)) ?? {};
    const list = /^\[(.+)\]$/.exec(type);
    if (list) {
      if (!isType(node, 'array')) {
        this.problem(where, `is not an array of ${list[1]}`);
        return;
      }
      this.checkType(list[1], `${this.deref(pointer)}/items`, flow, `${where}[]`);
      return;
    }
    if (type === 'integer|all') {
      // An integer of at least 1, or the word `all`; query values arrive as text.
      for (const ok of ['all', '1', '2', '10']) if (!this.accepts(pointer, ok)) this.problem(where, `refuses ${JSON.stringify(ok)}`);
      for (const bad of ['0', '-1', 'x', '1.5']) if (this.accepts(pointer, bad)) this.problem(where, `accepts ${JSON.stringify(bad)}`);
      return;
    }
    if (type.includes('|')) {
      const alts = ((node.oneOf ?? node.anyOf) as unknown[] | undefined) ?? [];
      const names = alts.map((_, i) => this.deref(`${this.deref(pointer)}/${node.oneOf ? 'oneOf' : 'anyOf'}/${i}`));
      for (const [i, alt] of type.split('|').entries()) {
        if (!names[i]) this.problem(where, `has no alternative ${alt}`);
        else this.checkSchema(alt, names[i], flow, `${where}<${alt}>`);
      }
      return;
    }
    if (PRIMITIVES.has(type)) {
      const types = ([] as unknown[]).concat(node.type ?? (type === 'object' && (node.properties || node.additionalProperties) ? 'object' : []));
      if (!types.includes(type)) this.problem(where, `type ${JSON.stringify(node.type)}, the spec says ${type}`);
      const other = types.filter((t) => t !== type && t !== 'null');
      if (other.length) this.problem(where, `may also be ${JSON.stringify(other)}`);
      return;
    }
    this.checkSchema(type, pointer, flow, where);
  }

  // ---------- endpoints ----------

  private checkErrorCodes(): void {
    const codes = [...Object.keys(this.spec.errors), ...Object.keys(this.spec.decisions?.errors ?? {})];
    const pointer =
      this.spec.basePath === '/api' ? '/components/schemas/ApiError/properties/code' : '/components/schemas/Error/properties/error/properties/code';
    const listed = (this.at(this.deref(pointer))?.enum as string[] | undefined) ?? [];
    for (const c of codes) if (!listed.includes(c)) this.problem('error codes', `${c} missing`);
    for (const c of listed) if (!codes.includes(c)) this.problem('error codes', `${c} is not a code of the spec`);
  }

  private checkEndpoint(e: EndpointSpec): void {
    const path = `${this.spec.basePath}${e.path}`;
    const where = `${e.method} ${path}`;
    const opPointer = `/paths/${esc(path)}/${e.method.toLowerCase()}`;
    const op = this.at(opPointer);
    if (!op) {
      this.problem(where, 'missing');
      return;
    }
    const secured = Array.isArray(op.security) && (op.security as Node[]).some((s) => 'bearerAuth' in s);
    if ((e.auth === 'bearer' || e.scope !== undefined) !== secured)
      this.problem(where, secured ? 'requires a bearer the spec does not' : 'does not require the bearer');

    const params = ((op.parameters as unknown[]) ?? []).map((_, i) => this.deref(`${opPointer}/parameters/${i}`));
    const byName = (name: string, location: string) => params.find((p) => this.at(p)?.name === name && this.at(p)?.in === location);
    for (const [name, f] of Object.entries(e.params ?? {})) {
      const p = byName(name, f.in ?? 'query');
      if (!p) {
        this.problem(`${where} ${name}`, 'parameter missing');
        continue;
      }
      if (Boolean(this.at(p)?.required) !== Boolean(f.required))
        this.problem(`${where} ${name}`, `required ${Boolean(this.at(p)?.required)}, the spec says ${Boolean(f.required)}`);
      this.checkField(f, `${p}/schema`, 'request', `${where} ${name}`);
    }
    if (e.ifMatch) {
      const p = byName('If-Match', 'header');
      if (!p) this.problem(`${where} If-Match`, 'header parameter missing');
      else if (this.at(p)?.required) this.problem(`${where} If-Match`, 'required, the spec says optional');
    }
    if (e.body) this.checkBody(e, opPointer, where);

    const responses = (op.responses as Record<string, Node>) ?? {};
    const rp = (status: string) => this.deref(`${opPointer}/responses/${status}`);
    const statuses: Record<string, string | string[]> = e.ok ?? { 200: e.data ?? '' };
    for (const [status, what] of Object.entries(statuses)) {
      if (!responses[status]) {
        this.problem(where, `no ${status} response`);
        continue;
      }
      const content = (this.at(rp(status))?.content as Node | undefined) ?? {};
      for (const item of ([] as string[]).concat(what)) {
        if (!item) continue;
        if (item.includes('/')) {
          if (!content[item]) this.problem(`${where} ${status}`, `no ${item} content`);
        } else if (e.ok) this.checkType(item, `${rp(status)}/content/application~1json/schema`, 'response', `${where} ${status}`);
        else this.checkData(e, `${rp(status)}/content/application~1json/schema`, `${where} ${status}`);
      }
      if (e.content && !content[e.content]) this.problem(`${where} ${status}`, `no ${e.content} content`);
      if (e.attachment && !this.headerOf(rp(status), 'Content-Disposition'))
        this.problem(`${where} ${status}`, 'no Content-Disposition header (sent as an attachment)');
      if (this.spec.decisions?.etagOn?.includes(`${e.method} ${e.path}`) && !this.headerOf(rp(status), 'ETag'))
        this.problem(`${where} ${status}`, 'no ETag header');
    }
    this.checkErrors(e, where, Object.keys(responses), rp);
  }

  private checkData(e: EndpointSpec, pointer: string, where: string): void {
    if (e.envelope === false) {
      this.checkType(e.data ?? 'object', pointer, 'response', where);
      return;
    }
    const env = this.objectAt(pointer);
    const success = env.props.get('success');
    if (!success || !this.accepts(success, true) || this.accepts(success, false)) this.problem(`${where} success`, 'is not `true`');
    for (const k of ['success', 'data']) if (!env.required.has(k)) this.problem(`${where} ${k}`, 'not required');
    const data = env.props.get('data');
    if (!data) {
      this.problem(`${where} data`, 'missing');
      return;
    }
    this.checkType(e.data ?? 'object', data, 'response', `${where} data`);
    const meta = env.props.get('meta');
    if (e.pagination) {
      const pg = meta && this.objectAt(meta).props.get('pagination');
      if (!pg || !this.objectAt(meta).required.has('pagination')) this.problem(`${where} meta.pagination`, 'missing or optional');
      else this.checkType('Pagination', pg, 'response', `${where} meta.pagination`);
    }
    if (e.search) {
      const s = meta && this.objectAt(meta).props.get('search');
      const q = s && this.objectAt(s).props.get('query');
      if (!q) this.problem(`${where} meta.search.query`, 'missing');
      else this.checkType('string', q, 'response', `${where} meta.search.query`);
    }
  }

  private checkBody(e: EndpointSpec, opPointer: string, where: string): void {
    const body = this.at(this.deref(`${opPointer}/requestBody`));
    if (!body) {
      this.problem(where, 'no request body');
      return;
    }
    if (!body.required) this.problem(`${where} body`, 'optional, the spec requires it');
    const content = (body.content as Node) ?? {};
    for (const media of e.bodyMedia ?? ['application/json']) if (!content[media]) this.problem(`${where} body`, `no ${media}`);
    const schema = `${this.deref(`${opPointer}/requestBody`)}/content/application~1json/schema`;
    if (typeof e.body === 'string') {
      this.checkSchema(e.body, schema, 'request', `${where} body`);
      return;
    }
    const obj = this.objectAt(schema);
    for (const [field, f] of Object.entries(e.body ?? {})) {
      const fp = obj.props.get(field);
      if (!fp) this.problem(`${where} body.${field}`, 'missing');
      else {
        if (Boolean(f.required) !== obj.required.has(field)) this.problem(`${where} body.${field}`, `required ${obj.required.has(field)}`);
        this.checkField(f, fp, 'request', `${where} body.${field}`);
      }
    }
  }

  private checkErrors(e: EndpointSpec, where: string, documented: string[], rp: (s: string) => string): void {
    const status = (code: string) => this.spec.errors[code] ?? this.spec.decisions?.errors?.[code];
    const rateLimited = e.rateLimited !== false;
    const expected = new Set<string>((e.errors ?? []).map((c) => String(status(c))));
    expected.add(String(status('METHOD_NOT_ALLOWED')));
    if (rateLimited) expected.add(String(status('RATE_LIMITED')));
    if (e.auth === 'bearer') expected.add(String(status('UNAUTHORIZED')));
    if (e.scope) for (const c of ['UNAUTHENTICATED', 'FORBIDDEN', 'UPSTREAM_UNAVAILABLE']) expected.add(String(status(c)));
    for (const s of expected) if (!documented.includes(s)) this.problem(where, `no ${s} response (${codeOf(this.spec, s)})`);
    const errorSchema = this.spec.basePath === '/api' ? 'ErrorEnvelope' : 'Error';
    for (const s of documented.filter((x) => Number(x) >= 400)) {
      const schema = (this.at(rp(s))?.content as Node | undefined)?.['application/json'] as Node | undefined;
      const ref = (schema?.schema as Node | undefined)?.$ref;
      if (ref !== `#/components/schemas/${errorSchema}`) this.problem(`${where} ${s}`, `body is not the ${errorSchema} envelope`);
      const code = codeOf(this.spec, s);
      if ((code && this.spec.limits.retryAfterOn.includes(code)) || code === 'UPSTREAM_UNAVAILABLE' || code === 'AUTH_UNAVAILABLE') {
        if (!this.headerOf(rp(s), 'Retry-After')) this.problem(`${where} ${s}`, 'no Retry-After header');
      }
      if (code && this.spec.limits.allowOn?.includes(code) && !this.headerOf(rp(s), 'Allow')) this.problem(`${where} ${s}`, 'no Allow header');
    }
    for (const s of documented) {
      for (const h of this.spec.limits.rateLimitHeaders) {
        const has = Boolean(this.headerOf(rp(s), h));
        if (rateLimited && !has) this.problem(`${where} ${s}`, `no ${h} header`);
        if (!rateLimited && has) this.problem(`${where} ${s}`, `${h} header on a route exempt from the rate limit`);
      }
      for (const h of this.spec.limits.notRateLimitHeaders ?? []) if (this.headerOf(rp(s), h)) this.problem(`${where} ${s}`, `${h} header, the spec says not`);
    }
    if (!rateLimited && documented.includes(String(status('RATE_LIMITED')))) this.problem(where, 'documents a 429 on a route exempt from the rate limit');
  }

  private headerOf(responsePointer: string, name: string): Node | undefined {
    const headers = (this.at(responsePointer)?.headers as Record<string, Node> | undefined) ?? {};
    const key = Object.keys(headers).find((k) => k.toLowerCase() === name.toLowerCase());
    return key ? headers[key] : undefined;
  }
}

function codeOf(spec: SpecTables, status: string): string | undefined {
  const all = { ...spec.errors, ...(spec.decisions?.errors ?? {}) };
  return Object.keys(all).find((c) => String(all[c]) === status);
}

function isType(node: Node, type: string): boolean {
  return ([] as unknown[]).concat(node.type ?? []).includes(type) || (type === 'object' && Boolean(node.properties || node.allOf));
}

function esc(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}
