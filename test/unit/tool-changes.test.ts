import fc from 'fast-check';
import { diffTools, toolsEntry, versionEntry, type CatalogTool } from '../../lambdas/catalog-core';
import { nonAdditiveChanges } from '../support/additive';

/** Random tool input schemas: an object of typed parameters, some required, strings maybe with an enum. */
const param = fc.oneof(
  fc.record({ type: fc.constantFrom('string', 'integer', 'number', 'boolean') }),
  fc.record({ type: fc.constant('string'), enum: fc.uniqueArray(fc.constantFrom('a', 'b', 'c', 'd', 'e'), { minLength: 2, maxLength: 5 }) }),
);
const schema = fc
  .dictionary(fc.stringMatching(/^[a-z]{1,6}$/), param, { minKeys: 1, maxKeys: 5 })
  .chain((properties) =>
    fc
      .subarray(Object.keys(properties))
      .map((required) => ({ type: 'object', properties, ...(required.length > 0 && { required }) }) as Record<string, unknown>),
  );
type Schema = { type: string; properties: Record<string, { type: string; enum?: string[] }>; required?: string[] };
const tool = (name: string, inputSchema: Record<string, unknown>): CatalogTool => ({ name, inputSchema });
const clone = (s: Record<string, unknown>) => structuredClone(s) as Schema;

describe('tool changelog: breaking changes by the shared direction-aware rules', () => {
  it('a schema change is breaking exactly when the contract guard refuses it as a request', () => {
    fc.assert(
      fc.property(schema, schema, (a, b) => {
        const [change] = diffTools([tool('t', a)], [tool('t', b)]);
        const refused = nonAdditiveChanges({ inputSchema: a }, { inputSchema: b }, { proseMayGo: true }).length > 0;
        if (JSON.stringify(a) === JSON.stringify(b)) expect(change).toBeUndefined();
        else expect(change?.breaking ?? false).toBe(refused);
      }),
    );
  });

  it('a new required parameter, a narrower type and a lost enum value are breaking', () => {
    fc.assert(
      fc.property(schema, (a) => {
        const required = clone(a);
        required.properties.zz_new = { type: 'string' };
        required.required = [...(required.required ?? []), 'zz_new'];
        expect(diffTools([tool('t', a)], [tool('t', required)])[0]).toMatchObject({ kind: 'schema', breaking: true });

        const narrowed = clone(a);
        const first = Object.keys(narrowed.properties)[0];
        narrowed.properties[first] = { ...narrowed.properties[first], type: narrowed.properties[first].type === 'integer' ? 'boolean' : 'integer' };
        expect(diffTools([tool('t', a)], [tool('t', narrowed)])[0]?.breaking).toBe(true);

        const withEnum = Object.entries(clone(a).properties).find(([, p]) => p.enum !== undefined);
        if (withEnum) {
          const lost = clone(a);
          lost.properties[withEnum[0]].enum = withEnum[1].enum?.slice(1);
          expect(diffTools([tool('t', a)], [tool('t', lost)])[0]).toMatchObject({ breaking: true, reasons: [expect.stringMatching(/enum/)] });
        }
      }),
    );
  });

  it('an optional parameter, a gained enum value, a dropped requirement and reworded descriptions are not breaking', () => {
    fc.assert(
      fc.property(schema, (a) => {
        const more = clone(a);
        more.properties.zz_opt = { type: 'string' };
        for (const p of Object.values(more.properties)) if (p.enum) p.enum = [...p.enum, 'zz'];
        delete more.required;
        const described = { ...more, description: 'now described' };
        const changes = diffTools([tool('t', a)], [tool('t', described)]);
        expect(changes).toHaveLength(1);
        expect(changes[0]).toMatchObject({ kind: 'schema', breaking: false });
        expect(changes[0].reasons).toBeUndefined();
      }),
    );
  });

  it('tools removed are breaking, added are not; same schema under a new name is a rename', () => {
    fc.assert(
      fc.property(schema, schema, (a, b) => {
        fc.pre(JSON.stringify(a) !== JSON.stringify(b));
        const changes = diffTools([tool('old_name', a), tool('kept', b)], [tool('new_name', a), tool('kept', b), tool('extra', b)]);
        expect(changes).toEqual([
          { kind: 'added', tool: 'extra', breaking: false },
          { kind: 'renamed', tool: 'new_name', from: 'old_name', breaking: true },
        ]);
        expect(diffTools([tool('gone', a)], [])).toEqual([{ kind: 'removed', tool: 'gone', breaking: true }]);
      }),
    );
  });

  it('pairs a rename only when it is unambiguous', () => {
    const s = { type: 'object', properties: { q: { type: 'string' } } };
    const changes = diffTools([tool('a', s), tool('b', s)], [tool('c', s)]);
    expect(changes.map((c) => c.kind).sort()).toEqual(['added', 'removed', 'removed']);
  });

  it('makes entries: none for the first capture or no change; a version bump at its publish time', () => {
    const s = { type: 'object' };
    expect(toolsEntry(undefined, [tool('a', s)], '2026-01-01T00:00:00.000Z')).toBeUndefined();
    expect(toolsEntry([tool('a', s)], [{ ...tool('a', s), description: 'reworded' }], '2026-01-01T00:00:00.000Z')).toBeUndefined();
    expect(toolsEntry([tool('a', s)], [], '2026-01-01T00:00:00.000Z')).toMatchObject({ kind: 'tools', breaking: true });
    expect(versionEntry('1.0.0', '1.1.0', '2026-01-02T00:00:00.000Z', '2026-01-03T00:00:00.000Z')).toEqual({
      at: '2026-01-02T00:00:00.000Z',
      kind: 'version',
      breaking: false,
      version: { from: '1.0.0', to: '1.1.0' },
    });
    expect(versionEntry('1.0.0', '1.0.0', undefined, '2026-01-03T00:00:00.000Z')).toBeUndefined();
  });
});
