import { envBool, envInt, envNumber, envString } from '../../lambdas/shared/env';

describe('envString', () => {
  it('returns the trimmed value', () => {
    expect(envString({ A: 'x' }, 'A')).toBe('x');
    expect(envString({ A: '  a b \n' }, 'A')).toBe('a b');
  });

  it('is undefined when unset, empty or blank', () => {
    expect(envString({}, 'A')).toBeUndefined();
    expect(envString({ A: undefined }, 'A')).toBeUndefined();
    expect(envString({ A: '' }, 'A')).toBeUndefined();
    expect(envString({ A: ' \t ' }, 'A')).toBeUndefined();
  });
});

describe('envInt', () => {
  it('falls back when unset or blank', () => {
    expect(envInt({}, 'N', 7)).toBe(7);
    expect(envInt({ N: '' }, 'N', 7, { min: 1 })).toBe(7);
    expect(envInt({ N: '  ' }, 'N', 7, { min: 1 })).toBe(7);
  });

  it('accepts integers, trimmed, at or above min', () => {
    expect(envInt({ N: '42' }, 'N', 7)).toBe(42);
    expect(envInt({ N: ' 42 ' }, 'N', 7, { min: 1 })).toBe(42);
    expect(envInt({ N: '-3' }, 'N', 7)).toBe(-3);
    expect(envInt({ N: '0' }, 'N', 7, { min: 0 })).toBe(0);
    expect(envInt({ N: '1' }, 'N', 7, { min: 1 })).toBe(1);
    expect(envInt({ N: '256' }, 'N', 7, { min: 256 })).toBe(256);
  });

  it('refuses non-integers, naming the variable and the value', () => {
    expect(() => envInt({ N: '1.5' }, 'N', 7)).toThrow('N must be an integer, got "1.5"');
    expect(() => envInt({ N: 'ten' }, 'N', 7, { min: 1 })).toThrow('N must be a positive integer, got "ten"');
    expect(() => envInt({ N: 'Infinity' }, 'N', 7, { min: 0 })).toThrow('N must be an integer >= 0, got "Infinity"');
  });

  it('refuses values below min', () => {
    expect(() => envInt({ N: '0' }, 'N', 7, { min: 1 })).toThrow('N must be a positive integer, got "0"');
    expect(() => envInt({ N: '-1' }, 'N', 7, { min: 0 })).toThrow('N must be an integer >= 0, got "-1"');
    expect(() => envInt({ N: '255' }, 'N', 7, { min: 256 })).toThrow('N must be an integer >= 256, got "255"');
  });
});

describe('envNumber', () => {
  it('falls back when unset or blank', () => {
    expect(envNumber({}, 'X', 0.1, { min: 0, max: 1 })).toBe(0.1);
    expect(envNumber({ X: ' ' }, 'X', 30, { positive: true })).toBe(30);
  });

  it('accepts finite numbers within the rule', () => {
    expect(envNumber({ X: '-2.5' }, 'X', 1)).toBe(-2.5);
    expect(envNumber({ X: ' 0.5 ' }, 'X', 1, { positive: true })).toBe(0.5);
    expect(envNumber({ X: '0' }, 'X', 1, { min: 0 })).toBe(0);
    expect(envNumber({ X: '1.5' }, 'X', 1, { min: 1 })).toBe(1.5);
    expect(envNumber({ X: '0' }, 'X', 0.1, { min: 0, max: 1 })).toBe(0);
    expect(envNumber({ X: '1' }, 'X', 0.1, { min: 0, max: 1 })).toBe(1);
  });

  it('refuses what is not a finite number', () => {
    expect(() => envNumber({ X: 'abc' }, 'X', 1)).toThrow('X must be a number, got "abc"');
    expect(() => envNumber({ X: 'Infinity' }, 'X', 1, { min: 0 })).toThrow('X must be a number >= 0, got "Infinity"');
  });

  it('refuses values outside the rule', () => {
    expect(() => envNumber({ X: '0' }, 'X', 1, { positive: true })).toThrow('X must be a positive number, got "0"');
    expect(() => envNumber({ X: '-1' }, 'X', 1, { positive: true })).toThrow('X must be a positive number, got "-1"');
    expect(() => envNumber({ X: '0.5' }, 'X', 1, { min: 1 })).toThrow('X must be a number >= 1, got "0.5"');
    expect(() => envNumber({ X: '1.1' }, 'X', 0.1, { min: 0, max: 1 })).toThrow('X must be a number from 0 to 1, got "1.1"');
    expect(() => envNumber({ X: '-0.1' }, 'X', 0.1, { min: 0, max: 1 })).toThrow('X must be a number from 0 to 1, got "-0.1"');
    expect(() => envNumber({ X: '11' }, 'X', 1, { max: 10 })).toThrow('X must be a number <= 10, got "11"');
    expect(() => envNumber({ X: '3' }, 'X', 1, { positive: true, max: 2 })).toThrow('X must be a number > 0 and <= 2, got "3"');
  });
});

describe('envBool', () => {
  it('falls back when unset or blank', () => {
    expect(envBool({}, 'B', true)).toBe(true);
    expect(envBool({ B: '' }, 'B', false)).toBe(false);
  });

  it('accepts true/1 and false/0, trimmed', () => {
    expect(envBool({ B: 'true' }, 'B', false)).toBe(true);
    expect(envBool({ B: '1' }, 'B', false)).toBe(true);
    expect(envBool({ B: ' false ' }, 'B', true)).toBe(false);
    expect(envBool({ B: '0' }, 'B', true)).toBe(false);
  });

  it('refuses anything else', () => {
    expect(() => envBool({ B: 'maybe' }, 'B', true)).toThrow('B must be true or false, got "maybe"');
    expect(() => envBool({ B: 'TRUE' }, 'B', true)).toThrow('B must be true or false, got "TRUE"');
    expect(() => envBool({ B: 'yes' }, 'B', true)).toThrow(/^B must be true or false/);
  });
});
