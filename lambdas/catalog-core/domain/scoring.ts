/**
 * Trust grades, the popularity composite and the "official namespace" test.
 *
 * Pure functions with no I/O: the crawler, the synthetic generator and the tests all share them,
 * so a grade means the same thing wherever it was computed. Each function's rule is documented
 * here because this text is copied into the README as the public definition of the numbers.
 */

import type { Grade } from './types';

const DAY_MS = 86_400_000;

// ---------------------------------------------------------------------------------------------
// License grade
// ---------------------------------------------------------------------------------------------

/**
 * GitHub reports licenses both as a display name ("Apache License 2.0") and as an SPDX id
 * ("Apache-2.0"); the catalog accepts either, so names are first mapped to an SPDX-like id.
 * Order matters: the more specific GNU variants must match before the plain GPL.
 */
const NAME_TO_SPDX: ReadonlyArray<[RegExp, string]> = [
  [/^mit( license)?$/, 'mit'],
  [/^mit no attribution$/, 'mit-0'],
  [/^apache license,?( version)? 2(\.0)?$/, 'apache-2.0'],
  [/^apache license,?( version)? 1\.1$/, 'apache-1.1'],
  [/^bsd zero[- ]clause license$/, '0bsd'],
  [/^bsd (\d)-clause\b/, 'bsd-$1-clause'],
  [/^isc license$/, 'isc'],
  [/^(the )?unlicense$/, 'unlicense'],
  [/^boost software license/, 'bsl-1.0'],
  [/^zlib license$/, 'zlib'],
  [/^creative commons zero/, 'cc0-1.0'],
  [/^mozilla public license/, 'mpl-2.0'],
  [/^gnu (lesser|library) general public license/, 'lgpl'],
  [/^eclipse public license/, 'epl'],
  [/^common development and distribution license/, 'cddl'],
  [/^gnu affero general public license/, 'agpl'],
  [/^gnu general public license/, 'gpl'],
];

/**
 * Grade per SPDX-like id. Beyond the ids the spec lists, a few other widely used OSI licenses
 * are placed where their obligations put them (BSL-1.0, Zlib, CC0 and MIT-0 are permissive;
 * CDDL is file-level copyleft like MPL), so they are not mis-graded as "custom".
 */
const ID_GRADES: ReadonlyArray<[RegExp, Grade]> = [
  [/^(mit|mit-0|apache-2\.0|apache-1\.1|bsd-[\w.-]+|0bsd|isc|unlicense|bsl-1\.0|zlib|cc0-1\.0)$/, 'A'],
  [/^(mpl|lgpl|epl|cddl)(-|$)/, 'B'],
  [/^(gpl|agpl)(-|$)/, 'C'],
];

const GRADE_ORDER: readonly Grade[] = ['A', 'B', 'C', 'D', 'F'];

function gradeOfSingle(license: string): Grade {
  // "WITH <exception>" only relaxes the base license, so the base decides; a trailing "+" or
  // "-only"/"-or-later" keeps the family, which the prefix patterns already cover.
  let id = license
    .replace(/\s+WITH\s+.*$/, '')
    .replace(/[()]/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .toLowerCase()
    .replace(/\+$/, '');
  for (const [pattern, spdx] of NAME_TO_SPDX) {
    const m = pattern.exec(id);
    if (m) {
      id = spdx.replace('$1', m[1] ?? '');
      break;
    }
  }
  for (const [pattern, grade] of ID_GRADES) if (pattern.test(id)) return grade;
  return 'D';
}

/**
 * License grade of a server's repository.
 *
 * | Grade | Meaning | Licenses |
 * |---|---|---|
 * | A | permissive | MIT, Apache-2.0, BSD-*, ISC, 0BSD, Unlicense (also MIT-0, BSL-1.0, Zlib, CC0-1.0) |
 * | B | weak copyleft | MPL-2.0, LGPL-*, EPL-* (also CDDL-*) |
 * | C | strong copyleft | GPL-*, AGPL-* |
 * | D | any other or custom license | e.g. GitHub's "Other" / `NOASSERTION` |
 * | F | no license | a repository exists but declares none |
 * | null | unknown | there is no repository to look at |
 *
 * Accepts SPDX ids ("GPL-3.0-only") and GitHub display names ("GNU General Public License v3.0"),
 * case-insensitively. An SPDX expression takes the best grade of `OR` alternatives (the user may
 * pick one) and the worst of `AND` terms (all obligations apply); the operators are matched in
 * upper case only, as SPDX specifies, because GitHub names such as
 * 'BSD 3-Clause "New" or "Revised" License' contain a lower-case "or".
 */
export function licenseGrade(spdxOrName: string | undefined, hasRepository: boolean): Grade | null {
  if (!hasRepository) return null;
  const text = (spdxOrName ?? '').trim();
  if (text === '') return 'F';
  const alternatives = text.split(/\s+OR\s+/).map((alt) => {
    const terms = alt.split(/\s+AND\s+/).map((t) => GRADE_ORDER.indexOf(gradeOfSingle(t)));
    return Math.max(...terms);
  });
  return GRADE_ORDER[Math.min(...alternatives)];
}

// ---------------------------------------------------------------------------------------------
// Maintenance grade
// ---------------------------------------------------------------------------------------------

function parseTime(iso: string | undefined): number | undefined {
  if (iso === undefined || iso === '') return undefined;
  const t = Date.parse(iso);
  return Number.isNaN(t) ? undefined : t;
}

/**
 * Maintenance grade from the repository's last push (`pushedAt`, ISO 8601), measured against `now`.
 *
 * | Grade | Last push at most … ago |
 * |---|---|
 * | A | 30 days |
 * | B | 90 days |
 * | C | 180 days |
 * | D | 365 days |
 * | F | older than 365 days |
 * | null | unknown (no push time, or an unparsable one) |
 *
 * Bounds are inclusive (exactly 30 days is still A). A push in the future (clock skew between
 * GitHub and the crawler) counts as "just now".
 */
export function maintenanceGrade(pushedAt: string | undefined, now: Date): Grade | null {
  const t = parseTime(pushedAt);
  if (t === undefined) return null;
  const days = (now.getTime() - t) / DAY_MS;
  if (days <= 30) return 'A';
  if (days <= 90) return 'B';
  if (days <= 180) return 'C';
  if (days <= 365) return 'D';
  return 'F';
}

// ---------------------------------------------------------------------------------------------
// Popularity
// ---------------------------------------------------------------------------------------------

export interface PopularityInput {
  /** GitHub stars. */
  stars?: number;
  /** Package-registry downloads in the last month (npm + PyPI). */
  downloads?: number;
  /** Whether a remote answered the last health check. */
  live?: boolean;
  /** Last push to the repository (ISO 8601). */
  pushedAt?: string;
  isOfficial: boolean;
}

/** Weights of the popularity composite; they sum to 1 so the score stays within [0, 1]. */
export const POPULARITY_WEIGHTS = {
  stars: 0.45,
  downloads: 0.35,
  live: 0.1,
  recency: 0.05,
  official: 0.05,
} as const;

const clamp01 = (x: number): number => (x <= 0 || Number.isNaN(x) ? 0 : Math.min(x, 1));

/**
 * Popularity, the default sort of `/mcps`: a weighted sum of five terms, each clamped to [0, 1].
 *
 * | Term | Weight | Value |
 * |---|---|---|
 * | stars | 0.45 | log10(1 + stars) / 5 (100,000 stars saturate) |
 * | downloads | 0.35 | log10(1 + monthly downloads) / 7 (10 million a month saturate) |
 * | live | 0.10 | 1 when a remote answered its last health check, else 0 |
 * | recency | 0.05 | 1 − days since the last push / 365 (linear decay over a year; 0 when unknown) |
 * | official | 0.05 | 1 when the namespace is publisher-verified (`isOfficial`) |
 *
 * Logarithms keep one viral repository from drowning everything else while still ordering the
 * long tail. Missing inputs count as 0. The result is rounded to 6 decimals and lies in [0, 1];
 * it never decreases when any single input grows (more stars, more downloads, live, a more
 * recent push, official).
 */
export function popularityScore(input: PopularityInput, now: Date): number {
  const stars = Math.max(0, input.stars ?? 0);
  const downloads = Math.max(0, input.downloads ?? 0);
  const pushed = parseTime(input.pushedAt);
  const recency = pushed === undefined ? 0 : clamp01(1 - (now.getTime() - pushed) / DAY_MS / 365);
  const w = POPULARITY_WEIGHTS;
  const score =
    w.stars * clamp01(Math.log10(1 + stars) / 5) +
    w.downloads * clamp01(Math.log10(1 + downloads) / 7) +
    w.live * (input.live === true ? 1 : 0) +
    w.recency * recency +
    w.official * (input.isOfficial ? 1 : 0);
  return clamp01(Math.round(score * 1e6) / 1e6);
}

// ---------------------------------------------------------------------------------------------
// Official namespaces
// ---------------------------------------------------------------------------------------------

/**
 * Namespaces under which a host republishes other people's servers. `ai.smithery/<owner>-<repo>`
 * is the one found in the registry sample (2025-10-21): 279 entries pointing at 124 distinct
 * GitHub owners. The sample's other multi-server namespaces (`com.pulsemcp.servers`,
 * `com.mintmcp`, `ai.waystation`, …) publish their own code or their own hosted gateways, so
 * they stay official.
 */
export const REPUBLISHER_NAMESPACES: readonly string[] = ['ai.smithery'];

const DNS_LABEL = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/;

/**
 * Whether a server name's namespace (the part before `/`) is a domain its publisher proved to the
 * upstream registry, i.e. the server comes from the organisation it names.
 *
 * - false for `io.github.<user>/…`: GitHub sign-in proves an account, not an organisation's domain;
 * - false for re-publisher namespaces (`REPUBLISHER_NAMESPACES` and their sub-namespaces);
 * - false when the namespace is not a reverse-DNS domain of at least two labels;
 * - true otherwise (`com.notion/…`, `com.figma.mcp/…`, `ai.waystation/…`).
 */
export function isOfficialNamespace(name: string): boolean {
  const slash = name.indexOf('/');
  if (slash <= 0) return false;
  const ns = name.slice(0, slash).toLowerCase();
  const labels = ns.split('.');
  if (labels.length < 2 || !labels.every((l) => DNS_LABEL.test(l))) return false;
  // The top-level label of a real domain is never all digits.
  if (/^\d+$/.test(labels[0])) return false;
  if (ns === 'io.github' || ns.startsWith('io.github.')) return false;
  return !REPUBLISHER_NAMESPACES.some((p) => ns === p || ns.startsWith(`${p}.`));
}
