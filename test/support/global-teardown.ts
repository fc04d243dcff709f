import { rmSync } from 'node:fs';
import type { Backend } from '../../bin/local-stack/backends';
import { recordedSkips, skipBanner, unexpectedSkips } from './skips';

/**
 * Stops the shared backends, then says loudly what did not run (every skip the test files recorded,
 * `test/support/skips.ts`), and fails the run when a skip is not one this machine allows
 * (`TEST_ALLOWED_SKIPS`, set by `.ci/run`).
 */
export default async function globalTeardown(): Promise<void> {
  const backends = (globalThis as { __backends?: Backend[] }).__backends ?? [];
  await Promise.all(backends.map((b) => b.stop()));
  const root = process.env.TEST_TMP_DIR;
  const skips = root ? recordedSkips(root) : [];
  if (root) rmSync(root, { recursive: true, force: true });
  const unexpected = unexpectedSkips(skips, process.env.TEST_ALLOWED_SKIPS);
  if (skips.length > 0) process.stderr.write(`${skipBanner(skips, unexpected)}\n`);
  if (unexpected.length > 0) throw new Error(`skipped on a machine that does not allow it: ${unexpected.map((s) => s.id).join(', ')}`);
}
