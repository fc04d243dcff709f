import type { ReadmeContent } from '../../catalog-core';
import * as z from 'zod';
import type { CachedResponse, GithubSource, RepoRef } from '../domain/ports';
export { parseGithubRepo } from '../../catalog-core';
import type { RepoInfo } from '../domain/types';
import { bodyJson, type HttpClient, type HttpResponse } from '../http/http-client';

/**
 * GitHub REST API: repository facts and the README.
 *
 * Every request is conditional (`If-None-Match` with the ETag of the last 200, kept in the crawl
 * state): GitHub answers 304 for an unchanged resource and does not count it against the rate
 * limit, so re-crawling unchanged repositories costs no quota. When the quota is exhausted
 * (403/429 with `x-ratelimit-remaining: 0`) every later call fails fast until the reset time.
 */

/** README content kept per server (DECISIONS: capped far below DynamoDB's 400 KB item limit). */
export const README_MAX_BYTES = 256 * 1024;

export class GithubRateLimited extends Error {
  constructor(readonly resetAt: number) {
    super(`GitHub rate limit exhausted until ${new Date(resetAt).toISOString()}`);
    this.name = 'GithubRateLimited';
  }
}

const repoSchema = z.object({
  stargazers_count: z.number().optional(),
  language: z.string().nullish(),
  license: z.object({ spdx_id: z.string().nullish(), name: z.string().nullish() }).nullish(),
  pushed_at: z.string().nullish(),
  default_branch: z.string().nullish(),
  owner: z.object({ avatar_url: z.string().nullish() }).nullish(),
});

const readmeSchema = z.object({
  content: z.string().optional(),
  encoding: z.string().optional(),
  path: z.string(),
  size: z.number(),
  sha: z.string(),
});

/** Cuts UTF-8 bytes to at most `max`, never inside a character. */
export function truncateUtf8(bytes: Uint8Array, max: number): { text: string; truncated: boolean } {
  if (bytes.byteLength <= max) return { text: new TextDecoder().decode(bytes), truncated: false };
  let cut = max;
  while (cut > 0 && (bytes[cut] & 0xc0) === 0x80) cut--;
  return { text: new TextDecoder().decode(bytes.subarray(0, cut)), truncated: true };
}

export interface GithubClientOptions {
  apiUrl: string;
  http: HttpClient;
  token?: () => Promise<string | undefined>;
  readmeMaxBytes?: number;
  now?: () => number;
}

export class GithubClient implements GithubSource {
  private limitedUntil = 0;
  private readonly now: () => number;

  constructor(private readonly o: GithubClientOptions) {
    this.now = o.now ?? Date.now;
  }

  async repository(ref: RepoRef, cached?: CachedResponse<RepoInfo>): Promise<CachedResponse<RepoInfo>> {
    const res = await this.get(`/repos/${ref.owner}/${ref.repo}`, cached?.etag, 'application/vnd.github+json');
    const fetchedAt = new Date(this.now()).toISOString();
    if (res.status === 304 && cached) return { ...cached, fetchedAt };
    if (res.status === 404 || res.status === 451) return { value: { exists: false }, fetchedAt };
    if (res.status !== 200) throw new Error(`GitHub answered ${res.status} for ${ref.owner}/${ref.repo}`);
    const d = repoSchema.parse(bodyJson(res));
    const spdx = d.license?.spdx_id ?? undefined;
    const info: RepoInfo = {
      exists: true,
      ...(d.stargazers_count !== undefined && { stars: d.stargazers_count }),
      ...(d.language && { language: d.language }),
      ...(d.license?.name && { license: d.license.name }),
      // GitHub's "NOASSERTION" means "a license we could not identify": the name ("Other") says it.
      ...(spdx && spdx !== 'NOASSERTION' && { licenseSpdx: spdx }),
      ...(d.pushed_at && { pushedAt: d.pushed_at }),
      ...(d.owner?.avatar_url && { ownerAvatarUrl: d.owner.avatar_url }),
      ...(d.default_branch && { defaultBranch: d.default_branch }),
    };
    const etag = res.headers.get('etag');
    return { ...(etag !== null && { etag }), value: info, fetchedAt };
  }

  async readme(
    ref: RepoRef,
    subfolder: string | undefined,
    cached?: CachedResponse<ReadmeContent | null>,
  ): Promise<{ response: CachedResponse<ReadmeContent | null>; notModified: boolean }> {
    const dir = subfolder?.replace(/^\/+|\/+$/g, '');
    const path = `/repos/${ref.owner}/${ref.repo}/readme${dir ? `/${dir.split('/').map(encodeURIComponent).join('/')}` : ''}`;
    const res = await this.get(path, cached?.etag, 'application/vnd.github+json', 4 * 1024 * 1024);
    const fetchedAt = new Date(this.now()).toISOString();
    if (res.status === 304 && cached) return { response: { ...cached, fetchedAt }, notModified: true };
    if (res.status === 404) return { response: { value: null, fetchedAt }, notModified: false };
    if (res.status !== 200) throw new Error(`GitHub answered ${res.status} for the README of ${ref.owner}/${ref.repo}`);
    const d = readmeSchema.parse(bodyJson(res));
    const raw = d.encoding === 'base64' || d.encoding === undefined ? Buffer.from(d.content ?? '', 'base64') : Buffer.from(d.content ?? '', 'utf8');
    const { text, truncated } = truncateUtf8(raw, this.o.readmeMaxBytes ?? README_MAX_BYTES);
    const readme: ReadmeContent = { content: text, path: d.path, size: d.size, sha: d.sha, ...(truncated && { truncated: true }) };
    const etag = res.headers.get('etag');
    return { response: { ...(etag !== null && { etag }), value: readme, fetchedAt }, notModified: false };
  }

  private async get(path: string, etag: string | undefined, accept: string, maxBytes?: number): Promise<HttpResponse> {
    if (this.limitedUntil > this.now()) throw new GithubRateLimited(this.limitedUntil);
    const token = await this.o.token?.();
    const headers: Record<string, string> = { accept, 'x-github-api-version': '2022-11-28' };
    if (token) headers.authorization = `Bearer ${token}`;
    if (etag) headers['if-none-match'] = etag;
    const url = `${this.o.apiUrl.replace(/\/+$/, '')}${path}`;
    const res = await this.o.http.request(url, { headers, ...(maxBytes !== undefined && { maxBytes }) });
    if ((res.status === 403 || res.status === 429) && res.headers.get('x-ratelimit-remaining') === '0') {
      const reset = Number(res.headers.get('x-ratelimit-reset'));
      this.limitedUntil = Number.isFinite(reset) && reset > 0 ? reset * 1000 : this.now() + 60_000;
      throw new GithubRateLimited(this.limitedUntil);
    }
    return res;
  }
}
