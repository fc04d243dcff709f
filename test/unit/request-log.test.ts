import type { CatalogDeps } from '../../lambdas/catalog/deps';
import type { HttpEvent } from '../../lambdas/shared/http/types';

/** Logs are one JSON object per line with the request id, and never carry the bearer token. */
describe('structured request logs', () => {
  const lines: string[] = [];
  let restore: () => void;

  beforeAll(() => {
    process.env.LOG_LEVEL = 'INFO';
    const orig = process.stdout.write.bind(process.stdout);
    process.stdout.write = ((chunk: string | Uint8Array) => {
      lines.push(String(chunk));
      return true;
    }) as typeof process.stdout.write;
    restore = () => {
      process.stdout.write = orig;
      process.env.LOG_LEVEL = 'SILENT';
    };
  });
  afterAll(() => restore());

  it('logs each request as JSON with its request id, status and timing, without secrets', async () => {
    let api!: typeof import('../../lambdas/catalog/api');
    jest.isolateModules(() => {
      api = require('../../lambdas/catalog/api');
    });
    const deps = {
      index: { facets: async () => ({ categories: [], languages: [], licenses: [] }) },
      limiter: { consume: async () => ({ allowed: true, limit: 60, remaining: 59, resetSeconds: 1, retryAfterSeconds: 0 }) },
      callers: { resolve: async () => ({ key: 'ip:1.2.3.4', policy: { name: 'x', ratePerSecond: 1, burst: 1 } }) },
    } as unknown as CatalogDeps;
    const event = {
      version: '2.0',
      routeKey: 'GET /api/facets',
      rawPath: '/api/facets',
      rawQueryString: '',
      headers: { authorization: 'Bearer super-secret-token-value' },
      requestContext: { http: { method: 'GET', path: '/api/facets', sourceIp: '1.2.3.4' }, requestId: 'req-123' },
    } as unknown as HttpEvent;
    const res = await api.createCatalogHandler(async () => deps)(event, { awsRequestId: 'aws-req-1', functionName: 'f' } as never);
    expect(res.statusCode).toBe(200);
    const logged = lines
      .join('')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const entry = logged.find((l) => l.message === 'request');
    expect(entry).toMatchObject({ level: 'INFO', requestId: 'req-123', status: 200, method: 'GET', path: '/api/facets', route: 'getFacets' });
    expect(typeof entry?.durationMs).toBe('number');
    expect(lines.join('')).not.toContain('super-secret-token-value');
  });
});
