import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Every part of the suite that does not run everywhere says so here, never in a quiet
 * `console.log`: the test file records the skip (or the trim) under a stable id with its reason,
 * and the global teardown repeats all of them in one banner at the end of the run. With
 * `TEST_ALLOWED_SKIPS` set (CI sets it in `.ci/run`), a skip whose id is not listed fails the run.
 *
 * Ids: `opensearch-contract`, `mcp-conformance`, and `shared:<what>` for the checks that need
 * `../shared` (the registry sample and the official schema files).
 */
export interface Skip {
  id: string;
  /** What did not run (or ran on less). */
  what: string;
  /** Why, and how to run it. */
  reason: string;
}

const dir = () => join(process.env.TEST_TMP_DIR ?? '/tmp', 'skips');

/** Records a skip for the banner and says it at once (stderr: jest keeps it with the file's output). */
export function recordSkip(skip: Skip): void {
  mkdirSync(dir(), { recursive: true });
  writeFileSync(join(dir(), `${skip.id.replace(/[^a-z0-9:-]/gi, '_')}.json`), JSON.stringify(skip));
  process.stderr.write(`SKIPPED ${skip.id}: ${skip.what}: ${skip.reason}\n`);
}

/** `describe`, or `describe.skip` with the skip recorded when `reason` is given. */
export function describeUnless(reason: string | undefined, skip: Omit<Skip, 'reason'>): jest.Describe {
  if (reason === undefined) return describe;
  recordSkip({ ...skip, reason });
  return describe.skip;
}

/** The skips recorded in this run (read by the global teardown). */
export function recordedSkips(root: string): Skip[] {
  const d = join(root, 'skips');
  let files: string[];
  try {
    files = readdirSync(d);
  } catch {
    return [];
  }
  return files
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => JSON.parse(readFileSync(join(d, f), 'utf8')) as Skip);
}

/** Skips outside the comma-separated allow-list (undefined list: nothing is enforced). */
export function unexpectedSkips(skips: readonly Skip[], allowed: string | undefined): Skip[] {
  if (allowed === undefined) return [];
  const ok = new Set(
    allowed
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
  );
  return skips.filter((s) => !ok.has(s.id));
}

/** The banner: every skip of the run, loud, and which of them this machine did not expect. */
export function skipBanner(skips: readonly Skip[], unexpected: readonly Skip[]): string {
  if (skips.length === 0) return '';
  const line = '='.repeat(96);
  const out = ['', line, `NOT RUN (${skips.length}): parts of the suite that did not run on this machine, or ran on less`];
  for (const s of skips) out.push('', `- ${s.id}${unexpected.includes(s) ? '   <- NOT ALLOWED HERE' : ''}`, `  ${s.what}`, `  ${s.reason}`);
  if (unexpected.length > 0) {
    out.push('', `TEST_ALLOWED_SKIPS=${process.env.TEST_ALLOWED_SKIPS ?? ''} does not list ${unexpected.map((s) => s.id).join(', ')}: the run fails.`);
  }
  out.push(line, '');
  return out.join('\n');
}
