import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { recordedSkips, skipBanner, unexpectedSkips, type Skip } from '../support/skips';

/** The skip banner and the CI allow-list (`TEST_ALLOWED_SKIPS`), on records of their own. */
const opensearch: Skip = { id: 'opensearch-contract', what: 'the contract against OpenSearch', reason: 'OPENSEARCH_URL is not set' };
const conformance: Skip = { id: 'mcp-conformance', what: 'the MCP conformance suite', reason: 'no package registry' };

it('reads every skip the test files recorded in the run directory', () => {
  const root = mkdtempSync(join(tmpdir(), 'skips-'));
  try {
    expect(recordedSkips(root)).toEqual([]);
    mkdirSync(join(root, 'skips'));
    writeFileSync(join(root, 'skips', 'opensearch-contract.json'), JSON.stringify(opensearch));
    writeFileSync(join(root, 'skips', 'mcp-conformance.json'), JSON.stringify(conformance));
    expect(recordedSkips(root)).toEqual([conformance, opensearch]);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

it('enforces the allow-list only where one is set, and names each skip it does not allow', () => {
  expect(unexpectedSkips([opensearch, conformance], undefined)).toEqual([]);
  expect(unexpectedSkips([opensearch, conformance], 'opensearch-contract')).toEqual([conformance]);
  expect(unexpectedSkips([opensearch], ' opensearch-contract , x')).toEqual([]);
  expect(unexpectedSkips([opensearch], '')).toEqual([opensearch]);
  const banner = skipBanner([opensearch, conformance], [conformance]);
  expect(banner).toContain('NOT RUN (2)');
  expect(banner).toContain('- mcp-conformance   <- NOT ALLOWED HERE');
  expect(banner).toContain('- opensearch-contract\n');
  expect(skipBanner([], [])).toBe('');
});
