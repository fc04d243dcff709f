/**
 * A server's standing among others, read from its registry data alone (no enrichment), so both
 * search engines rank by it the same way on any catalog:
 *
 * - **original**: published by the owner of the code. Its namespace is a domain its publisher
 *   proved to the registry (`isOfficialNamespace`), or it is `io.github.<owner>/…` with its
 *   repository under that same GitHub owner. Anything else (a re-publisher's namespace such as
 *   `ai.smithery/…`, an account publishing someone else's repository, no repository to compare) is
 *   not. Search ranks originals above the rest (`ORIGINAL_BOOST`, `lambdas/catalog-core/search/ranking.ts`).
 * - **test entry**: a publish that says it is a test or a tutorial, not a server to use. The part
 *   of its name after `/` has the word `test`, `sample`, `example` or `hello` (words split at
 *   punctuation, case changes and digits: `test-mcp-server`, `arjunkmrm-test2`,
 *   `Knapcode.SampleMcpServer`), or its title or description reads as a greeting, "Hello, World" or
 *   sample server (`looksLikeDemo`). Only the name after `/` counts: an account or organisation
 *   named `…-sample-test-frameworks` publishes real servers too.
 * - **demoted**: deprecated, or a test entry. Demoted servers never lead a default list: they come
 *   after the others in the popularity, trending and published orders, in autocomplete, and among
 *   search results of equal relevance; search also weights their score down (`DEMOTED_WEIGHT`).
 */
import { parseGithubRepo } from './repo-ref';
import { isOfficialNamespace } from './scoring';
import type { CatalogRecord } from './types';

type Named = Pick<CatalogRecord, 'name'> & Partial<Pick<CatalogRecord, 'title' | 'description' | 'repository' | 'status'>>;

/** Splits an identifier into lowercased words: `Knapcode.SampleMcpServer` → knapcode sample mcp server, `test01` → test 01. */
export function identifierWords(s: string): string[] {
  return s
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .replace(/([\p{L}])(\p{N})|(\p{N})([\p{L}])/gu, '$1$3 $2$4')
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w !== '');
}

const TEST_WORDS = new Set(['test', 'sample', 'example', 'hello']);

/** Greeting, "Hello, World" and sample servers: dozens of re-published tutorials in the registry. */
const DEMO_TEXT = /(?<![\p{L}\p{N}])(?:greet(?:s|ing|ings)?|salutations?|hello,? world|(?:sample|demo|example|test) (?:mcp )?server)(?![\p{L}\p{N}])/iu;

/** Whether a title or description reads as a greeting, "Hello, World" or sample server. */
export function looksLikeDemo(input: { title?: string; description: string }): boolean {
  return DEMO_TEXT.test(`${input.title ?? ''} ${input.description}`);
}

export function isTestEntry(r: Named): boolean {
  const tail = r.name.slice(r.name.indexOf('/') + 1);
  if (identifierWords(tail).some((w) => TEST_WORDS.has(w))) return true;
  return r.description !== undefined && looksLikeDemo({ ...(r.title !== undefined && { title: r.title }), description: r.description });
}

export function isDemoted(r: Named): boolean {
  return r.status === 'deprecated' || isTestEntry(r);
}

export function isOriginal(r: Named): boolean {
  if (isOfficialNamespace(r.name)) return true;
  const ns = r.name.slice(0, Math.max(0, r.name.indexOf('/'))).toLowerCase();
  const m = /^io\.github\.([^.]+)$/.exec(ns);
  if (m === null || r.repository?.url === undefined) return false;
  return parseGithubRepo(r.repository.url)?.owner.toLowerCase() === m[1];
}
