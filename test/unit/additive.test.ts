import { nonAdditiveChanges } from '../support/additive';

describe('contract guard (additions only)', () => {
  const base = {
    paths: { '/a': { get: { parameters: [{ name: 'q', in: 'query', schema: { type: 'string', maxLength: 100 } }] } } },
    components: { schemas: { X: { type: 'object', required: ['a'], properties: { a: { type: 'string', enum: ['x', 'y'] } } } } },
  };
  const clone = () => JSON.parse(JSON.stringify(base)) as typeof base & Record<string, unknown>;

  it('accepts an identical document and pure additions', () => {
    expect(nonAdditiveChanges(base, clone())).toEqual([]);
    const next = clone() as unknown as {
      paths: Record<string, unknown>;
      components: { schemas: { X: { properties: Record<string, unknown>; required: string[] } } };
    };
    next.paths['/b'] = { get: {} };
    next.components.schemas.X.properties.b = { type: 'integer' };
    (next.components.schemas.X.properties.a as { enum: string[] }).enum.push('z');
    (next.paths['/a'] as { get: { parameters: unknown[] } }).get.parameters.unshift({ name: 'page', in: 'query' });
    expect(nonAdditiveChanges(base, next)).toEqual([]);
  });

  it('lets vacuous keywords go (additionalProperties: {}, propertyNames: string), but not real ones', () => {
    const prev = { type: 'object', propertyNames: { type: 'string' }, additionalProperties: {} };
    expect(nonAdditiveChanges(prev, { type: 'object' })).toEqual([]);
    expect(nonAdditiveChanges({ type: 'object', additionalProperties: { type: 'string' } }, { type: 'object' })).toEqual(['$.additionalProperties: removed']);
    expect(nonAdditiveChanges({ properties: { additionalProperties: {} } }, { properties: {} })).toEqual(['$.properties.additionalProperties: removed']);
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

describe('contract guard and the direction of data', () => {
  const doc = {
    paths: {
      '/items': {
        post: {
          parameters: [{ name: 'page', in: 'query', required: false, schema: { type: 'integer', minimum: 1 } }],
          requestBody: { content: { 'application/json': { schema: { $ref: '#/components/schemas/ItemIn' } } } },
          responses: { '200': { content: { 'application/json': { schema: { $ref: '#/components/schemas/ItemOut' } } } } },
        },
      },
    },
    components: {
      schemas: {
        ItemIn: { type: 'object', required: ['name'], properties: { name: { type: 'string', maxLength: 64 }, kind: { type: 'string', enum: ['a', 'b'] } } },
        ItemOut: { type: 'object', required: ['name'], properties: { name: { type: 'string' }, size: { type: 'integer' } } },
      },
    },
  };
  type Schema = { required: string[]; properties: Record<string, Record<string, unknown>> };
  type Doc = Omit<typeof doc, 'components'> & { components: { schemas: Record<string, Schema> } };
  const edit = (f: (d: Doc) => void): string[] => {
    const next = JSON.parse(JSON.stringify(doc)) as Doc;
    f(next);
    return nonAdditiveChanges(doc, next);
  };

  it('fails a new required request-body field', () => {
    expect(
      edit((d) => {
        d.components.schemas.ItemIn.properties.owner = { type: 'string' };
        d.components.schemas.ItemIn.required.push('owner');
      }),
    ).toEqual(['$.components.schemas.ItemIn.required: newly requires "owner" of input']);
  });

  it('fails a new required query parameter, passes a new optional one', () => {
    expect(
      edit((d) => d.paths['/items'].post.parameters.push({ name: 'tenant', in: 'query', required: true, schema: { type: 'integer', minimum: 0 } })),
    ).toEqual(['$.paths./items.post.parameters: new required parameter query:tenant']);
    expect(
      edit((d) => d.paths['/items'].post.parameters.push({ name: 'sort', in: 'query', required: false, schema: { type: 'integer', minimum: 0 } })),
    ).toEqual([]);
  });

  it('fails an optional parameter that becomes required', () => {
    expect(edit((d) => (d.paths['/items'].post.parameters[0].required = true))).toEqual(['$.paths./items.post.parameters[query:page].required: false → true']);
  });

  it('fails a narrowed enum, a tightened limit, a new constraint on input, a removed field and a changed type', () => {
    expect(edit((d) => (d.components.schemas.ItemIn.properties.kind.enum = ['a']))).toEqual([
      expect.stringMatching(/ItemIn\.properties\.kind\.enum\[1\]: removed/),
    ]);
    expect(edit((d) => (d.components.schemas.ItemIn.properties.name.maxLength = 32))).toEqual([
      '$.components.schemas.ItemIn.properties.name.maxLength: 64 → 32',
    ]);
    expect(edit((d) => (d.components.schemas.ItemIn.properties.kind.pattern = '^[a-z]$'))).toEqual([
      expect.stringMatching(/kind\.pattern: new constraint on input/),
    ]);
    expect(edit((d) => delete d.components.schemas.ItemOut.properties.size)).toEqual(['$.components.schemas.ItemOut.properties.size: removed']);
    expect(edit((d) => (d.components.schemas.ItemOut.properties.size.type = 'string'))).toEqual([
      '$.components.schemas.ItemOut.properties.size.type: "integer" → "string"',
    ]);
  });

  it('lets a response promise more: a new required field or a new constraint on output pass', () => {
    expect(edit((d) => d.components.schemas.ItemOut.required.push('size'))).toEqual([]);
    expect(edit((d) => (d.components.schemas.ItemOut.properties.size.minimum = 0))).toEqual([]);
  });

  it('lets a request accept more: a required field that becomes optional passes, one a response drops fails', () => {
    expect(edit((d) => (d.components.schemas.ItemIn.required = []))).toEqual([]);
    expect(edit((d) => (d.components.schemas.ItemOut.required = []))).toEqual([expect.stringMatching(/ItemOut\.required\[0\]: removed/)]);
  });
});
