import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadSpecTables, specProblems } from '../support/spec-tables';

/**
 * The frozen contract snapshots held to the spec's own tables (transcribed by hand into
 * test/fixtures/spec/): every field, parameter, default, limit and error code of specs 1 and 2. The
 * guard of openapi.test.ts and memory-api.test.ts keeps the generated documents additive to the
 * snapshots; this keeps the snapshots true to the contract.
 */
const snapshot = (name: string) => JSON.parse(readFileSync(join(__dirname, '..', 'fixtures', 'contracts', `${name}.json`), 'utf8')) as Record<string, unknown>;

describe.each([
  ['catalog-openapi', '1-catalog-api.yaml'],
  ['v1-openapi', '2-memory-rest-api.yaml'],
])('the snapshot %s against the spec tables of %s', (name, tables) => {
  const spec = loadSpecTables(tables);
  const doc = snapshot(name);

  it('has every field, parameter, default, limit and error code of the spec', () => {
    expect(specProblems(spec, doc)).toEqual([]);
  });

  // The check itself: a snapshot that drifts from the spec in any of these ways is caught.
  const edits: Array<[string, (d: Doc) => void, RegExp]> = [];
  // biome-ignore lint/suspicious/noExplicitAny: the edits reach into an arbitrary JSON document
  type Doc = Record<string, any>;
  const schemas = (d: Doc) => d.components.schemas;
  const op = (d: Doc) => (name === 'catalog-openapi' ? d.paths['/api/mcps'].get : d.paths['/v1/memories/{memory}/notes'].get);
  const param = (d: Doc, n: string) => op(d).parameters.find((p: { name: string }) => p.name === n);
  edits.push(['a dropped field', (d) => delete schemas(d)[name === 'catalog-openapi' ? 'CatalogServer' : 'Memory'].properties.name, /\.name: missing/]);
  edits.push([
    'a field made optional',
    (d) => schemas(d)[name === 'catalog-openapi' ? 'Pagination' : 'Note'].required.pop(),
    /required by the spec, optional in the document/,
  ]);
  edits.push([
    'a changed type',
    (d) => ((schemas(d)[name === 'catalog-openapi' ? 'Pagination' : 'Memory'].properties.files ?? schemas(d).Pagination.properties.total).type = 'string'),
    /type "string", the spec says integer/,
  ]);
  edits.push(['a changed default', (d) => (param(d, 'limit').schema.default = 25), /limit: default 25, the spec says (24|200)/]);
  edits.push(['a changed limit', (d) => (param(d, 'limit').schema.maximum = 1000), /limit: maximum 1000, the spec says (100|500)/]);
  edits.push(['a dropped parameter', (d) => op(d).parameters.splice(op(d).parameters.indexOf(param(d, 'sort')), 1), /sort: parameter missing/]);
  edits.push([
    'a dropped error code',
    (d) => (name === 'catalog-openapi' ? schemas(d).ApiError : schemas(d).Error.properties.error).properties.code.enum.pop(),
    /error codes: .* missing/,
  ]);
  edits.push([
    'a foreign error code',
    (d) => (name === 'catalog-openapi' ? schemas(d).ApiError : schemas(d).Error.properties.error).properties.code.enum.push('TEAPOT'),
    /TEAPOT is not a code of the spec/,
  ]);
  edits.push(['a dropped error response', (d) => delete op(d).responses['400'], /no 400 response/]);
  edits.push([
    'a dropped rate-limit header',
    (d) => delete op(d).responses['200'].headers[name === 'catalog-openapi' ? 'X-RateLimit-Limit' : 'RateLimit'],
    /no (X-)?RateLimit(-Limit)? header/,
  ]);
  edits.push(['an enum that gains a value', (d) => param(d, 'sort').schema.enum.push('random'), /sort: lists \["random"\], not values of the spec/]);
  edits.push([
    'an enum that loses a value',
    (d) => param(d, 'sort').schema.enum.splice(param(d, 'sort').schema.enum.indexOf('trending'), 1),
    /sort: refuses "(trending|updated)", a value of the spec/,
  ]);
  it.each(edits)('fails on %s', (_, edit, message) => {
    const copy = JSON.parse(JSON.stringify(doc)) as Doc;
    edit(copy);
    expect(specProblems(spec, copy)).toEqual(expect.arrayContaining([expect.stringMatching(message)]));
  });
});
