import type { Operation } from '../../shared/http/pipeline';
import type { SiteDeps } from '../deps';
import { asset } from './assets';
import { server, serverFeed } from './detail';
import { feed, oauthClientMetadata, robots, sitemap } from './feeds';
import { favorites, home, search, servers, tokens } from './pages';

/** operationId (see `routes.ts`) → page. */
export const SITE_ENDPOINTS: Readonly<Record<string, Operation<SiteDeps>>> = {
  homePage: home,
  homeIndexPage: home,
  serversPage: servers,
  serverPage: server,
  serverFeed,
  searchPage: search,
  favoritesPage: favorites,
  tokensPage: tokens,
  atomFeed: feed,
  sitemap,
  robots,
  oauthClientMetadata,
  asset,
};
