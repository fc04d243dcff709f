/**
 * The catalog's slug rule for a registry name: lowercase, every run of characters outside
 * `[a-z0-9]` becomes one `-`, no leading or trailing `-`, at most 200 characters
 * (`io.github.Some_User/My..Server` → `io-github-some-user-my-server`). The crawler builds its
 * unique slugs on it (`lambdas/crawler/domain/slug.ts`), the demo generator uses it as is.
 */
export const SLUG_MAX = 200;

export function slugFromName(name: string): string {
  return name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, SLUG_MAX)
    .replace(/-+$/, '');
}
