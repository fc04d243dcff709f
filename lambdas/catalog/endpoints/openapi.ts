import type { HandlerResponse } from '../../shared/http/types';
import { buildOpenApiDocument } from '../openapi';

let cached: string | undefined;

/** GET /api/openapi.json: the raw document, no envelope (DECISIONS). Built once per instance. */
export async function getOpenApi(): Promise<HandlerResponse> {
  cached ??= JSON.stringify(buildOpenApiDocument());
  return { kind: 'text', body: cached, contentType: 'application/json; charset=utf-8', headers: { 'cache-control': 'public, max-age=300' } };
}
