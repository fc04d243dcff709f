/**
 * Categories: 1-3 of the spec's 14 labels per server.
 *
 * The default classifier is deterministic keyword scoring, so the same inputs always give the
 * same labels and a run needs no model. Rules:
 *
 * 1. Text fields and weights: the part of the name after `/` (3), the title (3), the description
 *    (3), tool names and descriptions (2), the README's first 3,000 characters of prose (1): code
 *    blocks, inline code and the sections every project has (installation, setup, usage,
 *    configuration, development, deployment, contributing, license, …) removed. The namespace is
 *    left out: `io.github.*` says nothing about the server. Every README tells how to build and
 *    deploy its code, so its words count for Development & Coding or Cloud & DevOps only beside a
 *    strong keyword of that category in the server's own fields.
 * 2. Boilerplate every server says ("MCP server", "for AI assistants", "LLMs") is removed first;
 *    "MCP" stays where MCP is the subject ("the MCP registry", "routes to all MCP servers"), except
 *    in the name (`company-lens-mcp-registry` is about companies).
 * 3. Each category has a keyword list (`category-keywords.ts`). A field contributes `weight ×
 *    min(distinct keywords of the category found in it, 3)`; a category's score is the sum over
 *    fields. Weak keywords (`~` in the lists: `workflow` is gone, `automate`, `search`, `cloud`,
 *    `query`, `ai`, `prompt` are weak) count only when a strong keyword of the same category
 *    matched somewhere: "streamline workflows in Jira" is not Browser & Automation, "search your
 *    Amplitude data" not Search & Web.
 * 4. Categories scoring at least 3 (one keyword in the name, title or description, or a
 *    corroborated README) and at least 40% of the best score are kept, best first (ties in the
 *    spec's order), at most 3.
 * 5. Greeting, "Hello, World" and sample servers (`looksLikeDemo`) are `Other` unless a category
 *    scores at least 6: their demo tools' words name no domain.
 * 6. None qualifies → `Other`. `Other` is never combined with another label.
 *
 * An LLM classifier can be plugged in through `CategoryClassifier` (see `LlmCategoryClassifier`);
 * it is off by default and falls back to these rules whenever its answer is unusable.
 */

import { looksLikeDemo, CATEGORIES, type Category } from '../../catalog-core';
import { CATEGORY_KEYWORDS, type Labelled } from './category-keywords';

export { CATEGORY_KEYWORDS } from './category-keywords';
/** Greeting, "Hello, World" and sample servers (the registry holds dozens, most re-published tutorials). */
export { looksLikeDemo } from '../../catalog-core';

export interface ClassifierInput {
  name: string;
  title?: string;
  description: string;
  tools?: ReadonlyArray<{ name: string; description?: string }>;
  readme?: string;
}

/** The seam: rules by default, an LLM-backed implementation when configured. */
export interface CategoryClassifier {
  classify(input: ClassifierInput): Promise<Category[]>;
}

/**
 * Matching runs on a normalised copy of each field (`wordText`), so that every pattern below can use
 * a small ASCII class for "a letter or digit" instead of `[\p{L}\p{N}]` with the `iu` flags. The
 * results are the same; the cost is not: V8 builds the case closure of both Unicode properties for
 * every such pattern, about 0.3 ms to build and 1.5 ms to compile and tier up each, and the lists
 * have over 700 keywords (200 ms of a cold start and over a second of the first classifications,
 * against 3 ms and 45 ms now). The normalisation keeps everything a pattern can see:
 * - ASCII characters as they are;
 * - a non-ASCII letter or digit that some keyword contains (`é` of pokémon) as it is, with its other case;
 * - `ſ` and the Kelvin sign as `s` and `k` (Unicode case folding matches them to those letters);
 * - any other non-ASCII letter or digit as `ª` (a letter no keyword contains: a word character that matches nothing);
 * - non-ASCII white space as a space, anything else non-ASCII as `#` (neither a letter nor a separator).
 */
const KEYWORD_LETTERS: ReadonlySet<string> = new Set(
  Object.values(CATEGORY_KEYWORDS)
    .flat()
    .flatMap((k) => [...k].filter((c) => c > '\x7f').flatMap((c) => [c, c.toLowerCase(), c.toUpperCase()])),
);
const FOLDS_TO_ASCII: Readonly<Record<string, string>> = { '\u017f': 's', '\u212a': 'k' };
const OTHER_LETTER = '\u00aa';
const LETTER_OR_DIGIT = /^[\p{L}\p{N}]$/u;

function wordText(text: string): string {
  return text.replace(/[^\x00-\x7f]/gu, (c) => {
    if (KEYWORD_LETTERS.has(c)) return c;
    const folded = FOLDS_TO_ASCII[c];
    if (folded !== undefined) return folded;
    if (LETTER_OR_DIGIT.test(c)) return OTHER_LETTER;
    return /^\s$/u.test(c) ? ' ' : '#';
  });
}

/** A letter or digit in `wordText`'s output. */
const W = `[A-Za-z0-9${OTHER_LETTER}${[...KEYWORD_LETTERS].join('')}]`;

/**
 * Boilerplate removed before matching: nearly every description says it is an MCP server for AI
 * assistants, which says nothing about what the server is for.
 */
const STOP_PHRASES = new RegExp(
  [
    'model context protocol',
    // "MCP" is boilerplate, except where MCP itself is the subject: a registry of MCP servers, a router over them.
    `mcp(?![\\s-]+(?:registry|servers)(?!${W}))`,
    'ai[\\s-]+(?:assistant|agent|model|tool|application|app|client|coding assistant)s?',
    'ai[\\s-]+powered',
    'large language models?',
    'language models?',
    'llms?',
    'claude(?:[\\s-]+(?:desktop|code))?',
    'cursor',
    'windsurf',
    'agents?',
    // "Home Assistant" is a product, not the boilerplate.
    '(?<!home[\\s-]+)assistants?',
    'server',
  ]
    .map((p) => `(?<!${W})${p}(?!${W})`)
    .join('|'),
  'gi',
);

/** Categories every README's install, build and deploy prose names (git, npm, Docker, CI). */
const README_NEEDS_OWN_WORDS: ReadonlySet<Labelled> = new Set(['Development & Coding', 'Cloud & DevOps']);

const NAME_MCP = new RegExp(`(?<!${W})mcp(?!${W})`, 'gi');

/** Field weights (see the rules above). */
export const FIELD_WEIGHTS = { name: 3, title: 3, description: 3, tools: 2, readme: 1 } as const;
const PER_FIELD_CAP = 3;
const MIN_SCORE = 3;
const RELATIVE_MIN = 0.4;
const MAX_LABELS = 3;
const README_CHARS = 3000;

/** A keyword as a pattern over `wordText`'s output; a wildcard's continuation is any rest of the word, so it needs no end check. */
function keywordPattern(keyword: string): RegExp {
  const wildcard = keyword.endsWith('*');
  const words = (wildcard ? keyword.slice(0, -1) : keyword).split(' ').map((w) => w.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&'));
  const body = words.join('[\\s_-]+');
  return new RegExp(`(?<!${W})${body}${wildcard ? '' : `(?!${W})`}`, 'i');
}

interface Keyword {
  pattern: RegExp;
  /** Counts only beside a strong keyword of the same category (`~` in the lists). */
  weak: boolean;
}

/** Strong keywords first, so the per-field cap counts them before weak ones. */
const COMPILED: ReadonlyArray<readonly [Labelled, Keyword[]]> = (Object.keys(CATEGORY_KEYWORDS) as Labelled[]).map((c) => {
  const keywords = CATEGORY_KEYWORDS[c].map((k) => ({ weak: k.startsWith('~'), pattern: keywordPattern(k.replace(/^~/, '')) }));
  return [c, [...keywords.filter((k) => !k.weak), ...keywords.filter((k) => k.weak)]] as const;
});

const DEMO_UNLESS = 2 * MIN_SCORE;

/** Splits identifiers into words: `mcp-server_fearGreed` → `mcp server fear Greed`. */
function identifierWords(s: string): string {
  return s.replace(/([a-z0-9])([A-Z])/g, '$1 $2').replace(/[._/-]+/g, ' ');
}

/**
 * README sections every project has, whatever it does: how to install, configure, run, build,
 * test, deploy or contribute to it. Their words (git, Docker, CLI, deploy, code) would make every
 * server with a README "Development" or "Cloud & DevOps"; what a server is for is in the rest.
 */
const BOILERPLATE_SECTION =
  /^(?:\W*)(?:table of contents|contents|prerequisites?|requirements?|install(?:ation|ing)?|setup|set up|getting started|quick ?start|usage|how to (?:use|run|install)|configuration|configuring|environment variables?|running|run(?:ning)? (?:locally|the server)|local development|development|developing|build(?:ing)?|testing|tests?|debugging|deploy(?:ment|ing)?|docker|contribut(?:ing|ion|ors?)|licen[cs]e|support|acknowledg(?:e)?ments?|credits|faq|troubleshooting|changelog|release notes|security|authors?|roadmap)\b/i;

/** The README's prose: boilerplate sections, code, HTML, images and link targets out. */
export function readmeProse(readme: string): string {
  const kept: string[] = [];
  let skipping = false;
  let level = 0;
  for (const line of readme.replace(/```[\s\S]*?(```|$)/g, ' ').split('\n')) {
    const heading = /^(#{1,6})\s+(.*)$/.exec(line);
    if (heading) {
      const depth = heading[1].length;
      // A subsection of a skipped section is skipped with it.
      if (skipping && depth > level) continue;
      skipping = BOILERPLATE_SECTION.test(heading[2]);
      level = depth;
      if (skipping) continue;
    } else if (skipping) continue;
    kept.push(line);
  }
  return kept
    .join('\n')
    .replace(/`[^`\n]*`/g, ' ')
    .replace(/<[^>]+>/g, ' ')
    .replace(/!\[[^\]]*\]\([^)]*\)/g, ' ')
    .replace(/\]\([^)]*\)/g, ']')
    .slice(0, README_CHARS);
}

export interface CategoryScore {
  category: Labelled;
  score: number;
}

/** Scores of every category with a non-zero score, best first (exposed for tests and tuning). */
export function scoreCategories(input: ClassifierInput): CategoryScore[] {
  const tail = input.name.includes('/') ? input.name.slice(input.name.indexOf('/') + 1) : input.name;
  const fields: Array<[string, number]> = [
    [identifierWords(tail), FIELD_WEIGHTS.name],
    [input.title ?? '', FIELD_WEIGHTS.title],
    [input.description, FIELD_WEIGHTS.description],
    [(input.tools ?? []).map((t) => `${identifierWords(t.name)} ${t.description ?? ''}`).join('\n'), FIELD_WEIGHTS.tools],
    [readmeProse(input.readme ?? ''), FIELD_WEIGHTS.readme],
  ];
  // In a name, "mcp" is always the boilerplate (`company-lens-mcp-registry` is about companies).
  const cleaned = fields.map(([raw, w], i) => {
    const t = wordText(raw);
    return [(i === 0 ? t.replace(NAME_MCP, ' ') : t).replace(STOP_PHRASES, ' ').trim(), w] as const;
  });
  const readme = cleaned.length - 1;
  const out: CategoryScore[] = [];
  for (const [category, keywords] of COMPILED) {
    let score = 0;
    let strong = false;
    for (const [i, [textValue, weight]] of cleaned.entries()) {
      if (textValue === '') continue;
      // Every README tells how to install, build and deploy it: for these categories it counts only beside the server's own words.
      if (i === readme && README_NEEDS_OWN_WORDS.has(category) && !strong) continue;
      let hits = 0;
      for (const k of keywords) {
        if (!k.pattern.test(textValue)) continue;
        hits++;
        if (!k.weak) strong = true;
        if (hits >= PER_FIELD_CAP) break;
      }
      score += weight * hits;
    }
    if (score > 0 && strong) out.push({ category, score });
  }
  const order = (c: Category) => CATEGORIES.indexOf(c);
  return out.sort((a, b) => b.score - a.score || order(a.category) - order(b.category));
}

/** The deterministic rules (synchronous core). */
export function classifyByRules(input: ClassifierInput): Category[] {
  const scores = scoreCategories(input);
  const best = scores[0]?.score ?? 0;
  if (best < DEMO_UNLESS && looksLikeDemo(input)) return ['Other'];
  const kept = scores.filter((s) => s.score >= MIN_SCORE && s.score >= RELATIVE_MIN * best).slice(0, MAX_LABELS);
  return kept.length === 0 ? ['Other'] : kept.map((s) => s.category);
}

export class RuleCategoryClassifier implements CategoryClassifier {
  async classify(input: ClassifierInput): Promise<Category[]> {
    return classifyByRules(input);
  }
}

/** A text-completion function (any LLM client), injected so the crawler has no model dependency. */
export type CompletionFn = (prompt: string) => Promise<string>;

/**
 * The LLM seam (off by default: enable with `CRAWLER_CLASSIFIER=llm` and an injected completion
 * function). The model is asked for a JSON array of labels; anything that is not 1-3 known labels
 * falls back to the rules, so a bad answer can never put an unknown label in the catalog.
 */
export class LlmCategoryClassifier implements CategoryClassifier {
  constructor(
    private readonly complete: CompletionFn,
    private readonly fallback: CategoryClassifier = new RuleCategoryClassifier(),
  ) {}

  static prompt(input: ClassifierInput): string {
    const tools = (input.tools ?? [])
      .slice(0, 30)
      .map((t) => `- ${t.name}: ${t.description ?? ''}`)
      .join('\n');
    return [
      'Classify this MCP server into 1 to 3 of these categories, best first.',
      `Categories: ${CATEGORIES.join('; ')}.`,
      'Answer with a JSON array of category strings only.',
      `Name: ${input.name}`,
      input.title ? `Title: ${input.title}` : '',
      `Description: ${input.description}`,
      tools ? `Tools:\n${tools}` : '',
      input.readme ? `README (start):\n${readmeProse(input.readme).slice(0, 1500)}` : '',
    ]
      .filter((l) => l !== '')
      .join('\n');
  }

  async classify(input: ClassifierInput): Promise<Category[]> {
    try {
      const answer = await this.complete(LlmCategoryClassifier.prompt(input));
      const parsed: unknown = JSON.parse(/\[[\s\S]*\]/.exec(answer)?.[0] ?? 'null');
      if (Array.isArray(parsed)) {
        const labels = [...new Set(parsed.filter((x): x is Category => typeof x === 'string' && (CATEGORIES as readonly string[]).includes(x)))];
        const valid = labels.length > 1 ? labels.filter((l) => l !== 'Other') : labels;
        if (valid.length >= 1 && valid.length <= MAX_LABELS && valid.length === parsed.length) return valid;
      }
    } catch {
      // An unreachable or confused model must not cost the server its categories.
    }
    return this.fallback.classify(input);
  }
}
