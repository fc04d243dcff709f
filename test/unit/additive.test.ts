import { readFileSync } from 'node:fs';
import { join } from 'node:path';
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

describe('contract guard and the grammar: a keyword is a keyword only where the schema puts one', () => {
  // The frozen contracts themselves: what a response may not drop is whatever they name, prose-like or not.
  // biome-ignore lint/suspicious/noExplicitAny: JSON surgery on the frozen documents
  type Json = Record<string, any>;
  const frozen = (name: string): Json => JSON.parse(readFileSync(join(__dirname, '..', 'fixtures', 'contracts', `${name}.json`), 'utf8'));
  const without = (name: string, edit: (doc: Json) => void): string[] => {
    const doc = frozen(name);
    edit(doc);
    return nonAdditiveChanges(frozen(name), doc);
  };

  it.each([
    ['catalog-openapi', 'CatalogServer'],
    ['catalog-openapi', 'RegistryServerRecord'],
    ['catalog-openapi', 'AutocompleteItem'],
    ['v1-openapi', 'FileEntry'],
    ['v1-openapi', 'SearchHit'],
  ])('fails a response that drops the optional property `title` of %s %s', (name, schema) => {
    expect(without(name, (d) => delete d.components.schemas[schema].properties.title)).toEqual([`$.components.schemas.${schema}.properties.title: removed`]);
  });

  it('fails MCP read and search results that drop `title`', () => {
    expect(without('mcp-tools', (d) => delete d.tools[1].outputSchema.properties.title)).toEqual(['$.tools[1].outputSchema.properties.title: removed']);
    expect(without('mcp-tools', (d) => delete d.tools[0].outputSchema.properties.results.items.properties.title)).toEqual([
      '$.tools[0].outputSchema.properties.results.items.properties.title: removed',
    ]);
  });

  it('holds properties named example, examples, description, summary, title and required to the rules of any property', () => {
    const names = ['example', 'examples', 'description', 'summary', 'title', 'required'];
    const doc = {
      components: { schemas: { Out: { type: 'object', properties: Object.fromEntries(names.map((n) => [n, { type: 'string', title: 'prose' }])) } } },
      paths: { '/x': { get: { responses: { '200': { content: { 'application/json': { schema: { $ref: '#/components/schemas/Out' } } } } } } } },
    };
    for (const n of names) {
      const dropped = JSON.parse(JSON.stringify(doc));
      delete dropped.components.schemas.Out.properties[n];
      expect(nonAdditiveChanges(doc, dropped)).toEqual([`$.components.schemas.Out.properties.${n}: removed`]);
      const retyped = JSON.parse(JSON.stringify(doc));
      retyped.components.schemas.Out.properties[n] = { type: 'integer', title: 'prose' };
      expect(nonAdditiveChanges(doc, retyped)).toEqual([`$.components.schemas.Out.properties.${n}.type: "string" → "integer"`]);
    }
    // The keywords themselves stay prose: reworded or (title, example) removed.
    const reworded = JSON.parse(JSON.stringify(doc));
    for (const n of names) reworded.components.schemas.Out.properties[n].title = 'other prose';
    expect(nonAdditiveChanges(doc, reworded)).toEqual([]);
  });

  it('reads a property called `properties`, `parameters` or `responses` as a name, not as the keyword', () => {
    const doc = {
      paths: {
        '/x': {
          get: {
            responses: {
              '200': {
                content: {
                  'application/json': {
                    schema: {
                      type: 'object',
                      properties: { properties: { type: 'object', properties: { a: { type: 'string' } } }, parameters: { type: 'string' } },
                    },
                  },
                },
              },
            },
          },
        },
      },
    };
    const schema = (d: typeof doc) => d.paths['/x'].get.responses['200'].content['application/json'].schema;
    const edited = JSON.parse(JSON.stringify(doc)) as typeof doc;
    delete (schema(edited).properties.properties.properties as Record<string, unknown>).a;
    expect(nonAdditiveChanges(doc, edited)).toEqual([
      '$.paths./x.get.responses.200.content.application/json.schema.properties.properties.properties.a: removed',
    ]);
    // A property named `parameters` under a response is still output: a new constraint on it is allowed.
    const constrained = JSON.parse(JSON.stringify(doc)) as typeof doc;
    (schema(constrained).properties.parameters as Record<string, unknown>).maxLength = 10;
    expect(nonAdditiveChanges(doc, constrained)).toEqual([]);
  });
});
