import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { buildOpenApiDocument } from '../../lambdas/catalog/openapi';
import { CATALOG_API } from '../../lambdas/catalog/routes';
import { checkContract } from '../support/contract-snapshot';

describe('/openapi.json', () => {
  const doc = buildOpenApiDocument() as {
    openapi: string;
    info: { version: string };
    paths: Record<
      string,
      Record<string, { parameters?: Array<{ name: string; in: string; style?: string; explode?: boolean; description?: string; schema?: { type?: string } }> }>
    >;
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
    // One path item per path: /api/favorites carries both GET and POST.
    expect(Object.keys(doc.paths).sort()).toEqual([...new Set(CATALOG_API.routes.map((r) => r.path))].sort());
  });

  it('documents the favorites with the bearer scheme, a request body on POST and their error codes', () => {
    const full = doc as unknown as {
      paths: Record<
        string,
        Record<
          string,
          {
            security?: unknown;
            requestBody?: { required?: boolean; content: Record<string, unknown> };
            responses: Record<string, { description: string; headers?: Record<string, unknown> }>;
          }
        >
      >;
      components: { securitySchemes: Record<string, unknown>; schemas: Record<string, unknown> };
    };
    expect(full.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    const ops = [full.paths['/api/favorites'].get, full.paths['/api/favorites'].post, full.paths['/api/favorites/{slug}'].delete];
    for (const op of ops) {
      expect(op.security).toEqual([{ bearerAuth: [] }]);
      expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['200', '400', '401', '405', '429', '503']));
      expect(op.responses['401'].description).toMatch(/^UNAUTHORIZED/);
      expect(op.responses['503'].description).toMatch(/^AUTH_UNAVAILABLE/);
      expect(op.responses['503'].headers).toHaveProperty('Retry-After');
      expect(op.responses['200'].headers).toHaveProperty('X-RateLimit-Limit');
    }
    expect(Object.keys(full.paths['/api/favorites'].post.responses)).toContain('404');
    expect(full.paths['/api/favorites'].post.requestBody).toMatchObject({ required: true, content: { 'application/json': expect.anything() } });
    expect(full.paths['/api/favorites'].get.requestBody).toBeUndefined();
    expect(full.components.schemas.FavoriteRequest).toMatchObject({ properties: { slug: { type: 'string', minLength: 1, maxLength: 200 } } });
    // Catalog reads stay public: no security requirement.
    expect(full.paths['/api/mcps'].get.security).toBeUndefined();
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
