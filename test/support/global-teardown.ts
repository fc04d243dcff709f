import { rmSync } from 'node:fs';
import type { Backend } from '../../bin/local-stack/backends';

export default async function globalTeardown(): Promise<void> {
  const backends = (globalThis as { __backends?: Backend[] }).__backends ?? [];
  await Promise.all(backends.map((b) => b.stop()));
  if (process.env.TEST_TMP_DIR) rmSync(process.env.TEST_TMP_DIR, { recursive: true, force: true });
}
