import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The committed copies of the official registry contracts must match ../shared when it is there. */
const SHARED = join(__dirname, '..', '..', '..', 'shared', 'reference', 'registry');
const FIXTURES = join(__dirname, '..', 'fixtures', 'registry');
const pairs: Array<[string, string]> = [
  ['current/docs/reference/api/openapi.yaml', 'registry-openapi.2025-12-01.yaml'],
  ['static/schemas/2025-12-11/server.schema.json', 'server.schema.2025-12-11.json'],
];

const present = existsSync(SHARED);
if (!present) console.log(`${SHARED} is absent: skipping the drift check of test/fixtures/registry`);

(present ? describe : describe.skip)('registry fixtures', () => {
  it.each(pairs)('%s is copied verbatim', (shared, fixture) => {
    expect(readFileSync(join(FIXTURES, fixture), 'utf8')).toBe(readFileSync(join(SHARED, shared), 'utf8'));
  });
});
