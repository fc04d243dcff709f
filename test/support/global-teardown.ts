import { rmSync } from 'node:fs';
import type { Backend } from '../../bin/local-stack/backends';

/**
 * Said loudly at the end of every run without a real OpenSearch: the search adapter that serves
 * production was held to request builders and golden exchanges only, never to an engine.
 */
const NOT_RUN = [
  '',
  '='.repeat(96),
  'NOT RUN: the SearchIndex contract against a REAL OPENSEARCH ENGINE (OPENSEARCH_URL is not set).',
  'The production search adapter was checked against its request builders and against golden',
  'exchanges written from the OpenSearch documentation (test/fixtures/opensearch), not against an engine.',
  'Run it with OPENSEARCH_URL=https://<domain> (SigV4, AWS credentials) or OPENSEARCH_INSECURE=1 for a local cluster.',
  '='.repeat(96),
  '',
].join('\n');

export default async function globalTeardown(): Promise<void> {
  if (!process.env.OPENSEARCH_URL) process.stderr.write(`${NOT_RUN}\n`);
  const backends = (globalThis as { __backends?: Backend[] }).__backends ?? [];
  await Promise.all(backends.map((b) => b.stop()));
  if (process.env.TEST_TMP_DIR) rmSync(process.env.TEST_TMP_DIR, { recursive: true, force: true });
}
