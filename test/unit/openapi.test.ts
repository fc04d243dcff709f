import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { buildOpenApiDocument } from '../../lambdas/catalog/openapi';
import { CATALOG_API } from '../../lambdas/catalog/routes';
import { checkContract } from '../support/contract-snapshot';

describe('/openapi.json', () => {
  const doc = buildOpenApiDocument() as {
    openapi: string;
    info: { version: string };
    paths: Record<string, Record<string, { parameters?: Array<{ name: string; in: string; style?: string; explode?: boolean; description?: string; schema?: { type?: string } }> }>>;
  };

  it('is a valid OpenAPI 3.1 document', async () => {
    const out = execFileSync(process.execPath, [join(__dirname, '..', 'support', 'validate-openapi.mjs')], {
      input: JSON.stringify(doc),
    });
    const result = JSON.parse(out.toString()) as { valid: boolean; version: string; errors: unknown[] };
    expect(result.errors).toEqual([]);
    expect(result.valid).toBe(true);
    expect(result.version).toBe('3.1');
    expect(doc.info.version).toBe('1.0.0');
  });

  it('documents every route of the route table, under its API Gateway path', () => {
    for (const r of CATALOG_API.routes) {
      expect(doc.paths[r.path]?.[r.method.toLowerCase()]).toBeDefined();
    }
    expect(Object.keys(doc.paths).sort()).toEqual(CATALOG_API.routes.map((r) => r.path).sort());
  });

  it('documents multi-valued filters as exploded form arrays with the OR/AND rule', () => {
    const params = doc.paths['/api/mcps'].get.parameters ?? [];
    for (const name of ['type', 'category', 'language', 'license']) {
      const p = params.find((x) => x.name === name);
      expect(p?.schema?.type).toBe('array');
      expect(p?.style).toBe('form');
      expect(p?.explode).toBe(true);
      expect(p?.description).toMatch(/comma-separated/);
      expect(p?.description).toMatch(/OR-combine/);
    }
  });

  it('changes only by additions (frozen contract 1.0.0)', () => {
    const { problems } = checkContract('catalog-openapi', doc);
    expect(problems).toEqual([]);
  });
});
