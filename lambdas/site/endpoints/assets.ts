import type { HandlerResponse } from '../../shared/http/types';
import { assetByFile } from '../assets';
import { pageNotFound } from '../errors';
import { AssetParamSchema } from '../schemas';
import type { SiteCtx } from './pages';
import { IMMUTABLE } from './respond';

/** GET /assets/{file}: the stylesheet and scripts under their content-hashed names, cached for a year. */
export async function asset(ctx: SiteCtx): Promise<HandlerResponse> {
  const parsed = AssetParamSchema.safeParse(ctx.params);
  const found = parsed.success ? assetByFile(parsed.data.file) : undefined;
  // An old hash (a page cached before a deployment) is a 404 rather than today's file under yesterday's name.
  if (!found) throw pageNotFound('No such file. The page that asked for it may be older than this version of the site; reload it.');
  return { kind: 'text', body: found.body, contentType: found.contentType, headers: { 'cache-control': IMMUTABLE } };
}
