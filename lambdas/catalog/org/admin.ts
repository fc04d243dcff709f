import { ALLOW_LIST_MAX_BYTES, parseAllowList, type ReplaceCondition } from '../../catalog-core';
import { header, json, type HandlerResponse, type HttpResult } from '../../shared/http/types';
import type { RequestCtx } from '../endpoints/context';
import type { OrgDeps } from './deps';
import { OrgError } from './errors';

/**
 * The admin API of the allow-list (members of the admin group only, `api.ts`): read the file with
 * its ETag, replace it conditionally. A replace names the ETag it read (`If-Match`) or creates the
 * first file (`If-None-Match: *`); without either it is refused (428), so no client overwrites an
 * edit it has not seen. The body is the file itself, JSON or YAML, stored byte for byte.
 */
const TYPES: Record<string, string> = {
  'application/json': 'application/json',
  'application/yaml': 'application/yaml',
  'application/x-yaml': 'application/yaml',
  'text/yaml': 'application/yaml',
  'text/x-yaml': 'application/yaml',
};

/** GET /org/admin/allow-list */
export async function getAllowList(_ctx: RequestCtx, deps: OrgDeps): Promise<HttpResult> {
  const stored = await deps.allowListStore.read();
  if (stored === undefined || stored === 'unchanged') throw new OrgError(404, 'There is no allow-list yet: create one with PUT and If-None-Match: *');
  return {
    statusCode: 200,
    headers: { 'content-type': `${stored.contentType}; charset=utf-8`, 'cache-control': 'no-store', etag: stored.etag },
    body: stored.text,
  };
}

/** PUT /org/admin/allow-list */
export async function putAllowList(ctx: RequestCtx, deps: OrgDeps): Promise<HandlerResponse> {
  const { event } = ctx;
  const condition = conditionOf(header(event, 'if-match'), header(event, 'if-none-match'));
  const mediaType = (header(event, 'content-type') ?? '').split(';')[0].trim().toLowerCase();
  const contentType = TYPES[mediaType];
  if (!contentType) throw new OrgError(415, 'The allow-list is sent as application/json or application/yaml');
  const bytes = Buffer.from(event.body ?? '', event.isBase64Encoded ? 'base64' : 'utf8');
  if (bytes.length > ALLOW_LIST_MAX_BYTES) throw new OrgError(413, `The allow-list is larger than ${ALLOW_LIST_MAX_BYTES} bytes`);
  const text = bytes.toString('utf8');
  // Checked before anything is written: an invalid file never replaces a valid one.
  const list = parseAllowList(text);
  const etag = await deps.allowListStore.replace(text, contentType, condition);
  deps.allowList.remember(etag, list);
  const pinned = list.allow.filter((r) => r.version !== undefined).length;
  return json({ etag, allow: list.allow.length, block: list.block.length, pinned }, { etag });
}

function conditionOf(ifMatch: string | undefined, ifNoneMatch: string | undefined): ReplaceCondition {
  if (ifMatch !== undefined && ifNoneMatch !== undefined) throw new OrgError(400, 'Send If-Match or If-None-Match, not both');
  if (ifMatch !== undefined) return { ifMatch: ifMatch.trim() };
  if (ifNoneMatch?.trim() === '*') return { ifNoneMatch: '*' };
  if (ifNoneMatch !== undefined) throw new OrgError(400, 'If-None-Match takes only * here (create the first allow-list)');
  throw new OrgError(428, 'A replace needs If-Match with the ETag you read (or If-None-Match: * to create the first allow-list)');
}
