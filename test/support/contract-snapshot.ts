import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { nonAdditiveChanges } from './additive';

/**
 * Frozen contracts live in `test/fixtures/contracts/`. A change that only adds passes (and the
 * snapshot can be refreshed with `UPDATE_CONTRACTS=1 npx jest …`); anything else fails CI.
 *
 * `UPDATE_CONTRACTS=correction` also records a change that is not an addition, for one purpose
 * only: making the document say what the spec and the server already did (a limit the handler
 * always enforced, a parameter it always required), which `contract-spec.test.ts` then checks
 * against the spec's tables. It prints every such change; the commit says why each is one.
 */
export function checkContract(name: string, current: unknown): { problems: string[]; snapshotPath: string } {
  const snapshotPath = join(__dirname, '..', 'fixtures', 'contracts', `${name}.json`);
  const mode = process.env.UPDATE_CONTRACTS;
  if (mode === '1' || mode === 'correction') {
    if (existsSync(snapshotPath)) {
      const problems = nonAdditiveChanges(JSON.parse(readFileSync(snapshotPath, 'utf8')), current);
      if (problems.length && mode !== 'correction') return { problems, snapshotPath };
      if (problems.length) process.stderr.write(`${name}: recorded as a correction, not an addition:\n  ${problems.join('\n  ')}\n`);
    }
    mkdirSync(dirname(snapshotPath), { recursive: true });
    writeFileSync(snapshotPath, `${JSON.stringify(current, null, 2)}\n`);
  }
  if (!existsSync(snapshotPath)) return { problems: [`no committed snapshot at ${snapshotPath}`], snapshotPath };
  return { problems: nonAdditiveChanges(JSON.parse(readFileSync(snapshotPath, 'utf8')), current), snapshotPath };
}
