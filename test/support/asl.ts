/**
 * A small interpreter of Amazon States Language, enough to run the crawl state machine CDK
 * synthesizes (lib/crawler/state-machine.ts) against the real crawler handler: Pass (Result, Parameters), Choice
 * (IsPresent, BooleanEquals), Task (lambda:invoke, sqs:sendMessage) with Parameters, ResultSelector,
 * ResultPath, OutputPath, Retry and Catch, Map (ItemsPath, ItemSelector, MaxConcurrency), Parallel,
 * Succeed and Fail. Waits between retries are skipped; everything else follows the ASL
 * specification's input and output processing, so the events the handler receives are the ones
 * Step Functions would send.
 */
type Json = unknown;
type Obj = Record<string, unknown>;

export interface AslState {
  Type: string;
  Next?: string;
  End?: boolean;
  [k: string]: unknown;
}
export interface AslMachine {
  StartAt: string;
  States: Record<string, AslState>;
}

export interface AslServices {
  /** `arn:aws:states:::lambda:invoke`: the function's answer (its `Payload`). */
  lambda(payload: Json): Promise<Json>;
  /** `arn:aws:states:::sqs:sendMessage`: the message body. */
  sqs(body: Json): Promise<void>;
}

export interface AslRun {
  status: 'SUCCEEDED' | 'FAILED';
  output?: Json;
  error?: { Error: string; Cause: string };
  /** The names of the states entered, in order. */
  trace: string[];
}

class StatesError extends Error {
  constructor(
    readonly error: string,
    readonly detail: string,
  ) {
    super(`${error}: ${detail}`);
  }
}

interface Context {
  Execution: { Id: string; Input: Json; StartTime: string };
  Map?: { Item: { Index: number; Value: Json } };
}

/** `$`, `$.a.b`, `$[0]`, and `$$.…` for the context object. */
export function jsonPath(path: string, input: Json, ctx: Context): Json {
  const [root, rest] = path.startsWith('$$') ? [ctx as unknown, path.slice(2)] : [input, path.slice(1)];
  let node: unknown = root;
  for (const m of rest.matchAll(/\.([^.[]+)|\[(\d+)\]/g)) {
    const key = m[1] ?? Number(m[2]);
    if (node === null || typeof node !== 'object' || !(key in (node as Obj))) throw new StatesError('States.Runtime', `${path} is not present in the input`);
    node = (node as Obj)[key as string];
  }
  return node;
}

function present(path: string, input: Json, ctx: Context): boolean {
  try {
    jsonPath(path, input, ctx);
    return true;
  } catch {
    return false;
  }
}

/** A Parameters / ResultSelector / ItemSelector template: keys ending in `.$` take a path's value. */
function template(t: Json, input: Json, ctx: Context): Json {
  if (Array.isArray(t)) return t.map((x) => template(x, input, ctx));
  if (t === null || typeof t !== 'object') return t;
  const out: Obj = {};
  for (const [k, v] of Object.entries(t as Obj)) {
    if (k.endsWith('.$')) out[k.slice(0, -2)] = jsonPath(String(v), input, ctx);
    else out[k] = template(v, input, ctx);
  }
  return out;
}

function setPath(input: Json, path: string | null | undefined, result: Json): Json {
  if (path === undefined || path === '$') return result;
  if (path === null) return input;
  const keys = [...path.slice(1).matchAll(/\.([^.[]+)/g)].map((m) => m[1]);
  const copy = structuredClone(input ?? {}) as Obj;
  let node = copy;
  for (const k of keys.slice(0, -1)) {
    node[k] = typeof node[k] === 'object' && node[k] !== null ? node[k] : {};
    node = node[k] as Obj;
  }
  node[keys[keys.length - 1]] = result;
  return copy;
}

function errorMatches(list: unknown, name: string): boolean {
  const names = (list as string[]) ?? [];
  return names.includes('States.ALL') || names.includes(name) || (name !== 'States.Timeout' && names.includes('States.TaskFailed'));
}

export async function runStateMachine(machine: AslMachine, input: Json, services: AslServices, executionId = 'exec-1'): Promise<AslRun> {
  const ctx: Context = { Execution: { Id: executionId, Input: input, StartTime: new Date().toISOString() } };
  const trace: string[] = [];
  try {
    return { status: 'SUCCEEDED', output: await runMachine(machine, input, ctx, services, trace), trace };
  } catch (err) {
    if (err instanceof StatesError) return { status: 'FAILED', error: { Error: err.error, Cause: err.detail }, trace };
    throw err;
  }
}

async function runMachine(machine: AslMachine, input: Json, ctx: Context, services: AslServices, trace: string[]): Promise<Json> {
  let name: string | undefined = machine.StartAt;
  let data = input;
  for (let steps = 0; name !== undefined; steps++) {
    if (steps > 10_000) throw new Error('state machine did not end');
    const state: AslState | undefined = machine.States[name];
    if (!state) throw new Error(`no state ${name}`);
    trace.push(name);
    const r = await runState(state, data, ctx, services, trace);
    data = r.output;
    if (r.next === undefined) return data;
    name = r.next;
  }
  return data;
}

async function runState(state: AslState, input: Json, ctx: Context, services: AslServices, trace: string[]): Promise<{ output: Json; next?: string }> {
  const follow = (output: Json) => ({ output, next: state.End ? undefined : state.Next });
  const outputPath = (v: Json) => (state.OutputPath === undefined ? v : jsonPath(String(state.OutputPath), v, ctx));
  switch (state.Type) {
    case 'Pass': {
      // Result, else Parameters over the input, else the input itself.
      const result = 'Result' in state ? state.Result : 'Parameters' in state ? template(state.Parameters, input, ctx) : input;
      return follow(outputPath(setPath(input, state.ResultPath as string | undefined, result)));
    }
    case 'Choice': {
      for (const c of (state.Choices as Obj[]) ?? []) {
        const v = String(c.Variable);
        const ok =
          'IsPresent' in c ? present(v, input, ctx) === c.IsPresent : 'BooleanEquals' in c ? jsonPath(v, input, ctx) === c.BooleanEquals : unsupported(c);
        if (ok) return { output: input, next: String(c.Next) };
      }
      if (state.Default === undefined) throw new StatesError('States.NoChoiceMatched', 'no choice matched');
      return { output: input, next: String(state.Default) };
    }
    case 'Succeed':
      return { output: outputPath(input) };
    case 'Fail':
      throw new StatesError(
        state.ErrorPath ? String(jsonPath(String(state.ErrorPath), input, ctx)) : String(state.Error ?? 'States.Fail'),
        state.CausePath ? String(jsonPath(String(state.CausePath), input, ctx)) : String(state.Cause ?? ''),
      );
    case 'Task':
    case 'Map':
    case 'Parallel':
      return withRetryAndCatch(state, input, async () => {
        const effective = state.InputPath === undefined ? input : jsonPath(String(state.InputPath), input, ctx);
        let result = await body(state, effective, ctx, services, trace);
        if (state.ResultSelector !== undefined) result = template(state.ResultSelector, result, ctx);
        return follow(outputPath(setPath(input, state.ResultPath as string | null | undefined, result)));
      });
    default:
      throw new Error(`state type ${state.Type} is not supported by this interpreter`);
  }
}

function unsupported(c: Obj): never {
  throw new Error(`choice rule not supported: ${JSON.stringify(c)}`);
}

async function withRetryAndCatch(state: AslState, input: Json, run: () => Promise<{ output: Json; next?: string }>): Promise<{ output: Json; next?: string }> {
  const attempts = new Map<Obj, number>();
  for (;;) {
    try {
      return await run();
    } catch (err) {
      const e =
        err instanceof StatesError ? err : new StatesError((err as Error).name ?? 'Error', JSON.stringify({ errorMessage: String((err as Error).message) }));
      const retrier = ((state.Retry as Obj[]) ?? []).find((r) => errorMatches(r.ErrorEquals, e.error));
      if (retrier) {
        const used = attempts.get(retrier) ?? 0;
        if (used < Number(retrier.MaxAttempts ?? 3)) {
          attempts.set(retrier, used + 1);
          continue;
        }
      }
      const catcher = ((state.Catch as Obj[]) ?? []).find((c) => errorMatches(c.ErrorEquals, e.error));
      if (!catcher) throw e;
      return { output: setPath(input, (catcher.ResultPath as string | undefined) ?? '$', { Error: e.error, Cause: e.detail }), next: String(catcher.Next) };
    }
  }
}

async function body(state: AslState, input: Json, ctx: Context, services: AslServices, trace: string[]): Promise<Json> {
  if (state.Type === 'Task') {
    const params = template(state.Parameters ?? {}, input, ctx) as Obj;
    const resource = String(state.Resource);
    if (resource.endsWith(':lambda:invoke')) {
      try {
        return { Payload: await services.lambda(params.Payload), StatusCode: 200 };
      } catch (err) {
        // A function error: Step Functions names it after the error's type.
        throw new StatesError((err as Error).name || 'Error', JSON.stringify({ errorMessage: (err as Error).message, errorType: (err as Error).name }));
      }
    }
    if (resource.endsWith(':sqs:sendMessage')) {
      await services.sqs(params.MessageBody);
      return { MessageId: 'm-1' };
    }
    throw new Error(`task resource ${resource} is not supported by this interpreter`);
  }
  if (state.Type === 'Map') {
    const items = jsonPath(String(state.ItemsPath ?? '$'), input, ctx) as Json[];
    const processor = (state.ItemProcessor ?? state.Iterator) as AslMachine;
    const limit = Number(state.MaxConcurrency ?? 0) || items.length || 1;
    const out: Json[] = new Array(items.length);
    let next = 0;
    const worker = async () => {
      while (next < items.length) {
        const i = next++;
        const itemCtx: Context = { ...ctx, Map: { Item: { Index: i, Value: items[i] } } };
        const itemInput = state.ItemSelector === undefined ? items[i] : template(state.ItemSelector, input, itemCtx);
        out[i] = await runMachine(processor, itemInput, itemCtx, services, trace);
      }
    };
    await Promise.all(Array.from({ length: Math.min(limit, Math.max(1, items.length)) }, worker));
    return out;
  }
  // Parallel: every branch on the same input; the result is the array of their outputs.
  return Promise.all(((state.Branches as AslMachine[]) ?? []).map((b) => runMachine(b, input, ctx, services, trace)));
}

/** The definition of a synthesized `AWS::StepFunctions::StateMachine`, its tokens replaced by placeholders. */
export function definitionOf(definitionString: unknown): AslMachine {
  const join = (v: unknown): string => {
    if (typeof v === 'string') return v;
    const o = v as Obj;
    if (Array.isArray(o['Fn::Join'])) {
      const [sep, parts] = o['Fn::Join'] as [string, unknown[]];
      return parts.map(join).join(sep);
    }
    return `TOKEN(${JSON.stringify(v).replace(/"/g, "'")})`;
  };
  return JSON.parse(join(definitionString)) as AslMachine;
}
