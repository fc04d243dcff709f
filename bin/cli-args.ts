import { parseArgs } from 'node:util';

/** Small shared flag parsing for the CLIs (node's own parser; no extra dependency). */
export function flags<T extends Record<string, { type: 'string' | 'boolean'; default?: string | boolean; multiple?: boolean }>>(options: T) {
  return parseArgs({ args: process.argv.slice(2), options, strict: true, allowPositionals: false }).values;
}

export function positiveInt(value: string | undefined, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value) || Number(value) < 1) throw new Error(`--${name} must be a positive integer`);
  return Number(value);
}

export function nonNegativeInt(value: string | undefined, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value)) throw new Error(`--${name} must be a whole number, 0 or more`);
  return Number(value);
}
