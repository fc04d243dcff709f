import Ajv from 'ajv';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';

/**
 * Validators for the official registry contracts, from copies kept in test/fixtures (so the tests
 * run on a plain clone; `registry-fixtures.test.ts` checks the copies against ../shared when present).
 */
const FIXTURES = join(__dirname, '..', 'fixtures', 'registry');

export function serverJsonValidator() {
  const ajv = new Ajv({ strict: false, allErrors: true });
  addFormats(ajv);
  const schema = JSON.parse(readFileSync(join(FIXTURES, 'server.schema.2025-12-11.json'), 'utf8')) as object;
  return ajv.compile(schema);
}

/** The official OpenAPI's `ServerList` (the list response), compiled with its components. */
export function serverListValidator() {
  const doc = parse(readFileSync(join(FIXTURES, 'registry-openapi.2025-12-01.yaml'), 'utf8')) as {
    components: { schemas: Record<string, unknown> };
  };
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema({ $id: 'registry-openapi', components: doc.components }, 'registry-openapi');
  return ajv.compile({ $ref: 'registry-openapi#/components/schemas/ServerList' });
}

function openApiDoc() {
  return parse(readFileSync(join(FIXTURES, 'registry-openapi.2025-12-01.yaml'), 'utf8')) as {
    components: { schemas: Record<string, unknown> };
    paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema: unknown }> }> }>>;
  };
}

/**
 * The official OpenAPI's answer schema of one route and status (`ServerResponse` for
 * `/v0.1/servers/{serverName}/versions/{version}` 200, the `{ error }` body for its 404, …).
 */
export function registryResponseValidator(path: string, status: string) {
  const doc = openApiDoc();
  const schema = doc.paths[path]?.get?.responses[status]?.content?.['application/json']?.schema;
  if (!schema) throw new Error(`the registry's OpenAPI has no GET ${path} ${status} JSON answer`);
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema({ $id: 'registry-openapi', components: doc.components }, 'registry-openapi');
  const rebased = JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"registry-openapi#/components/')) as object;
  return ajv.compile(rebased);
}
