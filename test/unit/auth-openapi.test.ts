import { OpenAPIRegistry, OpenApiGeneratorV31, type ResponseConfig } from '@asteasolutions/zod-to-openapi';
import { FAVORITES_ROUTES } from '../../lambdas/catalog/favorites/routes';
import { BEARER_SECURITY_SCHEME, FAVORITES_ERROR_TEXT, FAVORITES_OPENAPI } from '../../lambdas/catalog/favorites/schemas';
import { ErrorEnvelope } from '../../lambdas/catalog/schemas';

/** The fragment the catalog's `/openapi.json` generator merges in: every favorites route described, with the bearer scheme. */
it('describes every favorites route with the bearer security scheme and generates as OpenAPI 3.1', () => {
  const registry = new OpenAPIRegistry();
  registry.registerComponent('securitySchemes', 'bearerAuth', BEARER_SECURITY_SCHEME);
  const error = registry.register('ErrorEnvelope', ErrorEnvelope);
  for (const route of FAVORITES_ROUTES) {
    const op = FAVORITES_OPENAPI[route.operationId];
    expect(op).toBeDefined();
    const responses: Record<string, ResponseConfig> = { 200: { description: op.ok.description, content: { 'application/json': { schema: op.ok.schema } } } };
    for (const code of [...op.errors, 405]) {
      expect(FAVORITES_ERROR_TEXT[code]).toBeDefined();
      responses[code] = { description: FAVORITES_ERROR_TEXT[code], content: { 'application/json': { schema: error } } };
    }
    registry.registerPath({
      method: route.method === 'GET' ? 'get' : route.method === 'POST' ? 'post' : 'delete',
      path: route.path,
      operationId: route.operationId,
      summary: op.summary,
      security: op.security,
      request: {
        ...(op.query && { query: op.query }),
        ...(op.params && { params: op.params }),
        ...(op.body && { body: { required: true, content: { 'application/json': { schema: op.body } } } }),
      },
      responses,
    });
  }
  const doc = new OpenApiGeneratorV31(registry.definitions).generateDocument({ openapi: '3.1.0', info: { title: 't', version: '1.0.0' } }) as unknown as {
    paths: Record<string, Record<string, { security: unknown; requestBody?: unknown; responses: Record<string, unknown> }>>;
    components: { securitySchemes: Record<string, unknown>; schemas: Record<string, unknown> };
  };
  expect(Object.keys(doc.paths).sort()).toEqual(['/api/favorites', '/api/favorites/{slug}']);
  expect(doc.paths['/api/favorites'].post.security).toEqual([{ bearerAuth: [] }]);
  expect(doc.paths['/api/favorites'].post.requestBody).toBeDefined();
  expect(Object.keys(doc.paths['/api/favorites'].get.responses)).toEqual(expect.arrayContaining(['200', '401', '503']));
  expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
  expect(doc.components.schemas.FavoriteRequest).toMatchObject({ properties: { slug: { type: 'string', minLength: 1, maxLength: 200 } } });
});
