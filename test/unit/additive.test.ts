import { nonAdditiveChanges } from '../support/additive';

describe('contract guard (additions only)', () => {
  const base = {
    paths: { '/a': { get: { parameters: [{ name: 'q', in: 'query', schema: { type: 'string', maxLength: 100 } }] } } },
    components: { schemas: { X: { type: 'object', required: ['a'], properties: { a: { type: 'string', enum: ['x', 'y'] } } } } },
  };
  const clone = () => JSON.parse(JSON.stringify(base)) as typeof base & Record<string, unknown>;

  it('accepts an identical document and pure additions', () => {
    expect(nonAdditiveChanges(base, clone())).toEqual([]);
    const next = clone() as unknown as { paths: Record<string, unknown>; components: { schemas: { X: { properties: Record<string, unknown>; required: string[] } } } };
    next.paths['/b'] = { get: {} };
    next.components.schemas.X.properties.b = { type: 'integer' };
    (next.components.schemas.X.properties.a as { enum: string[] }).enum.push('z');
    (next.paths['/a'] as { get: { parameters: unknown[] } }).get.parameters.unshift({ name: 'page', in: 'query' });
    expect(nonAdditiveChanges(base, next)).toEqual([]);
  });

  it('reports removals, renames and changed values with their path', () => {
    const removed = clone() as unknown as { paths: Record<string, unknown> };
    delete removed.paths['/a'];
    expect(nonAdditiveChanges(base, removed)).toEqual(['$.paths./a: removed']);

    const changed = clone();
    changed.paths['/a'].get.parameters[0].schema.maxLength = 50;
    expect(nonAdditiveChanges(base, changed)).toEqual(['$.paths./a.get.parameters[query:q].schema.maxLength: 100 → 50']);

    const enumShrunk = clone();
    enumShrunk.components.schemas.X.properties.a.enum = ['x'];
    expect(nonAdditiveChanges(base, enumShrunk)[0]).toMatch(/enum\[1\]: removed/);

    const retyped = clone() as unknown as { components: { schemas: { X: unknown } } };
    retyped.components.schemas.X = 'string';
    expect(nonAdditiveChanges(base, retyped)).toEqual(['$.components.schemas.X: was an object']);
  });
});

describe('contract guard and prose', () => {
  it('lets descriptions be reworded but not removed', () => {
    expect(nonAdditiveChanges({ a: { description: 'x', type: 'string' } }, { a: { description: 'y', type: 'string' } })).toEqual([]);
    expect(nonAdditiveChanges({ a: { description: 'x' } }, { a: {} })).toEqual(['$.a.description: removed']);
  });
});
