import type { CatalogTool, Grade } from './types';

/**
 * How well a server's tools are described for a model: each captured tool is linted, the server
 * gets a grade with the findings listed. The rules come from the MCP 2025-11-25 specification's
 * tool definition: a name of 1-128 characters of `A-Z a-z 0-9 _ - .`, unique in the server; a
 * human-readable description; an `inputSchema` whose parameters a model can fill (types, which are
 * required, what each means); the behaviour annotations `readOnlyHint`, `destructiveHint`,
 * `idempotentHint`, `openWorldHint` (hints a client shows before a call).
 *
 * A tool starts at 100 and loses: no description 40, a vague one (under 20 characters or 4 words,
 * or only its name again) 20; parameters without a description up to 20 and without a type up to
 * 15 (in proportion); parameters but no `required` list 5; no annotation hint 15, some missing 5;
 * a name outside the rules 20; a near-duplicate of another tool 15. The server's score is the
 * mean of its tools; A ≥ 90, B ≥ 75, C ≥ 60, D ≥ 40, else F; null without captured tools.
 */

export const TOOL_LINT_RULES = [
  'description-missing',
  'description-vague',
  'parameter-undescribed',
  'parameter-untyped',
  'required-unset',
  'annotations-missing',
  'annotations-partial',
  'name-invalid',
  'near-duplicate',
] as const;
export type ToolLintRule = (typeof TOOL_LINT_RULES)[number];

export interface ToolFinding {
  tool: string;
  rule: ToolLintRule;
  message: string;
}

export interface DescriptionReport {
  grade: Grade | null;
  /** 0-100, the mean of the tools' scores; null without tools. */
  score: number | null;
  findings: ToolFinding[];
}

const PENALTY: Record<ToolLintRule, number> = {
  'description-missing': 40,
  'description-vague': 20,
  'parameter-undescribed': 20,
  'parameter-untyped': 15,
  'required-unset': 5,
  'annotations-missing': 15,
  'annotations-partial': 5,
  'name-invalid': 20,
  'near-duplicate': 15,
};

const NAME_RULE = /^[A-Za-z0-9_.-]{1,128}$/;
const HINTS = ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const;

const normalName = (n: string) => n.toLowerCase().replace(/[^a-z0-9]/g, '');
const words = (s: string) => new Set(s.toLowerCase().match(/[a-z0-9]+/g) ?? []);

function similar(a: string, b: string): boolean {
  const x = words(a);
  const y = words(b);
  if (x.size < 3 || y.size < 3) return a.trim().toLowerCase() === b.trim().toLowerCase();
  let both = 0;
  for (const w of x) if (y.has(w)) both++;
  return both / (x.size + y.size - both) >= 0.9;
}

function typed(p: unknown): boolean {
  if (typeof p !== 'object' || p === null) return false;
  const s = p as Record<string, unknown>;
  return ['type', '$ref', 'anyOf', 'oneOf', 'allOf', 'enum', 'const'].some((k) => k in s);
}

/** The findings of one tool (duplicates need the others: `lintTools`). */
function lintTool(t: CatalogTool): Array<{ rule: ToolLintRule; message: string; weight: number }> {
  const out: Array<{ rule: ToolLintRule; message: string; weight: number }> = [];
  const add = (rule: ToolLintRule, message: string, share = 1) => out.push({ rule, message, weight: PENALTY[rule] * share });
  const d = t.description?.trim() ?? '';
  if (d === '') add('description-missing', 'no description: a model sees only the name');
  else if (d.length < 20 || words(d).size < 4 || normalName(d) === normalName(t.name))
    add('description-vague', `description "${d.slice(0, 40)}" says too little to choose the tool by`);
  const props = (t.inputSchema?.properties ?? {}) as Record<string, unknown>;
  const names = Object.keys(props);
  if (names.length > 0) {
    const undescribed = names.filter((n) => typeof (props[n] as { description?: unknown })?.description !== 'string');
    const untyped = names.filter((n) => !typed(props[n]));
    if (undescribed.length > 0) add('parameter-undescribed', `parameters without a description: ${undescribed.join(', ')}`, undescribed.length / names.length);
    if (untyped.length > 0) add('parameter-untyped', `parameters without a type: ${untyped.join(', ')}`, untyped.length / names.length);
    if (!Array.isArray(t.inputSchema?.required)) add('required-unset', 'parameters but no `required` list: a model cannot tell which it must send');
  }
  const present = HINTS.filter((h) => typeof t.annotations?.[h] === 'boolean');
  if (present.length === 0) add('annotations-missing', 'no behaviour annotations (readOnlyHint, destructiveHint, idempotentHint, openWorldHint)');
  else if (present.length < HINTS.length) add('annotations-partial', `annotations missing: ${HINTS.filter((h) => !present.includes(h)).join(', ')}`);
  if (!NAME_RULE.test(t.name)) add('name-invalid', 'name outside the 2025-11-25 rules (1-128 characters of A-Z, a-z, 0-9, _, -, .)');
  return out;
}

export function gradeOfScore(score: number): Grade {
  return score >= 90 ? 'A' : score >= 75 ? 'B' : score >= 60 ? 'C' : score >= 40 ? 'D' : 'F';
}

export function lintTools(tools: readonly CatalogTool[] | undefined): DescriptionReport {
  if (tools === undefined || tools.length === 0) return { grade: null, score: null, findings: [] };
  const findings: ToolFinding[] = [];
  let total = 0;
  for (const [i, t] of tools.entries()) {
    const found = lintTool(t);
    const twin = tools.find(
      (o, j) =>
        j !== i &&
        (normalName(o.name) === normalName(t.name) || (t.description !== undefined && o.description !== undefined && similar(t.description, o.description))),
    );
    if (twin) found.push({ rule: 'near-duplicate', message: `near-duplicate of ${twin.name}`, weight: PENALTY['near-duplicate'] });
    total += Math.max(0, 100 - found.reduce((s, f) => s + f.weight, 0));
    for (const f of found) findings.push({ tool: t.name, rule: f.rule, message: f.message });
  }
  const score = Math.round(total / tools.length);
  return { grade: gradeOfScore(score), score, findings };
}
