import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { nonAdditiveChanges } from './additive';

/**
 * Frozen contracts live in `test/fixtures/contracts/`. A change that only adds passes (and the
 * snapshot can be refreshed with `UPDATE_CONTRACTS=1 npx jest …`); anything else fails CI.
 */
export function checkContract(name: string, current: unknown): { problems: string[]; snapshotPath: string } {
  const snapshotPath = join(__dirname, '..', 'fixtures', 'contracts', `${name}.json`);
  if (process.env.UPDATE_CONTRACTS === '1') {
    if (existsSync(snapshotPath)) {
      const problems = nonAdditiveChanges(JSON.parse(readFileSync(snapshotPath, 'utf8')), current);
      if (problems.length) return { problems, snapshotPath };
    }
    mkdirSync(dirname(snapshotPath), { recursive: true });
    writeFileSync(snapshotPath, `${JSON.stringify(current, null, 2)}\n`);
  }
  if (!existsSync(snapshotPath)) return { problems: [`no committed snapshot at ${snapshotPath}`], snapshotPath };
  return { problems: nonAdditiveChanges(JSON.parse(readFileSync(snapshotPath, 'utf8')), current), snapshotPath };
}
