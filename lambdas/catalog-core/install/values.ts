/**
 * The values of install snippets, read from a registry entry (server.json 2025-12-11: `Input`,
 * `InputWithVariables`, `KeyValueInput`, `PositionalArgument`, `NamedArgument`).
 *
 * A value is text with holes ("slots") where the user supplies something: an environment variable
 * without a fixed value, a required argument, a `{variable}` of a value or URL template. Each client
 * fills a hole its own way: VS Code with an `${input:…}` prompt (masked when secret), the others
 * with the default when the entry gives one and the value is not secret, else a `<NAME>`
 * placeholder named after the variable (never after a flag).
 */

/** What the user is told about an input the snippet leaves to them (listed beside the snippet). */
export interface InputNote {
  kind: 'env' | 'argument' | 'header' | 'variable';
  name: string;
  required: boolean;
  secret: boolean;
  description?: string;
  default?: string;
  choices?: string[];
  /** The argument may be given more than once (the snippet gives it once). */
  repeated?: boolean;
}

/** A hole in a value: `id` is the variable's name, as `<id>` and `${input:id}` show it. */
export interface Slot {
  id: string;
  description?: string;
  secret: boolean;
  default?: string;
  choices?: string[];
}

export type Part = string | Slot;
/** One shell word, one JSON string. */
export type Value = Part[];

/** The fields of a registry input this module reads. */
export interface InputLike {
  type?: unknown;
  name?: unknown;
  value?: unknown;
  valueHint?: unknown;
  default?: unknown;
  description?: unknown;
  isRequired?: unknown;
  isSecret?: unknown;
  isRepeated?: unknown;
  format?: unknown;
  choices?: unknown;
  variables?: unknown;
}

export const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
export const flag = (v: unknown): boolean => v === true;
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export function asInputs(list: unknown): InputLike[] {
  return Array.isArray(list) ? list.filter(isObject) : [];
}

function choicesOf(i: InputLike): string[] | undefined {
  const c = Array.isArray(i.choices) ? i.choices.filter((x): x is string => typeof x === 'string') : [];
  return c.length > 0 ? c : undefined;
}

/**
 * The slots and notes of one install option. A name used twice (a transport URL's `{port}` and the
 * `--port` argument) is one slot, so every client fills both with the same value.
 */
export class Inputs {
  private readonly slots = new Map<string, Slot>();
  readonly notes: InputNote[] = [];

  slot(id: string, from: InputLike, secret = flag(from.isSecret)): Slot {
    const seen = this.slots.get(id);
    if (seen) return seen;
    const s: Slot = {
      id,
      secret,
      ...(str(from.description) && { description: str(from.description) }),
      ...(str(from.default) && { default: str(from.default) }),
      ...(choicesOf(from) && { choices: choicesOf(from) }),
    };
    this.slots.set(id, s);
    return s;
  }

  note(kind: InputNote['kind'], name: string, from: InputLike, required = flag(from.isRequired)): void {
    if (this.notes.some((n) => n.kind === kind && n.name === name)) return;
    this.notes.push({
      kind,
      name,
      required,
      secret: flag(from.isSecret),
      ...(str(from.description) && { description: str(from.description) }),
      ...(str(from.default) && { default: str(from.default) }),
      ...(choicesOf(from) && { choices: choicesOf(from) }),
      ...(flag(from.isRepeated) && { repeated: true }),
    });
  }

  /**
   * A value template: `{name}` becomes the slot of `variables[name]`. The registry says an unknown
   * `{name}` stays as written; a literal `{smithery_api_key}` can never work, so it becomes a slot
   * too (described by the input it is in). A secret whose value has no template is a slot: the
   * registry's text is never copied into a snippet.
   */
  template(text: string, vars: unknown, owner: { id: string; from: InputLike }, known?: Map<string, Value>): Value {
    const secret = flag(owner.from.isSecret);
    const declared = isObject(vars) ? vars : {};
    const pieces = text.split(/\{([A-Za-z_][A-Za-z0-9_.-]*)\}/);
    if (pieces.length === 1) return secret ? [this.slot(owner.id, owner.from)] : [text];
    const out: Value = [];
    pieces.forEach((piece, i) => {
      if (i % 2 === 0) {
        if (piece !== '') out.push(piece);
        return;
      }
      const fromKnown = known?.get(piece);
      if (fromKnown) {
        out.push(...fromKnown);
        return;
      }
      const v = isObject(declared[piece]) ? (declared[piece] as InputLike) : undefined;
      const from: InputLike = v ?? { description: str(owner.from.description), isRequired: true };
      this.note('variable', piece, { ...from, isSecret: flag(from.isSecret) || secret }, true);
      out.push(this.slot(piece, from, flag(from.isSecret) || secret));
    });
    return out;
  }
}

/** Environment variables or headers (`KeyValueInput`): a fixed value (its `{variables}` filled), else a slot when required; every one is listed. */
export function keyValues(list: unknown, kind: 'env' | 'header', inputs: Inputs): Array<[string, Value]> {
  const out: Array<[string, Value]> = [];
  for (const i of asInputs(list)) {
    const name = str(i.name);
    if (!name) continue;
    inputs.note(kind, name, i);
    const fixed = str(i.value);
    if (fixed !== undefined) out.push([name, inputs.template(fixed, i.variables, { id: name, from: i })]);
    else if (flag(i.isRequired)) out.push([name, [inputs.slot(name, i)]]);
  }
  return out;
}

/** The value's text when it has no slot. */
export function literalText(v: Value): string | undefined {
  return v.every((p) => typeof p === 'string') ? v.join('') : undefined;
}

/** Every client but VS Code: the default where the entry gives one and the value is not secret, else `<id>`. */
export function plain(v: Value): string {
  return v.map((p) => (typeof p === 'string' ? p : !p.secret && p.default !== undefined ? p.default : `<${p.id}>`)).join('');
}

export interface VsInput {
  type: 'promptString' | 'pickString';
  id: string;
  description: string;
  password?: true;
  default?: string;
  options?: string[];
}

/** VS Code: each slot an `${input:id}` prompt, declared once in `inputs` (a pick list when the entry gives choices). */
export class VsInputs {
  readonly list: VsInput[] = [];

  ref(v: Value): string {
    return v.map((p) => (typeof p === 'string' ? p : `\${input:${this.declare(p)}}`)).join('');
  }

  private declare(s: Slot): string {
    const id = s.id.replace(/[^A-Za-z0-9_.-]+/g, '-');
    if (!this.list.some((i) => i.id === id)) {
      const def = s.default !== undefined && !s.secret ? { default: s.default } : {};
      this.list.push(
        s.choices
          ? { type: 'pickString', id, description: s.description ?? s.id, options: s.choices, ...def }
          : { type: 'promptString', id, description: s.description ?? s.id, ...(s.secret && { password: true as const }), ...def },
      );
    }
    return id;
  }
}
