/**
 * Readers of environment variables, shared by every configuration module (`lambdas/**\/config.ts`).
 *
 * All of them take the environment as an argument (tests pass a plain object; handlers default to
 * `process.env`) and treat a variable that is unset, empty or only whitespace as unset: the reader
 * returns its fallback. Values are trimmed before they are checked or returned, so `" 30 "` is 30.
 * A value that is set but breaks the rule is a configuration error, thrown at load time with the
 * variable's name and the offending value: `X must be a positive integer, got "0"`.
 */
export type Env = Readonly<Record<string, string | undefined>>;

/** The trimmed value of `name`; undefined when it is unset, empty or only whitespace. */
export function envString(env: Env, name: string): string | undefined {
  const v = env[name]?.trim();
  return v === undefined || v === '' ? undefined : v;
}

function invalid(name: string, what: string, value: string): Error {
  return new Error(`${name} must be ${what}, got "${value}"`);
}

/** Bound of {@link envInt}: the smallest accepted value, inclusive (`{ min: 1 }`: positive). */
export interface IntRule {
  min?: number;
}

/**
 * An integer variable (parsed with `Number`, so `"1e3"` is 1000 and `"1.5"` is refused), or
 * `fallback` when unset. `min` is inclusive: `{ min: 0 }` accepts 0, `{ min: 1 }` does not.
 */
export function envInt(env: Env, name: string, fallback: number, rule: IntRule = {}): number {
  const v = envString(env, name);
  if (v === undefined) return fallback;
  const n = Number(v);
  const { min } = rule;
  if (!Number.isInteger(n) || (min !== undefined && n < min)) {
    throw invalid(name, min === undefined ? 'an integer' : min === 1 ? 'a positive integer' : `an integer >= ${min}`, v);
  }
  return n;
}

/** A whole number written as digits only (0 allowed; `1e3`, `1.5` and `-1` are refused), or `fallback` when unset. */
export function envCount(env: Env, name: string, fallback: number): number {
  const v = envString(env, name);
  if (v === undefined) return fallback;
  if (!/^\d+$/.test(v)) throw new Error(`${name} must be a whole number, got "${v}"`);
  return Number(v);
}

/**
 * Bounds of {@link envNumber}. `min` and `max` are inclusive; `positive` refuses 0 and below (a
 * bound `min` cannot say for numbers that need not be integers).
 */
export interface NumberRule {
  min?: number;
  max?: number;
  positive?: boolean;
}

function describeNumber({ min, max, positive }: NumberRule): string {
  if (positive && min === undefined && max === undefined) return 'a positive number';
  if (!positive && min !== undefined && max !== undefined) return `a number from ${min} to ${max}`;
  const bounds = [positive ? '> 0' : '', min === undefined ? '' : `>= ${min}`, max === undefined ? '' : `<= ${max}`].filter(Boolean);
  return bounds.length === 0 ? 'a number' : `a number ${bounds.join(' and ')}`;
}

/**
 * A finite number variable, or `fallback` when unset. `{ min: 0, max: 1 }` is a fraction,
 * `{ positive: true }` a number above 0, `{ min: 1 }` a number of at least 1.
 */
export function envNumber(env: Env, name: string, fallback: number, rule: NumberRule = {}): number {
  const v = envString(env, name);
  if (v === undefined) return fallback;
  const n = Number(v);
  const { min, max, positive } = rule;
  if (!Number.isFinite(n) || (positive && n <= 0) || (min !== undefined && n < min) || (max !== undefined && n > max)) {
    throw invalid(name, describeNumber(rule), v);
  }
  return n;
}

/** A boolean variable: `true`/`1` or `false`/`0` (nothing else), or `fallback` when unset. */
export function envBool(env: Env, name: string, fallback: boolean): boolean {
  const v = envString(env, name);
  if (v === undefined) return fallback;
  if (v === 'true' || v === '1') return true;
  if (v === 'false' || v === '0') return false;
  throw invalid(name, 'true or false', v);
}
