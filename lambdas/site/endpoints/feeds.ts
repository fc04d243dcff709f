import { validateQuery } from '../../shared/http/query';
import type { HandlerResponse } from '../../shared/http/types';
import { oauthClientId, oauthRedirectUri, tokensRedirectUri } from '../config';
import { pageNotFound } from '../errors';
import { atomFeed, newestOf, robotsTxt, sitemapIndex, sitemapPlan, sitemapUrlset } from '../render/feeds';
import { FeedQuerySchema, SitemapQuerySchema } from '../schemas';
import type { SiteCtx } from './pages';
import { cacheControl, textResponse } from './respond';

/** GET /feed.xml[?category=…]: the servers newest in the registry (its publish and update times), as Atom. */
export async function feed(ctx: SiteCtx): Promise<HandlerResponse> {
  const { deps } = ctx;
  const q = validateQuery(FeedQuerySchema, { multi: [] }, ctx.query);
  const result = await deps.index.list({
    filters: q.category ? { category: [q.category] } : {},
    sort: 'published',
    page: { offset: 0, limit: deps.config.feedEntries },
  });
  // The catalog-wide feed also carries the newest breaking changes across servers (not a category's feed).
  const breaking = !q.category && deps.trust ? await deps.trust.recentBreaking(deps.config.feedEntries) : [];
  // One read per server named (a server with several breaking changes is read once); a server gone since is left out.
  const slugs = [...new Set(breaking.map((b) => b.slug))];
  const records = new Map((await Promise.all(slugs.map((s) => deps.store.get(s)))).flatMap((d) => (d ? [[d.record.slug, d.record] as const] : [])));
  const changes = breaking.flatMap((b) => {
    const record = records.get(b.slug);
    return record ? [{ record, entry: b.entry }] : [];
  });
  return textResponse(deps.config, atomFeed(deps.config, result.items, q.category, deps.now(), changes), 'application/atom+xml; charset=utf-8');
}

/** GET /sitemap.xml[?part=n]: from the slug list; an index of parts past the protocol's 50,000 URLs. */
export async function sitemap(ctx: SiteCtx): Promise<HandlerResponse> {
  const { deps } = ctx;
  const q = validateQuery(SitemapQuerySchema, { multi: [] }, ctx.query);
  const slugs = await deps.index.slugs();
  const max = deps.config.sitemapMaxUrls;
  const plan = sitemapPlan(slugs, max);
  const xml = 'application/xml; charset=utf-8';
  if (q.part !== undefined) {
    if (plan.parts <= 1 || q.part > plan.parts) throw pageNotFound(`This sitemap has ${plan.parts > 1 ? `${plan.parts} parts` : 'no parts'}.`);
    return textResponse(deps.config, sitemapUrlset(deps.config, slugs, max, q.part), xml);
  }
  if (plan.parts > 1) {
    return textResponse(deps.config, sitemapIndex(deps.config, plan.parts, newestOf(slugs)), xml);
  }
  return textResponse(deps.config, sitemapUrlset(deps.config, slugs, max), xml);
}

/** GET /robots.txt */
export async function robots(ctx: SiteCtx): Promise<HandlerResponse> {
  return textResponse(ctx.deps.config, robotsTxt(ctx.deps.config), 'text/plain; charset=utf-8');
}

/**
 * GET /oauth-client.json: the site's Client ID Metadata Document. The site signs readers in at the
 * deployment's own OAuth front as a public client (PKCE, no secret, no registration row): its
 * client id is this URL, and the front reads the redirect URI from here.
 */
export async function oauthClientMetadata(ctx: SiteCtx): Promise<HandlerResponse> {
  const { config } = ctx.deps;
  const body = {
    client_id: oauthClientId(config),
    client_name: config.siteName,
    client_uri: `${config.publicUrl}/`,
    redirect_uris: [oauthRedirectUri(config), tokensRedirectUri(config)],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
    // Favorites sign in with `favorites` alone (no memory); the Tokens page with the memory scopes.
    scope: 'favorites memory:read memory:write',
  };
  return { kind: 'json', body, headers: { 'cache-control': cacheControl(config) } };
}
