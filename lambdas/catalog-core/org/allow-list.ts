import * as z from 'zod';
import type { FieldIssue } from '../../shared/http/query';

/**
 * The organisation's allow-list (README "Organisation registry"): which registry names its IDEs
 * may see, which are blocked, and the version pinned per server. Kept as one JSON or YAML file
 * (YAML 1.2 reads JSON as it is, so one parser takes both); the operator's bytes are stored as
 * given, so comments and order survive an edit through the admin API.
 *
 * ```yaml
 * allow:
 *   - io.github.acme/*                    # a pattern: `*` is any run of characters, `/` included
 *   - name: com.example/weather           # an exact name, pinned
 *     version: 1.4.2
 * block:
 *   - io.github.acme/legacy-*             # block wins over allow
 * ```
 */

/**
 * The YAML parser (115 KB of bundle), required when a file is parsed: the functions that import the
 * core's face but never read an allow-list (the crawler) leave it out of their bundles.
 */
type YamlModule = typeof import('yaml');
const yaml = (): YamlModule => require('yaml') as YamlModule;

/** Largest allow-list file accepted (the admin API refuses more with 413; the reader ignores more). */
export const ALLOW_LIST_MAX_BYTES = 256 * 1024;
/** Most rules (allow and block together). */
export const ALLOW_LIST_MAX_RULES = 5000;

/** A registry name or a pattern of one: the registry's name characters plus `*`. */
const NAME_PATTERN = /^[a-zA-Z0-9.*_/-]+$/;
/** The registry refuses version ranges; a pin is one version (server.json's rule, 2025-12-11). */
const RANGE = /^[~^<>=]|^\*$|\.(x|\*)(\.|$)|\s/;

const Pattern = z
  .string()
  .min(1, 'must not be empty')
  .max(200, 'must be at most 200 characters')
  .regex(NAME_PATTERN, 'may hold only letters, digits, ".", "_", "-", "/" and the wildcard "*"');

const Version = z
  .string()
  .min(1, 'must not be empty')
  .max(255, 'must be at most 255 characters')
  .refine((v) => !RANGE.test(v), 'must be one version, not a range');

const AllowEntry = z.union([
  Pattern,
  z.strictObject({
    name: Pattern,
    version: Version.optional(),
  }),
]);

const AllowListSchema = z.strictObject({
  allow: z.array(AllowEntry).default([]),
  block: z.array(Pattern).default([]),
});

/** One rule, compiled. */
export interface AllowRule {
  /** As written in the file. */
  pattern: string;
  /** The text before the first `*` (the whole name for an exact rule): where the rule's names start in name order. */
  prefix: string;
  exact: boolean;
  /** The pinned version (exact allow rules only). */
  version?: string;
  matches(name: string): boolean;
}

export interface AllowList {
  allow: AllowRule[];
  block: AllowRule[];
}

/** What the organisation says of one server. */
export type OrgDecision = { allowed: true; pinnedVersion?: string } | { allowed: false; reason: 'blocked' | 'not-allowed' };

/** The file could not be read as an allow-list: each problem with where it is. */
export class AllowListError extends Error {
  constructor(readonly details: FieldIssue[]) {
    super(`The allow-list is not valid: ${details.map((d) => `${d.field} ${d.message}`).join('; ')}`);
    this.name = 'AllowListError';
  }
}

function compile(pattern: string, version?: string): AllowRule {
  const star = pattern.indexOf('*');
  if (star < 0) return { pattern, prefix: pattern, exact: true, ...(version !== undefined && { version }), matches: (name) => name === pattern };
  const re = new RegExp(
    `^${pattern
      .split('*')
      .map((s) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&'))
      .join('.*')}$`,
    's',
  );
  return { pattern, prefix: pattern.slice(0, star), exact: false, matches: (name) => re.test(name) };
}

/** Reads an allow-list file (JSON or YAML). Throws `AllowListError` with every problem found. */
export function parseAllowList(text: string): AllowList {
  if (Buffer.byteLength(text, 'utf8') > ALLOW_LIST_MAX_BYTES) {
    throw new AllowListError([{ field: '(file)', message: `is larger than ${ALLOW_LIST_MAX_BYTES} bytes` }]);
  }
  let doc: unknown;
  try {
    // An empty file is an empty list: nothing is allowed.
    doc = yaml().parse(text, { maxAliasCount: 0 }) ?? {};
  } catch (err) {
    const where = err instanceof yaml().YAMLParseError && err.linePos ? ` at line ${err.linePos[0].line}` : '';
    throw new AllowListError([{ field: '(file)', message: `is neither JSON nor YAML${where}` }]);
  }
  const parsed = AllowListSchema.safeParse(doc);
  if (!parsed.success) {
    throw new AllowListError(parsed.error.issues.map((i) => ({ field: i.path.length ? i.path.join('.') : '(file)', message: i.message })));
  }
  const { allow, block } = parsed.data;
  const issues: FieldIssue[] = [];
  if (allow.length + block.length > ALLOW_LIST_MAX_RULES) issues.push({ field: '(file)', message: `has more than ${ALLOW_LIST_MAX_RULES} rules` });
  const pinned = new Set<string>();
  allow.forEach((e, i) => {
    if (typeof e === 'string' || e.version === undefined) return;
    if (e.name.includes('*')) issues.push({ field: `allow.${i}.version`, message: 'pins one server: its name cannot be a pattern' });
    if (pinned.has(e.name)) issues.push({ field: `allow.${i}.name`, message: `is pinned twice (${e.name})` });
    pinned.add(e.name);
  });
  if (issues.length) throw new AllowListError(issues);
  return {
    allow: allow.map((e) => (typeof e === 'string' ? compile(e) : compile(e.name, e.version))),
    block: block.map((p) => compile(p)),
  };
}

/**
 * Whether the organisation allows a server, and the version it pins: blocked when a block rule
 * matches (block wins), allowed when an allow rule does, else not allowed. A pin comes from the
 * exact rule naming the server. The catalog's MCP endpoint (`orgOnly`) and the site's badge ask
 * this, as the organisation registry does.
 */
export function orgDecision(list: AllowList, name: string): OrgDecision {
  if (list.block.some((r) => r.matches(name))) return { allowed: false, reason: 'blocked' };
  let allowed = false;
  for (const r of list.allow) {
    if (!r.matches(name)) continue;
    if (r.version !== undefined) return { allowed: true, pinnedVersion: r.version };
    allowed = true;
  }
  return allowed ? { allowed: true } : { allowed: false, reason: 'not-allowed' };
}

/**
 * Where to look next, in name order, for a name an allow rule may match, after `last` (exclusive)
 * or from the start (`last` undefined): `{ after }` when a pattern's range contains `last`, else
 * `{ from }` the smallest rule prefix beyond it, else undefined (no rule can match further on).
 * The organisation registry pages through the catalog's name order with it, jumping over the
 * names between rules instead of reading the whole catalog.
 */
export function nextCandidate(list: AllowList, last: string | undefined): { after: string } | { from: string } | undefined {
  let from: string | undefined;
  for (const r of list.allow) {
    if (last !== undefined && !r.exact && last.startsWith(r.prefix)) return { after: last };
    if (last !== undefined && r.prefix <= last) continue;
    if (from === undefined || r.prefix < from) from = r.prefix;
  }
  if (from !== undefined) return { from };
  return undefined;
}
