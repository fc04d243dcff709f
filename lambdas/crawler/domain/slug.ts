/**
 * Catalog slugs of registry names.
 *
 * Rule:
 * 1. The base slug is `slugFromName(name)`: lowercase, every run of characters outside `[a-z0-9]`
 *    becomes one `-`, no leading or trailing `-`, at most 200 characters
 *    (`io.github.Some_User/My..Server` → `io-github-some-user-my-server`).
 * 2. A name keeps the first slug it was given, forever (the slug is stored in the crawl state,
 *    and a slug once given is never given to another name, even after the server is deleted:
 *    icons are immutable per slug and URLs are cached).
 * 3. A new name takes its base slug when no other name holds it; otherwise it takes
 *    `<base>-<h>` where `<h>` is the first 8 hex digits of sha256(name) (then 12, 16, 24, 32 if
 *    those are taken too), the base being shortened so the whole stays within 200 characters.
 * 4. New names claim slugs in upstream order (the planner walks the pages sequentially), so a crawl
 *    from scratch of the same upstream listing gives the same slugs.
 *
 * The result is URL-safe (`[a-z0-9-]`), lowercase, 1-200 characters and unique.
 */

import { SLUG_MAX, slugFromName } from '../../catalog-core';
import { createHash } from 'node:crypto';

export { SLUG_MAX };
const HASH_LENGTHS = [8, 12, 16, 24, 32] as const;

export function baseSlug(name: string): string {
  const s = slugFromName(name);
  // A name made only of punctuation has no base; it still needs a stable, valid slug.
  return s === '' ? 'server' : s;
}

/** The slugs a name may take, in order of preference (base first, then hashed variants). */
export function slugCandidates(name: string): string[] {
  const base = baseSlug(name);
  const hash = createHash('sha256').update(name).digest('hex');
  const out = [base];
  for (const len of HASH_LENGTHS) {
    const suffix = hash.slice(0, len);
    const head = base.slice(0, SLUG_MAX - 1 - suffix.length).replace(/-+$/, '');
    out.push(head === '' ? suffix : `${head}-${suffix}`);
  }
  return out;
}

export function isValidSlug(slug: string): boolean {
  return slug.length >= 1 && slug.length <= SLUG_MAX && /^[a-z0-9]+(?:-[a-z0-9]+)*$/.test(slug);
}
