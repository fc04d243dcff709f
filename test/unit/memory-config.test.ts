import { DEFAULT_LIMITS, LIMIT_VARIABLES, loadMemoryConfig, loadMemoryLimits } from '../../lambdas/memory/config';
import { memoryLimitsEnvironment } from '../../lib/memory-api';

/** DECISIONS: every limit is configuration with the spec's value as the default. */
it("defaults every limit to the spec's value", () => {
  expect(loadMemoryConfig({}).limits).toEqual(DEFAULT_LIMITS);
  expect(DEFAULT_LIMITS).toMatchObject({
    listDefaultLimit: 200,
    listMaxLimit: 500,
    searchDefaultLimit: 20,
    searchMaxLimit: 50,
    maxMemoriesPerAccount: 20,
    maxTagArgs: 50,
  });
});

it('reads each limit from its own variable', () => {
  const keys = Object.keys(LIMIT_VARIABLES) as Array<keyof typeof LIMIT_VARIABLES>;
  expect(keys.sort()).toEqual(Object.keys(DEFAULT_LIMITS).sort());
  expect(new Set(Object.values(LIMIT_VARIABLES)).size).toBe(keys.length);
  for (const key of keys) {
    // Page maxima only go up and page defaults only down here, so the default-versus-maximum check stays quiet.
    const value = key.endsWith('MaxLimit') ? DEFAULT_LIMITS[key] + 7 : 3;
    expect(loadMemoryLimits({ [LIMIT_VARIABLES[key]]: String(value) })[key]).toBe(value);
  }
});

it('refuses nonsense and a page default above its maximum', () => {
  expect(() => loadMemoryLimits({ MEMORY_LIST_MAX_LIMIT: '0' })).toThrow(/MEMORY_LIST_MAX_LIMIT/);
  expect(() => loadMemoryLimits({ MEMORY_SEARCH_MAX_LIMIT: 'ten' })).toThrow(/MEMORY_SEARCH_MAX_LIMIT/);
  expect(() => loadMemoryLimits({ MEMORY_SEARCH_MAX_LIMIT: '10' })).toThrow(
    /MEMORY_SEARCH_DEFAULT_LIMIT \(20\) must not exceed MEMORY_SEARCH_MAX_LIMIT \(10\)/,
  );
  expect(loadMemoryLimits({ MEMORY_MAX_TOMBSTONES: '0' }).maxTombstones).toBe(0);
});

it('turns CDK props into the same variables', () => {
  expect(memoryLimitsEnvironment({ limits: { listMaxLimit: 100, listDefaultLimit: 50, maxQueryChars: undefined } })).toEqual({
    MEMORY_LIST_MAX_LIMIT: '100',
    MEMORY_LIST_DEFAULT_LIMIT: '50',
  });
  expect(() => memoryLimitsEnvironment({ limits: { searchMaxLimit: 2.5 } })).toThrow(/limits.searchMaxLimit/);
  expect(memoryLimitsEnvironment()).toEqual({});
  // The ceiling given in `limits` reaches the function; the named prop, when set, wins over it.
  expect(memoryLimitsEnvironment({ limits: { maxMemoriesPerAccount: 5 } })).toEqual({ MEMORY_MAX_PER_ACCOUNT: '5' });
  expect(memoryLimitsEnvironment({ maxMemoriesPerAccount: 7, maxNoteBytes: 2048, limits: { maxMemoriesPerAccount: 5 } })).toEqual({
    MEMORY_MAX_PER_ACCOUNT: '7',
    MEMORY_MAX_NOTE_BYTES: '2048',
  });
});
