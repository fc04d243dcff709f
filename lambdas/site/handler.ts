import { retryingOnce } from '../shared/concurrency';
import { createSiteHandler } from './api';
import { loadSiteConfig } from './config';
import { createAwsSiteDeps } from './wiring';

/** The site's Lambda (AWS): every route of `SITE_ROUTES`, behind CloudFront's short edge cache. */
const config = loadSiteConfig();

// Built once per instance; a failed build (e.g. Secrets Manager throttled) is retried by the next request.
export const handler = createSiteHandler(
  config,
  retryingOnce(() => createAwsSiteDeps(config)),
);
