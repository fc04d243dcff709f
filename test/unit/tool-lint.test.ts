import { lintTools, type CatalogTool } from '../../lambdas/catalog-core';

const GOOD: CatalogTool = {
  name: 'get_forecast',
  description: 'Get the hourly weather forecast for a city for the next 48 hours',
  inputSchema: { type: 'object', properties: { city: { type: 'string', description: 'City name, e.g. Berlin' } }, required: ['city'] },
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
};

describe('tool description score', () => {
  it('grades a well-described server A with no findings, and no tools as null', () => {
    expect(lintTools([GOOD])).toEqual({ grade: 'A', score: 100, findings: [] });
    expect(lintTools([])).toEqual({ grade: null, score: null, findings: [] });
    expect(lintTools(undefined).grade).toBeNull();
  });

  it('lists each finding with its tool and rule, and lowers the grade by the documented penalties', () => {
    const bare: CatalogTool = { name: 'do thing!', inputSchema: { type: 'object', properties: { x: {}, y: { type: 'string' } } } };
    const report = lintTools([GOOD, bare]);
    expect(report.findings.filter((f) => f.tool === 'do thing!').map((f) => f.rule)).toEqual([
      'description-missing',
      'parameter-undescribed',
      'parameter-untyped',
      'required-unset',
      'annotations-missing',
      'name-invalid',
    ]);
    // bare: 100 - 40 - 20 - 7.5 - 5 - 15 - 20 = -7.5 → 0; mean with GOOD (100) = 50 → D.
    expect(report).toMatchObject({ score: 50, grade: 'D' });
  });

  it('finds vague descriptions, partial annotations and near-duplicates', () => {
    const vague = { ...GOOD, name: 'lookup', description: 'Lookup', annotations: { readOnlyHint: true } };
    const twin = { ...GOOD, name: 'getForecast' };
    const rules = lintTools([GOOD, vague, twin]).findings.map((f) => `${f.tool}:${f.rule}`);
    expect(rules).toEqual(
      expect.arrayContaining(['lookup:description-vague', 'lookup:annotations-partial', 'get_forecast:near-duplicate', 'getForecast:near-duplicate']),
    );
    expect(rules).not.toContain('lookup:near-duplicate');
  });

  it('accepts every name the 2025-11-25 rules allow, up to 128 characters', () => {
    const names = ['a', 'A.b-c_9', 'x'.repeat(128)];
    for (const name of names) expect(lintTools([{ ...GOOD, name }]).findings).toEqual([]);
    expect(lintTools([{ ...GOOD, name: 'x'.repeat(129) }]).findings.map((f) => f.rule)).toEqual(['name-invalid']);
  });
});
