import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describeUnless } from '../support/skips';

/** The committed copies of the official registry contracts must match ../shared when it is there. */
const SHARED = join(__dirname, '..', '..', '..', 'shared', 'reference', 'registry');
const FIXTURES = join(__dirname, '..', 'fixtures', 'registry');
const pairs: Array<[string, string]> = [
  ['current/docs/reference/api/openapi.yaml', 'registry-openapi.2025-12-01.yaml'],
  ['static/schemas/2025-12-11/server.schema.json', 'server.schema.2025-12-11.json'],
];

describeUnless(existsSync(SHARED) ? undefined : `${SHARED} is absent (../shared is not checked out)`, {
  id: 'shared:registry-fixtures',
  what: 'the drift check of test/fixtures/registry against the official files in ../shared',
})('registry fixtures', () => {
  it.each(pairs)('%s is copied verbatim', (shared, fixture) => {
    expect(readFileSync(join(FIXTURES, fixture), 'utf8')).toBe(readFileSync(join(SHARED, shared), 'utf8'));
  });
});
